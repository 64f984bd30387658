"""A reimplementation of Statbotics' Expected Points Added (S1–S7 of docs/maths/models.md).

EPA rates a team in points: an alliance's predicted score is the sum of its teams' EPAs, and
after a match each team's EPA moves toward what its alliance scored. The rules are those
Statbotics published for its EPA in 2023 ("v2"): the blog posts "The EPA Model"
(statbotics.io/blog/epa) and "A Gentle Introduction" (statbotics.io/blog/intro), and the
code they link to (github.com/avgupta456/statbotics, backend/src/data/epa.py). Each
function names its source; docs/maths/sources.md says what differs. Written anew here: none
of Statbotics' code is used.

What Statbotics knows in advance and a replay may not (the season's mean score and spread),
this module learns from the scores seen so far in the season: `ScoreStats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from synelo.ratings.synelo import win_probability as logistic_gap

# A scale settles once the season has seen this many scores (alliance scores, two a
# round); before that the last season's is used when there is one (S1).
SETTLED = 20


@dataclass(frozen=True, slots=True)
class ScoreStats:
    """S1: the scores of one season so far: how many (`n`), the mean share of a team
    (each alliance score over its roster's size), the mean alliance score and the sum of
    squared deviations from it (Welford's running form)."""

    n: int = 0
    share: float = 0.0
    mean: float = 0.0
    m2: float = 0.0

    @property
    def sd(self) -> float:
        """The sample standard deviation of the alliance scores (0 before two)."""
        return math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else 0.0

    @property
    def usable(self) -> bool:
        """Whether the scores give a scale at all: two of them, not all equal."""
        return self.n > 1 and self.m2 > 0.0

    def add(self, score: float, size: int) -> ScoreStats:
        """S1: the statistics with one more alliance score of a roster of `size` teams."""
        n = self.n + 1
        delta = score - self.mean
        mean = self.mean + delta / n
        share = self.share + (score / size - self.share) / n
        return ScoreStats(n, share, mean, self.m2 + delta * (score - mean))

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "share": self.share, "mean": self.mean, "m2": self.m2}

    @classmethod
    def from_json(cls, data: Any) -> ScoreStats:
        if not data:
            return cls()
        return cls(int(data["n"]), float(data["share"]), float(data["mean"]), float(data["m2"]))


def scale(season: ScoreStats, previous: ScoreStats) -> ScoreStats | None:
    """S1: the scale a round is predicted on: the season's own once it has SETTLED scores
    (or when no earlier season gave one), else the last season's; None before any.
    (Statbotics scales by the season's week-1 scores, known in advance: blog, "Point Unit
    Elo"; intro, "Point Units". A replay learns them instead.)"""
    if season.usable and (season.n >= SETTLED or not previous.usable):
        return season
    if previous.usable:
        return previous
    return None


def start_epa(standing: float, stats: ScoreStats) -> float:
    """S2: a team's EPA at its first scored round of a season, from its carried standing c
    (in alliance-score standard deviations from an average team's share):
    max(0, share + σ·c). A new team's c is −start (Statbotics' code: INIT_PENALTY 0.2 and
    a floor at 0)."""
    return max(0.0, stats.share + stats.sd * standing)


def win_probability(sum_a: float, sum_b: float, sd: float, spread: float) -> float:
    """S3: P(A) = 1/(1 + 10^(−κ·(Ŝ_A − Ŝ_B)/σ)), Ŝ the alliances' EPA sums, σ the season's
    alliance-score standard deviation, κ `spread` (Statbotics' code: 5/8 from 2008)."""
    return logistic_gap(sum_a, sum_b, sd / (spread * math.log(10.0)))


def learning_rate(matches: int) -> float:
    """S4: K(N) = 0.5 for N ≤ 6, falling linearly to 0.3 at N = 12, then 0.3; N is the
    team's scored qualification rounds so far this season (blog, "Updating the K
    parameter")."""
    return min(0.5, max(0.3, 0.5 - (matches - 6) / 30))


def margin_weight(matches: int) -> float:
    """S5: M(N) = 0 for N ≤ 12, rising linearly to 1 at N = 36, then 1: how much the
    opponents' surprise counts against a team's own (blog, "Introducing the Margin
    parameter")."""
    return min(1.0, max(0.0, (matches - 12) / 24))


def updated_epa(
    epa: float, matches: int, own_error: float, their_error: float, size: int, weight: float
) -> float:
    """S6: EPA + w·K(N)·(e_own − M(N)·e_opp)/((1 + M(N))·n), at least 0: e the alliances'
    score minus their predicted score, n the team's roster size (the alliance's error is
    shared among its teams), w 1 or the playoff weight (blog: the ΔEPA formula; code: the
    division by the alliance's size and the playoff weight 1/3)."""
    margin = margin_weight(matches)
    error = (own_error - margin * their_error) / (1.0 + margin)
    return max(0.0, epa + weight * learning_rate(matches) * error / size)


def standing(epa: float, stats: ScoreStats) -> float:
    """S7: a team's EPA as a standing, (EPA − share)/σ, against the season it ends."""
    return (epa - stats.share) / stats.sd


def carried(last: float, before: float, new_team: float, year_one: float, fraction: float) -> float:
    """S7: the standing a team carries into a new season: y·z₁ + (1 − y)·z₂ (z₁ the season
    that ends, z₂ the one before; a season the team did not play counts as a new team's
    standing), then `fraction` of the way back to a new team's standing (intro, "Team
    history"; code: YEAR_ONE_WEIGHT 0.7, MEAN_REVERSION 0.4)."""
    prior = year_one * last + (1.0 - year_one) * before
    return prior + fraction * (new_team - prior)
