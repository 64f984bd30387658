"""The auto-tune's rules (`rerate.autotune`): A1, when a fit is due, and A2, when one is
adopted; and a new pool's default setting per model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synelo.models import MODELS
from synelo.rerate.autotune import (
    SCALE,
    AutoTune,
    adopts,
    default_autotune,
    paired_gain,
)
from synelo.store.jobs import next_tune_at


def test_a1_a_new_setting_fits_at_first_then_at_doubling_gaps_up_to_every() -> None:
    setting = AutoTune(5000, ("theta",), first=200).to_json()
    starts, since = [], 0
    for _ in range(8):
        since = next_tune_at(setting, since)
        starts.append(since)
    assert starts == [200, 400, 800, 1600, 3200, 6400, 11400, 16400]


def test_a1_a_setting_from_before_keeps_its_every_gap() -> None:
    # stored before `first` existed: the first fit at `every`, then `every` apart, even
    # after a fit asked for early
    old = {"every": 500, "fit": ["k"], "holdout": 0.2, "margin": 0.002}
    assert next_tune_at(old, 0) == 500
    assert next_tune_at(old, 500) == 1000
    assert next_tune_at(old, 120) == 620
    assert AutoTune.from_json(old) == AutoTune(500, ("k",), 0.2, 0.002, None, 0.0)


def test_a2_the_paired_gain_and_its_standard_error() -> None:
    current = np.array([0.70, 0.60, 0.80, 0.65])
    fitted = np.array([0.60, 0.62, 0.70, 0.60])
    d = current - fitted  # 0.10, −0.02, 0.10, 0.05
    gain, se = paired_gain(current, fitted)
    assert gain == pytest.approx(0.0575)
    sd = math.sqrt(sum((x - 0.0575) ** 2 for x in d) / 3)
    assert se == pytest.approx(sd / 2)
    assert paired_gain(np.empty(0), np.empty(0)) == (None, None)
    assert paired_gain(np.array([0.5]), np.array([0.4])) == (pytest.approx(0.1), None)


def test_a2_adopts_only_beyond_the_margin_and_the_noise() -> None:
    setting = AutoTune(5000, ("theta",), margin=0.001, noise=2.0)
    assert adopts(0.01, 0.004, setting)  # 0.01 > 2 × 0.004
    assert not adopts(0.01, 0.006, setting)  # within two standard errors
    assert not adopts(0.0005, 0.0001, setting)  # significant, but below the margin
    assert not adopts(0.01, None, setting)  # no standard error: no verdict on the noise
    assert not adopts(None, None, setting)
    # noise 0, a setting from before: the margin alone
    assert adopts(0.01, 0.5, AutoTune(5000, ("theta",), margin=0.002))


def test_a_new_pool_fits_its_models_scale_by_default() -> None:
    for model, scale in SCALE.items():
        setting = default_autotune(model)
        assert setting is not None, model
        assert setting.fit == (scale,) and scale in MODELS[model].tunable()
        assert (setting.first, setting.every, setting.holdout) == (200, 5000, 0.4)
        assert (setting.margin, setting.noise) == (0.001, 2.0)
    # a model without a scale to fit keeps auto-tuning off
    assert default_autotune("whr") is None
    assert default_autotune("epa") is None
