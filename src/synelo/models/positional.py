"""`positional`: one Elo rating per position, with score-based results (seed 003).

Foosball's 2v2 has an offense and a defense per team, and a player can be strong at one
and new at the other, so each position keeps its own rating; a TF2 pool could keep one per
class. The round's `positions` field says who played where: a round without it cannot be
rated here. A game's score (10:4) says more than its winner, so the update learns from where
the result falls on an even spread, and the prediction is a distribution over the results,
whose total for A's wins is P(A wins). The formulas are P1–P6 of docs/maths/positional.md.
"""

from __future__ import annotations

from collections.abc import Mapping
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
)
from synelo.ratings.positional import (
    Seat,
    expected_scores,
    result_distribution,
    result_goals,
    result_score,
    spread,
    team_expected_score,
    update,
    win_probability,
)
from synelo.ratings.synelo import Winner

SPREAD = "spread"  # the context entry of P6: {"rounds": N, "squares": Σ(S − E_A)²}


@dataclass(frozen=True, slots=True)
class PositionalSkill:
    """A player's rating and games at each position they played; `base` is their rating at
    a position not played yet (r0, moved along by an admin's set)."""

    base: float
    ratings: dict[str, float] = field(default_factory=dict)
    games: dict[str, int] = field(default_factory=dict)

    def at(self, position: str) -> float:
        return self.ratings.get(position, self.base)


