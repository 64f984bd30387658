"""The public pages: the pools, a pool's leaderboard with its rating distribution, and a
player's page with their rating over time and recent rounds.

They read what the public read endpoints read (`routers.public`), under the same rules: a
public pool only (a private one is a 404 until the admin login exists), players past the
shadow period, not stale and not hidden on the board, no provisional rating anywhere.
"""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import AfterValidator
from starlette.concurrency import run_in_threadpool

from synelo.models import MODELS
from synelo.schemas import POOL_NAME
from synelo.service.deps import StoreDep
from synelo.service.ids import normalize_id
from synelo.service.paths import PlayerPathId, RoundPathId, maybe_storable
from synelo.service.routers.public import public_player
from synelo.store.typedefs import Pool, UnknownPool
from synelo.web.charts import Point, histogram, line_chart

templates = Jinja2Templates(directory=FilePath(__file__).parent / "templates")
# an id as one path segment: a text id or round id may hold / ? # or %
templates.env.filters["segment"] = lambda text: quote(str(text), safe="")
router = APIRouter(include_in_schema=False)
PAGE = 50  # players a leaderboard page lists
HISTORY = 500  # journal entries a player's chart draws, newest last
RECENT = 20  # rounds a player's page lists
PoolName = Annotated[str, Path(pattern=POOL_NAME)]


class NotFound(Exception):
    """A page that is not there: answered as an HTML 404 page, not the API's JSON."""


async def public_pool(request: Request, name: str) -> Pool:
    """The pool, if it is public; NotFound otherwise (as for a pool that does not exist)."""
    store = request.app.state.store
    try:
        pool: Pool = await run_in_threadpool(store.get_pool, name)
    except UnknownPool:
        raise NotFound(f"There is no public pool named {name}.") from None
    if not pool.public:
        raise NotFound(f"There is no public pool named {name}.")
    return pool


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, template, context, status_code=status)


async def not_found_page(request: Request, exc: Exception) -> HTMLResponse:
    """The 404 page (registered for NotFound by the app)."""
    return render(request, "not_found.html", status=404, message=str(exc))


@router.get("/favicon.ico")
async def favicon() -> Response:
    """No icon (the pages name none; this spares browsers that ask anyway a 404)."""
    return Response(status_code=204)


@router.get("/", response_class=HTMLResponse)
async def index(request: Request, store: StoreDep) -> HTMLResponse:
    found = await run_in_threadpool(store.pools_with_activity, True)
    pools = [
        {
            "name": pool.name,
            "model": pool.model,
            "rounds": pool.rated,
            "active_week": active,
        }
        for pool, active in found
    ]
    return render(request, "index.html", pools=pools)


@router.get("/pools/{pool}", response_class=HTMLResponse)
async def leaderboard(
    request: Request,
    store: StoreDep,
    pool: PoolName,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
    q: Annotated[str | None, Query(max_length=64), AfterValidator(maybe_storable)] = None,
) -> HTMLResponse:
    found = await public_pool(request, pool)
    search = q or None
    found, total, rows = await run_in_threadpool(
        store.public_board, found, (page - 1) * PAGE, PAGE, search
    )
    ratings = await run_in_threadpool(store.board_ratings, found)
    pages = max(1, -(-total // PAGE))
    return render(
        request,
        "leaderboard.html",
        pool=found,
        rating_name=MODELS[found.model].display,
        players=[public_player(row, found, place) for place, row in rows],
        total=total,
        page=page,
        pages=pages,
        q=search or "",
        chart=histogram(ratings, 20, f"ratings of the {len(ratings)} players listed"),
    )


@router.get("/pools/{pool}/players/{steam_id}", response_class=HTMLResponse)
async def player(
    request: Request, store: StoreDep, pool: PoolName, steam_id: PlayerPathId
) -> HTMLResponse:
    found = await public_pool(request, pool)
    key = normalize_id(steam_id, found.player_ids, ("path", "steam_id"))
    found, rows = await run_in_threadpool(store.read_players, found, [key])
    row = rows.get(key)
    if row is None or row.hidden:
        raise NotFound(f"Pool {found.name} has no player {key}.")
    place = await run_in_threadpool(store.public_place, found, row)
    shown = public_player(row, found, place)
    entries = await run_in_threadpool(store.history, found, key, HISTORY)
    chart = None
    if not shown.provisional:  # a provisional rating is never shown, not even as a line
        points = [
            Point(
                e.after,
                f"{e.after} after {e.kind} {e.round_id or ''}".strip(),
                marked=e.kind != "round",
            )
            for e in reversed(entries)
        ]
        chart = line_chart(points, f"{shown.name or key}'s rating over their last rounds")
    recent = [e for e in entries if e.kind == "round"][:RECENT]
    return render(
        request,
        "player.html",
        pool=found,
        player=shown,
        chart=chart,
        recent=recent,
        marks=sum(1 for e in entries if e.kind != "round"),
    )


@router.get("/pools/{pool}/rounds/{round_id}", response_class=HTMLResponse)
async def round_page(
    request: Request, store: StoreDep, pool: PoolName, round_id: RoundPathId
) -> HTMLResponse:
    """A round: both teams with names, the predicted chance, the result and each player's
    change (none shown for a provisional or hidden player)."""
    found = await public_pool(request, pool)
    view = await run_in_threadpool(store.round_view, found, round_id)
    if view is None:
        raise NotFound(f"Pool {found.name} has no round {round_id}.")
    changes = {player: (team, before, after) for player, team, before, after in view.changes}
    sides = []
    for side, roster in (("A", view.team_a), ("B", view.team_b)):
        rated = [p for p, (team, _, _) in changes.items() if team == side]
        rows = []
        for player in dict.fromkeys([*roster, *rated]):
            hidden = player in view.hidden
            shown = player in changes and not hidden and player not in view.provisional
            before, after = changes[player][1:] if player in changes else (None, None)
            rows.append(
                {
                    "id": None if hidden else player,
                    "name": "a hidden player" if hidden else view.names.get(player, player),
                    "provisional": player in view.provisional and not hidden,
                    "before": before if shown else None,
                    "after": after if shown else None,
                }
            )
        sides.append({"side": side, "players": rows})
    return render(request, "round.html", pool=found, round=view, sides=sides)
