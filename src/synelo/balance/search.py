"""Local search over placements: the design's bench-aware greedy and its stronger extension.

A placement puts every unit on A, B or the bench. A move swaps two units of the same size
between two of those places, which keeps both teams at k players. The score of a placement is
(|Σ_A − Σ_B|, preference): the gap first, then — only among equal gaps — how well the
placement honours `prefer` (fewest moved players for "stay", a moved count nearest half of the
players for "mix"). Ties between moves go to the first in scan order (units heaviest first,
then input order), so every answer is deterministic.

- `greedy_descent` is the design's fallback: take the best improving single swap (with the bench
  included), rescan, stop when none improves.
- `pair_exchange` swaps two single players for two others at once, which reaches differences
  no single swap can; the solver alternates the two until the parity bound is met.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from synelo.balance.problem import BENCH, SIGN, A, B, Problem

Prefer = Literal["stay", "mix"] | None
PAIRS = ((A, B), (A, BENCH), (B, BENCH))
SCALE = 1 << 12  # the preference term stays below this, so the gap always comes first
SIGNS = np.array(SIGN, dtype=np.int64)
NEVER = np.iinfo(np.int64).max


@dataclass
class Placement:
    """A mutable placement with its running Σ_A − Σ_B and moved-player count."""

    problem: Problem
    prefer: Prefer
    side: np.ndarray  # int8 per unit
    diff: int = 0
    moved: int = 0

    @classmethod
    def start(
        cls, problem: Problem, sides: Sequence[int] | np.ndarray, prefer: Prefer
    ) -> Placement:
        p = cls(problem, prefer, np.asarray(sides, dtype=np.int8))
        p.recount()
        return p

    def recount(self) -> None:
        side = self.side.astype(np.intp)
        self.diff = int(np.dot(SIGNS[side], self.weight))
        self.moved = int(self.moves[np.arange(len(side)), side].sum())

    @property
    def mirrored(self) -> int:
        """Players moved if A and B swapped names (a scramble may keep either orientation)."""
        side = self.side.astype(np.intp)
        flipped = np.where(side == BENCH, BENCH, 1 - side)
        return int(self.moves[np.arange(len(side)), flipped].sum())

    @property
    def moved_either(self) -> int:
        return min(self.moved, self.mirrored)

    @property
    def weight(self) -> np.ndarray:
        return self.problem.arrays.weight

    @property
    def size(self) -> np.ndarray:
        return self.problem.arrays.size

    @property
    def must(self) -> np.ndarray:
        return self.problem.arrays.must

    @property
    def moves(self) -> np.ndarray:
        return self.problem.arrays.moves

    @property
    def teamed(self) -> int:
        return self.problem.arrays.teamed

    def preference(self, moved: np.ndarray | int) -> np.ndarray | int:
        if self.prefer == "stay":
            return moved
        if self.prefer == "mix":
            return cast("np.ndarray | int", abs(2 * moved - self.teamed))  # abs() is untyped here
        return 0 * moved

    @property
    def gap(self) -> int:
        return abs(self.diff)

    def score(self) -> int:
        return self.gap * SCALE + int(self.preference(self.moved))

    def swap(self, u: int, v: int) -> None:
        su, sv = int(self.side[u]), int(self.side[v])
        self.diff += (SIGN[sv] - SIGN[su]) * int(self.weight[u] - self.weight[v])
        self.moved += int(
            self.moves[u, sv] - self.moves[u, su] + self.moves[v, su] - self.moves[v, sv]
        )
        self.side[u], self.side[v] = sv, su


def greedy_descent(p: Placement) -> int:
    """Seed 000's fallback: apply the best improving single swap until none improves.

    Every pair of units in different places and of the same size is scored at once; a unit
    that must play is never swapped onto the bench. Returns the number of swaps made.
    """
    signs, same_size, delta_w = SIGNS, p.problem.arrays.same_size, p.problem.arrays.delta_w
    rows = np.arange(len(p.size))
    swaps = 0
    while True:
        side = p.side.astype(np.intp)
        benched = side == BENCH
        allowed = same_size & (side[:, None] != side[None, :])
        allowed &= ~(p.must[:, None] & benched[None, :]) & ~(benched[:, None] & p.must[None, :])
        diff = p.diff + (signs[side][None, :] - signs[side][:, None]) * delta_w
        at_other = p.moves[:, side]  # [u, v]: u's moved count if it took v's place
        here = p.moves[rows, side]
        moved = p.moved + at_other + at_other.T - here[:, None] - here[None, :]
        score = np.where(allowed, np.abs(diff) * SCALE + p.preference(moved), NEVER)
        at = int(np.argmin(score))
        if score.flat[at] >= p.score():
            return swaps
        p.swap(*divmod(at, len(rows)))
        swaps += 1


def pair_exchange(p: Placement) -> bool:
    """Swap two single players for two others if that lowers the gap; True if it did."""
    singles = p.size == 1
    best_gap, best = p.gap, None
    for x, y in PAIRS:
        iu = np.flatnonzero(singles & (p.side == x))
        iv = np.flatnonzero(singles & (p.side == y))
        if y == BENCH:
            iu = iu[~p.must[iu]]
        if len(iu) < 2 or len(iv) < 2:
            continue
        ua, ub = np.triu_indices(len(iu), 1)
        va, vb = np.triu_indices(len(iv), 1)
        pu = p.weight[iu[ua]] + p.weight[iu[ub]]
        pv = p.weight[iv[va]] + p.weight[iv[vb]]
        c = SIGN[y] - SIGN[x]
        # new diff = diff + c·(pu − pv): the best pv is the one nearest pu + diff/c.
        order = np.argsort(pv, kind="stable")
        sorted_pv = pv[order]
        want = pu + p.diff / c
        at = np.searchsorted(sorted_pv, want)
        for cand in (np.clip(at - 1, 0, len(pv) - 1), np.clip(at, 0, len(pv) - 1)):
            gaps = np.abs(p.diff + c * (pu - sorted_pv[cand]))
            i = int(np.argmin(gaps))
            if gaps[i] < best_gap:
                j = int(order[cand[i]])
                best_gap = int(gaps[i])
                best = ((int(iu[ua[i]]), int(iv[va[j]])), (int(iu[ub[i]]), int(iv[vb[j]])))
    if best is None:
        return False
    for u, v in best:
        p.swap(u, v)
    return True
