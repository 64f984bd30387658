"""The public pages: the pools, a pool's leaderboard with its rating distribution, and a
player's page with their rating over time and recent rounds.

They read what the public read endpoints read, shaped by the same functions
(`synelo.service.api.views`), under the same rules: a public pool only (a private one is a
404 until the admin login exists), players past the shadow period, not stale and not hidden
on the board, no provisional rating anywhere.
"""

from __future__ import annotations

import bisect
import itertools
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup
from pydantic import AfterValidator
from starlette.concurrency import run_in_threadpool

from synelo.domain import RatingStep, VoidedRound
from synelo.models import MODELS
from synelo.service.api.views import (
    BARS,
    TREND,
    board_search,
    player_out,
    public_player,
    public_round,
    shown_entries,
)
from synelo.service.charts import Point, histogram, line_chart, ticks_along
from synelo.service.deps import StoreDep
from synelo.service.ids import normalize_id
from synelo.service.pages.access import NotFound, PoolName, admin_session, public_pool
from synelo.service.pages.glossary import explained
from synelo.service.pages.templating import render
from synelo.service.params import PlayerPathId, RoundPathId, maybe_storable

router = APIRouter(include_in_schema=False)
PAGE = 50  # players a leaderboard page lists
HISTORY = 3_000  # journal entries a player's chart covers at most (2,000 rounds and more)
CHART_POINTS = 500  # points it draws at most: a longer history is sampled evenly
RECENT = 20  # rounds a player's page lists
Event = tuple[float, str]  # a chart's vertical mark: where (a fractional point index), what


@router.get("/favicon.ico")
async def favicon() -> Response:
    """No icon (the pages name none; this spares browsers that ask anyway a 404)."""
    return Response(status_code=204)