def parse_names(text: str) -> tuple[str, ...]:
    """ "offense, defense" → ("offense", "defense")."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def parse_facing(text: str) -> dict[str, str]:
    """ "offense:defense" → {"offense": "defense", "defense": "offense"}: each pair faces each
    other; a position named nowhere faces itself. ValueError for a malformed pair."""
    out: dict[str, str] = {}
    for pair in parse_names(text):
        left, sep, right = (part.strip() for part in pair.partition(":"))
        if not sep or not left or not right or left == right:
            raise ValueError(f"{pair!r} is not two positions as 'a:b'")
        for one, other in ((left, right), (right, left)):
            if out.get(one, other) != other:
                raise ValueError(f"position {one!r} faces two positions")
            out[one] = other
    return out


class Positional(Model[PositionalSkill]):
    """P1–P6: each player's expected score E_i weighs their own matchup by w and the rest of
    both teams by 1 − w; every player moves by K·(S − E_i) with S the side's result score;
    P(A wins) is the mass of A's winning results in a normal around E_A whose spread is
    learnt from the pool's past rounds (its context)."""

    name = "positional"
    summary = "an Elo rating per position (foosball 2v2), score-based, ¾ own matchup"
    parameters = {
        "k": Param(
            20.0,
            0.0,
            1e6,
            log=True,
            doc="K: the step of every position's rating",
            tune=(1.0, 200.0),
        ),
        "scale": Param(400.0, 1e-3, 1e9, log=True, doc="base-10 logistic scale (Elo's 400)"),
        "r0": Param(1600.0, -1e6, 1e6, doc="a new player's rating at every position"),
        "own_weight": Param(
            0.75,
            0.0,
            1.0,
            doc="w: the weight of a player's own matchup (1 − w: the rest)",
            tune=(0.0, 1.0),
        ),
        "goals": Param(
            10, 1, 1000, integer=True, doc="the goal target: a game to G has 2G results"
        ),
        "positions": Param(
            "offense,defense", text=True, doc="the positions a round may name (empty: any)"
        ),
        "facing": Param(
            "offense:defense", text=True, doc="pairs of positions that play against each other"
        ),
        "one_per_position": Param(
            "no",
            choices=("no", "yes"),
            doc="yes: a team may not have two players at one position (foosball's 2v2)",
        ),
        "spread_prior": Param(
            0.25,
            0.01,
            1.0,
            log=True,
            doc="σ₀: the spread of results of a new pool (P6)",
            tune=(0.02, 1.0),
        ),
        "spread_rounds": Param(20.0, 0.1, 1e6, log=True, doc="m: how many rounds σ₀ is worth (P6)"),
    }

    @classmethod
    def check_params(cls, params: Mapping[str, ParamValue]) -> None:
        """`facing` pairs positions among `positions` (when those are listed)."""
        try:
            facing = parse_facing(str(params["facing"]))
        except ValueError as exc:
            raise ParameterError("facing", str(exc)) from None
        allowed = parse_names(str(params["positions"]))
        unknown = sorted(set(facing) - set(allowed)) if allowed else []
        if unknown:
            raise ParameterError("facing", f"{unknown[0]!r} is not among positions")

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        p = self.params
        self.k, self.scale, self.r0 = float(p["k"]), float(p["scale"]), float(p["r0"])
        self.weight, self.target = float(p["own_weight"]), int(p["goals"])
        self.allowed = frozenset(parse_names(str(p["positions"])))
        self.facing = parse_facing(str(p["facing"]))
        self.unique = p["one_per_position"] == "yes"

    # --- rounds -------------------------------------------------------------------------------
    def check_round(self, round: RoundFacts, rated: bool = True) -> None:  # noqa: C901
        """Every player of a rated round has a position (a prediction may leave any out),
        among `positions` when listed, and the scores, when given, agree with the winner."""
        positions = round.extras.get("positions")
        if not isinstance(positions, Mapping):
            if not rated:
                return
            raise RoundError(("positions",), "this pool's model (positional) needs positions")
        players = dict.fromkeys([*round.team_a, *round.team_b, *round.rated_a, *round.rated_b])
        for player in players:
            where = positions.get(player)
            if where is None:
                if not rated:
                    continue
                raise RoundError(("positions",), f"player {player} has no position")
            if self.allowed and where not in self.allowed:
                known = ", ".join(sorted(self.allowed))
                raise RoundError(
                    ("positions", player), f"{where!r} is not a position of this pool ({known})"
                )
        if self.unique:
            for side in ((*round.team_a, *round.rated_a), (*round.team_b, *round.rated_b)):
                taken: dict[str, str] = {}
                for player in dict.fromkeys(side):
                    where = positions.get(player)
                    if where is not None and taken.setdefault(where, player) != player:
                        raise RoundError(
                            ("positions", player),
                            f"{taken[where]} already plays {where!r} on this team",
                        )
        scores = round.extras.get("scores")
        if isinstance(scores, Mapping) and round.winner != "draw":
            won, lost = (
                (scores["A"], scores["B"])
                if round.winner == "A"
                else (
                    scores["B"],
                    scores["A"],
                )
            )
            if won <= lost:
                raise RoundError(("scores",), f"team {round.winner} won with fewer goals")
        elif isinstance(scores, Mapping) and scores["A"] != scores["B"]:
            raise RoundError(("scores",), "a draw with unequal scores")

    def duel(self, player: str, other: str, winner: Winner) -> RoundFacts:
        """One position against the one it faces."""
        here = min(self.allowed) if self.allowed else "any"
        there = self.facing.get(here, here)
        return RoundFacts(
            (player,), (other,), winner, extras={"positions": {player: here, other: there}}
        )

    def _seats(
        self, states: Mapping[str, PositionalSkill], players: tuple[str, ...], round: RoundFacts
    ) -> list[Seat]:
        positions = round.extras.get("positions") or {}
        seats = []
        for player in players:
            where = positions.get(player)
            state = states.get(player)
            if where is None:  # a prediction without the position: the display rating
                seats.append(Seat("", self.r0 if state is None else self.rating(state)))
            else:
                seats.append(Seat(where, self.r0 if state is None else state.at(where)))
        return seats

    def expected(self, states: Mapping[str, PositionalSkill], round: RoundFacts) -> float:
        """E_A of the round-start rosters (P1, P2). A player whose position the round does
        not say (a prediction for a scramble, say) plays at their display rating."""
        e_a, e_b = expected_scores(
            self._seats(states, round.team_a, round),
            self._seats(states, round.team_b, round),
            self.facing,
            self.weight,
            self.scale,
        )
        return team_expected_score(e_a, e_b)

    def spread_of(self, context: Mapping[str, Any]) -> float:
        """σ of P6 from the pool's context entry."""
        seen = context.get(SPREAD) or {}
        return spread(
            float(self.params["spread_prior"]),
            float(self.params["spread_rounds"]),
            int(seen.get("rounds", 0)),
            float(seen.get("squares", 0.0)),
        )

    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        return (SPREAD,)

    def predict(
        self,
        states: Mapping[str, PositionalSkill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        return win_probability(self.expected(states, round), self.spread_of(context))

    def results(
        self,
        states: Mapping[str, PositionalSkill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> list[tuple[int, int, float]]:
        """P5: every result (goals of A, goals of B) with its probability, A's 0:G loss
        first and A's G:0 win last."""
        probs = result_distribution(
            self.expected(states, round), self.spread_of(context), self.target
        )
        return [(*result_goals(i, self.target), p) for i, p in enumerate(probs)]

    def score(self, round: RoundFacts) -> float:
        """S_A of the round's result (P3)."""
        scores = round.extras.get("scores")
        if not isinstance(scores, Mapping):
            return result_score(round.winner, None, None, self.target)
        return result_score(round.winner, int(scores["A"]), int(scores["B"]), self.target)

    def rate(
        self,
        states: Mapping[str, PositionalSkill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[PositionalSkill]:
        self.check_round(round)
        expected = self.expected(states, round)
        p_a = win_probability(expected, self.spread_of(context))
        s_a = self.score(round)
        # the rated players against each other; a side with none rated is its roster
        rated_a = round.rated_a or round.team_a
        rated_b = round.rated_b or round.team_b
        seats_a = self._seats(states, rated_a, round)
        seats_b = self._seats(states, rated_b, round)
        e_a, e_b = expected_scores(seats_a, seats_b, self.facing, self.weight, self.scale)
        new: dict[str, PositionalSkill] = {}
        for players, seats, expect, s in (
            (round.rated_a, seats_a, e_a, s_a),
            (round.rated_b, seats_b, e_b, 1.0 - s_a),
        ):
            for player, seat, e in zip(players, seats, expect, strict=False):
                old = states.get(player) or self.new_state()
                where = seat.position
                new[player] = PositionalSkill(
                    old.base,
                    {**old.ratings, where: update(seat.rating, self.k, s, e)},
                    {**old.games, where: old.games.get(where, 0) + 1},
                )
        seen = context.get(SPREAD) or {}
        moved = {
            "rounds": int(seen.get("rounds", 0)) + 1,
            "squares": float(seen.get("squares", 0.0)) + (s_a - expected) ** 2,
        }
        return Rated(p_a, new, {SPREAD: moved})

    # --- players ------------------------------------------------------------------------------
    def new_state(self) -> PositionalSkill:
        return PositionalSkill(self.r0)

    def rating(self, state: PositionalSkill) -> float:
        """The mean of the player's position ratings weighted by games played there (r0, or
        the admin's value, before any)."""
        played = sum(state.games.values())
        if played == 0:
            return state.base
        return sum(state.ratings[q] * n for q, n in state.games.items()) / played

    def with_rating(self, state: PositionalSkill, rating: float) -> PositionalSkill:
        """Every position moved by the same amount, so that the display rating is `rating`
        and the differences between positions stay."""
        shift = rating - self.rating(state)
        return PositionalSkill(
            state.base + shift,
            {q: r + shift for q, r in state.ratings.items()},
            dict(state.games),
        )

    def season(
        self,
        states: Mapping[str, PositionalSkill],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[PositionalSkill]:
        """S6: the rating at every position and the base r ← r + f·(R̄ − r), R̄ the mean
        display rating of the players; the display rating, a games-weighted mean of them,
        moves the same share toward R̄. The games played stay."""
        mean = mean_of(self.rating(state) for state in states.values())
        return Refitted(
            {
                player: PositionalSkill(
                    pulled(state.base, mean, fraction),
                    {q: pulled(r, mean, fraction) for q, r in state.ratings.items()},
                    dict(state.games),
                )
                for player, state in states.items()
            }
        )

    def fields(self, state: PositionalSkill) -> dict[str, float]:
        """The display rating, and the rating and games at each position played
        (`offense.rating`, `offense.games`…)."""
        out = {"rating": self.rating(state)}
        for position, rating in sorted(state.ratings.items()):
            out[f"{position}.rating"] = rating
            out[f"{position}.games"] = float(state.games.get(position, 0))
        return out

    def traits(self, states: Mapping[str, PositionalSkill]) -> dict[str, dict[str, float]]:
        """The rating at every position (`offense`, `defense`…), over the players who played
        there."""
        out: dict[str, dict[str, float]] = {}
        for player, state in states.items():
            for position, rating in state.ratings.items():
                out.setdefault(position, {})[player] = rating
        return out

    def encode(self, state: PositionalSkill) -> dict[str, Any]:
        return {"base": state.base, "ratings": state.ratings, "games": state.games}

    def decode(self, data: Mapping[str, Any]) -> PositionalSkill:
        if not data:
            return self.new_state()
        return PositionalSkill(
            float(data["base"]),
            {str(q): float(r) for q, r in data["ratings"].items()},
            {str(q): int(n) for q, n in data["games"].items()},
        )
