"""Optimal splits for every team size (F7, with the design's errata fixed).

For each k the solver seats 2k of the N players on A and B, k each, minimising
|Σ_A − Σ_B| over every choice of 2k players (the top player may be benched when 2k < N). It
first searches (the design's single swaps, then pair exchanges); a split whose gap meets the
parity bound is proven optimal at once. Otherwise the exact bitset program decides. Past
`n_max` players, or once the time budget is spent, only the design's bench-aware greedy runs and
`optimal` is true only when the bound proves it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from synelo.balance.bound import parity_bound
from synelo.balance.exact import choose, exact_assignment, preferred_assignment
from synelo.balance.problem import (
    BENCH,
    A,
    B,
    Problem,
    ProblemBuilder,
    check_players,
    current_sides,
    integer_ratings,
    scaled,
)
from synelo.balance.search import Placement, Prefer, greedy_descent, pair_exchange
from synelo.balance.start import starting_sides
from synelo.ratings.synelo import win_probability


@dataclass(frozen=True, slots=True)
class Split:
    """One team size's answer. Players are indices into the caller's ratings."""

    k: int
    a: tuple[int, ...]
    b: tuple[int, ...]
    bench: tuple[int, ...]
    sum_a: float
    sum_b: float
    gap: float
    p_a: float
    optimal: bool  # the gap is proven minimal (at the rating resolution)
    moved: int | None  # players on a team now whose team changes (None without `current`)
    moved_optimal: bool | None  # `prefer` is proven honoured among optimal-gap splits
    split_parties: tuple[tuple[int, ...], ...]
    method: str  # "bound": search met the parity bound; "exact": the bitset program; "greedy"
    logit: float | None = None  # an all-play split's logit P(A), whose |·| it minimised (W12)


@dataclass(frozen=True, slots=True)
class SplitSet:
    splits: tuple[Split, ...]
    resolution: float
    elapsed_ms: float

    @property
    def solver(self) -> Literal["exact", "greedy"]:
        return "greedy" if any(s.method == "greedy" for s in self.splits) else "exact"


def best_splits(
    ratings: Sequence[float],
    *,
    theta: float,
    min_k: int = 2,
    max_k: int | None = None,
    must_play: Collection[int] = (),
    parties: Sequence[Sequence[int]] = (),
    current: tuple[Collection[int], Collection[int]] | None = None,
    prefer: Prefer = None,
    n_max: int | None = 32,
    budget_s: float = 1.0,
    resolution: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SplitSet:
    """F7 for every k in min_k…max_k (default 2…⌊N/2⌋): the best split per team size.

    Team sizes that must_play makes impossible (more than 2k must play) are left out.
    Ties among optimal splits: `prefer="stay"` moves the fewest present players, `"mix"` moves
    nearest half of them (without `current` neither applies); then the first in scan order
    (heaviest unit first, input order).
    """
    began = clock()
    n = len(ratings)
    top = n // 2 if max_k is None else max_k
    _check(n, min_k, top, must_play, parties, current)
    if current is None:
        # Nobody is on a team, so every split moves nobody: the preference cannot tell
        # optimal splits apart, and its exact program for each k would only cost time.
        prefer = None
    ints, step = integer_ratings(ratings, resolution)
    now = current_sides(n, current)
    deadline = began + budget_s
    exact_ok = n_max is None or n <= n_max
    splits = []
    problems = ProblemBuilder(ints, must_play, parties, now)
    for k in range(min_k, top + 1):
        problem = problems.for_k(k)
        if problem is None:
            continue
        search = exact_ok and clock() < deadline
        place, proven, method = _solve(
            problem, current is not None, prefer, search, deadline, clock
        )
        splits.append(
            _split(
                problem, place, method, ints, step, theta, proven if current is not None else None
            )
        )
    return SplitSet(tuple(splits), step, (clock() - began) * 1000)


CHEAP_EXACT = 300  # units × (k+1)² below which the exact program beats searching
FEW_TEAMS = 2500  # with fewer candidate teams the search seldom meets the bound: go exact


def _solve(
    problem: Problem,
    has_current: bool,
    prefer: Prefer,
    search: bool,
    deadline: float,
    clock: Callable[[], float],
) -> tuple[Placement, bool, str]:
    """The placement, whether its preference is proven, and how its gap was settled."""
    bound = parity_bound(problem)
    from_current = has_current and (prefer != "mix" or not search)
    p = Placement.start(problem, starting_sides(problem, from_current), prefer)
    if not search:
        greedy_descent(p)
        return p, False, "bound" if p.gap <= bound else "greedy"
    if p.gap <= bound:
        return (*_honour(p), "bound")
    cells = len(problem.units) * (problem.k + 1) ** 2
    # choices of A, B kept (none to speak of when parties leave fewer units than k)
    teams = math.comb(max(len(problem.units) - problem.k, 0), problem.k)
    if cells > CHEAP_EXACT and not (teams < FEW_TEAMS and cells <= 5 * CHEAP_EXACT):
        # Refilling A from everyone else is the stronger step while there are many teams to
        # choose from; near 2k = N dividing the seated players anew has more.
        wide_bench = teams >= 10_000
        while (
            p.gap > bound
            and clock() < deadline
            and (
                (wide_bench and _refill(p))
                or _reseat(p)
                or _resplit(p)
                or (not wide_bench and _refill(p))
                or greedy_descent(p)
                or pair_exchange(p)
            )
        ):
            pass
        if p.gap <= bound:
            return (*_honour(p), "bound")
    if clock() >= deadline:
        greedy_descent(p)
        return p, False, "greedy"
    place = exact_assignment(problem, p.side.tolist())
    if place is None:
        greedy_descent(p)
        return p, False, "greedy"
    return (*_honour(Placement.start(problem, place, prefer)), "exact")


def _honour(p: Placement) -> tuple[Placement, bool]:
    """The preference among splits of this (optimal) gap, and whether it is proven.

    Single swaps that keep the gap and improve the preference come first; then the exact
    program, with the moved players as one more dimension, settles it if it is small enough.
    """
    if p.prefer is None:
        return p, False
    greedy_descent(p)
    found = preferred_assignment(p.problem, p.gap, p.prefer, beat=p.moved_either)
    if found is None:
        return p, False
    if found[0] is None:
        return p, True
    return Placement.start(p.problem, found[0], p.prefer), True


def _refill(p: Placement) -> bool:
    """Keep team B, choose team A exactly from everyone else; True if the gap fell.

    With a bench to draw from there are C(N − k, k) candidate teams A, so for small and
    middling k one of them nearly always matches Σ_B to the parity bound.
    """
    kept = p.side == B
    take = choose(
        p.problem.units,
        p.problem.k,
        (~kept).tolist(),
        2 * int(p.weight[kept].sum()),
        (p.side == A).tolist(),
    )
    return take is not None and _adopt(p, np.array(take), kept)


def _reseat(p: Placement) -> bool:
    """Change the parity of the seated sum, then divide anew; True if the gap fell.

    When the seated players' sum is odd no division beats a gap of 1, yet the bound may be 0:
    seat a bench unit of the other parity in place of the seated unit nearest its weight.
    """
    seated = p.side != BENCH
    if int(p.weight[seated].sum() + p.problem.shift * p.size[seated].sum()) % 2 == 0:
        return False
    odd = (p.weight + p.problem.shift * p.size) % 2 == 1
    out = np.flatnonzero(seated & ~p.must)
    bench = np.flatnonzero(~seated)
    if not len(out) or not len(bench):
        return False
    cost = np.abs(p.weight[out, None] - p.weight[None, bench]).astype(float)
    cost[(odd[out, None] == odd[None, bench]) | (p.size[out, None] != p.size[None, bench])] = np.inf
    at = int(np.argmin(cost))
    if not np.isfinite(cost.flat[at]):
        return False
    u, v = int(out[at // len(bench)]), int(bench[at % len(bench)])
    before = (p.side.copy(), p.diff, p.moved)
    p.swap(u, v)
    if _resplit(p) and p.gap < abs(before[1]):
        return True
    p.side, p.diff, p.moved = before
    return False


def _resplit(p: Placement) -> bool:
    """Divide the seated players anew, exactly (one count suffices); True if the gap fell.

    With k players a side there are C(2k, k)/2 ways to divide the same 2k players, so for all
    but small k this nearly always meets the parity bound; single swaps then adjust who sits.
    """
    seated = p.side != BENCH
    target = int(p.weight[seated].sum())
    take = choose(
        p.problem.units, p.problem.k, seated.tolist(), target, (p.side == A).tolist(), everyone=True
    )
    if take is None:
        return False
    taken = np.array(take)
    return _adopt(p, taken, seated & ~taken)


def _adopt(p: Placement, on_a: np.ndarray, on_b: np.ndarray) -> bool:
    """Place these units on A and B (the rest on the bench) if that lowers the gap."""
    if abs(int(p.weight[on_a].sum() - p.weight[on_b].sum())) >= p.gap:
        return False
    p.side = np.where(on_a, A, np.where(on_b, B, BENCH)).astype(np.int8)
    p.recount()
    return True


def _split(
    problem: Problem,
    p: Placement,
    method: str,
    ints: Sequence[int],
    step: float,
    theta: float,
    moved_optimal: bool | None,
) -> Split:
    """The answer for one k: players listed strongest first (ties: input order)."""
    groups: list[list[int]] = [[], [], []]
    for unit, place in zip(problem.units, p.side.tolist(), strict=True):
        groups[place].extend(unit.members)
    rank = problem.rank
    for g in groups:
        g.sort(key=rank.__getitem__)
    moved = None
    if moved_optimal is not None:  # there are present teams: keep the naming that moves fewer
        if p.mirrored < p.moved:
            groups[A], groups[B] = groups[B], groups[A]
        moved = p.moved_either
    elif groups[A] and groups[B] and rank[groups[B][0]] < rank[groups[A][0]]:
        groups[A], groups[B] = groups[B], groups[A]  # A holds the strongest seated player
    sum_a, sum_b = sum(ints[i] for i in groups[A]), sum(ints[i] for i in groups[B])
    return Split(
        problem.k,
        tuple(groups[A]),
        tuple(groups[B]),
        tuple(groups[BENCH]),
        scaled(sum_a, step),
        scaled(sum_b, step),
        scaled(abs(sum_a - sum_b), step),
        win_probability(scaled(sum_a, step), scaled(sum_b, step), theta),
        method != "greedy",
        moved,
        moved_optimal,
        problem.split_parties,
        method,
    )


def _check(
    n: int,
    min_k: int,
    max_k: int,
    must_play: Collection[int],
    parties: Sequence[Sequence[int]],
    current: tuple[Collection[int], Collection[int]] | None,
) -> None:
    """ValueErrors that name the argument at fault."""
    if min_k < 1:
        raise ValueError("min_k must be at least 1")
    if max_k < min_k:
        raise ValueError("max_k must be at least min_k")
    if 2 * max_k > n:
        raise ValueError(f"max_k {max_k} needs {2 * max_k} players; there are {n}")
    if len(set(must_play)) > 2 * max_k:
        raise ValueError("must_play has more players than the largest team size can seat")
    check_players(n, must_play, parties, current)
