"""`trueskill`: TrueSkill through the `trueskill` package (Heungsub Lee's implementation)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import trueskill as ts

from synelo.models.base import (
    NO_CONTEXT,
    Model,
    Param,
    ParameterError,
    Rated,
    Refitted,
    RoundFacts,
    Scaling,
    mean_of,
    pulled,
)

_RANKS = {"A": [0, 1], "B": [1, 0], "draw": [0, 0]}

# FAForever's scale: the package's defaults (μ 25, σ 25/3, β 25/6, τ 25/300) times 60. Every
# prediction is the same on either scale (μ, σ, β, τ and the draw margin scale together),
# and μ − 3σ then reads like a rating: 0 for a new player, climbing into the thousands.
SCALE = 60.0


def skill_params() -> dict[str, Param]:
    """μ, σ, β and τ of the Gaussian skill models (TrueSkill and openskill's Weng–Lin), with
    where `synelo tune` searches β and τ (it fits those two only)."""
    return {
        "mu": Param(25.0 * SCALE, -1e6, 1e6, doc="μ of a new player"),
        "sigma": Param(25.0 / 3.0 * SCALE, 1e-6, 1e6, log=True, doc="σ of a new player"),
        "beta": Param(
            25.0 / 6.0 * SCALE,
            1e-6,
            1e6,
            log=True,
            doc="β: performance noise",
            tune=(0.5 * SCALE, 50.0 * SCALE),
        ),
        "tau": Param(
            25.0 / 300.0 * SCALE,
            0.0,
            1e6,
            log=True,
            doc="τ: skill drift per round",
            tune=(0.001 * SCALE, 5.0 * SCALE),
        ),
    }


# An admin may set a skill at most this many β from a new player's. Further apart, a win is
# certain to within e^-(span²/2) (nothing left to learn) and the packages overflow: TrueSkill
# at a few tens of thousands of points, openskill's Plackett–Luce (exp(μ/c)) once its σ has
# shrunk. 100β is 25,000 points at the default β of 250.
SET_SPAN_BETAS = 100.0


# σ and τ at most this many β. The draw margin is a multiple of β, and the packages compare
# it with √(nβ² + Σσ²): with σ or τ a million times β (each alone within bounds) that margin
# vanishes beside the uncertainty and a draw's update divides 0 by 0. A new player's σ is 2β
# by the packages' defaults.
MAX_SPREAD_BETAS = 100.0


def check_spread(params: Mapping[str, object]) -> None:
    """σ and τ within MAX_SPREAD_BETAS·β (ParameterError naming the one that is not)."""
    beta = float(params["beta"])  # type: ignore[arg-type]
    for name in ("sigma", "tau"):
        if float(params[name]) > MAX_SPREAD_BETAS * beta:  # type: ignore[arg-type]
            raise ParameterError(name, f"must be at most {MAX_SPREAD_BETAS:g}·beta ({beta:g})")


def conservative(mu: float, sigma: float) -> float:
    """The display rating of a Gaussian skill: μ − 3σ, which the player exceeds with
    probability 99.87 % (TrueSkill's leaderboard rule; openskill calls it the ordinal)."""
    return mu - 3.0 * sigma


def season_skill(
    mu: float, sigma: float, mean_mu: float, sigma0: float, fraction: float
) -> tuple[float, float]:
    """S3, a Gaussian skill's season: μ ← μ + f·(μ̄ − μ) toward the pool's mean μ̄, and
    σ² ← σ² + f·(σ₀² − σ²), the variance grown back the share f of the way to a new
    player's σ₀² (f = 1: a new player's σ at the pool's mean). Returns (μ, σ)."""
    variance = sigma * sigma
    return pulled(mu, mean_mu, fraction), math.sqrt(variance + fraction * (sigma0**2 - variance))


def season_skills(
    states: Mapping[str, Any], fraction: float, sigma0: float, make: Callable[[float, float], Any]
) -> dict[str, Any]:
    """S3 for every player of `states` (skills with `mu` and `sigma`), μ̄ their mean μ; each
    new skill is `make(μ, σ)`."""
    mean = mean_of(float(state.mu) for state in states.values())
    return {
        player: make(*season_skill(state.mu, state.sigma, mean, sigma0, fraction))
        for player, state in states.items()
    }


class TrueSkill(Model[ts.Rating]):
    """Ratings updated by ``env.rate([team_a, team_b], ranks=…)`` of a ``TrueSkill``
    environment. The package has no win probability; it is the TrueSkill model's own, as
    trueskill.org gives it, over the round-start rosters:

        P(A wins) = Φ((Σ_A μ − Σ_B μ) / sqrt(n·β² + Σ σ²))

    with n the players of both rosters and Σσ² over both; it ignores the draw margin, so
    P(A) + P(B) = 1. The rated players (the participants) are then updated as two teams.
    The display rating is μ − 3σ; the strength balanced is μ."""

    name = "trueskill"
    summary = "TrueSkill (trueskill package), P(win) = Φ(Δμ/√(nβ²+Σσ²))"
    display = "μ − 3σ"
    uncertainty = "sigma"
    parameters = {
        **skill_params(),
        # not 0: the package cannot update on a draw it was told cannot happen (0/0)
        "draw_probability": Param(0.10, 1e-6, 0.99, doc="the share of drawn rounds"),
    }
    # μ, σ, β and τ are all on one scale (the draw margin is β times a function of the draw
    # probability): scaled together they change no prediction. `synelo tune` fits β and τ
    # only, so this never drops a parameter there.
    scalings = (Scaling(("mu", "sigma", "beta", "tau"), "one scale; the draw margin is ∝ β"),)

    @classmethod
    def check_params(cls, params: Mapping[str, object]) -> None:
        check_spread(params)

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        self.env = ts.TrueSkill(**{k: float(v) for k, v in self.params.items()})

    def new_state(self) -> ts.Rating:
        return self.env.create_rating()

    def _team(self, states: Mapping[str, ts.Rating], players: Sequence[str]) -> list[ts.Rating]:
        return [self.state_of(states, p) for p in players]

    def win_probability(self, team_a: list[ts.Rating], team_b: list[ts.Rating]) -> float:
        """P(A wins) = Φ(Δμ / sqrt(n·β² + Σσ²)) (see the class docstring)."""
        delta_mu = sum(r.mu for r in team_a) - sum(r.mu for r in team_b)
        sum_sigma2 = sum(r.sigma**2 for r in team_a) + sum(r.sigma**2 for r in team_b)
        n = len(team_a) + len(team_b)
        return float(self.env.cdf(delta_mu / math.sqrt(n * self.env.beta**2 + sum_sigma2)))

    def predict(
        self,
        states: Mapping[str, ts.Rating],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        team_a, team_b = self._team(states, round.team_a), self._team(states, round.team_b)
        return self.win_probability(team_a, team_b)

    def rate(
        self,
        states: Mapping[str, ts.Rating],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[ts.Rating]:
        p_a = self.predict(states, round)
        rated_a, rated_b = round.rated_a, round.rated_b
        if not rated_a or not rated_b:  # one side rated alone: there is no one to compare with
            return Rated(p_a, {p: self.state_of(states, p) for p in (*rated_a, *rated_b)})
        teams = [self._team(states, rated_a), self._team(states, rated_b)]
        after = self.env.rate(teams, ranks=_RANKS[round.winner])
        new = dict(zip(rated_a, after[0], strict=True))
        new.update(zip(rated_b, after[1], strict=True))
        return Rated(p_a, new)

    def rating(self, state: ts.Rating) -> float:
        return conservative(state.mu, state.sigma)

    def strength(self, state: ts.Rating) -> float:
        return float(state.mu)

    def with_rating(self, state: ts.Rating, rating: float) -> ts.Rating:
        return self.env.create_rating(mu=rating + 3.0 * state.sigma, sigma=state.sigma)

    def set_span(self) -> float:
        return SET_SPAN_BETAS * float(self.params["beta"])

    def season(
        self,
        states: Mapping[str, ts.Rating],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[ts.Rating]:
        """S3 (`season_skill`) for every player, σ₀ the pool's `sigma`."""
        sigma0 = float(self.params["sigma"])
        return Refitted(season_skills(states, fraction, sigma0, self.env.create_rating))

    def fields(self, state: ts.Rating) -> dict[str, float]:
        return {"mu": state.mu, "sigma": state.sigma}

    def encode(self, state: ts.Rating) -> dict[str, Any]:
        """μ and σ to read, and the package's own precision π = σ⁻² and τ = πμ, which it
        computes with: μ and σ derived from them do not always give them back bit for bit."""
        return {"mu": state.mu, "sigma": state.sigma, "pi": state.pi, "tau": state.tau}

    def decode(self, data: Mapping[str, Any]) -> ts.Rating:
        if not data:
            return self.new_state()
        rating = self.env.create_rating(mu=float(data["mu"]), sigma=float(data["sigma"]))
        rating.pi, rating.tau = float(data["pi"]), float(data["tau"])
        return rating