@router.get("/", response_class=HTMLResponse)
async def index(request: Request, store: StoreDep) -> HTMLResponse:
    """The pools: the public ones, or every pool for a logged-in admin."""
    admin = await admin_session(request)
    found = await run_in_threadpool(store.pools_with_activity, admin is None)
    pools = [
        {
            "name": pool.name,
            "model": pool.model,
            "rounds": pool.rated,
            "active_week": active,
            "public": pool.public,
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
        store.public_board, found, (page - 1) * PAGE, PAGE, board_search(found, search)
    )
    ratings = await run_in_threadpool(store.board_ratings, found)
    trends = await run_in_threadpool(store.trends, found, [r.player_key for _, r in rows], TREND)
    admin = await admin_session(request)
    hidden = await run_in_threadpool(store.hidden_players, found) if admin else []
    pages = max(1, -(-total // PAGE))
    rating_name = MODELS[found.model].display
    return render(
        request,
        "leaderboard.html",
        pool=found,
        rating_name=rating_name,
        players=[public_player(row, found, place) for place, row in rows],
        trends=trends,
        trend_rounds=TREND,
        hidden=hidden,
        total=total,
        page=page,
        pages=pages,
        q=search or "",
        chart=histogram(
            ratings,
            BARS,
            f"ratings of the {len(ratings)} players listed",
            x_label=rating_name,
            y_label="players",
        ),
    )


@router.get("/pools/{pool}/players/{steam_id}", response_class=HTMLResponse)
async def player(
    request: Request, store: StoreDep, pool: PoolName, steam_id: PlayerPathId
) -> HTMLResponse:
    found = await public_pool(request, pool)
    key = normalize_id(steam_id, found.player_ids, ("path", "steam_id"))
    found, rows = await run_in_threadpool(store.read_players, found, [key])
    row = rows.get(key)
    admin = await admin_session(request)
    if row is None or (row.hidden and admin is None):
        raise NotFound(f"Pool {found.name} has no player {key}.")
    place = await run_in_threadpool(store.public_place, found, row)
    shown = public_player(row, found, place)
    series = await run_in_threadpool(store.rating_series, found, key, HISTORY)
    voids = await run_in_threadpool(store.voided_rounds_of, found, key)
    rounds_seen = [i for i, step in enumerate(series) if step.kind == "round"][:RECENT]
    depth = rounds_seen[-1] + 1 if len(rounds_seen) == RECENT else len(series)
    entries = await run_in_threadpool(store.history, found, key, max(depth, 1))
    chart = None
    if not shown.provisional:  # a provisional rating is never shown, not even as a line
        ordered = list(reversed(series))
        kept = sampled(ordered, CHART_POINTS)
        ids = await run_in_threadpool(
            store.round_ids, found, [p for i in kept if (p := ordered[i].round_pk) is not None]
        )
        complete = len(series) < HISTORY
        title = f"{shown.name or key}'s rating over " + (
            "time" if complete else f"their last {HISTORY:,} entries"
        )
        chart = _rating_chart(ordered, ids, kept, voids, title)
    recent = shown_entries(found, [e for e in entries if e.kind == "round"][:RECENT])
    sites = await run_in_threadpool(
        store.round_sites, found, [e.round_id for e in recent if e.round_id is not None]
    )
    record = await run_in_threadpool(store.record, found, key, HISTORY)
    figures = None
    if admin is not None or not shown.provisional:  # a model's figures may hold the rating
        skill = player_out(key, row, found, store, None).skill  # its place unused
        figures = [(*explained(name), value) for name, value in skill.items()]
    return render(
        request,
        "player.html",
        pool=found,
        player=shown,
        chart=chart,
        recent=recent,
        sites=sites,
        record=record,
        marks=sum(1 for step in series if step.kind != "round"),
        voids=voids,
        figures=figures,
        hidden=row.hidden,
    )


def _rating_chart(
    series: list[RatingStep],
    ids: dict[int, str],
    kept: list[int],
    voids: list[VoidedRound],
    title: str,
) -> Markup:
    """A player's rating over their rounds: `series` oldest first, the entries `kept`
    drawn, each labelled by its round (`ids`), on an axis of the rounds they played."""
    complete = len(series) < HISTORY
    played = list(itertools.accumulate(step.kind == "round" for step in series))
    points = [
        Point(
            step.after,
            f"{step.after} after {step.kind} {ids.get(step.round_pk or 0, '')}".strip(),
            marked=step.kind != "round",
        )
        for step in (series[i] for i in kept)
    ]
    return line_chart(
        points,
        title,
        events=[
            (bisect.bisect_right(kept, at) - 0.5, label)
            for at, label in void_marks(series, voids, complete)
        ],
        x_ticks=ticks_along([played[i] for i in kept], whole=True),
        x_label="rounds played" if complete else "rounds played since the chart's first",
        y_label="rating",
    )


def sampled(entries: list[RatingStep], limit: int) -> list[int]:
    """The indexes of the entries a chart draws: all of up to `limit`; of more, evenly
    spaced ones, with every admin change (a marked point) and the newest entry kept."""
    if len(entries) <= limit:
        return list(range(len(entries)))
    step = len(entries) / limit
    keep = {min(int(i * step), len(entries) - 1) for i in range(limit)}
    keep |= {i for i, e in enumerate(entries) if e.kind != "round"}
    keep.add(len(entries) - 1)
    return sorted(keep)


def void_marks(entries: list[RatingStep], voids: list[VoidedRound], complete: bool) -> list[Event]:
    """Where each voided round falls on a chart of `entries` (oldest first): halfway before
    the first round entry rated after it (a pool's round rows are numbered in rating
    order), or past the last entry. A void before the first entry is shown there only when
    the chart holds the player's whole journal (`complete`); otherwise it is older than the
    chart."""
    rated = [(i, e.round_pk) for i, e in enumerate(entries) if e.round_pk is not None]
    marks = []
    for void in voids:
        after = next((i for i, pk in rated if pk > void.round_pk), len(entries))
        if after > 0 or complete:
            marks.append((after - 0.5, f"round {void.round_id} voided"))
    return marks


@router.get("/pools/{pool}/rounds/{round_id}", response_class=HTMLResponse)
async def round_page(
    request: Request, store: StoreDep, pool: PoolName, round_id: RoundPathId
) -> HTMLResponse:
    """A round: both teams with names (and the sides they played, as the game names them),
    the server, the predicted chance, the result and each player's change (none shown for a
    provisional or hidden player)."""
    found = await public_pool(request, pool)
    view = await run_in_threadpool(store.round_view, found, round_id)
    if view is None:
        raise NotFound(f"Pool {found.name} has no round {round_id}.")
    admin = await admin_session(request) is not None
    shown = public_round(view, admin=admin)  # the page shows whole percents either way
    site = (await run_in_threadpool(store.round_sites, found, [round_id])).get(round_id)
    named = site.sides if site is not None and site.sides else (None, None)
    sides = [
        {"side": side, "players": players, "named": name}
        for side, players, name in (("A", shown.A, named[0]), ("B", shown.B, named[1]))
    ]
    hidden = view.hidden if admin else frozenset()
    return render(
        request, "round.html", pool=found, round=view, site=site, sides=sides, hidden=hidden
    )
