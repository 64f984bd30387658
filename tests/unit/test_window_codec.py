"""The store's window codec: every format loads into the window that was stored, and the bytes
it writes are, byte for byte, those that databases already hold."""

from __future__ import annotations

import random
import struct
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synelo.ratings import ConvergenceWindow, convergence
from synelo.store import window_codec as codec
from tests.unit.test_window import (
    Entry,
    P,
    assert_matches,
    entries,
    filled,
    random_history,
    reference,
    same_state,
    small_sizes,
)

# --- the bytes databases hold -------------------------------------------------------------

# A window of 7 after 19 rounds (seeded below), as the release before this module wrote it:
# the whole-window blob (format 3), the header (format 4) and its chunks of 5 entries.
GOLDEN_BLOB = bytes.fromhex(
    "0300070007000000e5270000000000006d7e080100000000e50d000000000000871000000000000008000000"
    "0600888b60bd8d309d020000af05000099050000790900000e040000fe0300007b08000000f84ef9f268e83f"
    "006859165619d63f00a850c3cd50db3f00107bde3866cb3f00d8a560c32cca3f00e413d4a161e83f00e42dee"
    "296ed43f01000101020102"
)
GOLDEN_HEADER = bytes.fromhex(
    "0400070007000000e5270000000000006d7e080100000000e50d000000000000871000000000000008000000"
    "06001300000000000000888b60bd8d30"
)
GOLDEN_CHUNKS = {
    2: bytes.fromhex(
        "0c000000000000009d020000af0500009905000000f84ef9f268e83f006859165619d63f00a850c3cd50db3f"
        "010001"
    ),
    3: bytes.fromhex(
        "0f00000000000000790900000e040000fe0300007b08000000107bde3866cb3f00d8a560c32cca3f00e413d4"
        "a161e83f00e42dee296ed43f01020102"
    ),
}


def golden_window() -> ConvergenceWindow:
    rng = random.Random(2024)
    win = ConvergenceWindow(7)
    for _ in range(19):
        win.append(rng.randint(100, 3000), rng.random(), rng.choice((0.0, 0.5, 1.0)))
    return win


def test_the_bytes_written_are_those_stored_before() -> None:
    win = golden_window()
    assert codec.to_bytes(win) == GOLDEN_BLOB
    assert codec.header_bytes(win) == GOLDEN_HEADER
    assert (codec.oldest_chunk(win, 5), codec.chunk_of_newest(win, 5)) == (2, 3)
    assert {n: codec.chunk_bytes(win, n, 5) for n in (2, 3)} == GOLDEN_CHUNKS
    assert codec.chunk_bytes(win, 1, 5) == codec.chunk_bytes(win, 4, 5) == b""  # out of it
    assert [codec.chunk_number(GOLDEN_CHUNKS[n], 5) for n in (2, 3)] == [2, 3]


def test_stored_bytes_load_the_window_they_came_from() -> None:
    win = golden_window()
    from_blob = codec.from_bytes(GOLDEN_BLOB, 7)
    same_state(win, from_blob)
    assert from_blob.appended == 7  # a blob keeps no count: its entries are numbered from 0
    from_parts = codec.from_parts(GOLDEN_HEADER, GOLDEN_CHUNKS, 5, 7)
    same_state(win, from_parts)
    assert from_parts.appended == 19
    tail = [(r, p, s2 / 2) for r, p, s2 in zip(win.ratings, win.probs, win.scores2, strict=True)]
    rebuilt = codec.from_chunks_and_tail({2: GOLDEN_CHUNKS[2]}, tail[-4:], 19, 5, 7)
    same_state(win, rebuilt)
    assert rebuilt.appended == 19


# --- the single blob --------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(small_sizes, st.lists(entries, max_size=25), st.lists(entries, max_size=10))
def test_bytes_round_trip_small(size: int, history: list[Entry], later: list[Entry]) -> None:
    win = filled(size, history)
    blob = codec.to_bytes(win)
    back = codec.from_bytes(blob, size)
    assert back.size == size
    same_state(win, back)
    assert codec.to_bytes(back) == blob
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
    blob = codec.to_bytes(win)
    back = codec.from_bytes(blob)
    same_state(win, back)
    assert codec.to_bytes(back) == blob
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
    back = codec.from_bytes(codec.to_bytes(win), 3)
    same_state(win, back)
    assert_matches(back, reference(history, 3))


