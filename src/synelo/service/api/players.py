"""Player lookups (server) and admin changes: set, reset, history, leaderboard."""

from __future__ import annotations

import math
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, HTTPException, Query, Request

from synelo.domain import PlayerRow, Pool, UnknownPool, pool_model
from synelo.models import Model
from synelo.ratings import is_stale, is_visible, k_factor
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
from synelo.service.api.responses import COMMON
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep, ServerAuth, StoreDep
from synelo.service.ids import invalid, normalize_id
from synelo.service.params import PlayerPathId, ReasonQuery

router = APIRouter(prefix="/v1/pools/{pool}", tags=["players"], responses=COMMON)
SET_LIMIT = 1_000_000  # the display ratings an admin may set outside SynElo pools


def ratable(model: Model[Any], rating: int) -> bool:
    """Whether `model` can still predict and rate rounds of a player set to `rating`: within
    the model's `set_span` of a new player (a Gaussian model's package overflows when one
    skill lies too many β from the other), and rated against a new player, won or lost."""
    span = model.set_span()
    if span is not None and abs(rating - model.rating(model.new_state())) > span:
        return False
    try:
        state = model.with_rating(model.new_state(), rating)
        for winner in ("A", "B"):
            rated = model.rate({"set": state}, model.duel("set", "new", winner))
            if not all(math.isfinite(model.rating(s)) for s in rated.states.values()):
                return False
    except (ArithmeticError, ValueError):
        return False
    return True


def settable(pool: Pool, rating: int) -> bool:
    """Whether an admin may set a player of `pool` to `rating`: within SynElo's R_min…R_max,
    or for another model within ±SET_LIMIT and one it can still rate from (`ratable`)."""
    if pool.is_synelo:
        return pool.params.r_min <= rating <= pool.params.r_max
    return -SET_LIMIT <= rating <= SET_LIMIT and ratable(pool_model(pool), rating)


def player_out(
    key: str, row: PlayerRow | None, pool: Pool, store: StoreDep, place: int | None
) -> PlayerOut:
    """A player as the game server sees it, at `place` on the public board (None: not
    listed). Unknown players are new: in SynElo R_0, 0 rounds, C = 1; in another model its
    new player's state."""
    params = pool.params
    if pool.is_synelo:
        if row is None:
            row = PlayerRow(key, params.r0, 0, None, 1.0)
        skill = {
            "convergence": row.convergence,
            "k": k_factor(row.convergence, row.rating, params),
        }
        rating = row.rating
    else:
        model = pool_model(pool)
        state = model.decode(orjson.loads(row.state) if row and row.state else {})
        skill = model.fields(state)
        rating = row.rating if row else round(model.rating(state))
    rounds = row.rounds_played if row else 0
    return PlayerOut(
        steam_id=key,
        name=row.name if row else None,
        rating=rating,
        visible=is_visible(rounds, params),
        rounds_played=rounds,
        stale=is_stale(row.last_played if row else None, store.clock(), params),
        last_played=row.last_played if row else None,
        convergence=skill["convergence"] if pool.is_synelo else None,
        k=skill["k"] if pool.is_synelo else None,
        skill=skill,
        hidden=row.hidden if row else False,
        place=place,
    )


def placed(answer: PlayerOut, pool: Pool, store: StoreDep) -> PlayerOut:
    """An admin write's answer with the player's board place as the write left it: the board
    is read on a connection of its own, which cannot see into the write's transaction, so
    only once that is committed."""
    place = store.public_places(pool, [answer.steam_id]).get(answer.steam_id)
    return answer.model_copy(update={"place": place})


@router.get("/players/{steam_id}", response_model=PlayerOut, dependencies=[ServerAuth])
def get_player(pool: PoolDep, steam_id: PlayerPathId, store: StoreDep) -> PlayerOut:
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    pool, found = store.read_players(pool, [key])
    place = store.public_places(pool, [key]).get(key)
    return player_out(key, found.get(key), pool, store, place)


@router.post("/players/lookup", response_model=LookupOut, dependencies=[ServerAuth])
def lookup_players(pool: PoolDep, body: LookupIn, store: StoreDep) -> LookupOut:
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
    store.save_names(pool, names)
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
    pool = store.get_pool(
        pool.name
    )  # its model and bounds as they stand (a re-rate may change them)
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    low, high = (
        (pool.params.r_min, pool.params.r_max) if pool.is_synelo else (-SET_LIMIT, SET_LIMIT)
    )
    if not low <= body.rating <= high:
        raise invalid(("body", "rating"), f"rating must be within {low}…{high}", value=body.rating)
    if not pool.is_synelo and not ratable(pool_model(pool), body.rating):
        raise invalid(
            ("body", "rating"),
            f"model {pool.model} cannot rate a round from a rating of {body.rating}",
            value=body.rating,
        )
    # the answer is built inside the write's transaction: if it fails, nothing was written
    answer = store.set_rating(
        pool.name,
        key,
        body.rating,
        actor(request),
        body.reason,
        view=lambda pool, row: player_out(key, row, pool, store, None),
    )
    return placed(answer, pool, store)


@router.delete("/players/{steam_id}", response_model=PlayerOut, dependencies=[AdminAuth])
def reset_player(
    pool: PoolDep,
    steam_id: PlayerPathId,
    store: StoreDep,
    request: Request,
    reason: ReasonQuery = None,
) -> PlayerOut:
    """Reset a player to a new player's rating and 0 rounds (logged, as a set is)."""
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    try:
        answer = store.reset_player(
            pool.name,
            key,
            actor(request),
            reason,
            view=lambda pool, row: player_out(key, row, pool, store, None),
        )
        return placed(answer, pool, store)
    except UnknownPool:  # deleted since the request began
        raise HTTPException(404, "unknown pool") from None


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
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))

    def view(current: Pool, row: PlayerRow | None) -> PlayerOut:
        if row is None:
            raise HTTPException(404, f"pool {current.name!r} has never rated player {key}")
        return player_out(key, row, current, store, None)

    try:
        answer = store.set_hidden(
            pool.name, key, body.hidden, actor(request), body.reason, view=view
        )
        return placed(answer, pool, store)
    except UnknownPool:  # deleted since the request began
        raise HTTPException(404, "unknown pool") from None


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
            at=e.created_at,
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
