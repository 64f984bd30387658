"""F3's convergence window: a player's last W rounds with statistics kept incrementally.

Each entry is (rating after the round, own team's P, own S). Appending is O(1): the entries
live in a ring of W slots and the sums the convergence score needs (Σw, Σw², the old and new
halves, Σo, Σe) are updated with the entries that enter or leave them, so neither the service
nor a replay rescans 500 rounds per player. All sums are exact integers: ratings are integers,
S is stored as 2·S, and P enters Σe as an integer number of 2^-44, floor(P·2^44 + 1/2) (an
absolute error of at most 2^-44 ≈ 6·10^-14). So the statistics equal a from-scratch computation
on those values exactly and never drift; and for a window of up to 512 rounds every sum stays
below 2^53, so the compiled arithmetic stays native and each statistic is one division.

F3 (revised) also needs, over the last L entries for each scale L of `Z_SCALES` (L ≤ W), the
sums Σ(o − e) and Σe(1 − e) of its z-test. Σ(o − e) is counted in units of 2^-44 from the same
integers (2^43·2S − p_units); Σe(1 − e) in units of 2^-40 from P quantised once more, to
q = `p_quarter_units`, the nearest multiple of 2^-20: e(1 − e) = q·(2^20 − q) ≤ 2^38, so 500
entries stay below 2^47. Each append adds the new entry to every scale and takes out the
entry L back, which the ring still holds (L ≤ W); the scale L = W is the whole window, whose
sums are kept anyway. A window restored from stored entries recomputes them (`restored`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import sqrt
from operator import truediv as _exact_quotient  # int/int rounded once (see statistics)

_P_UNIT = 17592186044416.0  # 2^44: Σe counts P in units of 2^-44
_EXACT = 1 << 53  # integers below this convert to a double exactly
_Z_UNIT = 16777216.0  # 2^24: Σ(o−e)/√Σe(1−e) = D·2^-44/√(V·2^-40) = D/(√V·2^24)
_Q_ONE = 1 << 20  # P = 1 in the units of q (2^-20)

# F3 (revised)'s time scales: the z-test looks at the last L rounds for each L ≤ W.
Z_SCALES: tuple[int, ...] = (25, 50, 100, 200, 500)


def p_units(p: float) -> int:
    """P as an integer number of 2^-44, floor(P·2^44 + 1/2): what Σe adds up. (Not `round`:
    this is one native conversion where `round` is a call; the quantisation is the same
    wherever it is made, which is all the exactness of the sums needs.)"""
    return int(p * _P_UNIT + 0.5)


def p_quarter_units(e: int) -> int:
    """q: P to the nearest 2^-20 (halves up), from its `p_units` e: (e + 2^23) >> 24, in
    [0, 2^20]. The z-test's Σe(1 − e) counts q·(2^20 − q) (`spread_units`)."""
    return (e + 8388608) >> 24


def spread_units(e: int) -> int:
    """e(1 − e) of an entry whose P is e = `p_units`(P), in units of 2^-40: q·(2^20 − q) with
    q = `p_quarter_units`(e); at most 2^38."""
    q = (e + 8388608) >> 24
    return q * (_Q_ONE - q)


