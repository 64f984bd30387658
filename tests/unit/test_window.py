"""The incremental ConvergenceWindow against a from-scratch computation of F3 (exact fractions)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synelo.ratings import ConvergenceWindow, SynEloParams, convergence
from synelo.ratings.window import p_units

P = SynEloParams()
REVISED = SynEloParams(convergence="revised")

Entry = tuple[int, float, float]
entries = st.tuples(
    st.integers(min_value=P.r_min, max_value=P.r_max),
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.0, 0.5, 1.0]),
)
small_sizes = st.integers(min_value=2, max_value=9)


@dataclass(frozen=True)
class Reference:
    """F3's statistics of the last `size` entries, computed from scratch."""

    ratings: list[int]
    probs: list[float]
    scores: list[float]
    sum_w: int
    sum_w2: int
    sum_old: int
    sum_new: int
    new_minus_old: float
    excess: float
    std: float
    c: float


def reference(history: list[Entry], size: int) -> Reference:
    tail = history[-size:] if history else []
    w = [r for r, _, _ in tail]
    e = [p for _, p, _ in tail]
    o = [s for _, _, s in tail]
    n = len(w)
    m = n // 2
    old, new = w[:m], w[n - m :]  # not w[-m:]: for m = 0 that would be the whole list
    assert len(old) == len(new) == m
    new_minus_old = Fraction(sum(new), m) - Fraction(sum(old), m) if m else Fraction(0)
    if n:
        # Σe counts P in units of 2^-44 (ConvergenceWindow's documented resolution)
        excess = sum(Fraction(x) for x in o) / n - sum(Fraction(p_units(x), 2**44) for x in e) / n
        exact = sum(Fraction(x) for x in o) / n - sum(Fraction(x) for x in e) / n
        assert abs(excess - exact) <= Fraction(1, 2**44)
        mean = Fraction(sum(w), n)
        var = sum((Fraction(x) - mean) ** 2 for x in w) / n  # population variance, ddof = 0
    else:
        excess = var = Fraction(0)
    std = math.sqrt(float(var))
    if n < 2:
        c = 1.0
    else:
        c = (
            P.w_vel * abs(float(new_minus_old)) / P.k_max
            + P.w_wre * abs(float(excess)) / P.wre_scale
            + P.w_vol * std / P.k_max
        )
        c = min(1.0, max(0.0, c))
    return Reference(
        w,
        e,
        o,
        sum(w),
        sum(x * x for x in w),
        sum(old),
        sum(new),
        float(new_minus_old),
        float(excess),
        std,
        c,
    )


def assert_matches(win: ConvergenceWindow, ref: Reference) -> None:
    assert len(win) == len(ref.ratings)
    assert win.half() == len(ref.ratings) // 2
    assert list(win.ratings) == ref.ratings
    assert list(win.probs) == [p_units(p) / 2**44 for p in ref.probs]  # kept to 2^-44
    assert [s / 2 for s in win.scores2] == ref.scores
    # the running sums are exact integers: equal to the from-scratch sums, with no drift
    # (running in a seed window, computed from the entries in a revised one)
    assert win.seed_sums()[:4] == (ref.sum_w, ref.sum_w2, ref.sum_old, ref.sum_new)
    # the statistics are computed exactly and rounded once: equal to the float of the fraction
    assert win.mean_new_minus_old() == ref.new_minus_old
    assert win.outcome_excess() == ref.excess
    assert abs(win.std() - ref.std) <= 2 * math.ulp(ref.std)
    assert math.isclose(convergence(win, P), ref.c, rel_tol=1e-12, abs_tol=1e-12)


def filled(size: int, history: list[Entry], revised: bool = False) -> ConvergenceWindow:
    win = ConvergenceWindow(size, revised)
    for r, p, s in history:
        win.append(r, p, s)
    return win


