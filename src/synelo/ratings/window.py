"""F3's convergence window: a player's last W rounds with statistics kept incrementally.

Each entry is (rating after the round, own team's P, own S). Appending is O(1): the sums the
convergence score needs (Σw, Σw², the old and new halves, Σo, Σe) are updated with the entries
that enter or leave them, so neither the service nor a replay rescans 500 rounds per player.
All sums are exact integers (ratings are integers, S is stored as 2·S, and P is scaled by
2^1074, which turns every double into an integer), so the statistics equal a from-scratch
computation exactly and never drift.
"""

from __future__ import annotations

import struct
from array import array
from math import frexp as _frexp

_P_SHIFT = 1074  # every finite double is an integer multiple of 2^-1074
_HEADER = struct.Struct("<HHIqqqqIH")  # version, size, n, Σw, Σw², Σold, Σnew, Σ2o, len(Σe)
_VERSION = 1  # to_bytes: the header, Σe, then every entry
_SPLIT = struct.Struct("<q")  # header_bytes adds `appended` after the v1 header
_SPLIT_VERSION = 2  # header_bytes: the header, `appended`, Σe; entries are in chunks
_ENTRY = 13  # bytes per entry in a chunk: rating int32, P float64, 2·S int8


def _scaled(p: float) -> int:
    """p as an exact integer multiple of 2^-1074: its 53-bit significand, shifted."""
    m, e = _frexp(p)  # p = m·2^e with 0.5 <= m < 1 (m·2^53 is an integer for every double)
    shift = e + (_P_SHIFT - 53)
    return int(m * 9007199254740992.0) << shift if shift >= 0 else \
        int(m * 9007199254740992.0) >> -shift