def excess_units(e: int, s2: int) -> int:
    """o − e of an entry (P as e = `p_units`(P), S as s2 = 2·S) in units of 2^-44."""
    return (s2 << 43) - e


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
        "sum_v",
        "appended",
        "_scales",
        "_zd",
        "_zv",
        "_whole_scale",
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
        self.sum_v = 0  # Σ e(1−e) in units of 2^-40 (see spread_units)
        self.appended = 0  # entries ever appended: entry j of the window is number appended−n+j
        # the z-test's scales shorter than the window, with Σ(o−e) (2^-44) and Σe(1−e)
        # (2^-40) over each one's last min(L, |w|) entries; a scale equal to W is the window
        self._scales: list[int] = [n for n in Z_SCALES if n < size]
        self._zd: list[int] = [0] * len(self._scales)
        self._zv: list[int] = [0] * len(self._scales)
        self._whole_scale = size in Z_SCALES

    def __len__(self) -> int:
        return len(self._r)

    def append(self, rating: int, p: float, s: float) -> None:
        """Add the round just rated; the oldest round leaves once the window holds W."""
        w = self._r
        n = len(w)
        m = n >> 1
        s2 = 2 if s == 1.0 else (1 if s == 0.5 else (0 if s == 0.0 else int(round(2 * s))))
        e = p_units(p)
        q = (e + 8388608) >> 24  # spread_units(e), written out
        v = q * (_Q_ONE - q)
        d = (s2 << 43) - e
        self.appended += 1
        # the z-test's scales: the new entry joins each; the one L back leaves it
        scales = self._scales
        if scales:
            zd, zv, es, ss = self._zd, self._zv, self._e, self._s2
            head = self._head
            for i in range(len(scales)):
                back = n - scales[i]  # index, oldest first, of the entry that leaves
                if back >= 0:
                    j = head + back
                    if j >= n:
                        j -= n
                    gone_e = es[j]
                    gq = (gone_e + 8388608) >> 24
                    zd[i] += d - ((ss[j] << 43) - gone_e)
                    zv[i] += v - gq * (_Q_ONE - gq)
                else:
                    zd[i] += d
                    zv[i] += v
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
            gone_e = self._e[head]
            gq = (gone_e + 8388608) >> 24
            self.sum_v += v - gq * (_Q_ONE - gq)
            self.sum_p += e - gone_e
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
        self.sum_v += v

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

    def scale_sums(self) -> list[tuple[int, int, int]]:
        """F3 (revised)'s sums, (L, Σ(o − e) in units of 2^-44, Σe(1 − e) in units of 2^-40)
        over the last min(L, |w|) entries, for each scale L of Z_SCALES with L ≤ W."""
        out = [(self._scales[i], self._zd[i], self._zv[i]) for i in range(len(self._scales))]
        if self._whole_scale:
            out.append((self.size, (self.sum_s2 << 43) - self.sum_p, self.sum_v))
        return out

    def largest_z(self) -> float:
        """F3 (revised): max over the scales L ≤ W of |z_L|, z_L = Σ(o − e)/√Σe(1 − e) over
        the last min(L, |w|) entries (z_L = 0 where Σe(1 − e) = 0); 0 without a scale.
        Each z_L is D/(√V·2^24) of the exact integer sums D and V (both below 2^53, so
        converted exactly): an incremental and a restored window give the same double."""
        best = 0.0
        zd, zv = self._zd, self._zv
        for i in range(len(zd)):
            v = zv[i]
            if v > 0:
                z = zd[i] / (sqrt(v) * _Z_UNIT)
                if z < 0.0:
                    z = -z
                if z > best:
                    best = z
        if self._whole_scale and self.sum_v > 0:
            z = ((self.sum_s2 << 43) - self.sum_p) / (sqrt(self.sum_v) * _Z_UNIT)
            if z < 0.0:
                z = -z
            if z > best:
                best = z
        return best

    def mean_new_minus_old(self) -> float:
        """mean(w_new) − mean(w_old); 0 for fewer than 2 rounds."""
        return self.statistics()[0]

    def outcome_excess(self) -> float:
        """mean(o) − mean(e) over the whole window, computed exactly then rounded once."""
        return self.statistics()[1]

    def std(self) -> float:
        """Population standard deviation (ddof = 0) of the ratings in the window."""
        return self.statistics()[2]

    # --- restoring ---------------------------------------------------------------------------
    @classmethod
    def restored(
        cls,
        size: int,
        ratings: Iterable[int],
        probs: Iterable[float],
        scores2: Iterable[int],
        sums: tuple[int, int, int, int, int],
        appended: int,
    ) -> ConvergenceWindow:
        """A window of `size` holding these entries, oldest first (P, 2·S as `probs` and
        `scores2` give them), with their kept sums (Σw, Σw², Σold, Σnew, Σ2o) and entry
        count `appended`, as a store reads them back. Σe is recomputed from the entries: it
        is a sum of p_units(P), whatever scale a store once kept it at; so are Σe(1 − e) and
        the z-test's sums over each scale, which no store keeps."""
        win = cls(size)
        win._r, win._s2 = list(ratings), list(scores2)
        win._e = [p_units(p) for p in probs]
        if len(win._r) > size or len(win._e) != len(win._r) or len(win._s2) != len(win._r):
            raise ValueError(f"{len(win._r)} entries do not make a window of {size}")
        win.sum_w, win.sum_w2, win.sum_old, win.sum_new, win.sum_s2 = sums
        win.sum_p = sum(win._e)
        win.appended = appended
        win._rebuild_scales()
        return win

    def _rebuild_scales(self) -> None:
        """Σe(1 − e) and each scale's sums from the entries (newest first, one pass): what
        appending them in turn would have left (the window's ring starts at slot 0)."""
        es, ss, scales = self._e, self._s2, self._scales
        n = len(es)
        d_sum = v_sum = 0
        at = 0  # the next scale to close
        for j in range(n - 1, -1, -1):
            while at < len(scales) and n - 1 - j == scales[at]:
                self._zd[at], self._zv[at] = d_sum, v_sum
                at += 1
            d_sum += excess_units(es[j], ss[j])
            v_sum += spread_units(es[j])
        while at < len(scales):  # scales longer than the entries hold them all
            self._zd[at], self._zv[at] = d_sum, v_sum
            at += 1
        self.sum_v = v_sum

    def extend(
        self, ratings: Sequence[int], probs: Sequence[float], scores2: Sequence[int]
    ) -> None:
        """`append` each round in turn, oldest first, with S given doubled (as `scores2`)."""
        if not len(ratings) == len(probs) == len(scores2):
            raise ValueError("ratings, probs and scores2 differ in length")
        for j in range(len(ratings)):
            self.append(ratings[j], probs[j], scores2[j] / 2)

    def resized(self, size: int) -> ConvergenceWindow:
        """The same history in a window of another size (keeps the most recent rounds)."""
        win = ConvergenceWindow(size)
        for r, p, s2 in zip(self.ratings, self.probs, self.scores2, strict=True):
            win.append(r, p, s2 / 2)
        win.appended = self.appended
        return win
