"""`elo`: plain team Elo on summed ratings (`synelo.models.elo`), the simplest baseline."""

from __future__ import annotations

from synelo.evaluation.models.base import Bounds, Scaling, register
from synelo.evaluation.models.served import ServedModel, numeric_defaults
from synelo.models.elo import Elo


@register
class EloModel(ServedModel):
    """`synelo.models.elo.Elo` under replay.

    K, Θ and the start r0 matter only through their ratios: scaled together by c, every
    rating is c times its former self, and every gap over Θ is unchanged. When both sides of
    every match have as many players, r0 cancels out of Σ_A − Σ_B as well, and K/Θ alone
    matters: `synelo tune` then fits K with Θ held."""

    served = Elo
    name = Elo.name
    summary = Elo.summary
    defaults = numeric_defaults(Elo)
    tunable = {"theta": Bounds(50.0, 20_000.0, log=True), "k": Bounds(1.0, 400.0, log=True)}
    scalings = (
        Scaling(
            ("k", "theta"),
            "every match has as many players a side, so r0 cancels",
            equal_sides=True,
        ),
        Scaling(("k", "theta", "r0"), "ratings start equal and move by K·(S − P); P is F1's"),
    )
