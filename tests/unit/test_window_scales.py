"""F3 (revised)'s multi-scale sums in ConvergenceWindow against a from-scratch computation
(exact fractions), incrementally, after eviction and after restoring from storage."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synelo.ratings import ConvergenceWindow
from synelo.ratings.window import Z_SCALES, p_quarter_units, p_units, spread_units
from synelo.store import window_codec as codec
from tests.unit.test_window import Entry, entries, filled, random_history, same_state

# window sizes on both sides of every scale
SIZES = sorted({2, 24, *(n + d for n in Z_SCALES for d in (-1, 0, 1)), 600})


def quarter(p: float) -> int:
    """q of the window's documented quantisation, worked from P independently: P to 2^-44
    (p_units), then to the nearest 2^-20, halves up."""
    return math.floor(Fraction(p_units(p), 2**24) + Fraction(1, 2))


def reference_sums(history: list[Entry], size: int) -> list[tuple[int, int, int]]:
    """(L, Σ(o − e)·2^44, Σe(1 − e)·2^40) over the last min(L, |w|) entries of the window of
    `size` that `history` leaves, for each scale L ≤ size; from scratch, in fractions."""
    window = history[-size:] if history else []
    out = []
    for scale in Z_SCALES:
        if scale > size:
            continue
        last = window[-scale:] if window else []
        d = sum((Fraction(s) - Fraction(p_units(p), 2**44) for _, p, s in last), Fraction(0))
        v = sum(
            (Fraction(quarter(p), 2**20) * (1 - Fraction(quarter(p), 2**20)) for _, p, _ in last),
            Fraction(0),
        )
        assert (d * 2**44).denominator == 1 and (v * 2**40).denominator == 1
        out.append((scale, int(d * 2**44), int(v * 2**40)))
    return out


def reference_largest_z(history: list[Entry], size: int) -> float:
    best = 0.0
    for _, d, v in reference_sums(history, size):
        if v:
            best = max(best, abs(d / 2**44) / math.sqrt(v / 2**40))
    return best


def assert_scales(win: ConvergenceWindow, history: list[Entry]) -> None:
    expected = reference_sums(history, win.size)
    assert win.scale_sums() == expected  # exact integers, no drift
    assert all(v < 2**49 for _, _, v in expected)  # native ints in the compiled window
    assert math.isclose(
        win.largest_z(), reference_largest_z(history, win.size), rel_tol=1e-12, abs_tol=1e-12
    )


def test_quantisation_worked_by_hand() -> None:
    # P = 0.5 → q = 2^19, e(1−e) = 2^19·2^19 = 2^38 (0.25 in units of 2^-40)
    assert p_quarter_units(p_units(0.5)) == 2**19 and spread_units(p_units(0.5)) == 2**38
    # P = 0.75 → q = 3·2^18, e(1−e) = 3·2^18·2^18 = 3·2^36 (0.1875)
    assert spread_units(p_units(0.75)) == 3 * 2**36
    # P = 1 and P = 0: no spread
    assert spread_units(p_units(1.0)) == 0 and spread_units(p_units(0.0)) == 0
    # P = 2^-21 (half a unit of q) rounds up to q = 1; a hair below rounds to 0
    assert p_quarter_units(p_units(2.0**-21)) == 1
    assert p_quarter_units(p_units(2.0**-21 - 2.0**-40)) == 0


def test_scales_worked_by_hand() -> None:
    # W = 500: 5 losses at P = 0.5, then 25 wins at P = 0.75.
    # L = 25: the 25 wins: Σ(o−e) = 25·0.25 = 6.25, Σe(1−e) = 25·0.1875 = 4.6875
    # L ≥ 50: all 30: Σ(o−e) = 6.25 − 5·0.5 = 3.75, Σe(1−e) = 4.6875 + 5·0.25 = 5.9375
    win = filled(500, [(1000, 0.5, 0.0)] * 5 + [(1000, 0.75, 1.0)] * 25)
    d25, v25 = int(6.25 * 2**44), int(4.6875 * 2**40)
    d30, v30 = int(3.75 * 2**44), int(5.9375 * 2**40)
    assert win.scale_sums() == [(25, d25, v25)] + [(n, d30, v30) for n in (50, 100, 200, 500)]
    # z_25 = 6.25/√4.6875 = 5/√3 = 2.886751…; z_50 = 3.75/√5.9375 = 1.538968…
    assert math.isclose(win.largest_z(), 5 / math.sqrt(3), rel_tol=1e-15)


def test_scales_present_depend_on_the_window_size() -> None:
    # only L ≤ W: none below 25; W itself is a scale only when it is one of Z_SCALES
    assert [n for n, _, _ in ConvergenceWindow(24).scale_sums()] == []
    assert [n for n, _, _ in ConvergenceWindow(30).scale_sums()] == [25]
    assert [n for n, _, _ in ConvergenceWindow(50).scale_sums()] == [25, 50]
    assert [n for n, _, _ in ConvergenceWindow(500).scale_sums()] == [25, 50, 100, 200, 500]
    assert [n for n, _, _ in ConvergenceWindow(600).scale_sums()] == [25, 50, 100, 200, 500]
    assert filled(24, [(1000, 0.5, 1.0)] * 24).largest_z() == 0.0  # no scale: no evidence


def test_no_spread_gives_z_zero() -> None:
    # P = 1 every round: Σe(1−e) = 0, so z = 0 even though o − e = −1 each round
    win = filled(500, [(1000, 1.0, 0.0)] * 30)
    assert all(v == 0 for _, _, v in win.scale_sums())
    assert win.largest_z() == 0.0


def test_eviction_by_hand() -> None:
    # W = 26, scales [25]: 26 wins at P = 0.5, then 3 losses at P = 0.5.
    # Last 25 = 22 wins + 3 losses: Σ(o−e) = 22·0.5 − 3·0.5 = 9.5, Σe(1−e) = 25·0.25 = 6.25
    win = filled(26, [(1000, 0.5, 1.0)] * 26 + [(1000, 0.5, 0.0)] * 3)
    assert win.scale_sums() == [(25, int(9.5 * 2**44), int(6.25 * 2**40))]
    assert win.largest_z() == 9.5 / 2.5  # √6.25 = 2.5 exactly: z = 3.8


@pytest.mark.parametrize("revised", [True, False])
@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(SIZES),
    st.integers(min_value=0, max_value=2**32),
    st.integers(min_value=0, max_value=700),
)
def test_incremental_equals_brute_force(revised: bool, size: int, seed: int, length: int) -> None:
    """Every scale's sums equal the from-scratch sums at random points below and above each
    L, and a window rebuilt from its stored entries (`restored`, each codec format) has the
    same sums and the same largest |z|, bit for bit: kept running (`revised`) or computed
    from the entries when asked (a seed window)."""
    history = random_history(seed, length)
    rng = random.Random(seed)
    checkpoints = {length, *(rng.randint(0, length) for _ in range(3))}
    checkpoints |= {n + d for n in Z_SCALES for d in (-1, 0, 1) if 0 <= n + d <= length}
    win = ConvergenceWindow(size, revised)
    for i, entry in enumerate(history, start=1):
        win.append(*entry)
        if i in checkpoints:
            assert_scales(win, history[:i])
    back = ConvergenceWindow.restored(
        size, win.ratings, win.probs, win.scores2, win.seed_sums(), length, revised
    )
    same_state(win, back)
    same_state(win, codec.from_bytes(codec.to_bytes(win), size, revised))
    chunk = 50
    stored = {
        n: codec.chunk_bytes(win, n, chunk)
        for n in range(codec.oldest_chunk(win, chunk), codec.chunk_of_newest(win, chunk) + 1)
    }
    if length:
        same_state(win, codec.from_parts(codec.header_bytes(win), stored, chunk, size, revised))
    full = {n: data for n, data in stored.items() if (n + 1) * chunk <= length}
    tail = history[length - length % chunk :]
    same_state(win, codec.from_chunks_and_tail(full, tail, length, chunk, size, revised))
    # and they carry on alike
    later = random_history(seed + 1, 60)
    for entry in later:
        win.append(*entry)
        back.append(*entry)
    same_state(win, back)
    assert_scales(back, history + later)


@pytest.mark.parametrize("revised", [True, False])
@settings(max_examples=100, deadline=None)
@given(st.sampled_from([2, 25, 26, 30, 50, 51]), st.lists(entries, max_size=70))
def test_any_entries_small_windows(revised: bool, size: int, history: list[Entry]) -> None:
    """Arbitrary P (0 and 1 included) and S, in windows around the small scales."""
    win = ConvergenceWindow(size, revised)
    for i, entry in enumerate(history, start=1):
        win.append(*entry)
        if i % 7 == 0 or i == len(history):
            assert_scales(win, history[:i])
    back = ConvergenceWindow.restored(
        size, win.ratings, win.probs, win.scores2, win.seed_sums(), len(history), revised
    )
    same_state(win, back)
    # the other mode's window of the same entries has the same statistics
    same_state_across_modes(win, filled(size, history, not revised))


@pytest.mark.parametrize("revised", [True, False])
@pytest.mark.parametrize("size", [30, 500])
def test_resized_rebuilds_the_scales(revised: bool, size: int) -> None:
    history = random_history(9, 620)
    win = filled(500, history, revised)
    small = win.resized(size)
    assert small.revised == revised
    assert small.scale_sums() == reference_sums(history, size)
    assert win.resized(size, not revised).revised != revised


def same_state_across_modes(a: ConvergenceWindow, b: ConvergenceWindow) -> None:
    """Two windows of the same entries, one per mode: every statistic the same."""
    assert a.revised != b.revised
    assert (a.ratings, a.probs, a.scores2) == (b.ratings, b.probs, b.scores2)
    assert a.seed_sums() == b.seed_sums() and a.statistics() == b.statistics()
    assert a.scale_sums() == b.scale_sums() and a.largest_z() == b.largest_z()


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(SIZES),
    st.integers(min_value=0, max_value=2**32),
    st.integers(min_value=0, max_value=700),
)
def test_both_modes_give_the_same_statistics(size: int, seed: int, length: int) -> None:
    history = random_history(seed, length)
    seed_win, revised_win = filled(size, history), filled(size, history, True)
    same_state_across_modes(seed_win, revised_win)
    for entry in random_history(seed + 1, 40):  # and after more appends (fresh sums redone)
        seed_win.append(*entry)
        revised_win.append(*entry)
        same_state_across_modes(seed_win, revised_win)
