"""The incremental ConvergenceWindow against a from-scratch computation of F3 (exact fractions)."""

from __future__ import annotations

import math
import random
import struct
from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synelo.ratings import ConvergenceWindow, SynEloParams, convergence
from synelo.ratings.window import p_units

P = SynEloParams()

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
    assert (win.sum_w, win.sum_w2) == (ref.sum_w, ref.sum_w2)
    assert (win.sum_old, win.sum_new) == (ref.sum_old, ref.sum_new)
    # the statistics are computed exactly and rounded once: equal to the float of the fraction
    assert win.mean_new_minus_old() == ref.new_minus_old
    assert win.outcome_excess() == ref.excess
    assert abs(win.std() - ref.std) <= 2 * math.ulp(ref.std)
    assert math.isclose(convergence(win, P), ref.c, rel_tol=1e-12, abs_tol=1e-12)


def filled(size: int, history: list[Entry]) -> ConvergenceWindow:
    win = ConvergenceWindow(size)
    for r, p, s in history:
        win.append(r, p, s)
    return win


STATE = (
    "size",
    "ratings",
    "probs",
    "scores2",
    "sum_w",
    "sum_w2",
    "sum_old",
    "sum_new",
    "sum_s2",
    "sum_p",
)  # every field (a mypyc-compiled class has no __slots__ to list them)


def same_state(a: ConvergenceWindow, b: ConvergenceWindow) -> None:
    for name in STATE:
        assert getattr(a, name) == getattr(b, name), name
    assert a.mean_new_minus_old() == b.mean_new_minus_old()
    assert a.outcome_excess() == b.outcome_excess()
    assert a.std() == b.std()
    assert convergence(a, P) == convergence(b, P)


# --- incremental == from scratch ----------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(small_sizes, st.lists(entries, max_size=30))
def test_incremental_equals_brute_force_small_windows(size: int, history: list[Entry]) -> None:
    win = ConvergenceWindow(size)
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


@settings(max_examples=6, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=150))
def test_incremental_equals_brute_force_size_500(seed: int, extra: int) -> None:
    history = random_history(seed, 500 + extra)
    checkpoints = {1, 2, 3, 4, 249, 250, 251, 499, 500, 501, 502, 500 + extra}
    win = ConvergenceWindow(500)
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


# --- persistence --------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(small_sizes, st.lists(entries, max_size=25), st.lists(entries, max_size=10))
def test_bytes_round_trip_small(size: int, history: list[Entry], later: list[Entry]) -> None:
    win = filled(size, history)
    blob = win.to_bytes()
    back = ConvergenceWindow.from_bytes(blob, size)
    assert back.size == size
    same_state(win, back)
    assert back.to_bytes() == blob
    # and the restored window carries on exactly like the original
    for r, p, s in later:
        win.append(r, p, s)
        back.append(r, p, s)
        same_state(win, back)
    assert_matches(back, reference(history + later, size))


@settings(max_examples=5, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=0, max_value=120))
def test_bytes_round_trip_size_500(seed: int, extra: int) -> None:
    history = random_history(seed, 440 + extra)
    win = filled(500, history)
    blob = win.to_bytes()
    back = ConvergenceWindow.from_bytes(blob)
    same_state(win, back)
    assert back.to_bytes() == blob
    more = random_history(seed + 1, 80)
    for r, p, s in more:
        back.append(r, p, s)
    assert_matches(back, reference(history + more, 500))


def test_bytes_of_extreme_values() -> None:
    history = [
        (P.r_max, 1.0, 1.0),
        (P.r_min, 0.0, 0.0),
        (P.r_max, 5e-324, 0.5),
        (P.r_min, 1 - 2**-53, 1.0),
        (5000, 2**-1022, 0.0),
    ]
    win = filled(3, history)
    back = ConvergenceWindow.from_bytes(win.to_bytes(), 3)
    same_state(win, back)
    assert_matches(back, reference(history, 3))


@pytest.mark.parametrize("blob", [None, b""])
def test_missing_blob_is_an_empty_window(blob: bytes | None) -> None:
    win = ConvergenceWindow.from_bytes(blob, 7)
    assert win.size == 7 and len(win) == 0
    assert convergence(win, P) == 1.0


def test_unknown_format_version_is_refused() -> None:
    blob = bytearray(filled(4, [(1000, 0.5, 1.0)]).to_bytes())
    blob[0:2] = (99).to_bytes(2, "little")
    with pytest.raises(ValueError):
        ConvergenceWindow.from_bytes(bytes(blob), 4)


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
    # loading a blob with another size resizes it the same way
    same_state(ConvergenceWindow.from_bytes(win.to_bytes(), new_size), res)


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


@pytest.mark.parametrize(
    ("size", "chunk", "rounds"),
    [(5, 2, 23), (500, 50, 1234), (7, 3, 7), (500, 50, 499), (4, 50, 9)],
)
def test_header_and_chunks_rebuild_the_window(size: int, chunk: int, rounds: int) -> None:
    """What the store keeps — the header and, after each round, the newest chunk (old chunks
    dropped when a new one starts) — rebuilds the same window at every step."""
    rng = random.Random(size * 1000 + rounds)
    win = ConvergenceWindow(size)
    stored: dict[int, bytes] = {}
    for _ in range(rounds):
        win.append(rng.randint(100, 3000), rng.random(), rng.choice((0.0, 0.5, 1.0)))
        newest = win.chunk_of_newest(chunk)
        stored[newest] = win.chunk_bytes(newest, chunk)
        for number in [n for n in stored if n < win.oldest_chunk(chunk)]:
            del stored[number]
        rebuilt = ConvergenceWindow.from_parts(win.header_bytes(), stored, chunk, size)
        same_state(win, rebuilt)
        assert rebuilt.appended == win.appended
    assert len(win.header_bytes()) < 300  # what a round rewrites besides one chunk
    assert len(stored) <= size // chunk + 2


