"""F7 solved exactly: an integer dynamic program over (|A|, |B|, Σ_A − Σ_B) held as bitsets.

Each table cell is a Python integer whose bit x says "this difference is reachable"; adding a
unit to A shifts a cell left by its weight, adding it to B shifts right. The cost grows with
units × k² × the spread of the ratings, not with the number of splits, so it is the exact
method that backs the heuristic up when the parity bound cannot prove the heuristic's answer.
When everyone plays (2k players in all) one count suffices: choose A, and B is the rest.

The tables of every step are kept to read one optimal split back; `budget_bytes` caps that
memory, and the solver falls back to its heuristic answer (not proven) beyond it.
"""

from __future__ import annotations

from collections.abc import Sequence

from synelo.balance.problem import BENCH, A, B, Problem, Unit


def exact_assignment(
    problem: Problem, prefer: Sequence[int], budget_bytes: int = 256 << 20
) -> list[int] | None:
    """F7: a placement (A, B or BENCH per unit) with minimal |Σ_A − Σ_B|, or None past budget.

    Among optimal placements, each unit is given its `prefer`red place whenever the table
    still allows an optimal split with it, deciding from the lightest unit up.
    """
    units = problem.units
    if sum(u.size for u in units) == 2 * problem.k:
        total = sum(u.weight for u in units)
        chosen = choose(
            units,
            problem.k,
            [True] * len(units),
            total,
            [p == A for p in prefer],
            budget_bytes,
            everyone=True,
        )
        return None if chosen is None else [A if c else B for c in chosen]
    return _with_bench(problem, prefer, budget_bytes)


