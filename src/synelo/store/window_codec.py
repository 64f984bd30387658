"""The bytes the store keeps of a convergence window, and the windows they load back into.

`synelo.ratings.window` is the maths; this is how the store lays a window out in its
columns. Four formats, numbered by the version in their first two bytes:

- 1 and 3, a whole window in one blob (`to_bytes`): the header, Σe, then every entry. Rows
  of migration 0001 hold it in ``players.window_state``.
- 2 and 4, a header without entries (`header_bytes`): the header, `appended`, Σe. Rows last
  written between migrations 0002 and 0003 hold it in ``players.window_state``, with their
  unfilled newest chunk in ``players.window_tail``.

Formats 1 and 2 kept Σe scaled by 2^1074; 3 and 4 keep it in units of 2^-44. Σe is
recomputed from the entries on load either way, so all four load into the same window.

A chunk (`chunk_bytes`, in ``window_chunks.data``) holds the entries numbered
[number·chunk, (number+1)·chunk) that are still in the window: the number of its first entry
(int64), then the ratings (int32), P (float64) and 2·S (int8) of its entries. Entry t of a
window is the t-th appended since the window (re)started.

Every format is little-endian and must stay byte for byte what it is: stored rows are read
back with it. No format holds F3 (revised)'s sums: a window loaded with `revised` rebuilds
them from its entries, exactly (and the seed's sums it writes are computed the same way).
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Mapping, Sequence
from typing import TypeAlias

from synelo.ratings.window import ConvergenceWindow

_HEADER = struct.Struct("<HHIqqqqIH")  # version, size, n, Σw, Σw², Σold, Σnew, Σ2o, len(Σe)
BLOB_VERSIONS = (1, 3)  # to_bytes: the header, Σe, then every entry (1: Σe scaled by 2^1074)
_SPLIT = struct.Struct("<q")  # header_bytes adds `appended` after the header
HEADER_VERSIONS = (2, 4)  # header_bytes: the header, `appended`, Σe (2: Σe scaled by 2^1074)
_ENTRY = 13  # bytes per entry in a chunk: rating int32, P float64, 2·S int8

Entries: TypeAlias = "tuple[array[int], array[float], array[int]]"  # ratings, P, 2·S


def _head_bytes(win: ConvergenceWindow, version: int) -> tuple[bytes, bytes]:
    """The fixed header of formats 3 and 4, and Σe as a signed little-endian integer."""
    sum_p = win.sum_p.to_bytes((win.sum_p.bit_length() + 8) // 8 or 1, "little", signed=True)
    return _HEADER.pack(version, win.size, len(win), *win.seed_sums(), len(sum_p)), sum_p


def _entries() -> Entries:
    """Empty arrays of the entries' stored types."""
    return array("i"), array("d"), array("b")


def _restored(
    header: tuple[int, ...], entries: Entries, appended: int, size: int, revised: bool
) -> ConvergenceWindow:
    """The window a header and its entries describe, at the `size` asked for, keeping the
    sums of the F3 `revised` names."""
    _, stored_size, _, sw, sw2, so, sn, ss2, _ = header
    ratings, probs, scores2 = entries
    win = ConvergenceWindow.restored(
        stored_size, ratings, probs, scores2, (sw, sw2, so, sn, ss2), appended, revised
    )
    return win if stored_size == size else win.resized(size)


# --- the single blob (formats 1 and 3) ----------------------------------------------------------
def to_bytes(win: ConvergenceWindow) -> bytes:
    """The whole window in one blob (format 3): the header, Σe, then every entry."""
    head, sum_p = _head_bytes(win, BLOB_VERSIONS[-1])
    return b"".join(
        (
            head,
            sum_p,
            array("i", win.ratings).tobytes(),
            array("d", win.probs).tobytes(),
            array("b", win.scores2).tobytes(),
        )
    )


def from_bytes(blob: bytes | None, size: int = 500, revised: bool = False) -> ConvergenceWindow:
    """A window from a blob of format 1 or 3, at `size`, keeping the sums of the F3 `revised`
    names (an empty or missing blob is an empty window). The blob does not keep `appended`:
    its entries are numbered from 0."""
    if not blob:
        return ConvergenceWindow(size, revised)
    header = _HEADER.unpack_from(blob)
    version, n, plen = header[0], header[2], header[8]
    if version not in BLOB_VERSIONS:
        raise ValueError(f"unknown window format {version}")
    at = _HEADER.size + plen
    ratings, probs, scores2 = _entries()
    ratings.frombytes(blob[at : at + 4 * n])
    at += 4 * n
    probs.frombytes(blob[at : at + 8 * n])
    at += 8 * n
    scores2.frombytes(blob[at : at + n])
    return _restored(header, (ratings, probs, scores2), n, size, revised)


# --- a header and chunks of entries (formats 2 and 4) --------------------------------------------
def header_bytes(win: ConvergenceWindow) -> bytes:
    """Everything but the entries (format 4): the sums, the count and `appended`, a few
    hundred bytes, so that a rated round rewrote it and one chunk, not the whole window."""
    head, sum_p = _head_bytes(win, HEADER_VERSIONS[-1])
    return b"".join((head, _SPLIT.pack(win.appended), sum_p))


