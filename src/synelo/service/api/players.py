"""Player lookups (server) and admin changes: set, reset, history, leaderboard."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from synelo.ratings import is_stale
from synelo.schemas import (
    HiddenIn,
    HistoryOut,
    JournalOut,
    LeaderboardOut,
    LeaderOut,
    LookupIn,
    LookupOut,
    PlayerOut,
    RatingIn,
)
from synelo.service.api import actions
from synelo.service.api.responses import COMMON
from synelo.service.api.views import player_out
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep, ServerAuth, StoreDep
from synelo.service.ids import invalid, normalize_id
from synelo.service.params import PlayerPathId, ReasonQuery

router = APIRouter(prefix="/v1/pools/{pool}", tags=["players"], responses=COMMON)


@router.get("/players/{steam_id}", response_model=PlayerOut, dependencies=[ServerAuth])
def get_player(pool: PoolDep, steam_id: PlayerPathId, store: StoreDep) -> PlayerOut:
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    pool, found = store.read_players(pool, [key])
    place = store.public_places(pool, [key]).get(key)
    return player_out(key, found.get(key), pool, store, place)


@router.post("/players/lookup", response_model=LookupOut, dependencies=[ServerAuth])
def lookup_players(pool: PoolDep, body: LookupIn, store: StoreDep, request: Request) -> LookupOut:
    """Up to 256 players at once; `names` records their display names, and a name that
    changes one is logged in the pool's admin log as a "rename" by the token's holder."""
    keys = list(
        dict.fromkeys(
            normalize_id(v, pool.player_ids, ("body", "steam_ids", i))
            for i, v in enumerate(body.steam_ids)
        )
    )
    names: dict[str, str] = {}
    for raw, name in (body.names or {}).items():
        key = normalize_id(raw, pool.player_ids, ("body", "names", raw))
        if key not in keys:
            raise invalid(("body", "names", raw), f"player {key} is not in steam_ids", value=raw)
        names[key] = name
    store.save_names(pool, names, actor(request))
    pool, found = store.read_players(pool, keys)
    places = store.public_places(pool, keys)
    return LookupOut(
        shadow_rounds=pool.params.t_shadow,
        players=[player_out(k, found.get(k), pool, store, places.get(k)) for k in keys],
    )


@router.put("/players/{steam_id}", response_model=PlayerOut, dependencies=[AdminAuth])
def set_rating(
    pool: PoolDep, steam_id: PlayerPathId, body: RatingIn, store: StoreDep, request: Request
) -> PlayerOut:
    """Set a player's rating (an admin change, logged with who and why): it is an event
    among the rounds, which a re-rate and an export's replay apply at its place."""
    return actions.set_rating(store, pool, steam_id, body, actor(request))


@router.delete("/players/{steam_id}", response_model=PlayerOut, dependencies=[AdminAuth])
def reset_player(
    pool: PoolDep,
    steam_id: PlayerPathId,
    store: StoreDep,
    request: Request,
    reason: ReasonQuery = None,
) -> PlayerOut:
    """Reset a player to a new player's rating and 0 rounds (logged, as a set is)."""
    return actions.reset_player(store, pool, steam_id, reason, actor(request))


@router.put(
    "/players/{steam_id}/hidden",
    response_model=PlayerOut,
    dependencies=[AdminAuth],
    responses={404: {"description": "a player the pool has never rated"}},
)
def hide_player(
    pool: PoolDep, steam_id: PlayerPathId, body: HiddenIn, store: StoreDep, request: Request
) -> PlayerOut:
    """Hide a player from the pool's public lists (`hidden: true`), or show them again:
    their rating still counts in rounds and balancing. Logged as a "hide" change."""
    return actions.hide_player(store, pool, steam_id, body, actor(request))


@router.get("/players/{steam_id}/history", response_model=HistoryOut, dependencies=[AdminAuth])
def player_history(
    pool: PoolDep,
    steam_id: PlayerPathId,
    store: StoreDep,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    before: Annotated[
        int | None,
        Query(
            ge=1,
            le=2**63 - 1,
            description="continue after this journal id (the last entry of the previous page)",
        ),
    ] = None,
) -> HistoryOut:
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    entries = [
        JournalOut(
            id=e.id,
            kind=e.kind,
            round_id=e.round_id,
            seq=e.seq,
            team=e.team,
            before=e.before,
            after=e.after,
            delta=e.after - e.before,
            k=e.k,
            p=e.p,
            s=e.s,
            at=e.at,
        )
        for e in store.history(pool, key, limit, before)
    ]
    return HistoryOut(steam_id=key, name=store.name_of(pool, key), entries=entries)


@router.get("/leaderboard", response_model=LeaderboardOut, dependencies=[AdminAuth])
def leaderboard(
    pool: PoolDep, store: StoreDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> LeaderboardOut:
    now = store.clock()
    pool, rows = store.leaderboard(pool, limit)
    return LeaderboardOut(
        players=[
            LeaderOut(
                rank=i,
                steam_id=r.player_key,
                name=r.name,
                rating=r.rating,
                rounds_played=r.rounds_played,
                stale=is_stale(r.last_played, now, pool.params),
                last_played=r.last_played,
            )
            for i, r in enumerate(rows, start=1)
        ]
    )
