"""Seed 000's Gosper Partition Enumeration (F8, F9), errata fixed: the benchmark baseline.

Kept as the seed wrote it — two layers of Gosper's hack over bitmasks — with three fixes:
the inner mask starts with k bits (the design's k − 1 gives A k + 1 players and B k − 1); the
outer layer chooses 2k of all N players (anchoring the top player to A wrongly forbids
benching them when 2k < N), the anchor moving to the first chosen player, which keeps the
mirror symmetry; and an exact-zero gap ends the search for that k only, not for every k.
Its cost is exponential, which is why the solver does not use it.
"""

from __future__ import annotations

from collections.abc import Sequence


def gosper_next(x: int) -> int:
    """F8: the next bitmask with the same number of set bits (Gosper's hack)."""
    c = x & -x
    r = x + c
    return (((r ^ x) // c) >> 2) | r


def set_bits(x: int, n: int) -> list[int]:
    return [i for i in range(n) if (x >> i) & 1]


def enumerate_best_split(ratings: Sequence[int], k: int) -> tuple[int, list[int], list[int]]:
    """F9 for one k: the least |Σ_A − Σ_B| over every split of every 2k of the N players."""
    n = len(ratings)
    best: tuple[int, list[int], list[int]] | None = None
    outer = (1 << (2 * k)) - 1
    while outer < (1 << n):
        active = set_bits(outer, n)
        anchor, rest = active[0], active[1:]
        inner = (1 << k) - 1  # k of the other 2k − 1 go to B; the anchor and k − 1 to A
        while inner < (1 << (2 * k - 1)):
            team_b = [rest[i] for i in range(2 * k - 1) if (inner >> i) & 1]
            team_a = [anchor] + [rest[i] for i in range(2 * k - 1) if not (inner >> i) & 1]
            score = abs(sum(ratings[i] for i in team_a) - sum(ratings[i] for i in team_b))
            if best is None or score < best[0]:
                best = (score, team_a, team_b)
                if score == 0:
                    return best
            inner = gosper_next(inner)
        outer = gosper_next(outer)
    assert best is not None
    return best


def enumerate_all(ratings: Sequence[int]) -> dict[int, tuple[int, list[int], list[int]]]:
    """F9 for every k from 2 to ⌊N/2⌋."""
    return {k: enumerate_best_split(ratings, k) for k in range(2, len(ratings) // 2 + 1)}
