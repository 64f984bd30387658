"""Positional team Elo (seed 003, P1–P6 of docs/maths/positional.md).

Every player has one rating per position (foosball's offense and defense, a TF2 class…).
A player's expected score weighs their own matchup, against the opponent at the position
they face, by w (¾ in the seed) and the rest of the two teams by 1 − w. A result is a score
on an even spread from 0 to 1 (10:0 is 1, 0:10 is 0), and the results a pool reports are
normal around the expected score, with a spread learnt from its own past deviations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from synelo.ratings.synelo import Winner


@dataclass(frozen=True, slots=True)
class Seat:
    """One player of a round: their rating at the position they played there."""

    position: str
    rating: float


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _below(d: float) -> float:
    """1/(1 + 10^d), without overflow for any d."""
    if d > 0:
        t = math.pow(10.0, -d) if d < 400 else 0.0
        return t / (1.0 + t)
    return 1.0 / (1.0 + math.pow(10.0, d))


def expected_score(
    seat: int,
    own: Sequence[Seat],
    other: Sequence[Seat],
    facing: Mapping[str, str],
    weight: float,
    scale: float,
) -> float:
    """P1: E_i = 1/(1 + 10^((y_i − x_i)/scale)) for the player `own[seat]`, with

    x_i = w·R_i + (1 − w)·mean(R of their teammates) and
    y_i = w·mean(R of the opponents at facing(q)) + (1 − w)·mean(R of the other opponents),

    q being the player's position and facing(q) the position they play against (q itself
    when `facing` does not name it). Without teammates x_i = R_i; with no opponent at
    facing(q) every opponent is the matchup; when every opponent is, y_i is their mean. In
    foosball's 2v2, a defender faces the other team's offense and this is the seed's
    E_{d,a} = 1/(1 + 10^(((0.75·R_{o,b} + 0.25·R_{d,b}) − (0.75·R_{d,a} + 0.25·R_{o,a}))/400))."""
    me = own[seat]
    mates = [s.rating for i, s in enumerate(own) if i != seat]
    x = me.rating if not mates else weight * me.rating + (1 - weight) * _mean(mates)
    target = facing.get(me.position, me.position)
    matchup = [s.rating for s in other if s.position == target]
    rest = [s.rating for s in other if s.position != target]
    if not matchup:
        matchup, rest = [s.rating for s in other], []
    y = _mean(matchup) if not rest else weight * _mean(matchup) + (1 - weight) * _mean(rest)
    return _below((y - x) / scale)


def expected_scores(
    side_a: Sequence[Seat],
    side_b: Sequence[Seat],
    facing: Mapping[str, str],
    weight: float,
    scale: float,
) -> tuple[list[float], list[float]]:
    """P1 for every player of both sides: (E of A's players, E of B's players)."""
    e_a = [expected_score(i, side_a, side_b, facing, weight, scale) for i in range(len(side_a))]
    e_b = [expected_score(i, side_b, side_a, facing, weight, scale) for i in range(len(side_b))]
    return e_a, e_b


def team_expected_score(e_a: Sequence[float], e_b: Sequence[float]) -> float:
    """P2: A's expected score E_A = ½·(mean E of A's players + 1 − mean E of B's players).

    In 2v2 each of B's players faces one of A's, E_{o,b} = 1 − E_{d,a}, and E_A is the mean
    of A's two expected scores: the seed's "average, then transform back to a score"."""
    return 0.5 * (_mean(e_a) + 1.0 - _mean(e_b))


def result_score(winner: Winner, goals_a: int | None, goals_b: int | None, target: int) -> float:
    """P3: the score S_A of a result in a game to `target` goals (2·target possible results
    spread evenly over 0…1, n = 2·target − 1 steps): a win is S = 1 − g_loser/n, a loss
    S = g_own/n, where the loser's goals count at most target − 1 (a game past the target,
    win by two, scores as the closest result to it). Without scores S is 1, ½ or 0."""
    if winner == "draw":
        return 0.5
    if goals_a is None or goals_b is None:
        return float(winner == "A")
    steps = 2 * target - 1
    if winner == "A":
        return 1.0 - min(goals_b, target - 1) / steps
    return min(goals_a, target - 1) / steps


def update(rating: float, k: float, score: float, expected: float) -> float:
    """P4: R' = R + K·(S − E) for a player of the side whose score is S (B's score is
    1 − S_A, so in 2v2 B's players move by the opposite of the matchup they faced)."""
    return rating + k * (score - expected)


def result_index(winner: Winner, goals_a: int, goals_b: int, target: int) -> int:
    """The index in P5's list of a decided game's result: S_A·(2·target − 1) (P3)."""
    return round(result_score(winner, goals_a, goals_b, target) * (2 * target - 1))


def _phi(x: float) -> float:
    """The standard normal CDF Φ."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def result_distribution(expected: float, spread: float, target: int) -> list[float]:
    """P5: the probability of each of the 2·target results, from A's 0:target loss (index 0,
    S = 0) to A's target:0 win (index 2·target − 1, S = 1). The result's score is normal
    around E_A with standard deviation `spread`, rounded to the nearest possible result:
    result k takes the mass between the midpoints (k ± ½)/n, the two extremes their tails."""
    steps = 2 * target - 1
    cdf = [_phi(((k + 0.5) / steps - expected) / spread) for k in range(steps)]
    edges = [0.0, *cdf, 1.0]
    return [edges[k + 1] - edges[k] for k in range(2 * target)]


def win_probability(expected: float, spread: float) -> float:
    """P5: P(A wins) = the mass of A's winning results, S above ½: Φ((E_A − ½)/spread)."""
    return _phi((expected - 0.5) / spread)


def result_goals(index: int, target: int) -> tuple[int, int]:
    """The goals (A, B) of result `index` of P5's list."""
    if index >= target:
        return target, 2 * target - 1 - index
    return index, target


def spread(prior: float, prior_rounds: float, rounds: int, squares: float) -> float:
    """P6: the pool's spread of results around their expected score,
    σ = √((m·σ₀² + Σ(S − E_A)²)/(m + N)) over its N rounds so far, with the prior σ₀ worth
    m rounds (so a new pool has σ₀, and one with many rounds its own deviations)."""
    return math.sqrt((prior_rounds * prior * prior + squares) / (prior_rounds + rounds))
