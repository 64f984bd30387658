"""`openskill-pl`, `openskill-bt`, `openskill-tm`: the `openskill` package's Weng–Lin models.

Used as the package documents them: ``model.rating()`` for a new player, ``model.rate(teams,
ranks=…)`` after a round (lower rank wins, equal ranks draw) and ``model.predict_win(teams)``
for the prediction, over the round-start rosters. Parameters as the package names them, on
the scale of `synelo.models.trueskill.SCALE` (its defaults times 60; κ is a ratio).

For PlackettLuce and BradleyTerryFull μ, σ, β and τ are one scale, so this changes no
prediction. ThurstoneMostellerFull's draw margin ε (0.1) is absolute: on this scale it is
60 times smaller relative to β than at the package's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

from synelo.models.base import NO_CONTEXT, Model, Param, Rated, Refitted, RoundFacts, Scaling
from synelo.models.trueskill import (
    SET_SPAN_BETAS,
    check_spread,
    conservative,
    season_skills,
    skill_params,
)

_RANKS = {"A": [1, 2], "B": [2, 1], "draw": [1, 1]}
# PlackettLuce's and BradleyTerryFull's μ, σ, β and τ scaled together change no prediction
# (ThurstoneMostellerFull's absolute ε has no such scaling: see the module)
ONE_SCALE = Scaling(("mu", "sigma", "beta", "tau"), "one scale; κ bounds a ratio")


class OpenSkill(Model[Any]):
    """One of openskill's models; subclasses name the package class. The display rating is
    the ordinal μ − 3σ; the strength balanced is μ."""

    package_model: ClassVar[type]
    display = "μ − 3σ"
    uncertainty = "sigma"
    parameters = {
        **skill_params(),
        "kappa": Param(0.0001, 1e-12, 1.0, log=True, doc="κ: the smallest σ² shrink factor"),
    }

    @classmethod
    def check_params(cls, params: Mapping[str, object]) -> None:
        check_spread(params)

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        self.model = self.package_model(**{k: float(v) for k, v in self.params.items()})

    def new_state(self) -> Any:
        return self.model.rating()

    def _centred(
        self, states: Mapping[str, Any], sides: Sequence[Sequence[str]]
    ) -> tuple[list[list[Any]], float]:
        """The sides' ratings with the mean μ of their players subtracted, and that mean.

        Every prediction and update depends on differences of μ only, but the package
        computes exp(μ/c) for Plackett–Luce: at |μ| of a million that underflows to 0 (a
        division by zero) or overflows. Centring keeps the arguments to the spread of the
        round's skills, which the admin-set rule (`ratable`) keeps in range."""
        teams = [[self.state_of(states, p) for p in side] for side in sides]
        everyone = [r.mu for team in teams for r in team]
        centre = sum(everyone) / len(everyone) if everyone else 0.0
        shifted = [[self.model.rating(mu=r.mu - centre, sigma=r.sigma) for r in t] for t in teams]
        return shifted, centre

    def predict(
        self, states: Mapping[str, Any], round: RoundFacts, context: Mapping[str, Any] = NO_CONTEXT
    ) -> float:
        teams, _ = self._centred(states, (round.team_a, round.team_b))
        return float(self.model.predict_win(teams)[0])

    def rate(
        self, states: Mapping[str, Any], round: RoundFacts, context: Mapping[str, Any] = NO_CONTEXT
    ) -> Rated[Any]:
        p_a = self.predict(states, round)
        rated_a, rated_b = round.rated_a, round.rated_b
        if not rated_a or not rated_b:  # one side rated alone: there is no one to compare with
            return Rated(p_a, {p: self.state_of(states, p) for p in (*rated_a, *rated_b)})
        teams, centre = self._centred(states, (rated_a, rated_b))
        after = self.model.rate(teams, ranks=list(_RANKS[round.winner]))
        new = {
            p: self.model.rating(mu=r.mu + centre, sigma=r.sigma)
            for side, rated in ((rated_a, after[0]), (rated_b, after[1]))
            for p, r in zip(side, rated, strict=True)
        }
        return Rated(p_a, new)

    def rating(self, state: Any) -> float:
        return conservative(state.mu, state.sigma)

    def strength(self, state: Any) -> float:
        return float(state.mu)

    def with_rating(self, state: Any, rating: float) -> Any:
        return self.model.rating(mu=rating + 3.0 * state.sigma, sigma=state.sigma)

    def set_span(self) -> float:
        return SET_SPAN_BETAS * float(self.params["beta"])

    def season(
        self, states: Mapping[str, Any], fraction: float, context: Mapping[str, Any] = NO_CONTEXT
    ) -> Refitted[Any]:
        """S3 (`season_skill`) for every player, σ₀ the pool's `sigma`."""
        sigma0 = float(self.params["sigma"])
        make = self.model.rating
        return Refitted(season_skills(states, fraction, sigma0, lambda m, s: make(mu=m, sigma=s)))

    def encode(self, state: Any) -> dict[str, Any]:
        return {"mu": state.mu, "sigma": state.sigma}

    def decode(self, data: Mapping[str, Any]) -> Any:
        if not data:
            return self.new_state()
        return self.model.rating(mu=float(data["mu"]), sigma=float(data["sigma"]))


class OpenSkillPlackettLuce(OpenSkill):
    name = "openskill-pl"
    summary = "openskill PlackettLuce"
    package_model = PlackettLuce
    scalings = (ONE_SCALE,)


class OpenSkillBradleyTerry(OpenSkill):
    name = "openskill-bt"
    summary = "openskill BradleyTerryFull"
    package_model = BradleyTerryFull
    scalings = (ONE_SCALE,)


class OpenSkillThurstoneMosteller(OpenSkill):
    name = "openskill-tm"
    summary = "openskill ThurstoneMostellerFull"
    package_model = ThurstoneMostellerFull
