"""F6: the Brier score, the health signal of the rating/balance loop (target 0.25)."""

from __future__ import annotations

from collections.abc import Iterable

BRIER_TARGET = 0.25


def brier_score(terms: Iterable[float]) -> float | None:
    """F6: mean of (P_i − O_i)² over the rounds given; None when there are none."""
    total = 0.0
    n = 0
    for t in terms:
        total += t
        n += 1
    return total / n if n else None
