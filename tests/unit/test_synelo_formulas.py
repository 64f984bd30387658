"""F1–F6 of seed 000 (as resolved) against values worked out by hand.

Every expected value below is written as a literal with the arithmetic that gives it in a
comment; the code under test is never used to compute an expected value.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from synelo.ratings import (
    ConvergenceWindow,
    PlayerRecord,
    RoundRating,
    SynEloParams,
    apply_change,
    convergence,
    expected_score,
    gaussian_compression,
    is_stale,
    is_visible,
    k_factor,
    rate_player,
    rate_round,
    roster_probability,
    round_score,
    seed_theta,
    updated_rating,
    win_probability,
)
from synelo.ratings.brier import BRIER_TARGET, brier_score
from synelo.ratings.params import ParameterError
from synelo.ratings.window import p_units

P = SynEloParams()
REL = 1e-12


def close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-15)


def window_of(entries: list[tuple[int, float, float]], size: int = 500) -> ConvergenceWindow:
    w = ConvergenceWindow(size)
    for r, p, s in entries:
        w.append(r, p, s)
    return w


def new_record(rating: int = 1000, rounds: int = 0) -> PlayerRecord:
    return PlayerRecord(rating, rounds, ConvergenceWindow(P.window))


# --- parameters ---------------------------------------------------------------------------


def test_default_parameters_match_the_seed_table() -> None:
    assert (P.r0, P.r_min, P.r_shadow_cap, P.t_shadow) == (1000, 100, 2200, 50)
    assert (P.t_stale_days, P.k_min, P.k_max, P.theta, P.window) == (30, 2, 72, 2400, 500)
    assert (P.w_vel, P.w_wre, P.w_vol, P.wre_scale, P.sigma) == (0.25, 0.25, 0.5, 0.10, 400)


@pytest.mark.parametrize(
    ("team_size", "theta"),
    [
        (1, 400.0),  # 400·floor(2/2) = 400·1 (standard Elo)
        (2, 400.0),  # 400·floor(3/2) = 400·1
        (3, 800.0),  # 400·floor(4/2) = 400·2
        (4, 800.0),  # 400·floor(5/2) = 400·2
        (6, 1200.0),  # 400·floor(7/2) = 400·3
        (12, 2400.0),  # 400·floor(13/2) = 400·6
    ],
)
def test_seed_theta(team_size: int, theta: float) -> None:
    assert seed_theta(team_size) == theta


def test_seed_theta_rejects_zero() -> None:
    with pytest.raises(ValueError):
        seed_theta(0)


@pytest.mark.parametrize(
    ("field", "highest", "too_high"),
    [
        ("k_max", 1_000_000.0, 1_000_000.5),
        ("t_shadow", 2**31 - 1, 2**31),
        ("t_stale_days", 700_000.0, 700_001.0),
    ],
)
def test_new_params_within_bounds(field: str, highest: float, too_high: float) -> None:
    """New values past these bounds would break a pool's later rounds (a rating or count
    overflowing its column, a date before year 1); a stored pool still loads with them."""
    assert getattr(SynEloParams(**{field: highest}).within_bounds(), field) == highest
    loaded = SynEloParams(**{field: too_high})  # what an older release may have stored
    with pytest.raises(ParameterError, match=field) as caught:
        loaded.within_bounds()
    assert caught.value.names == (field,)


@pytest.mark.parametrize(
    "field",
    ["t_stale_days", "k_min", "k_max", "theta", "w_vel", "w_wre", "w_vol", "wre_scale", "sigma"],
)
@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_new_params_are_finite(field: str, bad: float) -> None:
    """A non-finite value is refused, naming the field, whether an invariant of the
    constructor (k_min ≤ k_max) or the bounds catch it."""
    with pytest.raises(ParameterError) as caught:
        SynEloParams(**{field: bad}).within_bounds()
    assert field in caught.value.names


def test_negative_weight_is_out_of_bounds() -> None:
    with pytest.raises(ParameterError, match="w_vol"):
        SynEloParams(w_vol=-0.1).within_bounds()


# --- F1 -----------------------------------------------------------------------------------


def test_f1_equal_sums_is_a_coin_flip() -> None:
    # exp(0) = 1 → 1/(1+1) = 0.5, exactly
    assert win_probability(2000, 2000, 2400) == 0.5
    assert win_probability(0, 0, 400) == 0.5


def test_f1_gap_of_one_theta() -> None:
    # Σ_A − Σ_B = Θ: 1/(1+e^−1) = 1/(1+0.36787944117144233) = 0.7310585786300049
    assert close(win_probability(2400, 0, 2400), 0.7310585786300049)
    assert close(win_probability(1400, 1000, 400), 0.7310585786300049)
    # and the other way round: 1 − 0.7310585786300049 = 0.2689414213699951
    assert close(win_probability(0, 2400, 2400), 0.2689414213699951)


def test_f1_uses_theta_as_the_scale() -> None:
    # a gap of 200 on Θ=2400: exp(−200/2400) = exp(−1/12) = 0.9200444146293233,
    # 1/(1+0.9200444146293233) = 1/1.9200444146293233 = 0.520821285372743
    assert close(win_probability(2200, 2000, 2400), 0.520821285372743)
    # the same gap on Θ=400: exp(−0.5) = 0.6065306597126334, 1/1.6065306597126334
    # = 0.6224593312018546
    assert close(win_probability(2200, 2000, 400), 0.6224593312018546)


def test_f1_rate_round_uses_roster_sums() -> None:
    # rosters 1200+1000 = 2200 vs 1000+1000 = 2000 → P_A = 0.520821285372743 (see above)
    rr = rate_round([1200, 1000], [1000, 1000], [], "A", P)
    assert (rr.sum_a, rr.sum_b) == (2200, 2000)
    assert close(rr.p_a, 0.520821285372743)
    assert rr.changes == ()


def test_f1u_an_extra_player_is_worth_the_headcount_log_ratio() -> None:
    # 2 against 1, every rating 1500: each sum at 2 players, 3000 − 3000 = 0, + ln(2/1):
    # P_A = 1/(1 + 1/2) = 2/3 (F1 would say 1/(1 + e^−7.5) = 0.99945)
    assert close(roster_probability(3000, 2, 1500, 1, 200), 2 / 3)
    assert close(roster_probability(1500, 1, 3000, 2, 200), 1 / 3)
    # 3200 against 1500: (3200 − 3000)/200 + ln 2 = 1.6931471805599454,
    # P_A = 1/(1 + e^−1/2) = 1/1.1839397205857212 = 0.8446375965030364
    assert close(roster_probability(3200, 2, 1500, 1, 200), 0.8446375965030364)
    # 7 at 1500 against 6 at 1550, Θ 600: (10500 − 7·9300/6)/600 + ln(7/6)
    # = −350/600 + 0.15415067982725836 = −0.429182653506075 → 0.39432152324402037
    assert close(roster_probability(10500, 7, 9300, 6, 600), 0.39432152324402037)
    # rosters of one size: F1 itself
    assert roster_probability(2200, 2, 2000, 2, 2400) == win_probability(2200, 2000, 2400)


def test_f1u_rates_an_uneven_round_of_a_headcount_pool_only() -> None:
    """New pools take `uneven` "headcount"; stored parameters without it load as the seed's
    "sums" (the dataclass's default), and rate as they did: 1500/Θ 2400 → σ(0.625)."""
    rr = rate_round([1600, 1400], [1500], [], "A", P.with_changes(uneven="headcount"))
    assert (rr.sum_a, rr.sum_b) == (3000, 1500)
    assert close(rr.p_a, 2 / 3)
    assert P.uneven == SynEloParams.from_dict({"theta": 2400.0}).uneven == "sums"
    seed = rate_round([1600, 1400], [1500], [], "A", P)
    # exp(−0.625) = 0.5352614285189903 → 1/1.5352614285189903 = 0.6513548646660542
    assert close(seed.p_a, 0.6513548646660542)
    assert roster_probability(3000, 2, 1500, 1, 2400, headcount=False) == seed.p_a
    with pytest.raises(ParameterError):
        SynEloParams(uneven="mean")  # type: ignore[arg-type]


def test_f1_mid_round_joiner_does_not_change_p() -> None:
    # Round-start rosters 1000+1000 vs 1000+1000 → P_A = 0.5. A 1500 player who joined team B
    # mid-round is rated but is not in the round-start sums: P_B = 1 − 0.5 = 0.5 for him.
    late = PlayerRecord(1500, 60, ConvergenceWindow(P.window))
    rr = rate_round([1000, 1000], [1000, 1000], [("late", "B", late)], "B", P)
    assert rr.p_a == 0.5
    (ch,) = rr.changes
    assert ch.p == 0.5 and ch.s == 1.0
    # empty window → C = 1; G(1500) = exp(−500²/(2·400²)) = exp(−250000/320000)
    # = exp(−0.78125) = 0.4578333617716143; K = 2 + 70·0.4578333617716143 = 34.048335324013
    # R' = 1500 + 34.048335324013·(1 − 0.5) = 1517.0241676620 → 1517
    assert close(ch.k, 34.048335324013)
    assert ch.after == 1517


# --- F2 -----------------------------------------------------------------------------------


def test_f2_scores_and_expected_scores() -> None:
    assert (round_score("A", "A"), round_score("A", "B")) == (1.0, 0.0)
    assert (round_score("B", "B"), round_score("B", "A")) == (1.0, 0.0)
    assert round_score("draw", "A") == round_score("draw", "B") == 0.5
    assert expected_score(0.75, "A") == 0.75
    assert expected_score(0.75, "B") == 0.25  # 1 − 0.75


def test_f2_new_players_2v2_at_1000() -> None:
    # 2v2, everyone new at 1000: Σ 2000 vs 2000 → P_A = 0.5. Empty window → C = 1;
    # R = R_0 → G = 1; K = 2 + 70·1·1 = 72.
    # winners: 1000 + 72·(1 − 0.5) = 1036; losers: 1000 + 72·(0 − 0.5) = 964
    parts = [(f"p{i}", side, new_record()) for i, side in enumerate("AABB")]
    rr = rate_round([1000, 1000], [1000, 1000], parts, "A", P)
    assert rr.p_a == 0.5
    assert [c.k for c in rr.changes] == [72.0] * 4
    assert [c.after for c in rr.changes] == [1036, 1036, 964, 964]
    assert [c.delta for c in rr.changes] == [36, 36, -36, -36]
    assert [c.rounds_played for c in rr.changes] == [1] * 4
    assert [c.s for c in rr.changes] == [1.0, 1.0, 0.0, 0.0]


def test_f2_draw_at_equal_sums_changes_nothing() -> None:
    # P = 0.5, S = 0.5: 1000 + 72·0 = 1000
    parts = [(f"p{i}", side, new_record()) for i, side in enumerate("AB")]
    rr = rate_round([1000], [1000], parts, "draw", P)
    assert [c.after for c in rr.changes] == [1000, 1000]


def test_f2_rate_player_does_not_touch_the_record() -> None:
    rec = new_record()
    ch = rate_player("x", "A", rec.rating, rec.rounds_played, rec.window, 0.5, "A", P)
    assert ch.after == 1036 and ch.before == 1000
    assert (rec.rating, rec.rounds_played, len(rec.window)) == (1000, 0, 0)


@pytest.mark.parametrize(
    ("rating", "k", "s", "p", "expected"),
    [
        (1000, 1.0, 1.0, 0.5, 1000),  # 1000 + 0.5 = 1000.5 → even 1000 (half-up would be 1001)
        (1001, 1.0, 1.0, 0.5, 1002),  # 1001 + 0.5 = 1001.5 → even 1002
        (1000, 1.0, 0.0, 0.5, 1000),  # 1000 − 0.5 = 999.5 → even 1000
        (1001, 1.0, 0.0, 0.5, 1000),  # 1001 − 0.5 = 1000.5 → even 1000 (half-up: 1001)
        (1000, 3.0, 1.0, 0.5, 1002),  # 1000 + 1.5 = 1001.5 → 1002
        (1000, 5.0, 1.0, 0.5, 1002),  # 1000 + 2.5 = 1002.5 → 1002 (half-up: 1003)
        (1000, 72.0, 1.0, 0.25, 1054),  # 1000 + 72·0.75 = 1054, no rounding
        (1000, 2.0, 1.0, 0.75, 1000),  # 1000 + 2·0.25 = 1000.5 → 1000
        (1000, 2.0, 0.0, 0.25, 1000),  # 1000 − 2·0.25 = 999.5 → 1000
        (1000, 2.0, 0.0, 0.75, 998),  # 1000 − 2·0.75 = 998.5 → 998 (half-up: 999)
    ],
)
def test_f2_bankers_rounding(rating: int, k: float, s: float, p: float, expected: int) -> None:
    got = updated_rating(rating, k, s, p, 10, P)
    assert got == expected
    assert type(got) is int


def test_f2_bankers_rounding_through_rate_round() -> None:
    # K_max = 37: a new player at R_0 has K = 2 + 35·1·1 = 37; P = 0.5 → K·0.5 = 18.5
    # winner 1000 + 18.5 = 1018.5 → 1018 (even; half-up would give 1019)
    # loser  1000 − 18.5 =  981.5 →  982 (even)
    params = P.with_changes(k_max=37.0)
    parts = [("a", "A", new_record()), ("b", "B", new_record())]
    rr = rate_round([1000], [1000], parts, "A", params)
    assert [c.k for c in rr.changes] == [37.0, 37.0]
    assert [c.after for c in rr.changes] == [1018, 982]
    # K_max = 39: K = 39, K·0.5 = 19.5 → 1019.5 → 1020, 980.5 → 980 (half-up: 981)
    params = P.with_changes(k_max=39.0)
    rr = rate_round([1000], [1000], parts, "A", params)
    assert [c.after for c in rr.changes] == [1020, 980]


def test_f2_floor_at_r_min() -> None:
    # 120 + 72·(0 − 0.5) = 84 → max(100, 84) = 100
    assert updated_rating(120, 72.0, 0.0, 0.5, 10, P) == 100
    # already at the floor and losing: 100 − 1 = 99 → 100
    assert updated_rating(100, 2.0, 0.0, 0.5, 10, P) == 100
    # just above: 140 − 36 = 104 stays
    assert updated_rating(140, 72.0, 0.0, 0.5, 10, P) == 104


def test_f2_floor_through_rate_player() -> None:
    # R = 101, empty window → C = 1; G = exp(−899²/320000) = exp(−808201/320000)
    # = exp(−2.52562813) = 0.08000804194883925; K = 2 + 70·0.08000804194883925 = 7.60056293641
    # loss at P = 0.5: 101 − 7.60056293641·0.5 = 97.2 → 97 → max(100, 97) = 100
    ch = rate_player("x", "A", 101, 10, ConvergenceWindow(), 0.5, "B", P)
    assert close(ch.k, 7.600562936418747)
    assert ch.after == 100


def test_shadow_cap_on_the_50th_update_only() -> None:
    # 2190 + 72·(1 − 0.5) = 2226
    assert updated_rating(2190, 72.0, 1.0, 0.5, 49, P) == 2226
    assert updated_rating(2190, 72.0, 1.0, 0.5, 50, P) == 2200  # min(2200, 2226)
    assert updated_rating(2190, 72.0, 1.0, 0.5, 51, P) == 2226
    # below the cap nothing happens: 2150 + 36 = 2186
    assert updated_rating(2150, 72.0, 1.0, 0.5, 50, P) == 2186
    # a rating already above the cap is brought down on graduation even by a draw: 2300 → 2200
    assert updated_rating(2300, 72.0, 0.5, 0.5, 50, P) == 2200


def test_shadow_cap_through_rate_round() -> None:
    # R = 2199, empty window → C = 1; G = exp(−1199²/320000) = exp(−4.49250313)
    # = 0.011192592258469388, K = 2 + 70·0.011192592258469388 = 2.783481458092857
    # rosters 2199 vs 12000: P_A = 1/(1+exp(9801/2400)) = 1/(1+59.37...) = 0.01656515491455191
    # win: 2199 + 2.783481458092857·(1 − 0.01656515491455191) = 2201.737 → 2202
    for played, expected in ((48, 2202), (49, 2200), (50, 2202)):
        rec = PlayerRecord(2199, played, ConvergenceWindow())
        rr = rate_round([2199], [12000], [("x", "A", rec)], "A", P)
        assert close(rr.p_a, 0.01656515491455191)
        (ch,) = rr.changes
        assert close(ch.k, 2.783481458092857)
        assert ch.rounds_played == played + 1
        assert ch.after == expected


def test_visible_after_fifty_rounds() -> None:
    assert not is_visible(0, P)
    assert not is_visible(49, P)
    assert is_visible(50, P)
    assert is_visible(51, P)


def test_stale_after_more_than_thirty_days() -> None:
    now = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
    assert not is_stale(None, now, P)
    assert not is_stale(now, now, P)
    assert not is_stale(now - timedelta(days=30), now, P)  # exactly 30 days: not more than
    assert is_stale(now - timedelta(days=30, seconds=1), now, P)
    assert is_stale(now - timedelta(days=31), now, P)


# --- F3 -----------------------------------------------------------------------------------


def test_f3_fewer_than_two_rounds_is_one() -> None:
    assert convergence(ConvergenceWindow(), P) == 1.0
    assert convergence(window_of([(1000, 0.5, 0.5)]), P) == 1.0


def test_f3_settled_player_is_zero() -> None:
    # ratings constant → vel = 0, vol = 0; o = e = 0.5 → wre = 0; C = 0
    w = window_of([(1000, 0.5, 0.5), (1000, 0.5, 0.5), (1000, 0.5, 0.5)])
    assert convergence(w, P) == 0.0


def test_f3_two_entries_half_halves() -> None:
    # w = [1000, 1036]: m = 1, w_old = [1000], w_new = [1036]
    # v_vel = |1036 − 1000|/72 = 0.5; mean 1018, deviations ±18 → std 18 → v_vol = 0.25
    # o = [1, 0] mean 0.5, e = [0.5, 0.5] mean 0.5 → v_wre = 0
    # C = 0.25·0.5 + 0.25·0 + 0.5·0.25 = 0.25
    w = window_of([(1000, 0.5, 1.0), (1036, 0.5, 0.0)])
    assert w.half() == 1
    assert w.mean_new_minus_old() == 36.0
    assert w.std() == 18.0
    assert w.outcome_excess() == 0.0
    assert convergence(w, P) == 0.25


def test_f3_worked_example_four_entries() -> None:
    # w = [1000, 1000, 1036, 1036], e = [0.5]*4, o = [1, 0.5, 1, 0]
    # m = 2: w_old = [1000, 1000] mean 1000, w_new = [1036, 1036] mean 1036
    #   v_vel = |1036 − 1000|/72 = 36/72 = 0.5
    # mean o = (1+0.5+1+0)/4 = 0.625, mean e = 0.5 → |0.125|/0.10 = 1.25 = v_wre
    # mean w = 4072/4 = 1018, deviations −18, −18, 18, 18 → var = 4·324/4 = 324, std = 18
    #   v_vol = 18/72 = 0.25
    # C = 0.25·0.5 + 0.25·1.25 + 0.5·0.25 = 0.125 + 0.3125 + 0.125 = 0.5625
    w = window_of([(1000, 0.5, 1.0), (1000, 0.5, 0.5), (1036, 0.5, 1.0), (1036, 0.5, 0.0)])
    assert w.half() == 2
    assert w.mean_new_minus_old() == 36.0
    assert w.outcome_excess() == 0.125
    assert w.std() == 18.0
    assert close(convergence(w, P), 0.5625)


def test_f3_worked_example_odd_window_skips_the_middle() -> None:
    # w = [1000, 1072, 1036], e = [0.25, 0.5, 0.75] (mean 0.5), o = [0.5, 0.5, 0.5] (mean 0.5)
    # m = 1: w_old = [1000], w_new = [1036]; the middle 1072 is in neither half
    #   v_vel = |1036 − 1000|/72 = 0.5   (with 1072 in new it would be (1072+1036)/2 − 1000)
    # v_wre = |0.5 − 0.5|/0.1 = 0
    # mean w = 3108/3 = 1036; deviations −36, 36, 0 → var = (1296+1296+0)/3 = 864
    #   std = √864 = 29.393876913398138; v_vol = √864/72 = √(864/5184) = √(1/6)
    #   = 0.408248290463863
    # C = 0.25·0.5 + 0 + 0.5·0.408248290463863 = 0.125 + 0.2041241452319315 = 0.3291241452319315
    w = window_of([(1000, 0.25, 0.5), (1072, 0.5, 0.5), (1036, 0.75, 0.5)])
    assert w.half() == 1
    assert w.mean_new_minus_old() == 36.0
    assert w.outcome_excess() == 0.0
    assert close(w.std(), 29.393876913398138)
    assert close(convergence(w, P), 0.3291241452319315)


def test_f3_eviction_keeps_the_last_w_rounds() -> None:
    # W = 3; after 5 appends the window is [1036, 1000, 1036] with o = [0, 0, 0],
    # e = [0.5, 0.5, 0.5]
    # m = 1: old [1036], new [1036] → v_vel = 0
    # mean o − mean e = 0 − 0.5 → v_wre = 0.5/0.1 = 5 → C clamps to 1 (0.25·5 = 1.25 alone)
    w = window_of(
        [(5000, 0.9, 1.0), (4000, 0.9, 1.0), (1036, 0.5, 0.0), (1000, 0.5, 0.0), (1036, 0.5, 0.0)],
        size=3,
    )
    assert list(w.ratings) == [1036, 1000, 1036]
    assert w.mean_new_minus_old() == 0.0
    assert w.outcome_excess() == -0.5
    # mean 3072/3 = 1024, deviations 12, −24, 12 → var = (144+576+144)/3 = 288, std = √288
    assert close(w.std(), math.sqrt(288))
    assert convergence(w, P) == 1.0


def test_f3_clamps_to_one() -> None:
    # w = [1000, 1200]: v_vel = 200/72 = 2.78 → 0.25·2.78 = 0.69; v_vol = 100/72 = 1.39
    # → 0.5·1.39 = 0.69; sum 1.39 > 1 → C = 1
    w = window_of([(1000, 0.5, 0.5), (1200, 0.5, 0.5)])
    assert convergence(w, P) == 1.0


# --- F4 / F5 ------------------------------------------------------------------------------


def test_f4_gaussian_compression() -> None:
    assert gaussian_compression(1000, P) == 1.0  # exp(0)
    # R = R_0 ± σ: exp(−400²/(2·400²)) = exp(−1/2) = 0.6065306597126334
    assert close(gaussian_compression(1400, P), 0.6065306597126334)
    assert close(gaussian_compression(600, P), 0.6065306597126334)
    # R = R_0 + 2σ: exp(−4/2) = exp(−2) = 0.1353352832366127
    assert close(gaussian_compression(1800, P), 0.1353352832366127)
    assert close(gaussian_compression(200, P), 0.1353352832366127)


def test_f5_k_factor() -> None:
    assert k_factor(1.0, 1000, P) == 72.0  # 2 + 70·1·1
    assert k_factor(0.0, 1000, P) == 2.0  # 2 + 70·0
    assert k_factor(0.0, 3000, P) == 2.0
    assert k_factor(0.5, 1000, P) == 37.0  # 2 + 70·0.5
    # 2 + 70·exp(−1/2) = 2 + 70·0.6065306597126334 = 44.45714617988434
    assert close(k_factor(1.0, 1400, P), 44.45714617988434)
    assert close(k_factor(1.0, 600, P), 44.45714617988434)
    # 2 + 70·0.5·exp(−1/2) = 2 + 21.22857309 = 23.22857308994217
    assert close(k_factor(0.5, 1400, P), 23.22857308994217)


def test_f5_k_uses_window_before_the_round() -> None:
    # A settled window (C = 0) at R_0 gives K = K_min = 2, even though the round being rated
    # (a big upset) would unsettle it: 1000 + 2·(1 − 0.5) = 1001
    w = window_of([(1000, 0.5, 0.5), (1000, 0.5, 0.5)])
    ch = rate_player("x", "A", 1000, 60, w, 0.5, "A", P)
    assert ch.k == 2.0
    assert ch.after == 1001
    assert len(w) == 2  # the round is not appended by rating it


# --- a sequence of rounds, worked by hand -------------------------------------------------


def _two_rounds() -> tuple[dict[str, PlayerRecord], float]:
    recs = {n: new_record() for n in ("a1", "a2", "b1", "b2")}

    def play(winner: str) -> RoundRating:
        ra = [recs["a1"].rating, recs["a2"].rating]
        rb = [recs["b1"].rating, recs["b2"].rating]
        parts = [(n, "A" if n[0] == "a" else "B", recs[n]) for n in recs]
        rr = rate_round(ra, rb, parts, winner, P)
        for ch in rr.changes:
            apply_change(recs[ch.player], ch)
        return rr

    # Round 1: 2000 vs 2000, A wins → P = 0.5, K = 72: A → 1036, B → 964
    r1 = play("A")
    assert r1.p_a == 0.5
    assert [recs[n].rating for n in recs] == [1036, 1036, 964, 964]
    # Round 2: 2072 vs 1928 → P_A = 1/(1+exp(−144/2400)) = 1/(1+exp(−0.06))
    #   = 1/(1+0.9417645335842487) = 0.51499550161941; B wins.
    # Windows hold 1 round → C = 1. G(1036) = G(964) = exp(−36²/320000) = exp(−0.00405)
    #   = 0.9959581901895135 → K = 2 + 70·0.9959581901895135 = 71.71707331326594
    # A: 1036 + 71.71707331326594·(0 − 0.51499550161941) = 999.066 → 999
    # B: 964 + 71.71707331326594·(1 − 0.48500449838059) = 1000.934 → 1001
    r2 = play("B")
    assert close(r2.p_a, 0.51499550161941)
    assert all(close(c.k, 71.71707331326594) for c in r2.changes)
    assert [recs[n].rating for n in recs] == [999, 999, 1001, 1001]
    return recs, r2.p_a


def test_sequence_first_two_rounds() -> None:
    recs, p2 = _two_rounds()
    assert [r.rounds_played for r in recs.values()] == [2, 2, 2, 2]
    a1, b1 = recs["a1"].window, recs["b1"].window
    assert list(a1.ratings) == [1036, 999] and list(b1.ratings) == [964, 1001]
    # the window keeps P to the nearest 2^-44 (all of it that F3's mean(e) uses)
    assert list(a1.probs) == [0.5, p_units(p2) / 2**44]
    assert list(b1.probs) == [0.5, p_units(1.0 - p2) / 2**44]
    assert abs(a1.probs[1] - p2) <= 2**-50
    assert [s / 2 for s in a1.scores2] == [1.0, 0.0]
    assert [s / 2 for s in b1.scores2] == [0.0, 1.0]


def test_sequence_third_round_uses_the_window() -> None:
    recs, _ = _two_rounds()
    # Window of a1: w = [1036, 999], e = [0.5, 0.51499550161941], o = [1, 0]
    #   m = 1: v_vel = |999 − 1036|/72 = 37/72 = 0.5138888888888888
    #   mean o = 0.5, mean e = 0.5074977508097049 → v_wre = 0.0074977508097049/0.1
    #   = 0.0749775080970494
    #   std = 37/2 = 18.5 → v_vol = 18.5/72 = 0.2569444444444444
    #   C = 0.25·0.51388889 + 0.25·0.07497751 + 0.5·0.25694444 = 0.27568882146870677
    # Window of b1: w = [964, 1001], e = [0.5, 0.48500449838059], o = [0, 1]: the same
    #   |vel|, |wre| and std → the same C.
    for n in recs:
        assert close(convergence(recs[n].window, P), 0.27568882146870677)
    # Round 3: 1998 vs 2002 → P_A = 1/(1+exp(4/2400)) = 1/(1+1.001668056327482)
    #   = 0.4995833334297839; A wins.
    # G(999) = G(1001) = exp(−1/320000) = 0.9999968750048828
    # K = 2 + 70·0.27568882146870677·0.9999968750048828 = 21.298157195974007
    # A: 999 + 21.298157195974007·(1 − 0.4995833334297839) = 1009.658 → 1010
    # B: 1001 + 21.298157195974007·(0 − 0.5004166665702161) = 990.342 → 990
    ra = [recs["a1"].rating, recs["a2"].rating]
    rb = [recs["b1"].rating, recs["b2"].rating]
    parts = [(n, "A" if n[0] == "a" else "B", recs[n]) for n in recs]
    rr = rate_round(ra, rb, parts, "A", P)
    assert close(rr.p_a, 0.4995833334297839)
    assert all(close(c.k, 21.298157195974007, 1e-9) for c in rr.changes)
    assert [c.after for c in rr.changes] == [1010, 1010, 990, 990]
    for ch in rr.changes:
        apply_change(recs[ch.player], ch)
    assert [r.rounds_played for r in recs.values()] == [3, 3, 3, 3]
    assert list(recs["a1"].window.ratings) == [1036, 999, 1010]


# --- F6 -----------------------------------------------------------------------------------


def test_f6_brier_term() -> None:
    rr = RoundRating(0.75, 0, 0, ())
    assert rr.brier_term("A") == 0.0625  # (0.75 − 1)² = 0.0625
    assert rr.brier_term("B") == 0.5625  # (0.75 − 0)² = 0.5625
    assert rr.brier_term("draw") == 0.0625  # (0.75 − 0.5)² = 0.0625


def test_f6_brier_score() -> None:
    assert brier_score([]) is None
    assert BRIER_TARGET == 0.25
    # coin flips every round: (0.5 − 1)², (0.5 − 0)² → mean 0.25
    assert brier_score([0.25, 0.25]) == 0.25
    # rounds (P_A, O_A) = (0.5, 1), (0.75, 0), (0.5, 0.5):
    # 0.25 + 0.5625 + 0 = 0.8125, / 3 = 0.2708333333333333
    terms = [
        RoundRating(p, 0, 0, ()).brier_term(w) for p, w in ((0.5, "A"), (0.75, "B"), (0.5, "draw"))
    ]
    assert terms == [0.25, 0.5625, 0.0]
    assert close(brier_score(iter(terms)), 0.2708333333333333)


def test_w12_on_f1u_a_headcount_pools_split_logit_is_its_prediction() -> None:
    """A headcount pool's all-play split is scored by F1u's logit, so the balancer and the
    prediction agree; the seed's sums keep F1's least sum gap (no split logit)."""
    from synelo.models import create_model

    model = create_model("synelo", {"theta": 600.0, "uneven": "headcount"})
    assert model.has_split_logit()
    # 7 at 1500 against 6 at 1550 (test above): logit −0.429182653506075
    logit = model.split_logit([1500.0] * 7, [1550.0] * 6, {})
    assert close(logit, -0.429182653506075)
    assert close(1 / (1 + math.exp(-logit)), roster_probability(10500, 7, 9300, 6, 600))
    # the linear form the exact solver uses: c·(mean_A − mean_B) + b, c = 7/600, b = ln(7/6)
    c, b = model.split_line(7, 6, {}) or (0.0, 0.0)
    assert close(c, 7 / 600) and close(b, math.log(7 / 6))
    # even rosters: F1 itself
    assert close(model.split_logit([1600.0, 1400.0], [1400.0, 1400.0], {}), 200 / 600)
    assert not create_model("synelo", {"theta": 600.0, "uneven": "sums"}).has_split_logit()
