"""How a set of ratings is spread: counts in equal ranges, as a histogram draws them (the
leaderboard's rating distribution, in its page and in its JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class Bins(NamedTuple):
    low: float  # the lowest value: bin 0 starts here
    high: float  # the highest value: the last bin ends here and holds it
    counts: list[int]  # values in each of len(counts) equal ranges from low to high


def equal_bins(values: Sequence[float], bins: int) -> Bins:
    """How many `values` fall in each of `bins` equal ranges from the lowest to the highest
    (the highest in the last range; all in the first when every value is the same)."""
    if not values:
        return Bins(0, 0, [])
    low, high = min(values), max(values)
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int((v - low) / width), bins - 1)] += 1
    return Bins(low, high, counts)
