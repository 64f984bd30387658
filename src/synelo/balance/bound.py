"""The lower bound that lets a heuristic split be proven optimal at once.

Σ_A − Σ_B ≡ Σ_A + Σ_B (mod 2), so the gap of a split has the parity of the ratings it seats.
If every admissible choice of 2k players has an odd sum, no gap below 1 exists; otherwise the
bound is 0. (The bound ignores how the seated players are divided between A and B, which makes
it weaker, never wrong.) A split whose gap equals the bound is optimal.
"""

from __future__ import annotations

from synelo.balance.problem import Problem


def parity_bound(problem: Problem) -> int:
    """0 if some admissible set of 2k seated players has an even rating sum, else 1.

    Parties are searched (seated count, parity); single players only matter by how many odd and
    even ones there are, so they are counted rather than searched.
    """
    seats = 2 * problem.k
    states = {(0, 0)}  # (players seated, parity of their sum) reachable with the parties
    base_count = base_parity = 0
    free = [0, 0]  # optional single players with an even / odd rating
    for u in problem.units:
        parity = (u.weight + problem.shift * u.size) & 1
        if u.size == 1 and u.must:
            base_count += 1
            base_parity ^= parity
        elif u.size == 1:
            free[parity] += 1
        else:
            grown = {(n + u.size, p ^ parity) for n, p in states if n + u.size <= seats}
            states = grown if u.must else states | grown
    for n, p in states:
        rest = seats - base_count - n
        for odd in range(min(free[1], rest) + 1):
            if rest - odd <= free[0] and (p ^ base_parity ^ odd) & 1 == 0:
                return 0
    return 1
