"""The simulator's measures: Brier (F6) series, rolling means, adversary figures (Spearman's
rank correlation is `synelo.evaluation.stats`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