class ConvergenceWindow:
    """The last `size` rounds of one player, oldest first, with exact running sums."""

    __slots__ = ("size", "ratings", "probs", "scores2", "sum_w", "sum_w2", "sum_old", "sum_new",
                 "sum_s2", "sum_p", "appended")

    def __init__(self, size: int = 500) -> None:
        if size < 2:
            raise ValueError("window size must be at least 2")
        self.size = size
        self.ratings = array("i")
        self.probs = array("d")
        self.scores2 = array("b")  # 2·S: 0 loss, 1 draw, 2 win
        self.sum_w = 0
        self.sum_w2 = 0
        self.sum_old = 0  # Σ w[:m]
        self.sum_new = 0  # Σ w[-m:]
        self.sum_s2 = 0
        self.sum_p = 0  # Σ e, scaled by 2^1074
        self.appended = 0  # entries ever appended: entry j of the window is number appended−n+j

    def __len__(self) -> int:
        return len(self.ratings)

    def append(self, rating: int, p: float, s: float) -> None:
        """Add the round just rated; the oldest round leaves once the window holds W."""
        w = self.ratings
        n = len(w)
        m = n >> 1
        s2 = 2 if s == 1.0 else (1 if s == 0.5 else int(round(2 * s)))
        self.appended += 1
        if n == self.size:
            # w' = w[1:] + [x]; m is unchanged. old' = w[1:m+1], new' = w[n-m+1:] + [x].
            gone = w[0]
            self.sum_old += w[m] - gone
            self.sum_new += rating - w[n - m]
            self.sum_w += rating - gone
            self.sum_w2 += rating * rating - gone * gone
            probs, scores2 = self.probs, self.scores2
            self.sum_s2 += s2 - scores2[0]
            self.sum_p += _scaled(p) - _scaled(probs[0])
            del w[0], probs[0], scores2[0]
            w.append(rating)
            probs.append(p)
            scores2.append(s2)
            return
        if n & 1:
            # n = 2m+1 → 2m+2: the middle element w[m] joins old, x joins new.
            self.sum_old += w[m]
            self.sum_new += rating
        elif m:
            # n = 2m → 2m+1: w[m] becomes the middle and x takes its place in new (m ≥ 1).
            self.sum_new += rating - w[m]
        w.append(rating)
        self.probs.append(p)
        self.scores2.append(s2)
        self.sum_w += rating
        self.sum_w2 += rating * rating
        self.sum_s2 += s2
        self.sum_p += _scaled(p)

    # --- statistics -----------------------------------------------------------------------
    def half(self) -> int:
        """m = floor(|w|/2), the length of each half."""
        return len(self.ratings) // 2

    def statistics(self) -> tuple[float, float, float]:
        """F3's three statistics in one pass: (mean(w_new) − mean(w_old), mean(o) − mean(e),
        std(w)). Each is computed exactly from the integer sums and rounded once; all are 0
        for an empty window and the first is 0 for fewer than 2 rounds."""
        n = len(self.ratings)
        if not n:
            return 0.0, 0.0, 0.0
        m = n >> 1
        return ((self.sum_new - self.sum_old) / m if m else 0.0,
                ((self.sum_s2 << (_P_SHIFT - 1)) - self.sum_p) / (n << _P_SHIFT),
                ((n * self.sum_w2 - self.sum_w * self.sum_w) / (n * n)) ** 0.5)

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
    def to_bytes(self) -> bytes:
        sum_p = self.sum_p.to_bytes((self.sum_p.bit_length() + 8) // 8 or 1, "little", signed=True)
        head = _HEADER.pack(_VERSION, self.size, len(self.ratings), self.sum_w, self.sum_w2,
                            self.sum_old, self.sum_new, self.sum_s2, len(sum_p))
        return b"".join((head, sum_p, self.ratings.tobytes(), self.probs.tobytes(),
                         self.scores2.tobytes()))

    @classmethod
    def from_bytes(cls, blob: bytes | None, size: int = 500) -> ConvergenceWindow:
        """Load a stored window; an empty or missing blob is an empty window of `size`."""
        if not blob:
            return cls(size)
        version, stored_size, n, sw, sw2, so, sn, ss2, plen = _HEADER.unpack_from(blob)
        if version != _VERSION:
            raise ValueError(f"unknown window format {version}")
        win = cls(stored_size)
        at = _HEADER.size
        win.sum_p = int.from_bytes(blob[at:at + plen], "little", signed=True)
        at += plen
        win.ratings.frombytes(blob[at:at + 4 * n])
        at += 4 * n
        win.probs.frombytes(blob[at:at + 8 * n])
        at += 8 * n
        win.scores2.frombytes(blob[at:at + n])
        win.sum_w, win.sum_w2, win.sum_old, win.sum_new, win.sum_s2 = sw, sw2, so, sn, ss2
        win.appended = n  # the single blob does not keep it: number the entries from 0
        if stored_size != size:
            win = win.resized(size)
        return win

    # --- split storage: a small header plus fixed chunks of entries -------------------------
    def header_bytes(self) -> bytes:
        """Everything but the entries: the sums, the count and `appended` (a few hundred bytes).

        With the entries stored in chunks of `chunk` numbers (entry t in chunk t // chunk), a
        rated round rewrites the header and one chunk instead of the whole window.
        """
        sum_p = self.sum_p.to_bytes((self.sum_p.bit_length() + 8) // 8 or 1, "little", signed=True)
        head = _HEADER.pack(_SPLIT_VERSION, self.size, len(self.ratings), self.sum_w,
                            self.sum_w2, self.sum_old, self.sum_new, self.sum_s2, len(sum_p))
        return b"".join((head, _SPLIT.pack(self.appended), sum_p))

    def chunk_of_newest(self, chunk: int) -> int:
        """The number of the chunk that holds the entry appended last."""
        return (self.appended - 1) // chunk

    def oldest_chunk(self, chunk: int) -> int:
        """The number of the chunk that holds the oldest entry still in the window."""
        return (self.appended - len(self.ratings)) // chunk

    def chunk_bytes(self, number: int, chunk: int) -> bytes:
        """The entries of chunk `number` that are still in the window, after the number of
        the first of them."""
        first = self.appended - len(self.ratings)  # number of entry 0
        lo = max(number * chunk - first, 0)
        hi = min((number + 1) * chunk - first, len(self.ratings))
        if hi <= lo:
            return b""
        return b"".join((_SPLIT.pack(first + lo), self.ratings[lo:hi].tobytes(),
                         self.probs[lo:hi].tobytes(), self.scores2[lo:hi].tobytes()))

    @staticmethod
    def chunk_number(data: bytes, chunk: int) -> int:
        """The number of the chunk that `chunk_bytes` data belongs to."""
        return int(_SPLIT.unpack_from(data)[0]) // chunk

    @classmethod
    def from_parts(cls, header: bytes | None, chunks: dict[int, bytes], chunk: int,
                   size: int = 500) -> ConvergenceWindow:
        """A window from `header_bytes` and its chunks {number: chunk_bytes}; chunks outside
        the window's range are ignored. A missing header is an empty window; a header in
        the single-blob format (`to_bytes`) is read as such."""
        if not header:
            return cls(size)
        if _HEADER.unpack_from(header)[0] != _SPLIT_VERSION:
            return cls.from_bytes(header, size)
        version, stored_size, n, sw, sw2, so, sn, ss2, plen = _HEADER.unpack_from(header)
        win = cls(stored_size)
        (win.appended,) = _SPLIT.unpack_from(header, _HEADER.size)
        at = _HEADER.size + _SPLIT.size
        win.sum_p = int.from_bytes(header[at:at + plen], "little", signed=True)
        first = win.appended - n
        for number in range(first // chunk, (win.appended - 1) // chunk + 1 if n else 0):
            (held,) = _SPLIT.unpack_from(chunks[number])  # number of the chunk's first entry
            data = memoryview(chunks[number])[_SPLIT.size:]
            count = len(data) // _ENTRY
            start = max(first - held, 0)  # entries of this chunk that left the window since
            win.ratings.frombytes(data[4 * start:4 * count])
            win.probs.frombytes(data[4 * count + 8 * start:12 * count])
            win.scores2.frombytes(data[12 * count + start:13 * count])
        if len(win.ratings) != n:
            raise ValueError(f"window chunks hold {len(win.ratings)} entries, the header {n}")
        win.sum_w, win.sum_w2, win.sum_old, win.sum_new, win.sum_s2 = sw, sw2, so, sn, ss2
        if stored_size != size:
            win = win.resized(size)
        return win

    def resized(self, size: int) -> ConvergenceWindow:
        """The same history in a window of another size (keeps the most recent rounds)."""
        win = ConvergenceWindow(size)
        for r, p, s2 in zip(self.ratings, self.probs, self.scores2, strict=True):
            win.append(r, p, s2 / 2)
        win.appended = self.appended
        return win
