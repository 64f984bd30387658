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

from synelo.models.base import (
    NO_CONTEXT,
    Model,
    Param,
    ParameterError,
    ParamValue,
    Rated,
    Refitted,
    RoundError,
    RoundFacts,
    mean_of,
    pulled,
    score_a,
)
from synelo.ratings.sectors_edge import (
    community_value,
    place_fractions,
    pub_power,
    scale_step,
    sorted_powers,
    win_probability,
)
from synelo.ratings.synelo import Winner

SCALE = "scale:"  # + mode: the context entry of E5, {"beta": β, "information": I}
POOLED = "scale"  # E5 over every round of the pool, whatever its mode (no colon: no mode's)
NO_MODE = "(none)"  # how lookups name the places of rounds without a mode


@dataclass(frozen=True, slots=True)
class ScoreboardRecord:
    """A player's recent place values (E1's fractions, newest last) per mode; `base` is
    the place value of a mode they have not played (the pool's `new_place`, or an admin's)."""

    base: float
    recent: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def places(self) -> list[float]:
        return [x for values in self.recent.values() for x in values]


def parse_maxima(text: str) -> dict[str, float]:
    """Modes' maxima: "SPI:6,ctf:24" → {"SPI": 6.0, "CTF": 24.0} (a mode matches whatever
    its case); ValueError for a malformed entry."""
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
        out[mode.upper()] = maximum
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
            0.5,
            0.0,
            1.0,
            doc="a new player's place value: ½ is the middle of the board",
            tune=(0.0, 1.0),
        ),
        "scale_prior": Param(
            0.05,
            0.0,
            10.0,
            doc="β of a new pool, per unit of power gap",
            tune=(0.001, 2.0),
            tune_log=True,
        ),
        "scale_precision": Param(
            100.0,
            1e-3,
            1e9,
            log=True,
            doc="how sure the prior β is (1/variance)",
            tune=(1.0, 1e5),
        ),
    }
    fit_order = ("scale_prior", "scale_precision")

    @classmethod
    def check_params(cls, params: Mapping[str, ParamValue]) -> None:
        try:
            parse_maxima(str(params["mode_max"]))
        except ValueError as exc:
            raise ParameterError("mode_max", str(exc)) from None
        if int(params["community_matches"]) > int(params["matches"]):
            raise ParameterError(
                "community_matches", "may not exceed matches (only that many are kept)"
            )

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
        """pubPower's maximum in the mode (its case does not matter: ctf is CTF)."""
        return self.maxima.get(mode.upper(), self.other_max)

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

    def value(self, state: ScoreboardRecord | None, mode: str) -> float:
        """A player's power in the mode before any ranking: pubPower (E2) or the community
        proposal's min(mean, median) of the last `community_matches` (E2′). Without a mode
        (a split, a prediction that names none) every place the player has kept, of every
        mode, counts together, on `other_max`'s scale."""
        top = self.maximum(mode)
        if state is None:
            return top * self.new_place
        if not mode:
            return (community_value if self.community else pub_power)(
                state.places(), top, state.base
            )
        recent = state.recent.get(mode, ())
        if self.community:
            return community_value(recent[-self.community_keep :], top, state.base)
        return pub_power(recent, top, state.base)

    def values(
        self, states: Mapping[str, ScoreboardRecord], players: Sequence[str], mode: str
    ) -> list[float]:
        """`value` of each player, by id (absent: new)."""
        return [self.value(states.get(p), mode) for p in players]

    def team_powers(
        self, states: Mapping[str, ScoreboardRecord], round: RoundFacts
    ) -> tuple[float, float]:
        """E3: each roster's power, the sum of its players' `strengths` in the round."""
        players = (*round.team_a, *round.team_b)
        each = self.strengths([self.state_of(states, p) for p in players], round)
        size = len(round.team_a)
        return sum(each[:size]), sum(each[size:])

    def scale(self, context: Mapping[str, Any], mode: str) -> tuple[float, float]:
        """(β, information) of the mode (E5): the pool's over every mode for a round without
        one or a mode not rated yet, and the prior until the pool has rated a round."""
        fit = (context.get(SCALE + mode) if mode else None) or context.get(POOLED)
        if not fit:
            return float(self.params["scale_prior"]), float(self.params["scale_precision"])
        return float(fit["beta"]), float(fit["information"])

    def _fit(
        self, context: Mapping[str, Any], key: str, gap: float, score: float
    ) -> dict[str, float]:
        """The context entry `key` after E5's step for this round."""
        fit = context.get(key)
        beta, information = (
            (float(fit["beta"]), float(fit["information"]))
            if fit
            else (float(self.params["scale_prior"]), float(self.params["scale_precision"]))
        )
        beta, information = scale_step(beta, information, gap, score)
        return {"beta": beta, "information": information}

    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        mode = self.mode_of(round)
        return (SCALE + mode, POOLED) if mode else (POOLED,)

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
        self.check_round(round)
        mode = self.mode_of(round)
        power_a, power_b = self.team_powers(states, round)
        p_a = win_probability(power_a, power_b, self.scale(context, mode)[0])
        gap, s_a = power_a - power_b, score_a(round.winner)
        fits = {POOLED: self._fit(context, POOLED, gap, s_a)}
        if mode:
            fits[SCALE + mode] = self._fit(context, SCALE + mode, gap, s_a)
        # places among everyone on the scoreboard (a leaver who scored too), kept by the rated
        points = round.extras["player_scores"]
        rated = [p for p, _ in round.rated()]
        places = place_fractions({p: float(x) for p, x in points.items()})
        new: dict[str, ScoreboardRecord] = {}
        for player in rated:
            old = states.get(player) or self.new_state()
            kept = (*old.recent.get(mode, ()), places[player])[-self.keep :]
            new[player] = ScoreboardRecord(old.base, {**old.recent, mode: kept})
        return Rated(p_a, new, fits)

    # --- players ------------------------------------------------------------------------------
    def new_state(self) -> ScoreboardRecord:
        return ScoreboardRecord(self.new_place)

    def rating(self, state: ScoreboardRecord) -> float:
        """100 × the mean place value of the player's recent matches of every mode (the
        share of the board they usually finish above, near enough); 100 × base before any."""
        places = state.places()
        return 100.0 * (sum(places) / len(places) if places else state.base)

    def strengths(
        self, states: Sequence[ScoreboardRecord], round: RoundFacts | None = None
    ) -> list[float]:
        """E3: sortedPower among the players balanced or playing together, 5 + their rank
        by power in the round's mode (every mode's places without one), equal powers
        sharing the mean of their ranks; or the community proposal's power itself. A team's
        power is the sum, as the policy counts it."""
        mode = "" if round is None else self.mode_of(round)
        values = [self.value(s, mode) for s in states]
        return values if self.community else sorted_powers(values)

    def with_rating(self, state: ScoreboardRecord, rating: float) -> ScoreboardRecord:
        """As if the player's recent matches of every mode they played had all been at the
        place value rating/100 (0 to 100): pubPower then starts from there in each."""
        value = rating / 100.0
        if not 0.0 <= value <= 1.0:
            raise ValueError("a place percentile is within 0…100")
        return ScoreboardRecord(value, {m: (value,) * self.keep for m in state.recent})

    def season(
        self,
        states: Mapping[str, ScoreboardRecord],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[ScoreboardRecord]:
        """S7: every place value kept, of every mode, and the base x ← x + f·(x̄ − x), x̄ the
        mean display rating of the players over 100; each display rating (100 × the mean of
        the player's place values) moves the same share toward the pool's mean, and stays
        within 0…100. The matches kept stay as many."""
        mean = mean_of(self.rating(state) for state in states.values()) / 100.0
        return Refitted(
            {
                player: ScoreboardRecord(
                    pulled(state.base, mean, fraction),
                    {
                        mode: tuple(pulled(x, mean, fraction) for x in values)
                        for mode, values in state.recent.items()
                    },
                )
                for player, state in states.items()
            }
        )

    def fields(self, state: ScoreboardRecord) -> dict[str, float]:
        """The display rating, and per mode played pubPower and the matches it is over
        (`CTF.pub_power`, `CTF.matches`)."""
        out = {"rating": self.rating(state)}
        for mode, recent in sorted(state.recent.items()):
            name = mode or NO_MODE
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
