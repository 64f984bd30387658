"""`elo`: plain team Elo on summed ratings, the simplest baseline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synelo.models.base import NO_CONTEXT, Model, Param, Rated, RoundFacts, Scaling, score_a
from synelo.ratings.synelo import win_probability


class Elo(Model[float]):
    """P_A = 1/(1 + exp(−(Σ_A − Σ_B)/Θ)) over the round-start rosters (F1's form), then every
    rated player of a side moves by K·(S − P_A) for side A and by the opposite for side B,
    with one fixed K (no convergence, no compression, no rounding). S = 1, ½, 0 for a win,
    draw, loss; everyone starts at r0. The state is the rating itself."""

    name = "elo"
    summary = "team Elo on summed ratings, Θ 400, fixed K"
    parameters = {
        "theta": Param(
            400.0,
            1e-3,
            1e9,
            log=True,
            doc="Θ: logistic scale of the sum gap",
            tune=(50.0, 20_000.0),
        ),
        "k": Param(32.0, 0.0, 1e6, log=True, doc="K: the step of every rating", tune=(1.0, 400.0)),
        "r0": Param(1000.0, -1e6, 1e6, doc="a new player's rating"),
    }
    # K, Θ and the start r0 matter only through their ratios: scaled together by c, every
    # rating is c times its former self, and every gap over Θ is unchanged. When both sides of
    # every match have as many players, r0 cancels out of Σ_A − Σ_B as well, and K/Θ alone
    # matters: `synelo tune` then fits K with Θ held.
    scalings = (
        Scaling(
            ("k", "theta"),
            "every match has as many players a side, so r0 cancels",
            equal_sides=True,
        ),
        Scaling(("k", "theta", "r0"), "ratings start equal and move by K·(S − P); P is F1's"),
    )

    def new_state(self) -> float:
        return float(self.params["r0"])

    def predict(
        self,
        states: Mapping[str, float],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        r0 = float(self.params["r0"])
        get = states.get
        return win_probability(
            sum(get(p, r0) for p in round.team_a),
            sum(get(p, r0) for p in round.team_b),
            float(self.params["theta"]),
        )

    def rate(
        self,
        states: Mapping[str, float],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[float]:
        p_a = self.predict(states, round)
        delta = float(self.params["k"]) * (score_a(round.winner) - p_a)
        r0 = float(self.params["r0"])
        new = {p: states.get(p, r0) + delta for p in round.rated_a}
        new.update({p: states.get(p, r0) - delta for p in round.rated_b})
        return Rated(p_a, new)

    def rating(self, state: float) -> float:
        return state

    def with_rating(self, state: float, rating: float) -> float:
        return float(rating)

    def encode(self, state: float) -> dict[str, Any]:
        return {"rating": state}

    def decode(self, data: Mapping[str, Any]) -> float:
        return float(data["rating"]) if "rating" in data else self.new_state()
