"""F3's convergence window: a player's last W rounds with statistics kept incrementally.

Each entry is (rating after the round, own team's P, own S). Appending is O(1): the entries
live in a ring of W slots and the sums the convergence score needs (Σw, Σw², the old and new
halves, Σo, Σe) are updated with the entries that enter or leave them, so neither the service
nor a replay rescans 500 rounds per player. All sums are exact integers: ratings are integers,
S is stored as 2·S, and P enters Σe as an integer number of 2^-44, floor(P·2^44 + 1/2) (an
absolute error of at most 2^-44 ≈ 6·10^-14). So the statistics equal a from-scratch computation
on those values exactly and never drift; and for a window of up to 512 rounds every sum stays
below 2^53, so the compiled arithmetic stays native and each statistic is one division.
"""

from __future__ import annotations

import struct
from array import array
from math import sqrt
from operator import truediv as _exact_quotient  # int/int rounded once (see statistics)

_P_UNIT = 17592186044416.0  # 2^44: Σe counts P in units of 2^-44
_EXACT = 1 << 53  # integers below this convert to a double exactly
_HEADER = struct.Struct("<HHIqqqqIH")  # version, size, n, Σw, Σw², Σold, Σnew, Σ2o, len(Σe)
_BLOB_VERSIONS = (1, 3)  # to_bytes: the header, Σe, then every entry (1: Σe scaled by 2^1074)
_SPLIT = struct.Struct("<q")  # header_bytes adds `appended` after the header
_SPLIT_VERSIONS = (2, 4)  # header_bytes: the header, `appended`, Σe (2: Σe scaled by 2^1074)
_ENTRY = 13  # bytes per entry in a chunk: rating int32, P float64, 2·S int8


def _chunk_entries(data: bytes, first: int) -> tuple[array, array, array]:
    """The ratings, P and 2·S of a `chunk_bytes` chunk, from entry number `first` on (the
    entries before it have left the window)."""
    (held,) = _SPLIT.unpack_from(data)  # number of the chunk's first entry
    view = memoryview(data)[_SPLIT.size :]
    count = len(view) // _ENTRY
    start = max(first - held, 0)
    ratings, probs, scores2 = array("i"), array("d"), array("b")
    ratings.frombytes(view[4 * start : 4 * count])
    probs.frombytes(view[4 * count + 8 * start : 12 * count])
    scores2.frombytes(view[12 * count + start : 13 * count])
    return ratings, probs, scores2


def p_units(p: float) -> int:
    """P as an integer number of 2^-44, floor(P·2^44 + 1/2): what Σe adds up. (Not `round`:
    this is one native conversion where `round` is a call; the quantisation is the same
    wherever it is made, which is all the exactness of the sums needs.)"""
    return int(p * _P_UNIT + 0.5)