def choose(
    units: Sequence[Unit],
    k: int,
    allowed: Sequence[bool],
    twice_target: float,
    prefer_take: Sequence[bool],
    budget_bytes: int = 64 << 20,
    everyone: bool = False,
) -> list[bool] | None:
    """Units with k players in all whose weight is nearest twice_target / 2.

    Units not `allowed` are left out; must units that are allowed are always taken (unless
    `everyone`, where the units not taken form the other team and so play anyway). Returns a
    take flag per unit, or None when no choice exists or the tables would pass the budget.
    With `everyone`, the distance is measured as |2x − twice_target| for the taken weight x.
    The target may be fractional (an all-play split's W12 target is any real number).
    """
    pool = [i for i in range(len(units)) if allowed[i]]
    top = sum(units[i].weight for i in pool)
    if len(pool) * (k + 1) * (top // 8 + 16) > budget_bytes:
        return None
    table = [0] * (k + 1)  # table[a]: bit x set if a players from the pool can weigh x
    table[0] = 1
    steps = []
    seen, left = 0, sum(units[i].size for i in pool)
    for i in pool:
        u = units[i]
        steps.append(table)
        seen, left = seen + u.size, left - u.size
        table = table[:] if everyone or not u.must else [0] * (k + 1)
        # Counts that can no longer reach k, or not be reached yet, are never read back.
        for a in range(min(k, seen), max(u.size, k - left) - 1, -1):
            if steps[-1][a - u.size]:
                table[a] |= steps[-1][a - u.size] << u.weight
    if not table[k]:
        return None
    x = _nearest(table[k], twice_target)
    take = [False] * len(units)
    a = k
    for step, i in zip(reversed(steps), reversed(pool), strict=True):
        u = units[i]
        can_take = a >= u.size and x >= u.weight and (step[a - u.size] >> (x - u.weight)) & 1
        can_skip = (everyone or not u.must) and (step[a] >> x) & 1
        if can_take and (prefer_take[i] or not can_skip):
            take[i] = True
            a, x = a - u.size, x - u.weight
    return take


def _with_bench(problem: Problem, prefer: Sequence[int], budget: int) -> list[int] | None:
    k, units = problem.k, problem.units
    heaviest = sorted((u.weight for u in units), reverse=True)
    offset = sum(heaviest[:k])  # no side of k players can weigh more
    if len(units) * (k + 1) ** 2 * (offset // 4 + 16) > budget:
        return None
    steps, x = _bench_tables(problem, offset)
    place = [BENCH] * len(units)
    a = b = k
    for i in range(len(units) - 1, -1, -1):
        u, before = units[i], steps[i]
        options = []
        if not u.must and _has(before, a, b, x):
            options.append(BENCH)
        if a >= u.size and x >= u.weight and _has(before, a - u.size, b, x - u.weight):
            options.append(A)
        if b >= u.size and _has(before, a, b - u.size, x + u.weight):
            options.append(B)
        where = prefer[i] if prefer[i] in options else options[0]
        place[i] = where
        if where == A:
            a, x = a - u.size, x - u.weight
        elif where == B:
            b, x = b - u.size, x + u.weight
    return place


def _bench_tables(problem: Problem, offset: int) -> tuple[list[list[list[int]]], int]:
    """The (a, b) tables, each cell a Python integer whose bit d + offset says d is reachable."""
    k = problem.k
    table = [[0] * (k + 1) for _ in range(k + 1)]  # table[a][b]: bit d + offset
    table[0][0] = 1 << offset
    steps = []
    for u in problem.units:
        steps.append(table)
        table = [row[:] for row in table]
        s, w = u.size, u.weight
        for a in range(k, -1, -1):
            row = table[a]
            for b in range(k, -1, -1):
                cell = 0 if u.must else row[b]
                if a >= s and table[a - s][b]:
                    cell |= table[a - s][b] << w
                if b >= s and row[b - s]:
                    cell |= row[b - s] >> w
                row[b] = cell
    return steps, _nearest(table[k][k], 2 * offset)


def _has(step: list[list[int]], a: int, b: int, x: int) -> bool:
    return x >= 0 and bool((step[a][b] >> x) & 1)


def _nearest(bits: int, twice_center: float) -> int:
    """The set bit x of `bits` with the least |2x − twice_center| (the lower one on a tie);
    twice_center need not be whole."""
    if twice_center < 0:
        return (bits & -bits).bit_length() - 1
    lo, hi = int(twice_center // 2), -int(-twice_center // 2)  # ⌊c/2⌋ and ⌈c/2⌉
    above = bits >> hi
    up = hi + (above & -above).bit_length() - 1 if above else None
    down = (bits & ((2 << lo) - 1)).bit_length() - 1
    if down < 0:
        return up  # type: ignore[return-value]
    if up is None or abs(2 * down - twice_center) <= abs(2 * up - twice_center):
        return down
    return up


PREFERENCE_UNITS = 14  # beyond this many units the preference is left to the search


def preferred_assignment(  # noqa: C901
    problem: Problem, gap: int, prefer: str, beat: int | None = None, budget_states: int = 4_000
) -> tuple[list[int] | None, int] | None:
    """Among splits with |Σ_A − Σ_B| = gap, the one `prefer` wants, exactly; None past budget.

    "stay" minimises and "mix" maximises the moved players, counted in whichever naming of
    the present teams moves fewer (renaming A and B moves nobody). The program carries, with
    each reachable (|A|, |B|) and Σ_A − Σ_B, the players moved so far under either naming.
    Differences that the remaining units can no longer bring back to ±gap are dropped, and
    for "stay" so are states that already move `beat` players or more under both namings.
    Returns the placement and its moved count, or (None, beat) when no split moves fewer
    than `beat`.
    """
    k, units = problem.k, problem.units
    if len(units) > PREFERENCE_UNITS:
        return None
    offset = sum(sorted((u.weight for u in units), reverse=True)[:k])
    left = [0] * (len(units) + 1)  # weight of the units after i
    for i in range(len(units) - 1, -1, -1):
        left[i] = left[i + 1] + units[i].weight
    table: dict[tuple[int, int, int, int], int] = {(0, 0, 0, 0): 1 << offset}
    steps = []
    work = 0
    for i, u in enumerate(units):
        steps.append(table)
        work += len(table)
        if work > budget_states:
            return None
        reach = gap + left[i + 1]
        low = max(offset - reach, 0)
        window = ((1 << (offset + reach - low + 1)) - 1) << low
        grown: dict[tuple[int, int, int, int], int] = {}
        for (a, b, m, n), bits in table.items():
            for key, moved in _placements(u, k, a, b, m, n):
                if prefer == "stay" and beat is not None and min(key[2], key[3]) >= beat:
                    continue
                bits_then = (
                    bits << u.weight if moved == A else bits >> u.weight if moved == B else bits
                ) & window
                if bits_then:
                    grown[key] = grown.get(key, 0) | bits_then
        table = grown
    ends = [
        (min(m, n), (a, b, m, n), x)
        for (a, b, m, n), bits in table.items()
        if a == b == k
        for x in {offset - gap, offset + gap}
        if x >= 0 and (bits >> x) & 1
    ]
    if not ends:
        return None, beat  # type: ignore[return-value]  # nothing beats `beat`: it is optimal
    moved, state, x = (min if prefer == "stay" else max)(ends, key=lambda e: (e[0], e[1], e[2]))
    place = [BENCH] * len(units)
    for i in range(len(units) - 1, -1, -1):
        u, before = units[i], steps[i]
        a, b, m, n = state
        for where, prev, px in (
            (BENCH, (a, b, m - u.moves[BENCH], n - u.moves[BENCH]), x),
            (A, (a - u.size, b, m - u.moves[A], n - u.moves[B]), x - u.weight),
            (B, (a, b - u.size, m - u.moves[B], n - u.moves[A]), x + u.weight),
        ):
            if where == BENCH and u.must:
                continue
            if px >= 0 and (before.get(prev, 0) >> px) & 1:
                place[i], state, x = where, prev, px
                break
    return place, moved


def _placements(
    u: Unit, k: int, a: int, b: int, m: int, n: int
) -> list[tuple[tuple[int, int, int, int], int]]:
    """The states a unit can lead to: (|A|, |B|, moved as named, moved if renamed), place."""
    out = []
    if not u.must:
        out.append(((a, b, m + u.moves[BENCH], n + u.moves[BENCH]), BENCH))
    if a + u.size <= k:
        out.append(((a + u.size, b, m + u.moves[A], n + u.moves[B]), A))
    if b + u.size <= k:
        out.append(((a, b + u.size, m + u.moves[B], n + u.moves[A]), B))
    return out
