"""F3's convergence window: a player's last W rounds with statistics kept incrementally.

Each entry is (rating after the round, own team's P, own S). Appending is O(1): the entries
live in a ring of W slots and the sums the convergence score needs (Σw, Σw², the old and new
halves, Σo, Σe) are updated with the entries that enter or leave them, so neither the service
nor a replay rescans 500 rounds per player. All sums are exact integers: ratings are integers,
S is stored as 2·S, and P enters Σe as an integer number of 2^-44, floor(P·2^44 + 1/2) (an
absolute error of at most 2^-44 ≈ 6·10^-14). So the statistics equal a from-scratch computation
on those values exactly and never drift; and for a window of up to 512 rounds every sum stays
below 2^53, so the compiled arithmetic stays native and each statistic is one division.

F3 (revised) needs instead, over the last L entries for each scale L of `Z_SCALES` (L ≤ W),
the sums Σ(o − e) and Σe(1 − e) of its z-test. Σ(o − e) is counted in units of 2^-44 from the
same integers (2^43·2S − p_units); Σe(1 − e) in units of 2^-40 from P quantised once more, to
q = `p_quarter_units`, the nearest multiple of 2^-20: e(1 − e) = q·(2^20 − q) ≤ 2^38, so 500
entries stay below 2^47. Each append adds the new entry to every scale and takes out the
entry L back, which the ring still holds (L ≤ W); the scale L = W is the whole window.

A window keeps running the sums of one F3, the one its pool uses (`revised`): each sum kept
costs reads of old ring slots on every append, and a replay appends millions of times. The
other F3's statistics are computed from the entries when asked (O(W)), to the same integers.
Σo and Σe are kept either way; a window restored from stored entries recomputes every sum it
keeps except those the seed's store format holds (`restored`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import sqrt
from operator import truediv as _exact_quotient  # int/int rounded once (see statistics)
from typing import Final

_P_UNIT = 17592186044416.0  # 2^44: Σe counts P in units of 2^-44
_EXACT = 1 << 53  # integers below this convert to a double exactly
_Z_UNIT: Final = 16777216.0  # 2^24: Σ(o−e)/√Σe(1−e) = D·2^-44/√(V·2^-40) = D/(√V·2^24)
_Q_ONE: Final = 1 << 20  # P = 1 in the units of q (2^-20)
_Q_HALF: Final = 1 << 23  # half a unit of q in units of 2^-44

# F3 (revised)'s time scales: the z-test looks at the last L rounds for each L ≤ W. (Named
# one by one: the compiled window keeps each scale's sums in native fields.)
_Z0: Final = 25
_Z1: Final = 50
_Z2: Final = 100
_Z3: Final = 200
_Z4: Final = 500
Z_SCALES: Final = (_Z0, _Z1, _Z2, _Z3, _Z4)


def p_units(p: float) -> int:
    """P as an integer number of 2^-44, floor(P·2^44 + 1/2): what Σe adds up. (Not `round`:
    this is one native conversion where `round` is a call; the quantisation is the same
    wherever it is made, which is all the exactness of the sums needs.)"""
    return int(p * _P_UNIT + 0.5)


def p_quarter_units(e: int) -> int:
    """q: P to the nearest 2^-20 (halves up), from its `p_units` e: (e + 2^23) >> 24, in
    [0, 2^20]. The z-test's Σe(1 − e) counts q·(2^20 − q) (`spread_units`)."""
    return (e + _Q_HALF) >> 24


def spread_units(e: int) -> int:
    """e(1 − e) of an entry whose P is e = `p_units`(P), in units of 2^-40: q·(2^20 − q) with
    q = `p_quarter_units`(e); at most 2^38."""
    q = (e + _Q_HALF) >> 24
    return q * (_Q_ONE - q)


def excess_units(e: int, s2: int) -> int:
    """o − e of an entry (P as e = `p_units`(P), S as s2 = 2·S) in units of 2^-44."""
    return (s2 << 43) - e


def _abs_z(d: int, v: int) -> float:
    """|z| = |D|/(√V·2^24) of a scale's sums D = Σ(o − e) (2^-44) and V = Σe(1 − e)
    (2^-40); 0 when V = 0."""
    if v <= 0:
        return 0.0
    z = float(d) / (sqrt(float(v)) * _Z_UNIT)  # float(): native conversions, exact < 2^53
    return -z if z < 0.0 else z


