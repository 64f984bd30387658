"""F1's Θ fitted to a pool's rounds: the point estimate, its interval and the coin test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synelo.ratings.theta import CHI2_1_95, _log_likelihood, fit_theta, fit_theta_interval


def rounds(n: int, gap_sd: float, theta: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    gaps = np.rint(rng.normal(0.0, gap_sd, n))
    p = 1.0 / (1.0 + np.exp(-gaps / theta))
    return gaps, (rng.random(n) < p).astype(float)


def test_wide_gaps_fit_a_finite_interval_around_the_truth() -> None:
    gaps, outcomes = rounds(5000, 600.0, 800.0, seed=3)
    fit = fit_theta_interval(gaps, outcomes)
    assert fit.status == "fit" and fit.rounds == 5000
    assert fit.theta is not None and fit.theta_low is not None and fit.theta_high is not None
    assert fit.theta_low < 800.0 < fit.theta_high  # the truth inside
    assert fit.theta_low < fit.theta < fit.theta_high < 1.3 * fit.theta_low
    assert fit.theta == pytest.approx(fit_theta(gaps, outcomes), rel=1e-9)
    assert fit.p_value_vs_coin is not None and fit.p_value_vs_coin < 1e-12


def test_the_interval_ends_are_where_the_likelihood_drops_by_the_chi2_point() -> None:
    gaps, outcomes = rounds(3000, 400.0, 600.0, seed=5)
    fit = fit_theta_interval(gaps, outcomes)
    assert fit.status == "fit" and fit.theta is not None
    d, o = gaps[gaps != 0], outcomes[gaps != 0]
    top = _log_likelihood(1.0 / fit.theta, d, o)
    for end in (fit.theta_low, fit.theta_high):
        assert end is not None
        assert 2.0 * (top - _log_likelihood(1.0 / end, d, o)) == pytest.approx(CHI2_1_95, abs=1e-6)


def test_a_coin_is_no_signal_with_only_a_lower_bound() -> None:
    """Outcomes that ignore the gaps: the old point estimate ran off to tens of thousands."""
    rng = np.random.default_rng(11)
    gaps = np.rint(rng.normal(0.0, 300.0, 5000))
    outcomes = (rng.random(5000) < 0.5).astype(float)
    fit = fit_theta_interval(gaps, outcomes)
    assert fit.status == "no signal"
    assert fit.theta is None and fit.theta_high is None
    assert fit.theta_low is not None and fit.theta_low > 1000.0
    assert fit.p_value_vs_coin is not None and fit.p_value_vs_coin > 0.05


def test_balanced_teams_need_many_rounds_to_show_the_same_theta() -> None:
    """Gaps of about ±60 at Θ 800: 5,000 rounds cannot tell the ratings from a coin at 95 %;
    100,000 pin Θ down to within about ±20 %."""
    gaps, outcomes = rounds(5000, 60.0, 800.0, seed=1)
    few = fit_theta_interval(gaps, outcomes)
    assert few.status == "no signal" and few.theta_low is not None and few.theta_low < 800.0
    gaps, outcomes = rounds(100_000, 60.0, 800.0, seed=1)
    many = fit_theta_interval(gaps, outcomes)
    assert many.status == "fit" and many.theta_low is not None and many.theta_high is not None
    assert many.theta_low < 800.0 < many.theta_high < 1.5 * many.theta_low


def test_too_few_rounds_and_separated_outcomes() -> None:
    gaps, outcomes = rounds(499, 600.0, 800.0, seed=1)
    few = fit_theta_interval(gaps, outcomes)
    assert (few.status, few.rounds, few.theta) == ("too few", 499, None)
    gaps = np.array([100.0, -100.0, 50.0] * 200)
    outcomes = np.array([1.0, 0.0, 1.0] * 200)  # the favourite always wins: Θ → 0
    assert fit_theta_interval(gaps, outcomes).status == "separated"
    zero = fit_theta_interval(np.zeros(600), np.ones(600))
    assert (zero.status, zero.informative_rounds) == ("too few", 0)
    with pytest.raises(ValueError):
        fit_theta_interval([1.0, 2.0], [1.0])


def test_a_draw_is_half_a_win() -> None:
    # one round at gap d with a draw has ℓ = ½·ln σ(d/Θ) + ½·ln σ(−d/Θ)
    d, o = np.array([200.0]), np.array([0.5])
    expected = 0.5 * math.log(1 / (1 + math.exp(-0.5))) + 0.5 * math.log(1 / (1 + math.exp(0.5)))
    assert _log_likelihood(1.0 / 400.0, d, o) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("start", [100.0, 1200.0, 2400.0, 1e6])
def test_one_surprise_far_out_is_not_separation(start: float) -> None:
    """Small gaps near a coin plus one favourite at gap 9,000 who lost: a Newton step from
    the pool's Θ used to run off and call this "separated"; the bracketed search answers
    the same from any start."""
    gaps, outcomes = rounds(600, 60.0, 200.0, seed=2)
    gaps, outcomes = np.append(gaps, 9000.0), np.append(outcomes, 0.0)
    fits = fit_theta_interval(gaps, outcomes, start)
    assert fits.status in ("fit", "no signal")
    reference = fit_theta_interval(gaps, outcomes, 1200.0)
    assert fits.theta_low == pytest.approx(reference.theta_low, rel=1e-9)


def test_huge_gaps_and_random_outcomes_are_a_coin_not_separation() -> None:
    rng = np.random.default_rng(4)
    gaps = rng.choice([-600_000.0, 600_000.0], 800)
    outcomes = (rng.random(800) < 0.5).astype(float)
    assert fit_theta_interval(gaps, outcomes).status == "no signal"
    wide, won = rounds(3000, 60_000.0, 20_000.0, seed=6)
    fit = fit_theta_interval(wide, won, 2400.0)
    assert fit.status == "fit" and fit.theta_low is not None and fit.theta_high is not None
    assert fit.theta_low < 20_000.0 < fit.theta_high
