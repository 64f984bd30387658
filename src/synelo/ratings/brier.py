"""F6: the Brier score, the health signal of the rating/balance loop (target 0.25)."""

from __future__ import annotations

import math
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


def term_variance_bound(brier: float) -> float:
    """The most a round's (P − O)² can vary when the predictions are calibrated (O's mean
    is P, a draw counting ½) and their mean is `brier`: min(1/16, 0.25 − brier).

    A round predicted at P has the mean P(1 − P) = 0.25 − (P − ½)² and, without draws, the
    variance P(1 − P)(1 − 2P)², which is at most (P − ½)² and at most 1/16 (at P ≈ 0.15);
    a draw's ½ lies between a win and a loss and adds no more. Averaged over the rounds,
    the variance is at most 0.25 − brier."""
    return max(0.0, min(1 / 16, BRIER_TARGET - brier))


def block_error(brier: float, rounds: int) -> float:
    """The standard error of F6 over `rounds` rounds of calibrated predictions whose Brier
    is `brier`, at most: how far a block of them strays from the pool's figure by chance."""
    return math.sqrt(term_variance_bound(brier) / rounds)


def block_rounds(band: float) -> int:
    """The fewest rounds whose F6 stays within ±`band` of a calibrated pool's (two
    standard errors, whatever its Brier: a term's variance is at most 1/16)."""
    return math.ceil((2 * 0.25 / band) ** 2 - 1e-9)
