"""`epa`: our reimplementation of Statbotics' Expected Points Added, a peer for replays only.

EPA is the published predictor of FRC matches (statbotics.io). Each team has an EPA in
points; an alliance's predicted score is its teams' sum, P(A wins) is a logistic of the
predicted margin over the season's score spread, and after a match each team's EPA moves
toward what its alliance scored, by a rate that falls as the team plays (S1–S7 in
`synelo.ratings.epa`, docs/maths/models.md; where each rule comes from:
docs/maths/sources.md). It is a replay model to compare synelo's own models with: a pool
cannot choose it (`replay_only`), since its ratings are points of one game per season.

Where EPA reads what Statbotics knows in advance (the season's mean score and spread), this
model learns it from the season's scores so far, kept in the pool's context (`season`, and
`previous` for the season before): a replay never sees a later match. A round without
`scores` teaches EPA nothing, so it moves no team (EPA's evidence is points; a winner alone
has none), and it leaves the scale as it was.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from synelo.models.base import NO_CONTEXT, Model, Param, Rated, Refitted, RoundFacts
from synelo.ratings.epa import (
    ScoreStats,
    carried,
    scale,
    standing,
    start_epa,
    updated_epa,
    win_probability,
)

SEASON = "season"  # the context entry of the season's scores so far (S1)
PREVIOUS = "previous"  # the last season's, the scale until this one settles
PLAYOFF = "playoff"  # a round of this `type` weighs `playoff_weight` and counts no match


@dataclass(slots=True)
class EpaTeam:
    """A team's EPA in points, its scored qualification rounds this season (N of S4, S5),
    and, until its first scored round of the season, the standing it carries (S2, S7):
    `epa` is then the carried value in the last season's points, shown until it plays.
    `last` is its standing at the end of the last season it played that season (S7)."""

    epa: float
    matches: int = 0
    carry: float | None = None
    last: float | None = None


def round_scores(round: RoundFacts) -> tuple[float, float] | None:
    """The alliances' scores of a round (`scores`: {"A": x, "B": y}), None when it has none."""
    scores = round.extras.get("scores")
    if not isinstance(scores, Mapping):
        return None
    out = []
    for side in ("A", "B"):
        value = scores.get(side)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if not math.isfinite(value):
            return None
        out.append(float(value))
    return out[0], out[1]


