"""Sector's Edge power from scoreboard places (seed 002, E1–E5 of docs/maths/sectors-edge.md).

Sector's Edge rates nobody by wins: a player's pubPower is where they usually finish on the
scoreboard, and a team's power is the sum of its players' ranks by pubPower. To score that
like any other model we add a prediction, P(A wins) = σ(β·(power_A − power_B)), whose scale
β each pool learns from its own rounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def place_fractions(points: Mapping[str, float]) -> dict[str, float]:
    """E1: each player's place on the scoreboard as (n − p + 1)/n among the n players, the
    most points first (p = 1 gives 1, the last place 1/n); players on equal points share the
    mean of the places they span. pubPower's place value is this times the mode's maximum,
    so first place in CTF is 24."""
    n = len(points)
    order = sorted(points, key=lambda player: -points[player])
    out: dict[str, float] = {}
    start = 0
    while start < n:
        end = start
        while end + 1 < n and points[order[end + 1]] == points[order[start]]:
            end += 1
        place = (start + end) / 2 + 1  # the mean of places start + 1 … end + 1
        for player in order[start : end + 1]:
            out[player] = (n - place + 1) / n
        start = end + 1
    return out


def pub_power(recent: Sequence[float], maximum: float, unknown: float) -> float:
    """E2: pubPower = the mode's maximum × the mean place value of the player's recent
    matches in the mode (the last 50 are kept); `unknown` (a fraction) for a player with
    none there."""
    if not recent:
        return maximum * unknown
    return maximum * sum(recent) / len(recent)


def community_value(recent: Sequence[float], maximum: float, unknown: float) -> float:
    """E2′ (the community proposal): min(mean, median) of the recent place values, so that a
    few great matches do not lift a player who usually finishes low."""
    if not recent:
        return maximum * unknown
    ordered = sorted(recent)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return maximum * min(sum(ordered) / len(ordered), median)


def sorted_powers(values: Sequence[float]) -> list[float]:
    """E3: sortedPower = 5 + each value's rank among `values` (0 for the lowest); equal
    values share the mean of the ranks they span, so that two players nothing tells apart
    weigh the same (the seed's stable sort would rank them by list order)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            out[i] = 5.0 + (start + end) / 2
        start = end + 1
    return out


def sigmoid(x: float) -> float:
    """σ(x) = 1/(1 + e^(−x)), without overflow."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def win_probability(power_a: float, power_b: float, beta: float) -> float:
    """E4: P(A wins) = σ(β·(power_A − power_B))."""
    return sigmoid(beta * (power_a - power_b))


def scale_step(beta: float, information: float, gap: float, score: float) -> tuple[float, float]:
    """E5: one online Newton step of the logistic fit of β to the pool's results. With
    p = σ(β·gap) and S the result (1, ½, 0 for A), the information grows by p(1 − p)·gap²
    and β moves by gap·(S − p)/information: the running maximum of the posterior of β
    under the Gaussian prior the pool starts from (a Laplace approximation, one step per
    round, as recursive least squares does for a line)."""
    p = sigmoid(beta * gap)
    information += p * (1.0 - p) * gap * gap
    return beta + gap * (score - p) / information, information
