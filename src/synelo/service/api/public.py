"""Read-only endpoints for what players and community websites look at: the public pools,
their leaderboards, players, rounds and health figures, with the visibility rules every
public page keeps.

A public pool (`public: true`) answers anyone: with CORS for any origin, an ETag (a repeat
with If-None-Match gets 304) and a short public cache lifetime, under a per-address rate
limit of their own (SYNELO_RATE_PUBLIC_REQUESTS). A private pool answers only a valid token
(a game server's, for its `!top`, or an admin's); without one it is as unknown as a pool
that does not exist, so that its name leaks nothing. Either way the lists leave out players
still in the shadow period, stale ones and those an admin hid, and a provisional player's
rating is never shown.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, HTTPException, Path, Query, Request, Response
from pydantic import AfterValidator, BaseModel
from starlette.concurrency import run_in_threadpool

from synelo.domain import Pool, PoolQuality, UnknownPool
from synelo.models import MODELS
from synelo.ratings.brier import BRIER_TARGET
from synelo.ratings.distribution import equal_bins
from synelo.schemas import (
    POOL_NAME,
    HealthBinOut,
    HealthBlockOut,
    HealthDayOut,
    HealthSpreadOut,
    HealthThetaOut,
    PublicBoardOut,
    PublicHealthOut,
    PublicHistoryOut,
    PublicPlayerOut,
    PublicPoolOut,
    PublicPoolsOut,
    PublicRoundOut,
    RatingBinsOut,
    storable,
)
from synelo.service.api import reports
from synelo.service.api.responses import COMMON
from synelo.service.api.views import (
    BARS,
    TREND,
    board_search,
    public_entries,
    public_player,
    public_round,
    shown_entries,
)
from synelo.service.auth import may_use, require
from synelo.service.deps import StoreDep
from synelo.service.ids import normalize_id
from synelo.service.params import PlayerPathId, RoundPathId
from synelo.store.repository import Store

NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "If-None-Match named the answer's ETag: nothing changed"}
}
router = APIRouter(prefix="/v1/public", tags=["public"], responses={**COMMON, **NOT_MODIFIED})
HISTORY_MAX = 500  # journal entries one history answer gives at most
PUBLIC_MAX_AGE_S = 15  # how long a browser or proxy may keep a public answer
MAX_SEARCH = 64

PoolName = Annotated[str, Path(description="pool name", pattern=POOL_NAME)]


async def readable_pool(request: Request, name: str) -> Pool:
    """The pool if this request may read it: a public pool always, a private one with a
    valid token that may use it (every token but a server token scoped to other pools);
    otherwise 404, as for a pool that does not exist. A request that carries a token has
    it checked first, whatever the pool (401 for an invalid one), so that the answer never
    tells a private pool from an unknown one; one query answers whether the pool exists
    and whether this reader may see it, so that its time does not either."""
    token = bool(request.headers.get("authorization"))
    if token:
        await require("server")(request)
    private = token and may_use(request, name)
    store: Store = request.app.state.store
    pool = await run_in_threadpool(store.visible_pool, name, private)  # as it stands, not cached
    if pool is None:
        raise HTTPException(404, f"no public pool named {name!r}")
    return pool


def cached(request: Request, answer: BaseModel, pool: Pool | None) -> Response:
    """`answer` as JSON with its ETag (304 when the client has it already), cacheable by
    anyone and open to every origin for a public pool (or the list of them), private
    otherwise."""
    body = orjson.dumps(answer.model_dump(mode="json"))
    tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    public = pool is None or pool.public
    headers = {
        "ETag": tag,
        "Cache-Control": f"public, max-age={PUBLIC_MAX_AGE_S}" if public else "private, no-cache",
        "Vary": "Authorization",
    }
    if public:
        headers["Access-Control-Allow-Origin"] = "*"
        headers["Access-Control-Expose-Headers"] = "ETag"
    given = request.headers.get("if-none-match", "")
    # weak comparison (RFC 9110): a proxy that compresses may have marked the tag W/
    if tag in (t.strip().removeprefix("W/") for t in given.split(",")) or given.strip() == "*":
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


def _exact(request: Request, pool: Pool) -> bool:
    """Whether the request carried a token (checked by readable_pool) that may use the
    pool: its reader may see exact chances, a game server or an admin who can look the
    ratings up anyway (a server token scoped to other pools cannot)."""
    return bool(request.headers.get("authorization")) and may_use(request, pool.name)


async def listed_player(
    request: Request, store: StoreDep, pool: str, steam_id: str
) -> tuple[Pool, PublicPlayerOut]:
    """The pool as it stands and a player of it as public answers show them; 404 for a
    hidden player, as for one never rated."""
    found = await readable_pool(request, pool)
    key = normalize_id(steam_id, found.player_ids, ("path", "steam_id"))
    found, rows = await run_in_threadpool(store.read_players, found, [key])
    row = rows.get(key)
    if row is None or row.hidden:
        raise HTTPException(404, f"no player {key} in pool {found.name!r}")
    place = await run_in_threadpool(store.public_place, found, row)
    return found, public_player(row, found, place)


@router.get("/pools", response_model=PublicPoolsOut)
def public_pools(request: Request, store: StoreDep) -> Response:
    """The public pools, with their model, rounds rated and players active this week."""
    found = store.pools_with_activity(only_public=True)
    answer = PublicPoolsOut(
        pools=[
            PublicPoolOut(
                name=pool.name,
                model=pool.model,
                rating=MODELS[pool.model].display,
                rounds=pool.rated,
                active_week=active,
            )
            for pool, active in found
        ]
    )
    return cached(request, answer, None)


@router.get(
    "/pools/{pool}/leaderboard",
    response_model=PublicBoardOut,
)
async def public_leaderboard(
    request: Request,
    store: StoreDep,
    pool: PoolName,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    search: Annotated[
        str | None, Query(min_length=1, max_length=MAX_SEARCH), AfterValidator(storable)
    ] = None,
) -> Response:
    """One page of the pool's board: players past the shadow period, not stale and not
    hidden, by rating, each with their place; `search` keeps those whose id or name
    contains it (their places stay the board's)."""
    found = await readable_pool(request, pool)
    found, total, page = await run_in_threadpool(
        store.public_board, found, offset, limit, board_search(found, search)
    )
    trends = await run_in_threadpool(store.trends, found, [r.player_key for _, r in page], TREND)
    ratings = await run_in_threadpool(store.board_ratings, found)
    answer = PublicBoardOut(
        pool=found.name,
        shadow_rounds=found.params.t_shadow,
        total=total,
        offset=offset,
        players=[public_player(row, found, place) for place, row in page],
        trends=trends,
        histogram=RatingBinsOut(**equal_bins(ratings, BARS)._asdict()),
    )
    return cached(request, answer, found)


@router.get(
    "/pools/{pool}/players/{steam_id}",
    response_model=PublicPlayerOut,
)
async def public_player_page(
    request: Request, store: StoreDep, pool: PoolName, steam_id: PlayerPathId
) -> Response:
    """A player of the pool: rating and place once past the shadow period, "provisional"
    and the rounds left before. A hidden player is as unknown as one never rated."""
    found, shown = await listed_player(request, store, pool, steam_id)
    return cached(request, shown, found)


@router.get("/pools/{pool}/players/{steam_id}/history", response_model=PublicHistoryOut)
async def public_history(
    request: Request,
    store: StoreDep,
    pool: PoolName,
    steam_id: PlayerPathId,
    limit: Annotated[int, Query(ge=1, le=HISTORY_MAX)] = 100,
) -> Response:
    """A player's rating history, newest first (rounds, an admin's sets and resets), and
    the rounds of theirs an admin voided; while provisional, no rating in it."""
    found, player = await listed_player(request, store, pool, steam_id)
    entries = await run_in_threadpool(store.history, found, player.steam_id, limit)
    voids = await run_in_threadpool(store.voided_rounds_of, found, player.steam_id)
    answer = PublicHistoryOut(
        player=player,
        entries=public_entries(shown_entries(found, entries), player, exact=_exact(request, found)),
        voided=[void.round_id for void in voids],
    )
    return cached(request, answer, found)


@router.get("/pools/{pool}/rounds/{round_id}", response_model=PublicRoundOut)
async def public_round_answer(
    request: Request, store: StoreDep, pool: PoolName, round_id: RoundPathId
) -> Response:
    """A round: both teams with names, team A's predicted chance, the result and each
    shown player's rating before and after."""
    found = await readable_pool(request, pool)
    view = await run_in_threadpool(store.round_view, found, round_id)
    if view is None:
        raise HTTPException(404, f"no round {round_id!r} in pool {found.name!r}")
    return cached(request, public_round(view, exact=_exact(request, found)), found)


@router.get("/pools/{pool}/health", response_model=PublicHealthOut)
async def public_health(
    request: Request,
    pool: Annotated[str, Path(pattern=POOL_NAME)],  # as it was documented: no description
) -> Response:
    """The figures of the pool's health page: F6 by blocks, the reliability bins, K or
    the uncertainty, Θ, and the rounds of each day (voided rounds in none of them)."""
    found = await readable_pool(request, pool)
    try:
        context, behind = await reports.pool_figures(request, found)
    except UnknownPool:  # deleted meanwhile
        raise HTTPException(404, f"no public pool named {pool!r}") from None
    shown: Pool = context["pool"]
    quality: PoolQuality = context["quality"]
    spread = context["spread"]
    answer = PublicHealthOut(
        pool=shown.name,
        model=shown.model,
        as_of_round=shown.rounds,
        behind=behind,
        rounds=context["rounds"],
        voided=shown.voided,
        brier_target=BRIER_TARGET,
        brier_all=quality.brier_all,
        brier_recent=quality.brier_recent,
        blocks=[HealthBlockOut(**asdict(b)) for b in context["blocks"]],
        reliability=[
            HealthBinOut(
                low=b.low,
                high=b.high,
                rounds=b.rounds,
                predicted=b.predicted if b.rounds else None,
                observed=b.observed if b.rounds else None,
            )
            for b in context["bins"]
        ],
        spread=None
        if spread is None
        else HealthSpreadOut(
            name=context["spread_key"], players=context["spread_players"], **spread
        ),
        theta=HealthThetaOut(**context["theta"]),
        rounds_per_day=[HealthDayOut(day=d, rounds=n) for d, n in context["days"]],
    )
    return cached(request, answer, found)
