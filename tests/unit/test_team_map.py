"""M1–M3: the whole-history MAP of the team-sum skill model (the simulator's information
bound), on cases whose answer is known by hand and on a synthetic set it must recover."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synelo.evaluation.stats import spearman
from synelo.ratings.team_map import team_map


def test_one_v_one_with_a_flat_prior_gives_the_win_share() -> None:
    # 3 wins and 1 loss, and a prior so weak it barely counts: P(A) = 3/4, so the gap
    # s_A − s_B = Θ·logit(3/4) = Θ·ln 3, split evenly around the prior mean.
    rounds = [([0], [1], 1.0)] * 3 + [([0], [1], 0.0)]
    s = team_map(rounds, 2, theta=400.0, prior_mean=1000.0, prior_sd=1e6)
    assert s[0] - s[1] == pytest.approx(400.0 * math.log(3), rel=1e-6)
    assert (s[0] + s[1]) / 2 == pytest.approx(1000.0, abs=1e-6)


def test_one_v_one_with_a_prior_solves_its_stationary_equation() -> None:
    # By symmetry s_A − μ = −(s_B − μ) = δ, and ∂L/∂s_A = 0 reads
    # δ/τ² = (wins − N·σ(2δ/Θ))/Θ: the fit must satisfy it, and shrink below the flat gap.
    theta, tau = 400.0, 200.0
    rounds = [([0], [1], 1.0)] * 3 + [([0], [1], 0.0)]
    s = team_map(rounds, 2, theta=theta, prior_mean=1000.0, prior_sd=tau)
    delta = s[0] - 1000.0
    assert s[1] - 1000.0 == pytest.approx(-delta, abs=1e-6)
    p = 1 / (1 + math.exp(-2 * delta / theta))
    assert delta / tau**2 == pytest.approx((3 - 4 * p) / theta, rel=1e-6)
    assert 0 < 2 * delta < theta * math.log(3)


def test_two_v_two_teammates_who_always_play_together_share_the_gap() -> None:
    # Players 0 and 1 beat 2 and 3 in 3 of 4 rounds, always together: only the team sums
    # are identified, so the prior splits each team's sum evenly, and with a flat prior the
    # sums' gap is Θ·ln 3 again, 4δ = Θ·ln 3.
    rounds = [([0, 1], [2, 3], 1.0)] * 3 + [([0, 1], [2, 3], 0.0)]
    s = team_map(rounds, 4, theta=800.0, prior_mean=0.0, prior_sd=1e6)
    assert s[0] == pytest.approx(s[1], abs=1e-6)
    assert s[2] == pytest.approx(s[3], abs=1e-6)
    assert (s[0] + s[1]) - (s[2] + s[3]) == pytest.approx(800.0 * math.log(3), rel=1e-6)


def test_a_draw_counts_half_and_a_player_without_rounds_keeps_the_prior_mean() -> None:
    s = team_map([([0], [1], 0.5)], 3, theta=400.0, prior_mean=1500.0, prior_sd=300.0)
    assert s == pytest.approx([1500.0, 1500.0, 1500.0], abs=1e-9)


def test_it_recovers_skills_on_a_synthetic_set() -> None:
    # 40 players of known skill in 3,000 random 4v4 rounds drawn from M1: the MAP ranks them
    # much as the truth does, far better than a coin, and on the skills' own scale.
    rng = np.random.default_rng(7)
    skill = rng.normal(1000.0, 300.0, 40)
    theta = 800.0
    rounds = []
    for _ in range(3000):
        picked = rng.choice(40, 8, replace=False)
        a, b = picked[:4], picked[4:]
        p = 1 / (1 + math.exp(-(skill[a].sum() - skill[b].sum()) / theta))
        rounds.append((a.tolist(), b.tolist(), float(rng.random() < p)))
    s = team_map(rounds, 40, theta=theta, prior_mean=1000.0, prior_sd=300.0)
    rho = spearman(skill.tolist(), s.tolist())
    assert rho is not None and rho > 0.9
    assert np.polyfit(skill, s, 1)[0] == pytest.approx(1.0, abs=0.2)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        team_map([], 2, theta=0.0, prior_mean=0.0, prior_sd=1.0)
    with pytest.raises(ValueError, match="out of range"):
        team_map([([0], [2], 1.0)], 2, theta=1.0, prior_mean=0.0, prior_sd=1.0)
    with pytest.raises(ValueError, match="outcome"):
        team_map([([0], [1], 2.0)], 2, theta=1.0, prior_mean=0.0, prior_sd=1.0)