def test_from_parts_reads_an_old_single_blob_and_an_empty_header() -> None:
    win = filled(6, [(1000 + i, 0.5, 1.0) for i in range(9)])
    same_state(win, ConvergenceWindow.from_parts(win.to_bytes(), {}, 50, 6))
    assert len(ConvergenceWindow.from_parts(None, {}, 50, 6)) == 0


def _as_old_format(data: bytes, version: int, probs: list[float]) -> bytes:
    """`data` (a header or blob of the current format) rewritten as the format `version`
    before Σe moved to units of 2^-44: Σe then was Σ P·2^1074, as a longer integer."""
    fields = list(struct.unpack_from("<HHIqqqqIH", data))
    new_len = fields[-1]  # bytes of the current Σe
    at = struct.calcsize("<HHIqqqqIH") + (8 if version == 2 else 0)
    old_sum = int(sum(Fraction(p) for p in probs) * 2**1074)
    old_bytes = old_sum.to_bytes((old_sum.bit_length() + 8) // 8 or 1, "little", signed=True)
    fields[0], fields[-1] = version, len(old_bytes)
    head = struct.pack("<HHIqqqqIH", *fields)
    return head + data[len(head) : at] + old_bytes + data[at + new_len :]


def test_windows_stored_by_earlier_versions_load_the_same() -> None:
    """Formats 1 (blob) and 2 (header) kept Σe scaled by 2^1074; they load into the same
    window, Σe recomputed from the stored entries."""
    rng = random.Random(5)
    history = [
        (rng.randint(100, 3000), rng.random(), rng.choice((0.0, 0.5, 1.0))) for _ in range(37)
    ]
    win = filled(20, history)
    probs = [p for _, p, _ in history[-20:]]
    same_state(win, ConvergenceWindow.from_bytes(_as_old_format(win.to_bytes(), 1, probs), 20))
    stored = {
        n: win.chunk_bytes(n, 8) for n in range(win.oldest_chunk(8), win.chunk_of_newest(8) + 1)
    }
    old_header = _as_old_format(win.header_bytes(), 2, probs)
    assert old_header[0] == 2 and len(old_header) > len(win.header_bytes())
    same_state(win, ConvergenceWindow.from_parts(old_header, stored, 8, 20))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=2, max_value=12),
    st.integers(min_value=1, max_value=5),
    st.lists(st.tuples(entries, st.integers(min_value=0, max_value=12)), max_size=60),
)
def test_chunk_bytes_are_the_same_whatever_was_asked_before(
    size: int, chunk: int, steps: list
) -> None:
    """chunk_bytes, asked in any order after any appends, answers what a window freshly built
    from the same entries answers."""
    win = ConvergenceWindow(size)
    history: list[Entry] = []
    for entry, ask in steps:
        win.append(*entry)
        history.append(entry)
        fresh = filled(size, history)
        fresh.appended = win.appended
        for number in (
            win.chunk_of_newest(chunk),
            ask,
            win.oldest_chunk(chunk),
            win.chunk_of_newest(chunk),
        ):
            assert win.chunk_bytes(number, chunk) == fresh.chunk_bytes(number, chunk)


@pytest.mark.parametrize(
    ("size", "chunk", "rounds"),
    [
        (5, 2, 23),
        (500, 50, 1234),
        (7, 3, 7),
        (500, 50, 499),
        (4, 50, 9),
        (7, 50, 130),
        (500, 50, 550),
        (60, 50, 101),
    ],
)
def test_full_chunks_and_a_journal_tail_rebuild_the_window(
    size: int, chunk: int, rounds: int
) -> None:
    """What the store keeps now — each chunk once it is full (those that left the window
    dropped) — plus the rounds since, as the journal has them, rebuild the same window at
    every step."""
    rng = random.Random(size * 7 + rounds)
    win = ConvergenceWindow(size)
    stored: dict[int, bytes] = {}
    history: list[Entry] = []
    for _ in range(rounds):
        entry = (rng.randint(100, 3000), rng.random(), rng.choice((0.0, 0.5, 1.0)))
        win.append(*entry)
        history.append(entry)
        if win.appended % chunk == 0:
            stored[win.chunk_of_newest(chunk)] = win.chunk_bytes(win.chunk_of_newest(chunk), chunk)
            for number in [n for n in stored if n < win.oldest_chunk(chunk)]:
                del stored[number]
        tail = history[len(history) - win.appended % chunk :] if win.appended % chunk else []
        rebuilt = ConvergenceWindow.from_chunks_and_tail(stored, tail, win.appended, chunk, size)
        same_state(win, rebuilt)
        assert rebuilt.appended == win.appended
        assert rebuilt.chunk_bytes(rebuilt.chunk_of_newest(chunk), chunk) == win.chunk_bytes(
            win.chunk_of_newest(chunk), chunk
        )
    with pytest.raises(ValueError):
        ConvergenceWindow.from_chunks_and_tail(stored, [], win.appended + 1, chunk, size)