@pytest.mark.parametrize("blob", [None, b""])
def test_missing_blob_is_an_empty_window(blob: bytes | None) -> None:
    win = codec.from_bytes(blob, 7)
    assert win.size == 7 and len(win) == 0
    assert convergence(win, P) == 1.0


def test_unknown_format_version_is_refused() -> None:
    blob = bytearray(codec.to_bytes(filled(4, [(1000, 0.5, 1.0)])))
    blob[0:2] = (99).to_bytes(2, "little")
    with pytest.raises(ValueError):
        codec.from_bytes(bytes(blob), 4)


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
        newest = codec.chunk_of_newest(win, chunk)
        stored[newest] = codec.chunk_bytes(win, newest, chunk)
        for number in [n for n in stored if n < codec.oldest_chunk(win, chunk)]:
            del stored[number]
        rebuilt = codec.from_parts(codec.header_bytes(win), stored, chunk, size)
        same_state(win, rebuilt)
        assert rebuilt.appended == win.appended
    assert len(codec.header_bytes(win)) < 300  # what a round rewrites besides one chunk
    assert len(stored) <= size // chunk + 2


def test_from_parts_reads_an_old_single_blob_and_an_empty_header() -> None:
    win = filled(6, [(1000 + i, 0.5, 1.0) for i in range(9)])
    same_state(win, codec.from_parts(codec.to_bytes(win), {}, 50, 6))
    assert len(codec.from_parts(None, {}, 50, 6)) == 0


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
    same_state(win, codec.from_bytes(_as_old_format(codec.to_bytes(win), 1, probs), 20))
    stored = {
        n: codec.chunk_bytes(win, n, 8)
        for n in range(codec.oldest_chunk(win, 8), codec.chunk_of_newest(win, 8) + 1)
    }
    old_header = _as_old_format(codec.header_bytes(win), 2, probs)
    assert old_header[0] == 2 and len(old_header) > len(codec.header_bytes(win))
    same_state(win, codec.from_parts(old_header, stored, 8, 20))


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
            codec.chunk_of_newest(win, chunk),
            ask,
            codec.oldest_chunk(win, chunk),
            codec.chunk_of_newest(win, chunk),
        ):
            assert codec.chunk_bytes(win, number, chunk) == codec.chunk_bytes(fresh, number, chunk)


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
            stored[codec.chunk_of_newest(win, chunk)] = codec.chunk_bytes(
                win, codec.chunk_of_newest(win, chunk), chunk
            )
            for number in [n for n in stored if n < codec.oldest_chunk(win, chunk)]:
                del stored[number]
        tail = history[len(history) - win.appended % chunk :] if win.appended % chunk else []
        rebuilt = codec.from_chunks_and_tail(stored, tail, win.appended, chunk, size)
        same_state(win, rebuilt)
        assert rebuilt.appended == win.appended
        assert codec.chunk_bytes(
            rebuilt, codec.chunk_of_newest(rebuilt, chunk), chunk
        ) == codec.chunk_bytes(win, codec.chunk_of_newest(win, chunk), chunk)
    with pytest.raises(ValueError):
        codec.from_chunks_and_tail(stored, [], win.appended + 1, chunk, size)


def test_a_blob_of_another_size_loads_resized() -> None:
    """A pool's window size changed since the blob was stored: it loads like `resized`."""
    for size, new_size in ((5, 3), (3, 5), (7, 7)):
        win = filled(size, random_history(size, 12))
        same_state(codec.from_bytes(codec.to_bytes(win), new_size), win.resized(new_size))
        header = codec.header_bytes(win)
        chunks = {
            n: codec.chunk_bytes(win, n, 4)
            for n in range(codec.oldest_chunk(win, 4), codec.chunk_of_newest(win, 4) + 1)
        }
        same_state(codec.from_parts(header, chunks, 4, new_size), win.resized(new_size))


def test_a_header_whose_chunks_are_short_is_refused() -> None:
    win = filled(6, random_history(3, 9))
    chunks = {
        n: codec.chunk_bytes(win, n, 4)
        for n in range(codec.oldest_chunk(win, 4), codec.chunk_of_newest(win, 4) + 1)
    }
    chunks[codec.chunk_of_newest(win, 4)] = chunks[codec.chunk_of_newest(win, 4)][:-13]
    with pytest.raises(ValueError):
        codec.from_parts(codec.header_bytes(win), chunks, 4, 6)
