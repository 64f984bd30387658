"""`elo`: plain team Elo on summed ratings, the simplest baseline."""

from __future__ import annotations

from typing import Any

from synelo.evaluation.history import Match
from synelo.evaluation.models.base import Bounds, RatingModel, Scaling, register
from synelo.ratings import win_probability


@register
class EloModel(RatingModel):
    """P_A = 1/(1+exp(−(Σ_A − Σ_B)/Θ)) (F1's form, Θ = 400 fixed), then every player of a
    side moves by K·(S − P) with one fixed K (no convergence, no compression, no rounding);
    S = 1, 0.5, 0 for a win, draw, loss; everyone starts at 1000.

    K, Θ and the start r0 matter only through their ratios: scaled together by c, every
    rating is c times its former self, and every gap over Θ is unchanged. When both sides of
    every match have as many players, r0 cancels out of Σ_A − Σ_B as well, and K/Θ alone
    matters: `synelo tune` then fits K with Θ held."""

    name = "elo"
    summary = "team Elo on summed ratings, Θ 400, fixed K"
    defaults = {"theta": 400.0, "k": 32.0, "r0": 1000.0}
    tunable = {"theta": Bounds(50.0, 20_000.0, log=True), "k": Bounds(1.0, 400.0, log=True)}
    scalings = (
        Scaling(
            ("k", "theta"),
            "every match has as many players a side, so r0 cancels",
            equal_sides=True,
        ),
        Scaling(("k", "theta", "r0"), "ratings start equal and move by K·(S − P); P is F1's"),
    )

    def __init__(self, theta: float = 400.0, k: float = 32.0, r0: float = 1000.0) -> None:
        if theta <= 0 or k < 0:
            raise ValueError("elo needs theta > 0 and k >= 0")
        self.theta, self.k, self.r0 = theta, k, r0
        self._ratings: dict[str, float] = {}

    def predict(self, match: Match) -> float:
        get, r0 = self._ratings.get, self.r0
        return win_probability(
            sum(get(p, r0) for p in match.team_a), sum(get(p, r0) for p in match.team_b), self.theta
        )

    def update(self, match: Match) -> None:
        self.step(match)

    def step(self, match: Match) -> float:
        p_a = self.predict(match)
        s_a = 0.5 if match.winner == "draw" else float(match.winner == "A")
        ratings, r0 = self._ratings, self.r0
        delta = self.k * (s_a - p_a)
        for p in match.team_a:
            ratings[p] = ratings.get(p, r0) + delta
        for p in match.team_b:
            ratings[p] = ratings.get(p, r0) - delta
        return p_a

    def ratings(self) -> dict[str, float]:
        return dict(self._ratings)

    def parameters(self) -> dict[str, Any]:
        return {"theta": self.theta, "k": self.k, "r0": self.r0}
