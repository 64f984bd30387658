"""Rank statistics shared by the evaluation's truth scores and the simulator's figures."""

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