def chunk_of_newest(win: ConvergenceWindow, chunk: int) -> int:
    """The number of the chunk that holds the entry appended last."""
    return (win.appended - 1) // chunk


def oldest_chunk(win: ConvergenceWindow, chunk: int) -> int:
    """The number of the chunk that holds the oldest entry still in the window."""
    return (win.appended - len(win)) // chunk


def chunk_bytes(win: ConvergenceWindow, number: int, chunk: int) -> bytes:
    """The entries of chunk `number` that are still in the window, after the number of the
    first of them; empty if none is. (The store asks once per player every `chunk` rounds,
    for the chunk just filled.)"""
    n = len(win)
    first = win.appended - n  # number of the window's oldest entry
    lo = max(number * chunk - first, 0)
    hi = min((number + 1) * chunk - first, n)
    if hi <= lo:
        return b""
    return b"".join(
        (
            _SPLIT.pack(first + lo),
            array("i", win.ratings[lo:hi]).tobytes(),
            array("d", win.probs[lo:hi]).tobytes(),
            array("b", win.scores2[lo:hi]).tobytes(),
        )
    )


def chunk_number(data: bytes, chunk: int) -> int:
    """The number of the chunk that `chunk_bytes` data belongs to."""
    return int(_SPLIT.unpack_from(data)[0]) // chunk


def _chunk_entries(data: bytes, first: int) -> Entries:
    """The ratings, P and 2·S of a `chunk_bytes` chunk, from entry number `first` on (the
    entries before it have left the window)."""
    (held,) = _SPLIT.unpack_from(data)  # number of the chunk's first entry
    view = memoryview(data)[_SPLIT.size :]
    count = len(view) // _ENTRY
    start = max(first - held, 0)
    ratings, probs, scores2 = _entries()
    ratings.frombytes(view[4 * start : 4 * count])
    probs.frombytes(view[4 * count + 8 * start : 12 * count])
    scores2.frombytes(view[12 * count + start : 13 * count])
    return ratings, probs, scores2


def from_parts(
    header: bytes | None,
    chunks: Mapping[int, bytes],
    chunk: int,
    size: int = 500,
    revised: bool = False,
) -> ConvergenceWindow:
    """A window from `header_bytes` and its chunks {number: chunk_bytes}, at `size`, keeping
    the sums of the F3 `revised` names; chunks outside the window's range are ignored. A
    missing header is an empty window; a header in the single-blob format (`to_bytes`) is
    read as such."""
    if not header:
        return ConvergenceWindow(size, revised)
    fields = _HEADER.unpack_from(header)
    version, n = fields[0], fields[2]
    if version in BLOB_VERSIONS:
        return from_bytes(header, size, revised)
    if version not in HEADER_VERSIONS:
        raise ValueError(f"unknown window format {version}")
    (appended,) = _SPLIT.unpack_from(header, _HEADER.size)
    first = appended - n
    ratings, probs, scores2 = _entries()
    for number in range(first // chunk, (appended - 1) // chunk + 1 if n else 0):
        r, p, s2 = _chunk_entries(chunks[number], first)
        ratings.extend(r)
        probs.extend(p)
        scores2.extend(s2)
    if len(ratings) != n:
        raise ValueError(f"window chunks hold {len(ratings)} entries, the header {n}")
    return _restored(fields, (ratings, probs, scores2), appended, size, revised)


# --- full chunks and the journal's newest entries (since migration 0003) ------------------------
def from_chunks_and_tail(
    chunks: Mapping[int, bytes],
    tail: Sequence[tuple[int, float, float]],
    appended: int,
    chunk: int,
    size: int = 500,
    revised: bool = False,
) -> ConvergenceWindow:
    """The window of a player that has had `appended` entries since its window (re)started:
    its full chunks {number: chunk_bytes} (chunks outside the window are ignored) and the
    entries of its unfilled newest chunk, `appended % chunk` of them, oldest first, as
    (rating after, P, S), what the journal keeps of each round. The same window as the one
    that had those entries appended, sums included (those of the F3 `revised` names)."""
    n = min(appended, size)
    first = appended - n  # number of the oldest entry still in the window
    newest_full = appended // chunk  # chunks before this one are full
    if len(tail) != appended % chunk:
        raise ValueError(f"{len(tail)} tail entries for {appended} appended")
    win = ConvergenceWindow(size, revised)
    for number in range(first // chunk, newest_full):
        stored = chunks.get(number)
        if stored is None:
            raise ValueError(f"chunk {number} of a window of {appended} entries is missing")
        win.extend(*_chunk_entries(stored, first))
    start = newest_full * chunk  # number of the first tail entry
    for j, (rating, p, s) in enumerate(tail):
        if start + j >= first:
            win.append(rating, p, s)
    if len(win) != n:
        raise ValueError(f"the chunks and tail hold {len(win)} entries, not {n}")
    win.appended = appended
    return win
