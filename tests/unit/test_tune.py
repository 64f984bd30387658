"""Tuning on the FRC slice, and F1's maximum-likelihood Θ on rounds drawn with a known Θ."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from synelo.evaluation.frc import import_frc
from synelo.evaluation.models import HistoryInfo
from synelo.evaluation.tune import expand_fit, tune
from synelo.ratings.theta import fit_theta

DATA = Path(__file__).parents[1] / "data" / "frc"


def test_tune_theta_on_the_frc_slice() -> None:
    matches = import_frc([DATA / "2004.csv", DATA / "2016.csv"]).matches
    result = tune("synelo", matches, ["theta"], info=HistoryInfo(3), iterations=8)
    assert result.defaults == {"theta": 800.0}
    assert 50.0 <= result.fitted["theta"] <= 20_000.0
    # the fit is the best point it tried, the defaults included
    assert result.train_log_loss_fitted <= result.train_log_loss_default
    assert min(loss for _, loss in result.trace) == result.train_log_loss_fitted
    assert result.evaluations == len(result.trace) >= 10
    n_train = int(len(matches) * 0.7)
    assert result.test_matches == len(matches) - n_train
    assert result.test_fitted.matches == result.test_default.matches == result.test_matches


def test_fit_names() -> None:
    assert expand_fit("synelo", ["theta", "weights", "k_max"]) == [
        "theta",
        "w_vel",
        "w_wre",
        "w_vol",
        "k_max",
    ]
    with pytest.raises(ValueError, match="cannot fit"):
        expand_fit("elo", ["sigma"])
    with pytest.raises(ValueError, match="too short"):
        tune("elo", import_frc([DATA / "2016.csv"]).matches[:1], ["theta"])


def test_fit_theta_recovers_the_theta_that_drew_the_rounds() -> None:
    rng = random.Random(7)
    gaps, outcomes = [], []
    for _ in range(20_000):
        gap = rng.uniform(-3000, 3000)
        gaps.append(gap)
        p = 1 / (1 + math.exp(-gap / 1000))
        u = rng.random()
        outcomes.append(0.5 if u < 0.02 else float(u < 0.02 + 0.98 * p))
    theta = fit_theta(gaps, outcomes)
    assert theta is not None and abs(theta - 1000) < 60


def test_fit_theta_without_a_finite_answer() -> None:
    assert fit_theta([], []) is None
    assert fit_theta([0, 0], [1, 0]) is None  # no gap: nothing to learn
    assert fit_theta([100, -100], [0, 1]) is None  # the favourite always lost
    assert fit_theta([100, -100, 50], [1, 0, 1]) is None  # separated: Θ → 0
    with pytest.raises(ValueError):
        fit_theta([1, 2], [1])
