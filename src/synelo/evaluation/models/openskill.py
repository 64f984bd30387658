"""`openskill-pl`, `openskill-bt`, `openskill-tm`: the `openskill` package's Weng–Lin models.

Used as its README shows: ``model.rating()`` for a new player, ``model.rate(teams,
ranks=…)`` after a match (lower rank wins, equal ranks tie) and ``model.predict_win(teams)``
for the prediction. The package's defaults (μ 25, σ 25/3, β 25/6, κ 0.0001, τ 25/300)
unless a parameter is given.

For PlackettLuce and BradleyTerryFull, μ, σ, β and τ are on one scale (κ bounds a ratio):
scaled together they change no prediction. ThurstoneMostellerFull has no such scaling: its
draw margin ε (0.1) is absolute, so scaling μ, σ, β and τ moves the predictions (by up to
0.003 on 300 random matches).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

from synelo.evaluation.history import Match
from synelo.evaluation.models.base import (
    Bounds,
    HistoryInfo,
    RatingModel,
    Scaling,
    register,
)

_RANKS = {"A": [1, 2], "B": [2, 1], "draw": [1, 1]}
ONE_SCALE = Scaling(("mu", "sigma", "beta", "tau"), "one scale; κ bounds a ratio")


class OpenSkillModel(RatingModel):
    """One of openskill's models; subclasses name the package class."""

    package_model: ClassVar[type]
    defaults = {
        "mu": 25.0,
        "sigma": 25.0 / 3.0,
        "beta": 25.0 / 6.0,
        "kappa": 0.0001,
        "tau": 25.0 / 300.0,
    }
    tunable = {"beta": Bounds(0.5, 50.0, log=True), "tau": Bounds(0.001, 5.0, log=True)}

    def __init__(self, **options: float) -> None:
        self.options = {**self.defaults, **options}
        self.model = self.package_model(**self.options)
        self._ratings: dict[str, Any] = {}

    @classmethod
    def create(cls, options: Mapping[str, float], info: HistoryInfo) -> OpenSkillModel:
        return cls(**options)

    def _team(self, players: tuple[str, ...]) -> list[Any]:
        ratings, new = self._ratings, self.model.rating
        return [ratings[p] if p in ratings else new(name=p) for p in players]

    def predict(self, match: Match) -> float:
        teams = [self._team(match.team_a), self._team(match.team_b)]
        return float(self.model.predict_win(teams)[0])

    def update(self, match: Match) -> None:
        teams = [self._team(match.team_a), self._team(match.team_b)]
        self._store(match, self.model.rate(teams, ranks=list(_RANKS[match.winner])))

    def step(self, match: Match) -> float:
        teams = [self._team(match.team_a), self._team(match.team_b)]
        p_a = float(self.model.predict_win(teams)[0])
        self._store(match, self.model.rate(teams, ranks=list(_RANKS[match.winner])))
        return p_a

    def _store(self, match: Match, rated: list[list[Any]]) -> None:
        for players, team in ((match.team_a, rated[0]), (match.team_b, rated[1])):
            for player, rating in zip(players, team, strict=True):
                self._ratings[player] = rating

    def ratings(self) -> dict[str, float]:
        return {p: r.mu for p, r in self._ratings.items()}

    def rating_of(self, player: str) -> Any:
        """The package's rating object of a player (a new one if never seen)."""
        return self._ratings.get(player) or self.model.rating(name=player)

    def parameters(self) -> dict[str, Any]:
        return dict(self.options)


@register
class OpenSkillPlackettLuce(OpenSkillModel):
    name = "openskill-pl"
    summary = "openskill PlackettLuce"
    package_model = PlackettLuce
    scalings = (ONE_SCALE,)


@register
class OpenSkillBradleyTerry(OpenSkillModel):
    name = "openskill-bt"
    summary = "openskill BradleyTerryFull"
    package_model = BradleyTerryFull
    scalings = (ONE_SCALE,)


@register
class OpenSkillThurstoneMosteller(OpenSkillModel):
    name = "openskill-tm"
    summary = "openskill ThurstoneMostellerFull"
    package_model = ThurstoneMostellerFull
