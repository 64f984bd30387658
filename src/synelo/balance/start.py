"""Where the search starts: the present teams trimmed or filled to k, or a greedy deal."""

from __future__ import annotations

import numpy as np

from synelo.balance.problem import BENCH, A, B, Problem


def starting_sides(problem: Problem, from_current: bool) -> list[int]:
    """A placement with k players a side and every must-play unit seated.

    From the present teams, units keep their place where it has room (must-play units are
    seated first). Without them, units are dealt to the lighter side that has room, the ones
    rated nearest the median first: a team of typical players is the easiest to match from
    the rest, which is what the search does next. The bench takes what is left. If parties
    leave no exact fit, a fit is searched for.
    """
    k, units = problem.k, problem.units
    room = [k, k]
    total = [0, 0]
    sides = [BENCH] * len(units)
    order = problem.arrays.stay_order if from_current else problem.arrays.deal_order
    for i in order:
        u = units[i]
        teamed = u.moves[BENCH]  # members on a team now
        if from_current and teamed:
            home = A if u.moves[A] <= u.moves[B] else B
            choices = (home, 1 - home)
        else:
            choices = (A, B) if total[A] <= total[B] else (B, A)
        for place in choices:
            if room[place] >= u.size:
                sides[i] = place
                room[place] -= u.size
                total[place] += u.weight
                break
    if room == [0, 0] and all(sides[i] != BENCH for i, u in enumerate(units) if u.must):
        return sides
    return _fitting_sides(problem)


def _fitting_sides(problem: Problem) -> list[int]:
    """Any placement with exactly k a side and the must units seated (parties made it hard).

    reach[i][a, b]: the first i units can fill a seats of A and b of B. Read back from
    (k, k), each unit takes the bench when it may, else A, else B."""
    k, units = problem.k, problem.units
    reach = [np.zeros((k + 1, k + 1), dtype=bool)]
    reach[0][0, 0] = True
    for u in units:
        before, s = reach[-1], u.size
        now = before.copy() if not u.must else np.zeros_like(before)
        if s <= k:
            now[s:, :] |= before[:-s, :]
            now[:, s:] |= before[:, :-s]
        reach.append(now)
    sides = [BENCH] * len(units)
    a = b = k
    for i in range(len(units) - 1, -1, -1):
        u, before = units[i], reach[i]
        if not u.must and before[a, b]:
            sides[i] = BENCH
        elif a >= u.size and before[a - u.size, b]:
            sides[i], a = A, a - u.size
        else:
            sides[i], b = B, b - u.size
    return sides