STATE = (
    "size",
    "revised",
    "ratings",
    "probs",
    "scores2",
    "sum_s2",
    "sum_p",
)  # every field kept in both modes (a mypyc-compiled class has no __slots__ to list them)


def same_state(a: ConvergenceWindow, b: ConvergenceWindow) -> None:
    for name in STATE:
        assert getattr(a, name) == getattr(b, name), name
    assert a.seed_sums() == b.seed_sums()  # the seed's F3's sums, exact integers
    assert a.scale_sums() == b.scale_sums()  # F3 (revised)'s sums, exact integers
    assert a.mean_new_minus_old() == b.mean_new_minus_old()
    assert a.outcome_excess() == b.outcome_excess()
    assert a.std() == b.std()
    assert a.largest_z() == b.largest_z()
    assert convergence(a, P) == convergence(b, P)
    assert convergence(a, REVISED, 40) == convergence(b, REVISED, 40)


# --- incremental == from scratch ----------------------------------------------------------


@pytest.mark.parametrize("revised", [False, True])
@settings(max_examples=200, deadline=None)
@given(small_sizes, st.lists(entries, max_size=30))
def test_incremental_equals_brute_force_small_windows(
    revised: bool, size: int, history: list[Entry]
) -> None:
    """In either mode: a window keeps one F3's sums running, the other's are computed."""
    win = ConvergenceWindow(size, revised)
    assert_matches(win, reference([], size))
    for i, (r, p, s) in enumerate(history):
        win.append(r, p, s)
        assert_matches(win, reference(history[: i + 1], size))


def random_history(seed: int, n: int) -> list[Entry]:
    """A random walk of ratings with random P and S, like a real player's rounds."""
    rng = random.Random(seed)
    rating, out = 1000, []
    for _ in range(n):
        rating = min(P.r_max, max(P.r_min, rating + rng.randint(-72, 72)))
        out.append((rating, rng.random(), rng.choice((0.0, 0.5, 1.0))))
    return out


@pytest.mark.parametrize("revised", [False, True])
@settings(max_examples=6, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=150))
def test_incremental_equals_brute_force_size_500(revised: bool, seed: int, extra: int) -> None:
    history = random_history(seed, 500 + extra)
    checkpoints = {1, 2, 3, 4, 249, 250, 251, 499, 500, 501, 502, 500 + extra}
    win = ConvergenceWindow(500, revised)
    for i, (r, p, s) in enumerate(history, start=1):
        win.append(r, p, s)
        if i in checkpoints:
            assert_matches(win, reference(history[:i], 500))
    assert len(win) == 500


def test_windows_over_512_rounds_stay_exact() -> None:
    """Past 512 rounds Σe·2^44 can pass 2^53: the statistics then take Python's exact int
    division (a side that wins at P ≈ 0 every round: mean(o) − mean(e) ≈ 1)."""
    history = [(1000 + i % 13, 1e-3 * (i % 7), 1.0) for i in range(900)]
    win = filled(800, history)
    assert abs((win.sum_s2 << 43) - win.sum_p) >= 2**53  # the slow path is the one tested
    assert_matches(win, reference(history, 800))


@pytest.mark.parametrize(
    ("ratings", "expected"),
    [
        ([1000], 0.0),  # m = 0: both halves empty
        ([1000, 1036], 36.0),  # old [1000], new [1036]
        ([1000, 1036, 1060], 60.0),  # old [1000], new [1060]; 1036 is the middle
        ([1000, 1036, 1060, 1080], 52.0),  # (1060+1080)/2 − (1000+1036)/2 = 1070 − 1018
        ([1000, 1036, 1060, 1080, 1090], 67.0),  # (1080+1090)/2 − 1018 = 1085 − 1018
    ],
)
def test_halves_worked_by_hand(ratings: list[int], expected: float) -> None:
    win = filled(500, [(r, 0.5, 0.5) for r in ratings])
    assert win.mean_new_minus_old() == expected


