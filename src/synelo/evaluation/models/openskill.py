"""`openskill-pl`, `openskill-bt`, `openskill-tm` (`synelo.models.openskill`) under replay.

For PlackettLuce and BradleyTerryFull, μ, σ, β and τ are on one scale (κ bounds a ratio):
scaled together they change no prediction. ThurstoneMostellerFull has no such scaling: its
draw margin ε (0.1) is absolute, so scaling μ, σ, β and τ moves the predictions.
"""

from __future__ import annotations

from synelo.evaluation.models.base import Bounds, Scaling, register
from synelo.evaluation.models.served import ServedModel, numeric_defaults
from synelo.models.openskill import (
    OpenSkill,
    OpenSkillBradleyTerry,
    OpenSkillPlackettLuce,
    OpenSkillThurstoneMosteller,
)
from synelo.models.trueskill import SCALE

ONE_SCALE = Scaling(("mu", "sigma", "beta", "tau"), "one scale; κ bounds a ratio")


class OpenSkillReplay(ServedModel):
    """The parameters and search bounds the three share."""

    defaults = numeric_defaults(OpenSkill)
    tunable = {
        "beta": Bounds(0.5 * SCALE, 50.0 * SCALE, log=True),
        "tau": Bounds(0.001 * SCALE, 5.0 * SCALE, log=True),
    }


@register
class OpenSkillPlackettLuceModel(OpenSkillReplay):
    served, name = OpenSkillPlackettLuce, OpenSkillPlackettLuce.name
    summary = OpenSkillPlackettLuce.summary
    scalings = (ONE_SCALE,)


@register
class OpenSkillBradleyTerryModel(OpenSkillReplay):
    served, name = OpenSkillBradleyTerry, OpenSkillBradleyTerry.name
    summary = OpenSkillBradleyTerry.summary
    scalings = (ONE_SCALE,)


@register
class OpenSkillThurstoneMostellerModel(OpenSkillReplay):
    served, name = OpenSkillThurstoneMosteller, OpenSkillThurstoneMosteller.name
    summary = OpenSkillThurstoneMosteller.summary
