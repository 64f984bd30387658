"""Applying a cached split at a scramble: the twin of the plugin's include/synelo/splits.inc.

Arena (the service's "even" splits): the largest cached k v k split whose players are all
still eligible; the eligible players outside it wait to play (the queue is the bench).

Elsewhere (its "all-play" split of everyone, ⌊n/2⌋ against ⌈n/2⌉): the cached split may be
stale by the next round start, so `plan` applies it to the eligible players of the moment
and benches nobody (docs/maths/balancing.md, "Applying a cached all-play split"):

1. its players who left are dropped, the others keep their side;
2. the players it does not know (late joiners) are seated strongest first (rating, then id),
   each on the side with the lower rating sum among those with fewer than ⌈n/2⌉ players
   (equal sums: the side with fewer players, then A);
3. while the sides differ by 2 or more (leavers from one side), the player of the larger side
   whose move leaves the smallest |Σ_A − Σ_B| moves (ties: the lower rating, then the id).

Then the result is named A/B the way that changes fewer players' teams (`named`). The local
fallback split, when nothing usable is cached and the service does not answer, is the same
plan from nobody seated: greedy by cached rating (arena: k v k, the weakest of an odd count
waits), then the best swap of one player of each side, repeated while one makes
|Σ_A − Σ_B| smaller (the seed's heuristic beyond N_max; ties: the lower id on A, then on B).
The service's own split is never swapped: it keeps parties together, which this does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from synelo.game.typedefs import Side, Slot, other

Split = tuple[Sequence[str], Sequence[str]]


def choose(splits: Sequence[Split], eligible: Sequence[str], arena: bool) -> Split | None:
    """The cached split a scramble applies: arena, the largest (k = the smaller side) whose
    players are all eligible, k a side; elsewhere the largest with any player, stale or not."""
    present = set(eligible)
    best: Split | None = None
    for a, b in splits:
        k = min(len(a), len(b))
        usable = len(a) == len(b) and {*a, *b} <= present if arena else bool(a or b)
        if usable and (best is None or k > min(len(best[0]), len(best[1]))):
            best = (a, b)
    return best


def plan(
    split: Split | None,
    eligible: Sequence[str],
    rating: Callable[[str], int],
    bench_odd: bool = False,
) -> dict[str, Slot]:
    """Every eligible player's side once `split` (None: the fallback, nobody seated) is
    applied by the rule above; `bench_odd` (arena's fallback) leaves the weakest of an odd
    count waiting."""
    seat: dict[str, Side] = {}
    if split is not None:
        seat.update((p, "A") for p in split[0])
        seat.update((p, "B") for p in split[1])
    out: dict[str, Slot] = {}
    size = {"A": 0, "B": 0}
    total = {"A": 0, "B": 0}
    joiners = []
    for p in eligible:
        held = seat.get(p)
        if held is None:
            joiners.append(p)
            out[p] = "waiting"
        else:
            out[p] = held
            size[held] += 1
            total[held] += rating(p)
    seats = len(eligible) - 1 if bench_odd and len(eligible) % 2 else len(eligible)
    cap = (seats + 1) // 2
    joiners.sort(key=lambda p: (-rating(p), p))
    for p in joiners[: len(joiners) - (len(eligible) - seats)]:
        side: Side
        if size["A"] >= cap:
            side = "B"
        elif size["B"] >= cap:
            side = "A"
        elif total["A"] != total["B"]:
            side = "A" if total["A"] < total["B"] else "B"
        else:
            side = "B" if size["B"] < size["A"] else "A"
        out[p] = side
        size[side] += 1
        total[side] += rating(p)
    while abs(size["A"] - size["B"]) >= 2:
        src: Side = "A" if size["A"] > size["B"] else "B"
        dst = other(src)
        gap = total[src] - total[dst]
        mover = min(
            (p for p, s in out.items() if s == src),
            key=lambda p: (abs(gap - 2 * rating(p)), rating(p), p),
        )
        out[mover] = dst
        size[src] -= 1
        size[dst] += 1
        total[src] -= rating(mover)
        total[dst] += rating(mover)
    if split is None:
        _improve_by_swaps(out, total["A"] - total["B"], rating)
    return out


def _improve_by_swaps(out: dict[str, Slot], d: int, rating: Callable[[str], int]) -> None:
    """The fallback's last step: the best improving swap of one player of A with one of B,
    while one makes |Σ_A − Σ_B| (`d` = Σ_A − Σ_B) smaller."""
    while True:
        team_a = sorted(p for p, s in out.items() if s == "A")
        team_b = sorted(p for p, s in out.items() if s == "B")
        pairs = [(abs(d - 2 * (rating(a) - rating(b))), a, b) for a in team_a for b in team_b]
        if not pairs:
            return
        gap, a, b = min(pairs)
        if gap >= abs(d):
            return
        out[a], out[b] = "B", "A"
        d -= 2 * (rating(a) - rating(b))


def arena_seats(split: Split, eligible: Sequence[str]) -> dict[str, Slot]:
    """Arena: the split's players on their sides, every other eligible player waiting."""
    out: dict[str, Slot] = dict.fromkeys(eligible, "waiting")
    out.update((p, "A") for p in split[0])
    out.update((p, "B") for p in split[1])
    return out


def named(placed: Mapping[str, Slot], current: Mapping[str, Slot]) -> dict[str, Slot]:
    """`placed` as it is or with A and B swapped: the split is the same either way, and the
    swapped naming is taken when it changes the team of fewer players (ties keep it)."""
    keep = swap = 0
    for p, side in placed.items():
        if side == "A" or side == "B":
            now = current.get(p, "none")
            keep += now != side
            swap += now != other(side)
    if swap >= keep:
        return dict(placed)
    return {p: other(s) if s == "A" or s == "B" else s for p, s in placed.items()}
