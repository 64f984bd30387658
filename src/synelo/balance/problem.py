"""One split problem in solver terms: parties become units, ratings become integers.

The solver never sees player ids or floats. Ratings are scaled to integers at a stated
resolution (1 for SynElo's integer ratings, hundredths for models that rate in floats), so the
optimum it proves is exact at that resolution. Every party that fits is one unit that goes to A,
to B or to the bench as a whole; a must-play unit may not be benched.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

A, B, BENCH = 0, 1, 2
SIGN = (1, -1, 0)  # what a unit on A, B or the bench adds to Σ_A − Σ_B, per unit of weight


def integer_ratings(ratings: Sequence[float], resolution: float | None) -> tuple[list[int], float]:
    """Ratings as integers and the resolution they are exact at.

    Integer ratings are used as they are (resolution 1). Otherwise each rating is rounded to the
    nearest multiple of `resolution` (default 0.01) and counted in those steps.
    """
    if resolution is None and all(isinstance(r, int) for r in ratings):
        return [int(r) for r in ratings], 1.0
    step = Fraction(str(resolution if resolution is not None else 0.01))
    if step <= 0:
        raise ValueError("resolution must be positive")
    return [round(Fraction(str(r)) / step) for r in ratings], float(step)


def scaled(value: int, step: float) -> float:
    """A count of resolution steps as a rating again."""
    return value if step == 1.0 else round(value * step, 10)


def check_players(
    n: int,
    must_play: Collection[int],
    parties: Sequence[Sequence[int]],
    current: tuple[Collection[int], Collection[int]] | None,
) -> None:
    """ValueErrors, naming the argument, for players outside the pool, overlapping parties
    and a player on both present teams."""
    seen: set[int] = set()
    for name, group in (
        [("must_play", must_play)]
        + [("parties", p) for p in parties]
        + ([("current", current[0]), ("current", current[1])] if current else [])
    ):
        if any(not 0 <= i < n for i in group):
            raise ValueError(f"{name} names a player that is not in the pool")
    for party in parties:
        if seen & set(party) or len(set(party)) != len(party):
            raise ValueError("parties overlap: a player is in two parties")
        seen |= set(party)
    if current and set(current[0]) & set(current[1]):
        raise ValueError("current puts a player on both teams")


@dataclass(frozen=True, slots=True)
class Unit:
    """Players who go to the same place: a party, or one player."""

    members: tuple[int, ...]
    weight: int  # Σ of the members' integer ratings, shifted (see Problem.shift)
    must: bool  # a member must play: the unit may not be benched
    moves: tuple[int, int, int]  # members now on a team who would change team, at A, B, bench
    size: int  # len(members)


@dataclass(frozen=True, slots=True)
class UnitArrays:
    """The units' fields as numpy arrays, for the vectorised search."""

    weight: np.ndarray
    size: np.ndarray
    must: np.ndarray
    moves: np.ndarray  # (units, 3)
    same_size: np.ndarray  # (units, units)
    delta_w: np.ndarray  # (units, units): weight[u] − weight[v]
    teamed: int  # players on a team now
    deal_order: tuple[int, ...]  # must units, then units rated nearest the median
    stay_order: tuple[int, ...]  # must units, then units on a team now, then as deal_order

    @classmethod
    def of(cls, units: Sequence[Unit]) -> UnitArrays:
        weight = np.array([u.weight for u in units], dtype=np.int64)
        size = np.array([u.size for u in units], dtype=np.int64)
        per_player = sorted(u.weight / u.size for u in units)
        median = per_player[len(per_player) // 2] if per_player else 0

        def order(stay: bool) -> tuple[int, ...]:
            return tuple(
                sorted(
                    range(len(units)),
                    key=lambda i: (
                        not units[i].must,
                        not (stay and units[i].moves[BENCH]),
                        abs(units[i].weight / units[i].size - median),
                        i,
                    ),
                )
            )

        return cls(
            weight,
            size,
            np.array([u.must for u in units], dtype=bool),
            np.array([u.moves for u in units], dtype=np.int64).reshape(-1, 3),
            size[:, None] == size[None, :],
            weight[:, None] - weight[None, :],
            sum(u.moves[BENCH] for u in units),
            order(False),
            order(True),
        )


@dataclass(frozen=True, slots=True)
class Problem:
    """Choose units for A and B with k players each; minimise |Σ_A − Σ_B|.

    Weights are shifted by `shift` per player so that none is negative: with k players a side
    the shift cancels in Σ_A − Σ_B, and the bitsets of the exact method stay small.
    """

    k: int
    units: tuple[Unit, ...]  # in scan order: heaviest first, then input order
    shift: int
    split_parties: tuple[tuple[int, ...], ...]  # parties that could not be kept together
    arrays: UnitArrays
    rank: Sequence[int]  # per player: position when sorted strongest first, then input order


def current_sides(n: int, current: tuple[Collection[int], Collection[int]] | None) -> list[int]:
    """Each player's present place (A, B or BENCH for anyone not on a team)."""
    side = [BENCH] * n
    if current is not None:
        for team, members in ((A, current[0]), (B, current[1])):
            for i in members:
                side[i] = team
    return side


class ProblemBuilder:
    """Builds the problem for each team size, reusing units while the same parties hold."""

    def __init__(
        self,
        ratings: Sequence[int],
        must_play: Collection[int],
        parties: Sequence[Sequence[int]],
        now: Sequence[int],
    ) -> None:
        self.ratings, self.must, self.now = ratings, set(must_play), now
        self.parties = sorted(
            (tuple(sorted(p)) for p in parties if len(p) > 1), key=lambda p: (-len(p), p)
        )
        self.low = min(ratings)
        order = sorted(range(len(ratings)), key=lambda i: (-ratings[i], i))
        self.rank = [0] * len(ratings)
        for position, i in enumerate(order):
            self.rank[i] = position
        self._units: dict[tuple[tuple[int, ...], ...], tuple[tuple[Unit, ...], UnitArrays]] = {}

    def for_k(self, k: int) -> Problem | None:
        """The problem for team size k, or None when must_play needs more than 2k players.

        Parties larger than k cannot sit on one team; they are split into single players. If
        the remaining parties still leave no way to seat exactly k a side around the must-play
        players, the largest parties are split, one at a time, until there is one; every split
        party is reported.
        """
        if len(self.must) > 2 * k:
            return None
        split = [p for p in self.parties if len(p) > k]
        kept = [p for p in self.parties if len(p) <= k]
        while True:
            units, arrays = self.units(tuple(kept))
            if _seatable(units, k):
                return Problem(k, units, self.low, tuple(sorted(split)), arrays, self.rank)
            if not kept:  # pragma: no cover - singles always fit when |must| ≤ 2k ≤ N
                return None
            split.append(kept.pop(0))

    def units(self, parties: tuple[tuple[int, ...], ...]) -> tuple[tuple[Unit, ...], UnitArrays]:
        if parties not in self._units:
            units = tuple(
                Unit(u.members, u.weight - self.low * u.size, u.must, u.moves, u.size)
                for u in player_units(self.ratings, self.must, parties, self.now)
            )
            self._units[parties] = units, UnitArrays.of(units)
        return self._units[parties]


def player_units(
    ratings: Sequence[int], must: set[int], parties: Sequence[tuple[int, ...]], now: Sequence[int]
) -> list[Unit]:
    """Every party as one unit and every other player as one, heaviest per player first
    (then by first member), with their moved counts from the present places `now`."""
    grouped: set[int] = set()
    groups: list[tuple[int, ...]] = []
    for party in parties:
        groups.append(tuple(sorted(party)))
        grouped.update(party)
    groups.extend((i,) for i in range(len(ratings)) if i not in grouped)
    units = []
    for members in groups:
        moves = tuple(
            sum(1 for i in members if now[i] != BENCH and now[i] != place)
            for place in (A, B, BENCH)
        )
        units.append(
            Unit(
                members,
                sum(ratings[i] for i in members),
                any(i in must for i in members),
                moves,  # type: ignore[arg-type]
                len(members),
            )
        )
    units.sort(key=lambda u: (-u.weight / u.size, u.members[0]))
    return units


def _seatable(units: Sequence[Unit], k: int) -> bool:
    """Whether A and B can each get exactly k players with every must unit seated.

    Only parties need a search: single players fill whatever seats the parties leave.
    """
    singles = [u for u in units if u.size == 1]
    must_singles = sum(1 for u in singles if u.must)
    # reach[a, b]: the parties seen so far can fill a seats of A and b of B (a table, as
    # sets of pairs cost 100 ms for 32 parties over every team size of 128 players)
    reach = np.zeros((k + 1, k + 1), dtype=bool)
    reach[0, 0] = True
    for u in units:
        if u.size == 1:
            continue
        s = u.size
        grown = np.zeros_like(reach)
        if s <= k:
            grown[s:, :] = reach[:-s, :]
            grown[:, s:] |= reach[:, :-s]
        reach = grown if u.must else reach | grown
    a, b = np.nonzero(reach)
    left = 2 * k - a - b  # seats the single players fill
    return bool(np.any((must_singles <= left) & (left <= len(singles))))