class ConvergenceWindow:
    """The last `size` rounds of one player, oldest first, with exact running sums of the
    statistics of the seed's F3 or, if `revised`, of F3 (revised)."""

    __slots__ = (
        "size",
        "revised",
        "_r",
        "_es",
        "_head",
        "sum_w",
        "sum_w2",
        "sum_old",
        "sum_new",
        "sum_s2",
        "sum_p",
        "sum_v",
        "appended",
        "_fresh",
        "_active",
        "_whole_scale",
        "_d0",
        "_v0",
        "_d1",
        "_v1",
        "_d2",
        "_v2",
        "_d3",
        "_v3",
        "_d4",
        "_v4",
    )

    def __init__(self, size: int = 500, revised: bool = False) -> None:
        if size < 2:
            raise ValueError("window size must be at least 2")
        self.size = size
        self.revised = revised  # which F3's sums run: the other's are computed when asked
        # entries in a ring: while filling, slot j is entry j; once full, entry 0 (the oldest)
        # is at slot _head and a new round overwrites it
        self._r: list[int] = []
        # P and S of each entry in one int, 4·p_units(P) + 2·S (below 2^47: native), so that
        # the z-test's scales read one slot per entry that leaves them; 2·S is 0 loss, 1 draw,
        # 2 win, and p_units(P) is all of P that F3 uses
        self._es: list[int] = []
        self._head = 0
        # the seed's F3 (running unless `revised`)
        self.sum_w = 0
        self.sum_w2 = 0
        self.sum_old = 0  # Σ w[:m]
        self.sum_new = 0  # Σ w[-m:]
        # both
        self.sum_s2 = 0
        self.sum_p = 0  # Σ e in units of 2^-44
        self.appended = 0  # entries ever appended: entry j of the window is number appended−n+j
        # F3 (revised) (running if `revised`): Σ e(1−e) in units of 2^-40 (see spread_units),
        # and scale i of Z_SCALES, while shorter than the window (i < _active), keeps Σ(o−e)
        # (_d<i>, 2^-44) and Σe(1−e) (_v<i>, 2^-40) over its last min(L, |w|) entries; a scale
        # equal to W is the whole window (sum_s2, sum_p, sum_v)
        self.sum_v = 0
        self._active = len([n for n in Z_SCALES if n < size])
        self._whole_scale = size in Z_SCALES
        self._d0 = self._v0 = self._d1 = self._v1 = self._d2 = self._v2 = 0
        self._d3 = self._v3 = self._d4 = self._v4 = 0
        self._fresh = True  # the sums not kept running were computed after the last append

    def __len__(self) -> int:
        return len(self._r)

    def append(self, rating: int, p: float, s: float) -> None:
        """Add the round just rated; the oldest round leaves once the window holds W."""
        s2 = 2 if s == 1.0 else (1 if s == 0.5 else (0 if s == 0.0 else int(round(2 * s))))
        e = p_units(p)
        self.appended += 1
        self._fresh = False
        if self.revised:
            self._append_revised(rating, e, s2)
            return
        w = self._r
        n = len(w)
        m = n >> 1
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
            gone_es = self._es[head]
            self.sum_s2 += s2 - (gone_es & 3)
            self.sum_p += e - (gone_es >> 2)
            w[head] = rating
            self._es[head] = (e << 2) | s2
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
        self._es.append((e << 2) | s2)
        self.sum_w += rating
        self.sum_w2 += rating * rating
        self.sum_s2 += s2
        self.sum_p += e

    def _append_revised(self, rating: int, e: int, s2: int) -> None:
        """`append` of a window that keeps F3 (revised)'s sums: Σ2o, Σe and Σe(1−e) of the
        window, and each scale's: the new entry joins them, the one L back leaves."""
        n = len(self._r)
        q = (e + _Q_HALF) >> 24  # spread_units(e), written out
        v = q * (_Q_ONE - q)
        active = self._active
        if active:
            d = (s2 << 43) - e
            gd, gv = self._leaving(n, _Z0)
            self._d0 += d - gd
            self._v0 += v - gv
            if active > 1:
                gd, gv = self._leaving(n, _Z1)
                self._d1 += d - gd
                self._v1 += v - gv
            if active > 2:
                gd, gv = self._leaving(n, _Z2)
                self._d2 += d - gd
                self._v2 += v - gv
            if active > 3:
                gd, gv = self._leaving(n, _Z3)
                self._d3 += d - gd
                self._v3 += v - gv
            if active > 4:
                gd, gv = self._leaving(n, _Z4)
                self._d4 += d - gd
                self._v4 += v - gv
        es = (e << 2) | s2
        if n == self.size:
            head = self._head
            gone_es = self._es[head]
            gone_e = gone_es >> 2
            gq = (gone_e + _Q_HALF) >> 24
            self.sum_s2 += s2 - (gone_es & 3)
            self.sum_p += e - gone_e
            self.sum_v += v - gq * (_Q_ONE - gq)
            self._r[head] = rating
            self._es[head] = es
            head += 1
            self._head = head if head < n else 0
            return
        self._r.append(rating)
        self._es.append(es)
        self.sum_s2 += s2
        self.sum_p += e
        self.sum_v += v

    def _leaving(self, n: int, scale: int) -> tuple[int, int]:
        """(o − e, e(1 − e)) in units of 2^-44 and 2^-40 of the entry `scale` rounds before
        the one being appended to these n entries (scale < W: the ring still holds it), or
        (0, 0) if there is none."""
        back = n - scale  # its index, oldest first
        if back < 0:
            return 0, 0
        j = self._head + back
        if j >= n:
            j -= n
        es = self._es[j]
        e = es >> 2
        q = (e + _Q_HALF) >> 24
        return ((es & 3) << 43) - e, q * (_Q_ONE - q)

    # --- the entries, oldest first --------------------------------------------------------
    @property
    def ratings(self) -> list[int]:
        """w: the rating after each round in the window, oldest first."""
        return self._r[self._head :] + self._r[: self._head]

    @property
    def probs(self) -> list[float]:
        """e: the own team's P of each round, oldest first, as the window keeps it (to the
        nearest 2^-44, see `p_units`; the journal keeps P exactly)."""
        return [(es >> 2) / _P_UNIT for es in self._ordered()]

    @property
    def scores2(self) -> list[int]:
        """o doubled (0 loss, 1 draw, 2 win), oldest first."""
        return [es & 3 for es in self._ordered()]

    def _ordered(self) -> list[int]:
        """The packed P and S of the entries, oldest first."""
        return self._es[self._head :] + self._es[: self._head]

    # --- the sums not kept running ---------------------------------------------------------
    def _refresh(self) -> None:
        """Compute the other F3's sums from the entries, once per append that needs them:
        the integers running them would have given."""
        if self._fresh:
            return
        if self.revised:
            w = self.ratings
            n = len(w)
            m = n >> 1
            self.sum_w = sum(w)
            self.sum_w2 = sum([x * x for x in w])
            self.sum_old = sum(w[:m])
            self.sum_new = sum(w[n - m :])
        else:
            self._rebuild_scales()
        self._fresh = True

    def seed_sums(self) -> tuple[int, int, int, int, int]:
        """(Σw, Σw², Σold, Σnew, Σ2o): the seed's F3's sums, as the store keeps them."""
        self._refresh()
        return self.sum_w, self.sum_w2, self.sum_old, self.sum_new, self.sum_s2

    def _rebuild_scales(self) -> None:
        """Σe(1 − e) and each scale's sums from the entries (newest first, one pass)."""
        es = self._ordered()
        n = len(es)
        sums: list[tuple[int, int]] = []  # of the scales closed so far, shortest first
        d_sum = v_sum = 0
        for j in range(n - 1, -1, -1):
            while len(sums) < self._active and n - 1 - j == Z_SCALES[len(sums)]:
                sums.append((d_sum, v_sum))
            d_sum += excess_units(es[j] >> 2, es[j] & 3)
            v_sum += spread_units(es[j] >> 2)
        while len(sums) < len(Z_SCALES):  # scales longer than the entries hold them all
            sums.append((d_sum, v_sum))
        self._d0, self._v0 = sums[0]
        self._d1, self._v1 = sums[1]
        self._d2, self._v2 = sums[2]
        self._d3, self._v3 = sums[3]
        self._d4, self._v4 = sums[4]
        if self._active < len(Z_SCALES):  # inactive scales stay 0, as appending leaves them
            self._reset_inactive()
        self.sum_v = v_sum

    def _reset_inactive(self) -> None:
        """Zero the sums of the scales not shorter than the window (never kept)."""
        active = self._active
        if active < 1:
            self._d0 = self._v0 = 0
        if active < 2:
            self._d1 = self._v1 = 0
        if active < 3:
            self._d2 = self._v2 = 0
        if active < 4:
            self._d3 = self._v3 = 0
        self._d4 = self._v4 = 0

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
        if self.revised:
            self._refresh()
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
        if not self.revised:
            self._refresh()
        kept = (
            (self._d0, self._v0),
            (self._d1, self._v1),
            (self._d2, self._v2),
            (self._d3, self._v3),
            (self._d4, self._v4),
        )
        out = [(Z_SCALES[i], kept[i][0], kept[i][1]) for i in range(self._active)]
        if self._whole_scale:
            out.append((self.size, (self.sum_s2 << 43) - self.sum_p, self.sum_v))
        return out

    def largest_z(self) -> float:  # noqa: C901
        """F3 (revised): max over the scales L ≤ W of |z_L|, z_L = Σ(o − e)/√Σe(1 − e) over
        the last min(L, |w|) entries (z_L = 0 where Σe(1 − e) = 0); 0 without a scale.
        Each z_L is D/(√V·2^24) of the exact integer sums D and V (both below 2^53, so
        converted exactly): an incremental and a restored window give the same double."""
        if not self.revised:
            self._refresh()
        active = self._active
        best = _abs_z(self._d0, self._v0) if active else 0.0
        if active > 1:
            z = _abs_z(self._d1, self._v1)
            if z > best:
                best = z
        if active > 2:
            z = _abs_z(self._d2, self._v2)
            if z > best:
                best = z
        if active > 3:
            z = _abs_z(self._d3, self._v3)
            if z > best:
                best = z
        if active > 4:
            z = _abs_z(self._d4, self._v4)
            if z > best:
                best = z
        if self._whole_scale:
            z = _abs_z((self.sum_s2 << 43) - self.sum_p, self.sum_v)
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
        revised: bool = False,
    ) -> ConvergenceWindow:
        """A window of `size` holding these entries, oldest first (P, 2·S as `probs` and
        `scores2` give them), with the seed's sums the store kept (Σw, Σw², Σold, Σnew, Σ2o)
        and entry count `appended`, as a store reads them back. Σe is recomputed from the
        entries: it is a sum of p_units(P), whatever scale a store once kept it at. A
        `revised` window computes all its sums from the entries (no store keeps them) and
        the seed's when asked, ignoring `sums`."""
        win = cls(size, revised)
        win._r = list(ratings)
        e, s2 = [p_units(p) for p in probs], list(scores2)
        if len(win._r) > size or len(e) != len(win._r) or len(s2) != len(win._r):
            raise ValueError(f"{len(win._r)} entries do not make a window of {size}")
        win._es = [(e[j] << 2) | s2[j] for j in range(len(e))]
        win.sum_p = sum(e)
        win.appended = appended
        if revised:
            win.sum_s2 = sum(s2)
            win._rebuild_scales()
            win._fresh = False
        else:
            win.sum_w, win.sum_w2, win.sum_old, win.sum_new, win.sum_s2 = sums
            win._fresh = False
        return win

    def extend(
        self, ratings: Sequence[int], probs: Sequence[float], scores2: Sequence[int]
    ) -> None:
        """`append` each round in turn, oldest first, with S given doubled (as `scores2`)."""
        if not len(ratings) == len(probs) == len(scores2):
            raise ValueError("ratings, probs and scores2 differ in length")
        for j in range(len(ratings)):
            self.append(ratings[j], probs[j], scores2[j] / 2)

    def resized(self, size: int, revised: bool | None = None) -> ConvergenceWindow:
        """The same history in a window of another size (keeps the most recent rounds),
        keeping the sums of the same F3 unless `revised` says which."""
        win = ConvergenceWindow(size, self.revised if revised is None else revised)
        for r, p, s2 in zip(self.ratings, self.probs, self.scores2, strict=True):
            win.append(r, p, s2 / 2)
        win.appended = self.appended
        return win
