"""`trueskill`: TrueSkill (`synelo.models.trueskill`) under replay."""

from __future__ import annotations

from synelo.evaluation.models.base import Bounds, Scaling, register
from synelo.evaluation.models.served import ServedModel, numeric_defaults
from synelo.models.trueskill import SCALE, TrueSkill


@register
class TrueSkillModel(ServedModel):
    """`synelo.models.trueskill.TrueSkill` under replay, on FAForever's scale (the package's
    defaults times 60). μ, σ, β and τ are all on one scale (the draw margin is β times a
    function of the draw probability): scaled together they change no prediction. `synelo
    tune` fits β and τ only, so this never drops a parameter there."""

    served = TrueSkill
    name = TrueSkill.name
    summary = TrueSkill.summary
    defaults = numeric_defaults(TrueSkill)
    tunable = {
        "beta": Bounds(0.5 * SCALE, 50.0 * SCALE, log=True),
        "tau": Bounds(0.001 * SCALE, 5.0 * SCALE, log=True),
    }
    scalings = (Scaling(("mu", "sigma", "beta", "tau"), "one scale; the draw margin is ∝ β"),)
