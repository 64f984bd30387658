"""The simulator's measures: Spearman's rank correlation, Brier (F6) series, adversary figures."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1…n, tied values sharing the mean of their ranks."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(inverse, weights=ranks) / counts)[inverse]


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ: Pearson's correlation of the average ranks (None below 3 pairs or when
    one side is constant)."""
    if len(x) < 3:
        return None
    rx, ry = average_ranks(x), average_ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def brier_terms(p_a: Sequence[float], outcome_a: Sequence[float]) -> np.ndarray:
    """F6's terms (P_A − O_A)², O_A = 1, 0.5, 0 for a win, draw, loss of team A."""
    terms: np.ndarray = (np.asarray(p_a, dtype=float) - np.asarray(outcome_a, dtype=float)) ** 2
    return terms


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last `window` values at each position (fewer at the start)."""
    sums = np.cumsum(np.insert(values, 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    start = np.maximum(idx - window, 0)
    means: np.ndarray = (sums[idx] - sums[start]) / (idx - start)
    return means


def rounds_to_within(
    trajectory: Sequence[int], target: float, margin: float = 100.0, start: int = 0
) -> int | None:
    """How many of the player's rounds from `start` it took until the rating was first within
    `margin` of `target` (None: never)."""
    for i, rating in enumerate(trajectory[start:], start=1):
        if abs(rating - target) <= margin:
            return i
    return None