def test_halves_worked_by_hand_with_eviction() -> None:
    # W = 4; 1000, 1036, 1060, 1080, 1090, 1100 → [1060, 1080, 1090, 1100]
    # (1090+1100)/2 − (1060+1080)/2 = 1095 − 1070 = 25
    win = filled(4, [(r, 0.5, 0.5) for r in (1000, 1036, 1060, 1080, 1090, 1100)])
    assert list(win.ratings) == [1060, 1080, 1090, 1100]
    assert win.mean_new_minus_old() == 25.0
    assert (win.sum_old, win.sum_new) == (2140, 2190)


def test_window_size_must_be_at_least_two() -> None:
    with pytest.raises(ValueError):
        ConvergenceWindow(1)


# --- resizing -----------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(small_sizes, small_sizes, st.lists(entries, max_size=25))
def test_resized_keeps_the_most_recent_rounds(
    size: int, new_size: int, history: list[Entry]
) -> None:
    win = filled(size, history)
    kept = history[-size:] if history else []
    res = win.resized(new_size)
    assert res.size == new_size
    assert len(res) == min(len(kept), new_size)
    assert_matches(res, reference(kept, new_size))
    same_state(res, filled(new_size, kept))
    # the original is untouched
    assert_matches(win, reference(history, size))


def test_resized_worked_by_hand() -> None:
    win = filled(5, [(r, 0.5, 1.0) for r in (1000, 1010, 1020, 1030, 1040, 1050)])
    assert list(win.ratings) == [1010, 1020, 1030, 1040, 1050]
    small = win.resized(3)
    assert list(small.ratings) == [1030, 1040, 1050]
    assert [s / 2 for s in small.scores2] == [1.0, 1.0, 1.0]
    assert small.mean_new_minus_old() == 20.0  # new [1050] − old [1030]
    big = win.resized(500)
    assert list(big.ratings) == [1010, 1020, 1030, 1040, 1050]
    assert big.mean_new_minus_old() == 30.0  # (1040+1050)/2 − (1010+1020)/2 = 1045 − 1015


# --- restoring --------------------------------------------------------------------------------


@pytest.mark.parametrize("revised", [False, True])
@settings(max_examples=100, deadline=None)
@given(small_sizes, st.lists(entries, max_size=25), st.lists(entries, max_size=10))
def test_restored_from_entries_and_sums_carries_on_like_the_original(
    revised: bool, size: int, history: list[Entry], later: list[Entry]
) -> None:
    win = filled(size, history, revised)
    sums = win.seed_sums()
    back = ConvergenceWindow.restored(
        size, win.ratings, win.probs, win.scores2, sums, win.appended, revised
    )
    same_state(win, back)
    assert back.appended == len(history)
    for r, p, s in later:
        win.append(r, p, s)
        back.append(r, p, s)
    same_state(win, back)
    assert_matches(back, reference(history + later, size))


def test_restored_refuses_entries_that_make_no_window() -> None:
    sums = (0, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        ConvergenceWindow.restored(2, [1000, 1010, 1020], [0.5] * 3, [1] * 3, sums, 3)
    with pytest.raises(ValueError):
        ConvergenceWindow.restored(5, [1000, 1010], [0.5], [1, 1], sums, 2)


@pytest.mark.parametrize("revised", [False, True])
@settings(max_examples=100, deadline=None)
@given(small_sizes, st.lists(entries, max_size=25), st.lists(entries, max_size=25))
def test_extend_is_append_in_turn(
    revised: bool, size: int, history: list[Entry], more: list[Entry]
) -> None:
    win = filled(size, history, revised)
    win.extend([r for r, _, _ in more], [p for _, p, _ in more], [int(2 * s) for *_, s in more])
    same_state(win, filled(size, history + more, revised))
    assert win.appended == len(history) + len(more)
    with pytest.raises(ValueError):
        win.extend([1000], [0.5, 0.5], [1])
