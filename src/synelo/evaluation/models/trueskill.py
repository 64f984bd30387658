"""`trueskill`: the `trueskill` package (Heungsub Lee's implementation of TrueSkill)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import trueskill

from synelo.evaluation.history import Match
from synelo.evaluation.models.base import (
    Bounds,
    HistoryInfo,
    RatingModel,
    Scaling,
    register,
)

_RANKS = {"A": [0, 1], "B": [1, 0], "draw": [0, 0]}


@register
class TrueSkillModel(RatingModel):
    """Ratings updated by ``env.rate([team_a, team_b], ranks=…)`` of a ``TrueSkill``
    environment with the package's defaults (μ 25, σ 25/3, β 25/6, τ 25/300, draw
    probability 0.10) unless given. The package has no win probability; it is the one of the
    TrueSkill model itself, as trueskill.org's documentation gives it:

        P(A wins) = Φ((Σ_A μ − Σ_B μ) / sqrt(n·β² + Σ σ²))

    with n the number of players in the match, Σσ² over both sides and Φ the standard normal
    CDF (``env.cdf``). It ignores the draw margin: P(A) + P(B) = 1.

    μ, σ, β and τ are all on one scale (the draw margin is β times a function of the draw
    probability): scaled together they change no prediction. `synelo tune` fits β and τ
    only, so this never drops a parameter there.
    """

    name = "trueskill"
    summary = "trueskill package, P(win) = Φ(Δμ/√(nβ²+Σσ²))"
    defaults = {
        "mu": 25.0,
        "sigma": 25.0 / 3.0,
        "beta": 25.0 / 6.0,
        "tau": 25.0 / 300.0,
        "draw_probability": 0.10,
    }
    tunable = {"beta": Bounds(0.5, 50.0, log=True), "tau": Bounds(0.001, 5.0, log=True)}
    scalings = (Scaling(("mu", "sigma", "beta", "tau"), "one scale; the draw margin is ∝ β"),)

    def __init__(self, **options: float) -> None:
        self.options = {**self.defaults, **options}
        self.env = trueskill.TrueSkill(**self.options)
        self._ratings: dict[str, trueskill.Rating] = {}

    @classmethod
    def create(cls, options: Mapping[str, float], info: HistoryInfo) -> TrueSkillModel:
        return cls(**options)

    def _team(self, players: tuple[str, ...]) -> list[trueskill.Rating]:
        ratings, new = self._ratings, self.env.create_rating
        return [ratings[p] if p in ratings else new() for p in players]

    def win_probability(
        self, team_a: list[trueskill.Rating], team_b: list[trueskill.Rating]
    ) -> float:
        """P(A wins) = Φ(Δμ / sqrt(n·β² + Σσ²)) (see the class docstring)."""
        delta_mu = sum(r.mu for r in team_a) - sum(r.mu for r in team_b)
        sum_sigma2 = sum(r.sigma**2 for r in team_a) + sum(r.sigma**2 for r in team_b)
        n = len(team_a) + len(team_b)
        return float(self.env.cdf(delta_mu / math.sqrt(n * self.env.beta**2 + sum_sigma2)))

    def predict(self, match: Match) -> float:
        return self.win_probability(self._team(match.team_a), self._team(match.team_b))

    def update(self, match: Match) -> None:
        self.step(match)

    def step(self, match: Match) -> float:
        team_a, team_b = self._team(match.team_a), self._team(match.team_b)
        p_a = self.win_probability(team_a, team_b)
        rated = self.env.rate([team_a, team_b], ranks=_RANKS[match.winner])
        for players, team in ((match.team_a, rated[0]), (match.team_b, rated[1])):
            for player, rating in zip(players, team, strict=True):
                self._ratings[player] = rating
        return p_a

    def ratings(self) -> dict[str, float]:
        return {p: r.mu for p, r in self._ratings.items()}

    def rating_of(self, player: str) -> trueskill.Rating:
        """The package's rating of a player (a new one if never seen)."""
        return self._ratings.get(player) or self.env.create_rating()

    def parameters(self) -> dict[str, Any]:
        return dict(self.options)