class Epa(Model[EpaTeam]):
    """S3's prediction and S6's update of each team's EPA, S2's start of a team in a season,
    S7's carry-over at a new season (`season`), over S1's scale learned from the scores."""

    name = "epa"
    summary = "a reimplementation of Statbotics' EPA (points from scores), replay-only peer"
    display = "EPA (points)"
    replay_only = True
    parameters = {
        "season": Param(
            0.4,
            0.0,
            1.0,
            doc="EPA's mean reversion: a season's share of the way back to a new team's start",
        ),
        "spread": Param(
            0.625,
            1e-3,
            1e3,
            log=True,
            doc="κ: P(A) = 1/(1 + 10^(−κ·margin/σ)), EPA's 5/8",
        ),
        "start": Param(
            0.2,
            -10.0,
            10.0,
            doc="a new team starts this many score sd's below an average team's share",
        ),
        "year_one": Param(
            0.7, 0.0, 1.0, doc="the weight of the last season against the one before (S7)"
        ),
        "playoff_weight": Param(1 / 3, 0.0, 1.0, doc="the weight of a playoff round's update (S6)"),
    }

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        self.spread = float(self.params["spread"])
        self.new_team = -float(self.params["start"])

    # --- the pool's scale ---------------------------------------------------------------------
    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        return (SEASON, PREVIOUS)

    @staticmethod
    def _stats(context: Mapping[str, Any]) -> tuple[ScoreStats, ScoreStats]:
        return ScoreStats.from_json(context.get(SEASON)), ScoreStats.from_json(
            context.get(PREVIOUS)
        )

    def _epa(self, state: EpaTeam | None, stats: ScoreStats) -> float:
        """A roster team's EPA on the round's scale: S2's start if it has not played yet
        this season (a team never seen carries a new team's standing)."""
        if state is None:
            return start_epa(self.new_team, stats)
        return state.epa if state.carry is None else start_epa(state.carry, stats)

    def _sums(
        self, states: Mapping[str, EpaTeam], round: RoundFacts, stats: ScoreStats
    ) -> tuple[float, float]:
        get = states.get
        return (
            sum(self._epa(get(p), stats) for p in round.team_a),
            sum(self._epa(get(p), stats) for p in round.team_b),
        )

    # --- rating -------------------------------------------------------------------------------
    def new_state(self) -> EpaTeam:
        return EpaTeam(0.0, 0, self.new_team)

    def predict(
        self,
        states: Mapping[str, EpaTeam],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        stats = scale(*self._stats(context))
        if stats is None:
            return 0.5
        sum_a, sum_b = self._sums(states, round, stats)
        return win_probability(sum_a, sum_b, stats.sd, self.spread)

    def rate(
        self,
        states: Mapping[str, EpaTeam],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[EpaTeam]:
        season, previous = self._stats(context)
        stats = scale(season, previous)
        p_a = 0.5
        if stats is not None:
            p_a = win_probability(*self._sums(states, round, stats), stats.sd, self.spread)
        scores = round_scores(round)
        if scores is None:  # a winner alone: nothing in points to learn
            return Rated(p_a, {p: self.state_of(states, p) for p, _ in round.rated()})
        size_a, size_b = len(round.team_a), len(round.team_b)
        season = season.add(scores[0], size_a).add(scores[1], size_b)
        learned = {SEASON: season.to_json()}
        stats = stats or scale(season, previous)  # the pool's first scores: their own scale
        if stats is None:  # they are all equal: no spread yet
            return Rated(p_a, {p: self.state_of(states, p) for p, _ in round.rated()}, learned)
        sum_a, sum_b = self._sums(states, round, stats)
        error_a, error_b = scores[0] - sum_a, scores[1] - sum_b
        playoff = round.extras.get("type") == PLAYOFF
        weight = float(self.params["playoff_weight"]) if playoff else 1.0
        new: dict[str, EpaTeam] = {}
        for player, side in round.rated():
            state = states.get(player)
            epa = self._epa(state, stats)
            matches = 0 if state is None else state.matches
            own, theirs = (error_a, error_b) if side == "A" else (error_b, error_a)
            size = size_a if side == "A" else size_b
            new[player] = EpaTeam(
                updated_epa(epa, matches, own, theirs, size, weight),
                matches + (not playoff),
                None,
                None if state is None else state.last,
            )
        return Rated(p_a, new, learned)

    # --- seasons ------------------------------------------------------------------------------
    def season(
        self,
        states: Mapping[str, EpaTeam],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[EpaTeam]:
        """S7: each team's standing at the end of the season (a team that did not play it
        stands as a new team), blended with the season before by `year_one` and taken
        `fraction` of the way back to a new team's standing, is what it carries into the
        next season (converted to points at its first scored round there, S2). Every N
        starts again at 0; the season's scores become the last season's, and the new
        season's scale is learned from nothing."""
        season, previous = self._stats(context)
        ended = season if season.usable else previous if previous.usable else None
        year_one = float(self.params["year_one"])
        out: dict[str, EpaTeam] = {}
        for player, state in states.items():
            played = state.carry is None
            last = standing(state.epa, ended) if played and ended is not None else None
            before = self.new_team if state.last is None else state.last
            carry = carried(
                self.new_team if last is None else last, before, self.new_team, year_one, fraction
            )
            shown = state.epa if ended is None else start_epa(carry, ended)
            out[player] = EpaTeam(shown, 0, carry, last)
        context_out: dict[str, Any] = {SEASON: ScoreStats().to_json()}
        if ended is not None:
            context_out[PREVIOUS] = ended.to_json()
        return Refitted(out, context_out)

    # --- what a replay shows ----------------------------------------------------------------
    def rating(self, state: EpaTeam) -> float:
        return state.epa

    def with_rating(self, state: EpaTeam, rating: float) -> EpaTeam:
        return EpaTeam(float(rating), state.matches, None, state.last)

    def fields(self, state: EpaTeam) -> dict[str, float]:
        return {"rating": state.epa, "rounds": float(state.matches)}

    # --- storage ------------------------------------------------------------------------------
    def encode(self, state: EpaTeam) -> dict[str, Any]:
        out: dict[str, Any] = {"epa": state.epa, "matches": state.matches}
        if state.carry is not None:
            out["carry"] = state.carry
        if state.last is not None:
            out["last"] = state.last
        return out

    def decode(self, data: Mapping[str, Any]) -> EpaTeam:
        if not data:
            return self.new_state()
        carry, last = data.get("carry"), data.get("last")
        return EpaTeam(
            float(data["epa"]),
            int(data["matches"]),
            None if carry is None else float(carry),
            None if last is None else float(last),
        )
