"""`sectors-edge`: Sector's Edge's power from scoreboard places, as a model a pool can rate
and predict with (seed 002).

A player's pubPower per game mode is their mean place value over their last 50 matches of
that mode; a round's players are ranked by it (sortedPower = rank + 5) and a team's power is
the sum. The game's own autobalancer (`synelo.balance.sectors_edge`) acts on those values
mid-round; here they also predict, P(A wins) = σ(β·(power_A − power_B)), with β learnt per
mode from the pool's rounds, so that the model can be scored like any other. Only what is
known before the round predicts: sortedPower, not the in-game points. Places come from the
round's `player_scores`, which a round must carry. E1–E5 of docs/maths/sectors-edge.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synelo.balance.sectors_edge import SEPlayer, sorted_power
from synelo.models.base import (
    NO_CONTEXT,
    Model,
    Param,
    ParameterError,
    ParamValue,
    Rated,
    RoundError,
    RoundFacts,
    score_a,
)
from synelo.ratings.scoreboard import (
    community_value,
    place_fractions,
    pub_power,
    scale_step,
    win_probability,
)
from synelo.ratings.synelo import Winner

SCALE = "scale:"  # + mode: the context entry of E5, {"beta": β, "information": I}


@dataclass(frozen=True, slots=True)
class ScoreboardRecord:
    """A player's recent place values (E1's fractions, newest last) per mode; `base` is
    the place value of a mode they have not played (the pool's `new_place`, or an admin's)."""

    base: float
    recent: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def places(self) -> list[float]:
        return [x for values in self.recent.values() for x in values]


def parse_maxima(text: str) -> dict[str, float]:
    """ "SPI:6,CTF:24" → {"SPI": 6.0, "CTF": 24.0}; ValueError for a malformed entry."""
    out: dict[str, float] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        mode, sep, value = (part.strip() for part in entry.partition(":"))
        try:
            maximum = float(value)
        except ValueError:
            maximum = float("nan")
        if not sep or not mode or not 0 < maximum <= 1e6:
            raise ValueError(f"{entry!r} is not 'MODE:maximum' with a maximum above 0")
        out[mode] = maximum
    return out


class SectorsEdge(Model[ScoreboardRecord]):
    """E1–E5: place values from player_scores, pubPower per mode, team power as the sum of
    sortedPower (or of the community proposal's min(mean, median)), and a logistic of the
    power gap with a per-mode scale fitted online."""

    name = "sectors-edge"
    summary = "Sector's Edge: power from scoreboard places, team power = Σ sortedPower"
    display = "place percentile"
    parameters = {
        "power": Param(
            "sorted",
            choices=("sorted", "community"),
            doc="team power: Σ sortedPower, or Σ min(mean, median) of places (the community's)",
        ),
        "matches": Param(50, 1, 1000, integer=True, doc="recent matches per mode (pubPower)"),
        "community_matches": Param(
            20, 1, 1000, integer=True, doc="recent matches of the community proposal's power"
        ),
        "mode_max": Param(
            "SPI:6,STA:6,SAL:16,BRK:24,CTF:24", text=True, doc="pubPower's maximum per mode"
        ),
        "other_max": Param(24.0, 1e-3, 1e6, doc="the maximum of any other mode (or none)"),
        "new_place": Param(
            0.5, 0.0, 1.0, doc="a new player's place value: ½ is the middle of the board"
        ),
        "scale_prior": Param(0.05, 0.0, 10.0, doc="β of a new pool, per unit of power gap"),
        "scale_precision": Param(
            100.0, 1e-3, 1e9, log=True, doc="how sure the prior β is (1/variance)"
        ),
    }

    @classmethod
    def check_params(cls, params: Mapping[str, ParamValue]) -> None:
        try:
            parse_maxima(str(params["mode_max"]))
        except ValueError as exc:
            raise ParameterError("mode_max", str(exc)) from None

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        p = self.params
        self.maxima = parse_maxima(str(p["mode_max"]))
        self.other_max, self.new_place = float(p["other_max"]), float(p["new_place"])
        self.keep, self.community = int(p["matches"]), p["power"] == "community"
        self.community_keep = int(p["community_matches"])

    # --- rounds -------------------------------------------------------------------------------
    @staticmethod
    def mode_of(round: RoundFacts) -> str:
        """The round's mode ("" for a round without one)."""
        return str(round.extras.get("mode") or "")

    def maximum(self, mode: str) -> float:
        return self.maxima.get(mode, self.other_max)

    def check_round(self, round: RoundFacts, rated: bool = True) -> None:
        """Every rated player of a rated round has scoreboard points (a prediction needs
        none: points are 0 when a round starts)."""
        if not rated:
            return
        points = round.extras.get("player_scores")
        if not isinstance(points, Mapping):
            raise RoundError(
                ("player_scores",), "this pool's model (sectors-edge) needs player_scores"
            )
        for player in (*round.rated_a, *round.rated_b):
            if player not in points:
                raise RoundError(("player_scores",), f"player {player} has no score")

    def duel(self, player: str, other: str, winner: Winner) -> RoundFacts:
        return RoundFacts(
            (player,), (other,), winner, extras={"player_scores": {player: 1, other: 0}}
        )

    def values(
        self, states: Mapping[str, ScoreboardRecord], players: Sequence[str], mode: str
    ) -> list[float]:
        """Each player's power in the mode (E2 or E2′), before any ranking."""
        top, out = self.maximum(mode), []
        for player in players:
            state = states.get(player)
            base = self.new_place if state is None else state.base
            recent = () if state is None else state.recent.get(mode, ())
            if self.community:
                out.append(community_value(recent[-self.community_keep :], top, base))
            else:
                out.append(pub_power(recent, top, base))
        return out

    def team_powers(
        self, states: Mapping[str, ScoreboardRecord], round: RoundFacts
    ) -> tuple[float, float]:
        """E3: each roster's power, Σ sortedPower (rank by pubPower among the round's
        players + 5), or Σ of the community proposal's values."""
        players = (*round.team_a, *round.team_b)
        values = self.values(states, players, self.mode_of(round))
        if self.community:
            each = dict(zip(players, values, strict=True))
        else:
            ranked = sorted_power(SEPlayer(p, "A", v) for p, v in zip(players, values, strict=True))
            each = {p: float(r) for p, r in ranked.items()}
        return sum(each[p] for p in round.team_a), sum(each[p] for p in round.team_b)

    def scale(self, context: Mapping[str, Any], mode: str) -> tuple[float, float]:
        """(β, information) of the mode (E5): the prior until the pool has rated one."""
        fit = context.get(SCALE + mode)
        if not fit:
            return float(self.params["scale_prior"]), float(self.params["scale_precision"])
        return float(fit["beta"]), float(fit["information"])

    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        return (SCALE + self.mode_of(round),)

    def predict(
        self,
        states: Mapping[str, ScoreboardRecord],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        power_a, power_b = self.team_powers(states, round)
        return win_probability(power_a, power_b, self.scale(context, self.mode_of(round))[0])

    def rate(
        self,
        states: Mapping[str, ScoreboardRecord],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[ScoreboardRecord]:
        mode = self.mode_of(round)
        power_a, power_b = self.team_powers(states, round)
        beta, information = self.scale(context, mode)
        p_a = win_probability(power_a, power_b, beta)
        beta, information = scale_step(beta, information, power_a - power_b, score_a(round.winner))
        self.check_round(round)
        points = round.extras["player_scores"]
        rated = [p for p, _ in round.rated()]
        places = place_fractions({p: float(points[p]) for p in rated})
        new: dict[str, ScoreboardRecord] = {}
        for player in rated:
            old = states.get(player) or self.new_state()
            kept = (*old.recent.get(mode, ()), places[player])[-self.keep :]
            new[player] = ScoreboardRecord(old.base, {**old.recent, mode: kept})
        return Rated(p_a, new, {SCALE + mode: {"beta": beta, "information": information}})

    # --- players ------------------------------------------------------------------------------
    def new_state(self) -> ScoreboardRecord:
        return ScoreboardRecord(self.new_place)

    def rating(self, state: ScoreboardRecord) -> float:
        """100 × the mean place value of the player's recent matches of every mode (the
        share of the board they usually finish above, near enough); 100 × base before any."""
        places = state.places()
        return 100.0 * (sum(places) / len(places) if places else state.base)

    def strengths(self, states: Sequence[ScoreboardRecord]) -> list[float]:
        """sortedPower among the players balanced together (rank by `rating` + 5), or the
        community proposal's value: what the teams' power sums add up."""
        if self.community:
            return [
                100.0 * community_value(s.places()[-self.community_keep :], 1.0, s.base)
                for s in states
            ]
        ranked = sorted_power(SEPlayer(str(i), "A", self.rating(s)) for i, s in enumerate(states))
        return [float(ranked[str(i)]) for i in range(len(states))]

    def with_rating(self, state: ScoreboardRecord, rating: float) -> ScoreboardRecord:
        """As if the player's recent matches of every mode they played had all been at the
        place value rating/100 (0 to 100): pubPower then starts from there in each."""
        value = rating / 100.0
        if not 0.0 <= value <= 1.0:
            raise ValueError("a place percentile is within 0…100")
        return ScoreboardRecord(value, {m: (value,) * self.keep for m in state.recent})

    def fields(self, state: ScoreboardRecord) -> dict[str, float]:
        """The display rating, and per mode played pubPower and the matches it is over
        (`CTF.pub_power`, `CTF.matches`)."""
        out = {"rating": self.rating(state)}
        for mode, recent in sorted(state.recent.items()):
            name = mode or "none"
            out[f"{name}.pub_power"] = pub_power(recent, self.maximum(mode), state.base)
            out[f"{name}.matches"] = float(len(recent))
        return out

    def encode(self, state: ScoreboardRecord) -> dict[str, Any]:
        return {"base": state.base, "recent": {m: list(v) for m, v in state.recent.items()}}

    def decode(self, data: Mapping[str, Any]) -> ScoreboardRecord:
        if not data:
            return self.new_state()
        return ScoreboardRecord(
            float(data["base"]),
            {str(m): tuple(float(x) for x in v) for m, v in data["recent"].items()},
        )
