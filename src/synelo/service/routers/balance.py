"""Scramble splits and mid-round autobalance, on the pool's current ratings."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Request

from synelo.balance import best_splits, min_swaps, place_joiner, transfer_moves
from synelo.balance.autobalance import Move, Rebalance
from synelo.schemas import (
    AutobalanceIn,
    AutobalanceOut,
    MoveOut,
    SplitOut,
    SplitsIn,
    SplitsOut,
)
from synelo.service.deps import PoolDep, ServerAuth, StoreDep
from synelo.service.ids import Loc, invalid, normalize_ids
from synelo.store.typedefs import Pool

router = APIRouter(prefix="/v1/pools/{pool}", tags=["balance"])


class Roster:
    """The players of one request, their indices, and checks that name the field at fault."""

    def __init__(self, pool: Pool, keys: Sequence[str]) -> None:
        self.pool, self.keys = pool, list(keys)
        self.index = {k: i for i, k in enumerate(self.keys)}

    def members(
        self,
        values: Sequence[object],
        loc: Loc,
        seen: dict[str, Loc] | None = None,
        where: str = "players",
    ) -> list[int]:
        """Indices of `values`, each of which must be one of the roster's players."""
        keys = normalize_ids(values, self.pool.player_ids, loc, seen)
        for i, key in enumerate(keys):
            if key not in self.index:
                raise invalid((*loc, i), f"player {key} is not in {where}", value=values[i])
        return [self.index[k] for k in keys]

    def parties(self, parties: Sequence[Sequence[object]], where: str) -> list[list[int]]:
        seen: dict[str, Loc] = {}
        return [self.members(p, ("body", "parties", j), seen, where) for j, p in enumerate(parties)]

    def ratings(self, store: StoreDep) -> list[int]:
        """Current ratings; players the pool has never seen count at R_0."""
        rows = store.lookup(self.pool, self.keys)
        r0 = self.pool.params.r0
        return [rows[k].rating if k in rows else r0 for k in self.keys]


@router.post("/splits", response_model=SplitsOut, dependencies=[ServerAuth])
def splits(pool: PoolDep, body: SplitsIn, store: StoreDep, request: Request) -> SplitsOut:
    """The best split for every team size from min_k to max_k (F7, exact up to N_max)."""
    roster = Roster(pool, normalize_ids(body.players, pool.player_ids, ("body", "players")))
    n = len(roster.keys)
    current = None
    if body.current is not None:
        seen: dict[str, Loc] = {}
        current = (
            roster.members(body.current.A, ("body", "current", "A"), seen),
            roster.members(body.current.B, ("body", "current", "B"), seen),
        )
    parties = roster.parties(body.parties, "players")
    must = roster.members(body.must_play, ("body", "must_play"))
    max_k = n // 2 if body.max_k is None else body.max_k
    if 2 * max_k > n:
        raise invalid(
            ("body", "max_k"),
            f"team size {max_k} needs {2 * max_k} players; {n} were given",
            value=body.max_k,
        )
    if body.min_k > max_k:
        raise invalid(
            ("body", "min_k"), f"min_k {body.min_k} is larger than max_k {max_k}", value=body.min_k
        )
    if len(must) > 2 * max_k:
        raise invalid(
            ("body", "must_play"),
            f"{len(must)} players must play but the largest team size ({max_k}) seats {2 * max_k}",
            value=len(must),
        )
    settings = request.app.state.settings
    result = best_splits(
        roster.ratings(store),
        theta=pool.params.theta,
        min_k=body.min_k,
        max_k=max_k,
        must_play=must,
        parties=parties,
        current=current,
        prefer=body.prefer,
        n_max=settings.n_max,
        budget_s=settings.balance_budget_ms / 1000,
    )
    keys = roster.keys
    return SplitsOut(
        solver=result.solver,
        elapsed_ms=round(result.elapsed_ms, 3),
        splits=[
            SplitOut(
                k=s.k,
                A=[keys[i] for i in s.a],
                B=[keys[i] for i in s.b],
                bench=[keys[i] for i in s.bench],
                sum_a=int(s.sum_a),
                sum_b=int(s.sum_b),
                gap=int(s.gap),
                p_a=s.p_a,
                optimal=s.optimal,
                moved=s.moved,
                moved_optimal=s.moved_optimal,
                split_parties=[[keys[i] for i in p] for p in s.split_parties],
            )
            for s in result.splits
        ],
    )


@router.post("/autobalance", response_model=AutobalanceOut, dependencies=[ServerAuth])
def autobalance(pool: PoolDep, body: AutobalanceIn, store: StoreDep) -> AutobalanceOut:
    """Moves that fix a mid-round imbalance: the odd joiner and F11, or NS2 Hive's pair swaps
    (`min_swaps`)."""
    kind = pool.player_ids
    seen: dict[str, Loc] = {}
    team_a = normalize_ids(body.teams.A, kind, ("body", "teams", "A"), seen)
    team_b = normalize_ids(body.teams.B, kind, ("body", "teams", "B"), seen)
    joiner = normalize_ids([body.joiner], kind, ("body", "joiner"), seen) if body.joiner else ()
    if body.unassigned and body.method != "min_swaps":
        raise invalid(
            ("body", "unassigned"),
            "unassigned players are placed by min_swaps; use joiner with f11",
            value=body.unassigned,
        )
    new = normalize_ids(body.unassigned, kind, ("body", "unassigned"), seen)
    roster = Roster(pool, [*team_a, *team_b, *joiner, *new])
    if not roster.keys:
        raise invalid(("body", "teams"), "no players were given")
    where = "teams, joiner or unassigned"
    locked = set(roster.members(body.locked, ("body", "locked"), where=where))
    parties = roster.parties(body.parties, where)
    ratings = roster.ratings(store)
    a = list(range(len(team_a)))
    b = list(range(len(a), len(a) + len(team_b)))
    gap_before = abs(sum(ratings[i] for i in a) - sum(ratings[i] for i in b))
    placed: list[Move] = []
    if body.method == "min_swaps":
        extra = list(range(len(a) + len(b), len(roster.keys)))
        outcome = min_swaps(ratings, a, b, unassigned=extra, locked=locked, parties=parties)
    else:
        if joiner:
            j = len(a) + len(b)
            side = place_joiner(ratings, a, b, j)
            (a if side == "A" else b).append(j)
            placed.append(Move(j, "none", side))
        outcome = transfer_moves(ratings, a, b, locked=locked, parties=parties)
    return _answer(body.method, roster.keys, placed, gap_before, outcome)


def _answer(
    method: str, keys: Sequence[str], placed: list[Move], gap_before: int, outcome: Rebalance
) -> AutobalanceOut:
    """The moves in order (a placed joiner first); gap_before is the teams as given."""
    moves = [
        MoveOut(steam_id=keys[m.player], **{"from": m.from_team}, to=m.to_team)
        for m in (*placed, *outcome.moves)
    ]
    return AutobalanceOut(
        method=method,
        moves=moves,
        gap_before=gap_before,
        gap_after=int(outcome.gap_after),
        sum_a=int(outcome.sum_a),
        sum_b=int(outcome.sum_b),
        size_a=outcome.size_a,
        size_b=outcome.size_b,
    )