class ConvergenceWindow:
    """The last `size` rounds of one player, oldest first, with exact running sums."""

    __slots__ = (
        "size",
        "_r",
        "_e",
        "_s2",
        "_head",
        "sum_w",
        "sum_w2",
        "sum_old",
        "sum_new",
        "sum_s2",
        "sum_p",
        "appended",
    )

    def __init__(self, size: int = 500) -> None:
        if size < 2:
            raise ValueError("window size must be at least 2")
        self.size = size
        # entries in a ring: while filling, slot j is entry j; once full, entry 0 (the oldest)
        # is at slot _head and a new round overwrites it
        self._r: list[int] = []
        self._e: list[int] = []  # P as p_units(P): all of P that F3 uses
        self._s2: list[int] = []  # 2·S: 0 loss, 1 draw, 2 win
        self._head = 0
        self.sum_w = 0
        self.sum_w2 = 0
        self.sum_old = 0  # Σ w[:m]
        self.sum_new = 0  # Σ w[-m:]
        self.sum_s2 = 0
        self.sum_p = 0  # Σ e in units of 2^-44
        self.appended = 0  # entries ever appended: entry j of the window is number appended−n+j

    def __len__(self) -> int:
        return len(self._r)

    def append(self, rating: int, p: float, s: float) -> None:
        """Add the round just rated; the oldest round leaves once the window holds W."""
        w = self._r
        n = len(w)
        m = n >> 1
        s2 = 2 if s == 1.0 else (1 if s == 0.5 else (0 if s == 0.0 else int(round(2 * s))))
        e = p_units(p)
        self.appended += 1
        if n == self.size:
            # w' = w[1:] + [x]; m is unchanged. old' = w[1:m+1], new' = w[n-m+1:] + [x].
            head = self._head
            gone = w[head]
            mid = head + m
            if mid >= n:
                mid -= n
            out = head + n - m
            if out >= n:
                out -= n
            self.sum_old += w[mid] - gone
            self.sum_new += rating - w[out]
            self.sum_w += rating - gone
            self.sum_w2 += rating * rating - gone * gone
            self.sum_s2 += s2 - self._s2[head]
            self.sum_p += e - self._e[head]
            w[head] = rating
            self._e[head] = e
            self._s2[head] = s2
            head += 1
            self._head = head if head < n else 0
            return
        if n & 1:
            # n = 2m+1 → 2m+2: the middle element w[m] joins old, x joins new.
            self.sum_old += w[m]
            self.sum_new += rating
        elif m:
            # n = 2m → 2m+1: w[m] becomes the middle and x takes its place in new (m ≥ 1).
            self.sum_new += rating - w[m]
        w.append(rating)
        self._e.append(e)
        self._s2.append(s2)
        self.sum_w += rating
        self.sum_w2 += rating * rating
        self.sum_s2 += s2
        self.sum_p += e

    # --- the entries, oldest first --------------------------------------------------------
    @property
    def ratings(self) -> list[int]:
        """w: the rating after each round in the window, oldest first."""
        return self._r[self._head :] + self._r[: self._head]

    @property
    def probs(self) -> list[float]:
        """e: the own team's P of each round, oldest first, as the window keeps it (to the
        nearest 2^-44, see `p_units`; the journal keeps P exactly)."""
        head = self._head
        return [e / _P_UNIT for e in self._e[head:] + self._e[:head]]

    @property
    def scores2(self) -> list[int]:
        """o doubled (0 loss, 1 draw, 2 win), oldest first."""
        return self._s2[self._head :] + self._s2[: self._head]

    # --- statistics -----------------------------------------------------------------------
    def half(self) -> int:
        """m = floor(|w|/2), the length of each half."""
        return len(self._r) // 2

    def statistics(self) -> tuple[float, float, float]:
        """F3's three statistics: (mean(w_new) − mean(w_old), mean(o) − mean(e), std(w)).
        Each is computed exactly from the integer sums and rounded once; all are 0 for an
        empty window and the first is 0 for fewer than 2 rounds."""
        n = len(self._r)
        if not n:
            return 0.0, 0.0, 0.0
        m = n >> 1
        # mean(o) − mean(e) = excess/(n·2^44); the denominator is exact as a double, and so
        # is the numerator below 2^53 (always, for n ≤ 512), where one native division rounds
        # once. Above it mypyc's `/` would convert it first, rounding twice: Python's int
        # division rounds once.
        excess = (self.sum_s2 << 43) - self.sum_p
        return (
            (self.sum_new - self.sum_old) / m if m else 0.0,
            excess / (n << 44) if -_EXACT < excess < _EXACT else _exact_quotient(excess, n << 44),
            sqrt((n * self.sum_w2 - self.sum_w * self.sum_w) / (n * n)),
        )

    def mean_new_minus_old(self) -> float:
        """mean(w_new) − mean(w_old); 0 for fewer than 2 rounds."""
        return self.statistics()[0]

    def outcome_excess(self) -> float:
        """mean(o) − mean(e) over the whole window, computed exactly then rounded once."""
        return self.statistics()[1]

    def std(self) -> float:
        """Population standard deviation (ddof = 0) of the ratings in the window."""
        return self.statistics()[2]

    # --- persistence ----------------------------------------------------------------------
    def _head_bytes(self, version: int) -> tuple[bytes, bytes]:
        sum_p = self.sum_p.to_bytes((self.sum_p.bit_length() + 8) // 8 or 1, "little", signed=True)
        return _HEADER.pack(
            version,
            self.size,
            len(self._r),
            self.sum_w,
            self.sum_w2,
            self.sum_old,
            self.sum_new,
            self.sum_s2,
            len(sum_p),
        ), sum_p

    def to_bytes(self) -> bytes:
        """The whole window in one blob: the header, Σe, then every entry."""
        head, sum_p = self._head_bytes(_BLOB_VERSIONS[-1])
        return b"".join(
            (
                head,
                sum_p,
                array("i", self.ratings).tobytes(),
                array("d", self.probs).tobytes(),
                array("b", self.scores2).tobytes(),
            )
        )

    @classmethod
    def from_bytes(cls, blob: bytes | None, size: int = 500) -> ConvergenceWindow:
        """Load a stored window; an empty or missing blob is an empty window of `size`."""
        if not blob:
            return cls(size)
        version, stored_size, n, sw, sw2, so, sn, ss2, plen = _HEADER.unpack_from(blob)
        if version not in _BLOB_VERSIONS:
            raise ValueError(f"unknown window format {version}")
        at = _HEADER.size + plen
        ratings, probs, scores2 = array("i"), array("d"), array("b")
        ratings.frombytes(blob[at : at + 4 * n])
        at += 4 * n
        probs.frombytes(blob[at : at + 8 * n])
        at += 8 * n
        scores2.frombytes(blob[at : at + n])
        win = cls._loaded(stored_size, ratings, probs, scores2, (sw, sw2, so, sn, ss2))
        win.appended = n  # the single blob does not keep it: number the entries from 0
        return win if stored_size == size else win.resized(size)

    @classmethod
    def _loaded(
        cls,
        size: int,
        ratings: array,
        probs: array,
        scores2: array,
        sums: tuple[int, int, int, int, int],
    ) -> ConvergenceWindow:
        win = cls(size)
        win._r, win._s2 = list(ratings), list(scores2)
        win._e = [p_units(p) for p in probs]
        win.sum_w, win.sum_w2, win.sum_old, win.sum_new, win.sum_s2 = sums
        win.sum_p = sum(win._e)  # recomputed: the oldest formats kept Σe at another scale
        return win

    # --- split storage: a small header plus fixed chunks of entries -------------------------
    def header_bytes(self) -> bytes:
        """Everything but the entries: the sums, the count and `appended` (a few hundred bytes).

        With the entries stored in chunks of `chunk` numbers (entry t in chunk t // chunk), a
        rated round rewrites the header and one chunk instead of the whole window.
        """
        head, sum_p = self._head_bytes(_SPLIT_VERSIONS[-1])
        return b"".join((head, _SPLIT.pack(self.appended), sum_p))

    def chunk_of_newest(self, chunk: int) -> int:
        """The number of the chunk that holds the entry appended last."""
        return (self.appended - 1) // chunk

    def oldest_chunk(self, chunk: int) -> int:
        """The number of the chunk that holds the oldest entry still in the window."""
        return (self.appended - len(self._r)) // chunk

    def chunk_bytes(self, number: int, chunk: int) -> bytes:
        """The entries of chunk `number` that are still in the window, after the number of
        the first of them. (The service asks once per player every `chunk` rounds, for the
        chunk just filled.)"""
        n = len(self._r)
        first = self.appended - n  # number of entry 0
        lo = max(number * chunk - first, 0)
        hi = min((number + 1) * chunk - first, n)
        if hi <= lo:
            return b""
        head = self._head
        slots = [(head + j) % n for j in range(lo, hi)]
        return b"".join(
            (
                _SPLIT.pack(first + lo),
                array("i", [self._r[j] for j in slots]).tobytes(),
                array("d", [self._e[j] / _P_UNIT for j in slots]).tobytes(),
                array("b", [self._s2[j] for j in slots]).tobytes(),
            )
        )

    @staticmethod
    def chunk_number(data: bytes, chunk: int) -> int:
        """The number of the chunk that `chunk_bytes` data belongs to."""
        return int(_SPLIT.unpack_from(data)[0]) // chunk

    @classmethod
    def from_parts(
        cls, header: bytes | None, chunks: dict[int, bytes], chunk: int, size: int = 500
    ) -> ConvergenceWindow:
        """A window from `header_bytes` and its chunks {number: chunk_bytes}; chunks outside
        the window's range are ignored. A missing header is an empty window; a header in
        the single-blob format (`to_bytes`) is read as such."""
        if not header:
            return cls(size)
        version, stored_size, n, sw, sw2, so, sn, ss2, plen = _HEADER.unpack_from(header)
        if version in _BLOB_VERSIONS:
            return cls.from_bytes(header, size)
        if version not in _SPLIT_VERSIONS:
            raise ValueError(f"unknown window format {version}")
        (appended,) = _SPLIT.unpack_from(header, _HEADER.size)
        first = appended - n
        ratings, probs, scores2 = array("i"), array("d"), array("b")
        for number in range(first // chunk, (appended - 1) // chunk + 1 if n else 0):
            r, p, s2 = _chunk_entries(chunks[number], first)
            ratings.extend(r)
            probs.extend(p)
            scores2.extend(s2)
        if len(ratings) != n:
            raise ValueError(f"window chunks hold {len(ratings)} entries, the header {n}")
        win = cls._loaded(stored_size, ratings, probs, scores2, (sw, sw2, so, sn, ss2))
        win.appended = appended
        return win if stored_size == size else win.resized(size)

    @classmethod
    def from_chunks_and_tail(
        cls,
        chunks: dict[int, bytes],
        tail: list[tuple[int, float, float]],
        appended: int,
        chunk: int,
        size: int = 500,
    ) -> ConvergenceWindow:
        """The window of a player that has had `appended` entries since its window (re)started:
        its full chunks {number: chunk_bytes} (chunks outside the window are ignored) and the
        entries of its unfilled newest chunk, `appended % chunk` of them, oldest first, as
        (rating after, P, S) — what the journal keeps of each round. The same window as the
        one that had those entries appended, sums included."""
        n = min(appended, size)
        first = appended - n  # number of the oldest entry still in the window
        newest_full = appended // chunk  # chunks before this one are full
        if len(tail) != appended % chunk:
            raise ValueError(f"{len(tail)} tail entries for {appended} appended")
        win = cls(size)
        for number in range(first // chunk, newest_full):
            stored = chunks.get(number)
            if stored is None:
                raise ValueError(f"chunk {number} of a window of {appended} entries is missing")
            for rating, p, s2 in zip(*_chunk_entries(stored, first), strict=True):
                win.append(rating, p, s2 / 2)
        start = newest_full * chunk  # number of the first tail entry
        for j, (rating, p, s) in enumerate(tail):
            if start + j >= first:
                win.append(rating, p, s)
        if len(win) != n:
            raise ValueError(f"the chunks and tail hold {len(win)} entries, not {n}")
        win.appended = appended
        return win

    def resized(self, size: int) -> ConvergenceWindow:
        """The same history in a window of another size (keeps the most recent rounds)."""
        win = ConvergenceWindow(size)
        for r, p, s2 in zip(self.ratings, self.probs, self.scores2, strict=True):
            win.append(r, p, s2 / 2)
        win.appended = self.appended
        return win
