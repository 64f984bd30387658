"""The simulator's measures against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from synelo.evaluation.stats import average_ranks, spearman
from synelo.sim.metrics import rolling_mean, rounds_to_within


def test_average_ranks_share_ties() -> None:
    assert average_ranks([10, 30, 20, 30]).tolist() == [1.0, 3.5, 2.0, 3.5]


def test_spearman_by_hand() -> None:
    # ranks x: 1 2 3 4 5, y: 2 1 4 3 5 → d² = 1+1+1+1+0 = 4, ρ = 1 − 6·4/(5·24) = 0.8
    assert spearman([1, 2, 3, 4, 5], [20, 10, 40, 30, 50]) == pytest.approx(0.8)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2], [1, 2]) is None
    assert spearman([1, 2, 3], [5, 5, 5]) is None


def test_rolling_mean() -> None:
    got = rolling_mean(np.array([1.0, 2.0, 3.0, 4.0]), 2)
    assert got.tolist() == [1.0, 1.5, 2.5, 3.5]


def test_rounds_to_within() -> None:
    assert rounds_to_within([1000, 1200, 1850, 1700, 1950], 1900) == 3
    assert rounds_to_within([1000, 1200, 1850], 1900, start=3) is None
    assert rounds_to_within([1000, 1010], 1900) is None
