"""Team changes during a round: the odd joiner, F11 and NS2 Hive's minimal-swap rebalance.

All three take the present teams and answer with moves, never a new split: players keep the
side they chose unless moving them is what balances the round. Ratings may be floats; they are
compared as integers at the same resolution as the split solver.

Seed errata fixed here: F11's T = |Σ_A − Σ_B|/2 and "the player closest to T" only hold when
the larger team is also the stronger one. In general moving players M from the larger team L
to the smaller S leaves Σ_L − Σ_S − 2·Σ_M, so the move set is the one whose Σ_M is nearest
(Σ_L − Σ_S)/2 — the design's T, with its sign kept.

Issue 35's "players already dead are preferred" is the dead-first rule of `transfer_moves`:
a transfer of dead players only replaces the best one when its win chance is at most
`DEAD_TOLERANCE` further from ½ (docs/maths/balancing.md, "Dead players first").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from synelo.balance.exact import choose
from synelo.balance.problem import Unit, integer_ratings, scaled
from synelo.ratings.synelo import roster_probability

Team = Literal["A", "B"]
Origin = Literal["A", "B", "none"]
Odds = Callable[[Sequence[int], Sequence[int]], float]  # P(A wins) of teams A, B (indices)

# The dead-first rule's allowance: how much further from ½ than the best transfer's P(A) a
# transfer of dead players only may leave the round (docs/maths/balancing.md).
DEAD_TOLERANCE = 0.02


@dataclass(frozen=True, slots=True)
class Move:
    player: int
    from_team: Origin  # "none" for a player placed from outside the teams
    to_team: Team


@dataclass(frozen=True, slots=True)
class Rebalance:
    """Moves, and the gap before (as the teams stood, placed players excluded) and after."""

    moves: tuple[Move, ...]
    gap_before: float
    gap_after: float
    sum_a: float
    sum_b: float
    size_a: int
    size_b: int


def place_joiner(
    ratings: Sequence[float],
    team_a: Sequence[int],
    team_b: Sequence[int],
    joiner: int,
    resolution: float | None = None,
    *,
    logit: Callable[[Sequence[float], Sequence[float]], float] | None = None,
) -> Team:
    """Odd joiner (SynElo): with equal teams, the side that leaves |Σ_A − Σ_B| smallest, or,
    given a `logit` of two teams' strengths (an all-play model's, or F1u's for a SynElo
    headcount pool), the least |logit P(A)| (W12: k + 1 against k is not even at equal sums
    or means when the model gives the extra player a worth of its own).

    With unequal teams the joiner goes to the smaller one (a joiner that made the sizes differ
    by 2 would only trigger F11). Ties go to the team with the lower sum, then to A.
    """
    ints, step = integer_ratings(ratings, resolution)
    if len(team_a) != len(team_b):
        return "A" if len(team_a) < len(team_b) else "B"
    diff = sum(ints[i] for i in team_a) - sum(ints[i] for i in team_b)
    r = ints[joiner]
    on_a: float = abs(diff + r)
    on_b: float = abs(diff - r)
    if logit is not None:
        a, b, j = ([scaled(ints[i], step) for i in t] for t in (team_a, team_b, [joiner]))
        on_a, on_b = abs(logit(a + j, b)), abs(logit(a, b + j))
    return "A" if (on_a, diff > 0) <= (on_b, diff < 0) else "B"


def transfer_moves(
    ratings: Sequence[float],
    team_a: Sequence[int],
    team_b: Sequence[int],
    *,
    locked: Collection[int] = (),
    parties: Sequence[Collection[int]] = (),
    alive: Collection[int] = (),
    theta: float = 2400.0,
    odds: Odds | None = None,
    tolerance: float = DEAD_TOLERANCE,
    resolution: float | None = None,
    headcount: bool = False,
) -> Rebalance:
    """F11: when |k(A) − k(B)| ≥ 2, move ⌊|Δk|/2⌋ players from the larger team to the smaller.

    The movers are chosen jointly, exactly: their Σ is the reachable one nearest
    (Σ_larger − Σ_smaller)/2, which leaves the least |Σ_A − Σ_B| (for one mover, the player
    closest to the design's T). Locked players and party members stay unless the free players
    are too few: then party members may go, and only then locked players.

    The dead-first rule: when that best transfer moves an `alive` player, the best transfer
    of players not in `alive` (same tier, same objective) is taken instead if its predicted
    |P(A) − ½| is at most the best's plus `tolerance`. P(A) is `odds` of the teams after
    the move, or F1's 1/(1 + exp(−(Σ_A − Σ_B)/Θ)) with `theta`. Otherwise the best stands.

    With `headcount` (a SynElo pool's F1u) and an odd size gap, the teams end k + 1 against
    k, and the movers' Σ_M is the one nearest F1u's even point instead (`f1u_transfer_sum`);
    P(A) is then F1u's too. An even size gap ends at equal sizes, where F1u is F1.
    """
    ints, step = integer_ratings(ratings, resolution)
    a, b = list(team_a), list(team_b)
    big, small, big_name, small_name = (a, b, "A", "B") if len(a) >= len(b) else (b, a, "B", "A")
    count = (len(big) - len(small)) // 2
    moves: list[Move] = []
    if len(big) - len(small) >= 2:
        in_party = {i for party in parties for i in party}
        tiers = (
            [i for i in big if i not in locked and i not in in_party],
            [i for i in big if i not in locked],
            list(big),
        )
        pool = next(t for t in tiers if len(t) >= count)
        sum_big, sum_small = sum(ints[i] for i in big), sum(ints[i] for i in small)
        d = sum_big - sum_small
        if headcount:
            sizes = (len(big) - count, len(small) + count)
            d = round(2 * f1u_transfer_sum(sum_big, sum_small, *sizes, theta / step))

        def nearest(players: list[int]) -> list[int]:
            return [players[j] for j in _nearest_subset([ints[i] for i in players], count, d)]

        movers = nearest(pool)
        dead = [i for i in pool if i not in alive]
        if any(i in alive for i in movers) and len(dead) >= count:
            chance = odds or _f1_odds(ints, step, theta, headcount)

            def off_even(chosen: list[int]) -> float:
                taken = set(chosen)
                stay = [i for i in big if i not in taken]
                gain = [*small, *chosen]
                return abs(chance(*((stay, gain) if big_name == "A" else (gain, stay))) - 0.5)

            spare = nearest(dead)
            if off_even(spare) <= off_even(movers) + tolerance:
                movers = spare
        moves = [Move(i, big_name, small_name) for i in movers]  # type: ignore[arg-type]
    return _outcome(ints, step, a, b, moves)


def min_swaps(
    ratings: Sequence[float],
    team_a: Sequence[int],
    team_b: Sequence[int],
    *,
    unassigned: Sequence[int] = (),
    locked: Collection[int] = (),
    parties: Sequence[Collection[int]] = (),
    resolution: float | None = None,
) -> Rebalance:
    """Seed 001's rebalance: place the unassigned, then the best pair swaps until none helps.

    Unassigned players first even out the team sizes (as far as they can) and are divided
    exactly so that |Σ_A − Σ_B| is least. Then the A/B pair whose swap most reduces the gap is
    swapped, again and again, until no swap reduces it; locked players and party members are
    not swapped. Ties go to the first pair in team order.
    """
    ints, step = integer_ratings(ratings, resolution)
    a, b = list(team_a), list(team_b)
    side = {i: "A" for i in a} | {i: "B" for i in b}
    origin: dict[int, Origin] = dict(side)  # type: ignore[arg-type]
    new = list(unassigned)
    if new:
        d = sum(ints[i] for i in a) - sum(ints[i] for i in b) - sum(ints[i] for i in new)
        even = (len(b) + len(new) - len(a)) / 2  # newcomers to A that would equal the sizes
        options = {min(max(c, 0), len(new)) for c in (int(even), -int(-even // 1))}
        # Σ_A − Σ_B = d + 2·Σ(new on A): choose the count and the players together.
        fits = [
            (
                abs(len(a) + c - len(b) - len(new) + c),
                _nearest_subset([ints[i] for i in new], c, -d),
            )
            for c in sorted(options)
        ]
        best = min(fits, key=lambda f: (f[0], abs(d + 2 * sum(ints[new[j]] for j in f[1]))))
        chosen = set(best[1])
        for j, i in enumerate(new):
            side[i] = "A" if j in chosen else "B"
            origin[i] = "none"
    fixed = set(locked) | {i for party in parties for i in party}
    while True:
        d = sum(ints[i] if s == "A" else -ints[i] for i, s in side.items())
        free_a = [i for i, s in side.items() if s == "A" and i not in fixed]
        free_b = [i for i, s in side.items() if s == "B" and i not in fixed]
        swap = min(
            (
                (abs(d - 2 * (ints[x] - ints[y])), n)
                for n, (x, y) in enumerate((x, y) for x in free_a for y in free_b)
            ),
            default=None,
        )
        if swap is None or swap[0] >= abs(d):
            break
        x, y = divmod(swap[1], len(free_b))
        side[free_a[x]], side[free_b[y]] = "B", "A"
    moves = [Move(i, origin[i], side[i]) for i in side if origin[i] != side[i]]  # type: ignore[arg-type]
    return _outcome(ints, step, a, b, moves)


def _f1_odds(ints: Sequence[int], step: float, theta: float, headcount: bool = False) -> Odds:
    """F1's P(A) = 1/(1 + exp(−(Σ_A − Σ_B)/Θ)) of two teams, by index (F1u's with
    `headcount`: `roster_probability`)."""

    def p_a(x: Sequence[int], y: Sequence[int]) -> float:
        sum_x, sum_y = (scaled(sum(ints[i] for i in t), step) for t in (x, y))
        return roster_probability(sum_x, len(x), sum_y, len(y), theta, headcount)

    return p_a


def f1u_transfer_sum(
    sum_larger: float, sum_smaller: float, n_larger: int, n_smaller: int, theta: float
) -> float:
    """F11 under F1u: the Σ_M of the movers that puts F1u's logit at 0 once the teams are
    n_larger against n_smaller (after the move). F1u's logit is zero when
    (Σ_L − M)/n_L − (Σ_S + M)/n_S = −c, c = Θ·ln(n_L/n_S)/n_L, so
    M = (n_S·Σ_L − n_L·Σ_S + c·n_L·n_S)/(n_L + n_S); at equal sizes, (Σ_L − Σ_S)/2 (F11's T).
    """
    c = theta * math.log(n_larger / n_smaller) / n_larger
    return (n_smaller * sum_larger - n_larger * sum_smaller + c * n_larger * n_smaller) / (
        n_larger + n_smaller
    )


def _nearest_subset(weights: Sequence[int], count: int, twice_target: int) -> list[int]:
    """Indices of `count` weights whose sum is nearest twice_target / 2 (exact)."""
    if count <= 0:
        return []
    low = min(weights)
    units = [Unit((j,), w - low, False, (0, 0, 0), 1) for j, w in enumerate(weights)]
    take = choose(
        units, count, [True] * len(units), twice_target - 2 * count * low, [False] * len(units)
    )
    assert take is not None  # count ≤ len(weights) by construction
    return [j for j, t in enumerate(take) if t]


def _outcome(
    ints: Sequence[int], step: float, a: list[int], b: list[int], moves: Sequence[Move]
) -> Rebalance:
    def scaled(v: int) -> float:
        return v if step == 1.0 else round(v * step, 10)

    before = abs(sum(ints[i] for i in a) - sum(ints[i] for i in b))
    team: Mapping[int, str] = (
        {i: "A" for i in a} | {i: "B" for i in b} | {m.player: m.to_team for m in moves}
    )
    sum_a = sum(ints[i] for i, t in team.items() if t == "A")
    sum_b = sum(ints[i] for i, t in team.items() if t == "B")
    size_a = sum(1 for t in team.values() if t == "A")
    return Rebalance(
        tuple(moves),
        scaled(before),
        scaled(abs(sum_a - sum_b)),
        scaled(sum_a),
        scaled(sum_b),
        size_a,
        len(team) - size_a,
    )
