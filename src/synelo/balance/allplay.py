"""All-play splits (W12): everyone plays, ⌊n/2⌋ against ⌈n/2⌉, by the model's own logit, or
by F1's sums for a model that has none.

A model whose prediction is not a difference of strength sums (WHR: a difference of team
means plus an extra-player advantage, the epad) balances by what it predicts. The objective
is |logit P(A)| of the split, from the players' strengths and the model's `split_logit`.

- **Linear models.** When the model says logit = c·(mean_A − mean_B) + b for these sizes
  (`split_line`), with k players on the smaller side, T the total and S the smaller side's
  sum, logit = c·(S/k − (T − S)/(n − k)) + b is linear in S. It is 0 at

      S* = k·(T − b·(n − k)/c) / n,

  so the best split is the k-player choice whose sum is nearest S*: the exact solver's
  closest-sum program with that target (`exact.choose`), proven optimal at the rating
  resolution.
- **Other models** (WHR's BPST epad, read from the smaller side's best player). Few enough
  choices are all scored with the true logit, which proves the optimum. Otherwise Newton's
  method over the target (the slope measured on the split at hand) picks closest-sum
  candidates, and swaps of players of equal size between the sides, scored with the true
  logit, finish it: not proven.

- **Models without a logit** (SynElo with the seed's sums, Elo, TrueSkill…:
  `all_play_by_sums`; a SynElo pool with F1u has one) balance F1's
  sums, as the odd joiner does (F11, Δk = 1), over the whole split: the least |Σ_A − Σ_B|.
  With a phantom player of strength 0 added when n is odd, that is F7 for k = ⌈n/2⌉ with
  everyone made to play, so F7's solver (search, parity bound, exact program, preference)
  answers it and proves it as it proves a k v k split.

Parties stay together unless no choice of them seats exactly k on one side; the largest are
split first, as in F7. Among equally good splits, `prefer` and `current` act as in F7.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import replace

from synelo.balance.exact import choose
from synelo.balance.problem import (
    BENCH,
    A,
    B,
    Unit,
    check_players,
    current_sides,
    integer_ratings,
    player_units,
    scaled,
)
from synelo.balance.search import Prefer
from synelo.balance.solver import Split, SplitSet, best_splits
from synelo.ratings.synelo import logistic, win_probability

# logit P(A) of a split from its players' strengths (A's, then B's)
Logit = Callable[[Sequence[float], Sequence[float]], float]
# (c, b) when the logit of teams of these sizes is c·(mean_A − mean_B) + b; None when it is not
Line = Callable[[int, int], tuple[float, float] | None]

ENUMERATE = 8_000  # choices of the smaller side up to which every split is scored exactly
TIE = 1e-12  # |logit| this close counts as equal (floating sums of the same players)
NEWTON_STEPS = 8


def all_play_split(
    ratings: Sequence[float],
    logit: Logit,
    line: Line | None = None,
    *,
    parties: Sequence[Sequence[int]] = (),
    current: tuple[Collection[int], Collection[int]] | None = None,
    prefer: Prefer = None,
    exact: bool = True,
    enumerate_up_to: int = ENUMERATE,
    budget_s: float = 1.0,
    resolution: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SplitSet:
    """W12: the split of every player, ⌊n/2⌋ against ⌈n/2⌉, with the least |logit P(A)|.

    `ratings` are the strengths `logit` reads (rounded to `resolution` as in F7); `line`
    gives the linear form when there is one. `exact` False (past the pool's N_max) leaves only
    the local search. The answer is one Split with k = ⌊n/2⌋, an empty bench, its logit and
    `optimal` true when proven. Names: with `current`, the naming that moves fewer players;
    otherwise A holds the strongest player.
    """
    began = clock()
    n = len(ratings)
    if n < 2:
        raise ValueError("an all-play split needs at least 2 players")
    check_players(n, (), parties, current)
    ints, step = integer_ratings(ratings, resolution)
    k = n // 2
    game = _Game(ints, step, k, parties, current_sides(n, current), logit, prefer)
    deadline = began + budget_s
    found = _solve(game, line, exact, enumerate_up_to, deadline, clock)
    return SplitSet((game.split(*found, current is not None),), step, (clock() - began) * 1000)


def all_play_by_sums(
    ratings: Sequence[float],
    *,
    theta: float,
    parties: Sequence[Sequence[int]] = (),
    current: tuple[Collection[int], Collection[int]] | None = None,
    prefer: Prefer = None,
    budget_s: float = 1.0,
    resolution: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SplitSet:
    """W12 by F1's sums: the split of every player, ⌊n/2⌋ against ⌈n/2⌉, with the least

        |Σ_A − Σ_B|

    (F11's odd-joiner rule applied to the whole split), for a model without a split logit.

    For odd n a phantom player of strength 0 joins the smaller side: Σ_A − Σ_B is unchanged,
    both sides hold ⌈n/2⌉, and the problem is F7's for that k with everyone made to play.
    `best_splits` solves it: the search, then the exact program unless the parity bound
    (|Σ_A − Σ_B| ≡ Σ_all mod 2) already proves the search's split. One team size is cheap, so
    there is no `n_max`; past `budget_s` only the greedy runs (`optimal` only where the bound
    proves it). `prefer` and `current` act as in F7. The answer is one Split with
    k = ⌊n/2⌋, an empty bench and no logit; `p_a` is F2's with `theta`. Names: with
    `current`, the naming that moves fewer players; otherwise A holds the strongest player.
    """
    began = clock()
    n = len(ratings)
    if n < 2:
        raise ValueError("an all-play split needs at least 2 players")
    check_players(n, (), parties, current)
    seated = [*ratings, 0] if n % 2 else list(ratings)  # the phantom is the last index
    half = len(seated) // 2
    found = best_splits(
        seated,
        theta=theta,
        min_k=half,
        max_k=half,
        must_play=range(len(seated)),
        parties=parties,
        current=current,
        prefer=prefer,
        n_max=None,
        budget_s=max(0.0, budget_s - (clock() - began)),
        resolution=resolution,
        clock=clock,
    )
    (split,) = found.splits
    team_a = tuple(i for i in split.a if i < n)
    team_b = tuple(i for i in split.b if i < n)
    if current is None and team_a and team_b:
        # A holds the strongest player (the phantom outranks everyone when all are below 0)
        ints, _ = integer_ratings(ratings, resolution)
        rank = [(-ints[i], i) for i in range(n)]
        if rank[team_b[0]] < rank[team_a[0]]:  # each side is listed strongest first
            team_a, team_b = team_b, team_a
            sum_a, sum_b = split.sum_b, split.sum_a
            split = replace(
                split, sum_a=sum_a, sum_b=sum_b, p_a=win_probability(sum_a, sum_b, theta)
            )
    answer = replace(split, k=n // 2, a=team_a, b=team_b)
    return SplitSet((answer,), found.resolution, (clock() - began) * 1000)


class _Game:
    """One all-play problem: units, the strengths the logit reads, and how to score a choice.

    A choice is a take flag per unit: the taken units form the side of k players, the rest
    the side of n − k."""

    def __init__(
        self,
        ints: Sequence[int],
        step: float,
        k: int,
        parties: Sequence[Sequence[int]],
        now: Sequence[int],
        logit: Logit,
        prefer: Prefer,
    ) -> None:
        self.ints, self.step, self.k, self.n = ints, step, k, len(ints)
        self.values = [scaled(r, step) for r in ints]
        self.logit_of, self.prefer = logit, prefer
        self.low = min(ints)
        self.units, self.split_parties = self._fit(parties, now)
        self.sizes = [u.size for u in self.units]
        self.teamed = sum(u.moves[BENCH] for u in self.units)
        order = sorted(range(self.n), key=lambda i: (-ints[i], i))  # strongest first
        self.rank = [0] * self.n
        for position, i in enumerate(order):
            self.rank[i] = position

    def _fit(
        self, parties: Sequence[Sequence[int]], now: Sequence[int]
    ) -> tuple[list[Unit], tuple[tuple[int, ...], ...]]:
        """Units with every party whole that can be: parties larger than the larger side are
        split, then the largest kept ones until some choice seats exactly k."""
        groups = sorted(
            (tuple(sorted(p)) for p in parties if len(p) > 1), key=lambda p: (-len(p), p)
        )
        split = [p for p in groups if len(p) > self.n - self.k]
        kept = [p for p in groups if len(p) <= self.n - self.k]
        while True:
            units = [
                Unit(u.members, u.weight - self.low * u.size, True, u.moves, u.size)
                for u in player_units(self.ints, set(), kept, now)
            ]
            reach = 1  # bit a: some choice of units holds a players
            for u in units:
                reach |= reach << u.size
            if (reach >> self.k) & 1 or not kept:
                return units, tuple(sorted(split))
            split.append(kept.pop(0))

    # --- scoring ---------------------------------------------------------------------------
    def sides(self, take: Sequence[bool]) -> tuple[list[int], list[int]]:
        """The players of the taken side and of the other."""
        small: list[int] = []
        large: list[int] = []
        for unit, taken in zip(self.units, take, strict=True):
            (small if taken else large).extend(unit.members)
        return small, large

    def logit(self, take: Sequence[bool]) -> float:
        """W12's logit P(taken side wins)."""
        small, large = self.sides(take)
        return self.logit_of([self.values[i] for i in small], [self.values[i] for i in large])

    def moved(self, take: Sequence[bool]) -> tuple[int, int]:
        """Players on a team now who change team if the taken side is named A, and if B."""
        as_a = sum(u.moves[A if t else B] for u, t in zip(self.units, take, strict=True))
        as_b = sum(u.moves[B if t else A] for u, t in zip(self.units, take, strict=True))
        return as_a, as_b

    def preference(self, take: Sequence[bool]) -> int:
        """What `prefer` minimises: the moved players ("stay"), their distance from half of
        the players on a team now ("mix"), counted in the naming that moves fewer."""
        if self.prefer is None:
            return 0
        moved = min(self.moved(take))
        return moved if self.prefer == "stay" else abs(2 * moved - self.teamed)

    def split(self, take: list[bool], optimal: bool, proven: bool, has_current: bool) -> Split:
        """The answer: players strongest first, named as the module says."""
        small, large = self.sides(take)
        small.sort(key=self.rank.__getitem__)
        large.sort(key=self.rank.__getitem__)
        moved: int | None = None
        if has_current:
            as_a, as_b = self.moved(take)
            team_a, team_b = (small, large) if as_a <= as_b else (large, small)
            moved = min(as_a, as_b)
        else:
            strongest = self.rank[small[0]] < self.rank[large[0]]  # both sides hold someone
            team_a, team_b = (small, large) if strongest else (large, small)
        sum_a, sum_b = sum(self.ints[i] for i in team_a), sum(self.ints[i] for i in team_b)
        value = self.logit_of([self.values[i] for i in team_a], [self.values[i] for i in team_b])
        return Split(
            self.k,
            tuple(team_a),
            tuple(team_b),
            (),
            scaled(sum_a, self.step),
            scaled(sum_b, self.step),
            scaled(abs(sum_a - sum_b), self.step),
            logistic(value),
            optimal,
            moved,
            proven if has_current else None,
            self.split_parties,
            "exact" if optimal else "greedy",
            value,
        )

    # --- the closest-sum program -----------------------------------------------------------
    def nearest(self, target: float, prefer_take: Sequence[bool]) -> list[bool] | None:
        """The choice of k players whose strength sum (in resolution steps) is nearest
        `target`; None past the program's memory budget."""
        shifted = target - self.low * self.k
        everyone = [True] * len(self.units)
        return choose(self.units, self.k, everyone, 2 * shifted, prefer_take, everyone=True)

    def taken_sum(self, take: Sequence[bool]) -> int:
        return sum(self.ints[i] for i in self.sides(take)[0])


def _solve(
    game: _Game,
    line: Line | None,
    exact: bool,
    enumerate_up_to: int,
    deadline: float,
    clock: Callable[[], float],
) -> tuple[list[bool], bool, bool]:
    """The choice, whether its |logit| is proven least, and whether its preference is.

    A linear model goes to the closest-sum program at W12's S* (in resolution steps), unless
    a preference among present teams is to be settled and the choices are few enough to score
    them all; a model that is not linear is scored in full when it can be."""
    k, n = game.k, game.n
    form = line(k, n - k) if line is not None else None
    settle = game.prefer is not None and game.teamed > 0
    if exact and (form is None or settle) and _choices_count(game.sizes, k) <= enumerate_up_to:
        found = _enumerate(game, deadline, clock)
        if found is not None:
            return found
    if exact and form is not None and clock() < deadline:
        c, b = form
        total = sum(game.ints)
        target = k * (total - b * (n - k) / (c * game.step)) / n if c else total * k / n
        take = game.nearest(target, _home(game))
        if take is not None:  # optimal; swaps that keep |logit| may still honour `prefer`
            polished = take if game.prefer is None else _descend(game, take, deadline, clock)
            return polished, True, False
    return _search(game, exact, deadline, clock), False, False


def _choices_count(sizes: Sequence[int], k: int) -> int:
    """How many choices of units hold exactly k players."""
    count = [1] + [0] * k
    for s in sizes:
        for a in range(k, s - 1, -1):
            count[a] += count[a - s]
    return count[k]


def _choices(sizes: Sequence[int], k: int) -> Iterator[tuple[int, ...]]:
    """Every choice of units holding exactly k players, as unit indices."""
    if all(s == 1 for s in sizes):
        yield from itertools.combinations(range(len(sizes)), k)
        return
    left = [0] * (len(sizes) + 1)
    for i in range(len(sizes) - 1, -1, -1):
        left[i] = left[i + 1] + sizes[i]

    def walk(i: int, need: int, taken: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if need == 0:
            yield taken
        elif i < len(sizes) and left[i] >= need:
            if sizes[i] <= need:
                yield from walk(i + 1, need - sizes[i], (*taken, i))
            yield from walk(i + 1, need, taken)

    yield from walk(0, k, ())


def _enumerate(
    game: _Game, deadline: float, clock: Callable[[], float]
) -> tuple[list[bool], bool, bool] | None:
    """Every choice scored with the true logit: the least |logit|, then the preference.
    None when the deadline passes first."""
    scored: list[tuple[float, tuple[int, ...]]] = []
    for count, chosen in enumerate(_choices(game.sizes, game.k)):
        if count % 256 == 255 and clock() >= deadline:
            return None
        take = [False] * len(game.units)
        for i in chosen:
            take[i] = True
        scored.append((abs(game.logit(take)), chosen))
    least = min(s for s, _ in scored)
    best: list[bool] | None = None
    best_pref = 0
    for s, chosen in scored:
        if s > least + TIE:
            continue
        take = [i in chosen for i in range(len(game.units))]
        pref = game.preference(take)
        if best is None or pref < best_pref:
            best, best_pref = take, pref
    assert best is not None
    return best, True, True


def _home(game: _Game) -> list[bool]:
    """Which units the program takes when it may (F7's ties): for "stay" the units on the
    present team that most of the taken side would come from; otherwise none in particular."""
    if game.prefer != "stay":
        return [False] * len(game.units)
    return [u.moves[B] > u.moves[A] for u in game.units]  # more of the unit is on A now


def _search(game: _Game, exact: bool, deadline: float, clock: Callable[[], float]) -> list[bool]:
    """Newton's method over the closest-sum target, then swaps scored with the true logit
    from each split it visited (the best first), while the time lasts."""
    starts = [_deal(game)]
    if exact:
        target = sum(game.ints) * game.k / game.n  # equal means
        tried: set[int] = set()
        for _ in range(NEWTON_STEPS):
            if clock() >= deadline:
                break
            found = game.nearest(target, [False] * len(game.units))
            if found is None:
                break
            starts.append(found)
            at = game.taken_sum(found)
            slope = _slope(game, found)
            if at in tried or not slope or not math.isfinite(slope):
                break
            tried.add(at)
            target = at - game.logit(found) / slope
    starts.sort(key=lambda t: abs(game.logit(t)))
    best = _descend(game, starts[0], deadline, clock)
    for take in starts[1:]:
        if clock() >= deadline:
            break
        found = _descend(game, take, deadline, clock)
        if abs(game.logit(found)) < abs(game.logit(best)) - TIE:
            best = found
    return best


def _slope(game: _Game, take: Sequence[bool]) -> float:
    """d logit / d S of the taken side, measured by moving one resolution step per player of
    strength from the other side to it (the sum of everyone kept)."""
    small, large = game.sides(take)
    ka, kb = len(small), len(large)
    a = [game.values[i] for i in small]
    b = [game.values[i] for i in large]
    here = game.logit_of(a, b)
    shifted = game.logit_of([x + game.step for x in a], [x - game.step * ka / kb for x in b])
    return (shifted - here) / ka


def _deal(game: _Game) -> list[bool]:
    """A start without the program: units strongest per player first, each to the side of
    lower mean that has room for it."""
    room = [game.k, game.n - game.k]
    total = [0.0, 0.0]
    seated = [0, 0]
    take = [False] * len(game.units)
    order = sorted(range(len(game.units)), key=lambda i: -game.units[i].size)  # parties first
    for i in order:
        u = game.units[i]
        means = [total[s] / seated[s] if seated[s] else -math.inf for s in (0, 1)]
        for side in sorted((0, 1), key=lambda s: (means[s], s)):
            if room[side] >= u.size:
                take[i] = side == 0
                room[side] -= u.size
                total[side] += u.weight
                seated[side] += u.size
                break
    if room != [0, 0]:  # parties left no room: take any choice that fits
        chosen = next(_choices(game.sizes, game.k))
        take = [i in chosen for i in range(len(game.units))]
    return take


def _descend(
    game: _Game, take: list[bool], deadline: float, clock: Callable[[], float]
) -> list[bool]:
    """The best swap of two same-size units between the sides by the true |logit|, again
    and again while one improves it (ties, within TIE of the least |logit| met: the
    preference)."""
    units = game.units
    score = (abs(game.logit(take)), game.preference(take))
    least = score[0]
    while clock() < deadline:
        best, at = score, None
        for u, v in itertools.product(range(len(units)), repeat=2):
            if not take[u] or take[v] or units[u].size != units[v].size:
                continue
            take[u], take[v] = False, True
            trial = (abs(game.logit(take)), game.preference(take))
            take[u], take[v] = True, False
            tied = trial[0] <= min(least, best[0]) + TIE
            if trial[0] < best[0] - TIE or (tied and trial[1] < best[1]):
                best, at = trial, (u, v)
        if at is None:
            break
        take[at[0]], take[at[1]] = False, True
        score, least = best, min(least, best[0])
    return take
