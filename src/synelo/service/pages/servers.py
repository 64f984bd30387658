"""The server view: each game server that reports to a pool, with its rounds, its newest
report and its calibration (its rounds' Brier score and standard error), so that an operator
with several servers sees which one misbehaves; and one server's newest rounds.

The figures are kept once for all readers as the health page's are
(`synelo.service.api.reports.pool_servers`), for a public pool or a logged-in admin, as the
health page is.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import unquote

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from synelo.domain import Pool, UnknownPool
from synelo.ratings.brier import BRIER_TARGET
from synelo.schemas.fields import SERVER_ID_MAX, storable
from synelo.service.api import reports
from synelo.service.deps import StoreDep
from synelo.service.middleware.paths import ENCODED
from synelo.service.pages.access import NotFound, PoolName, public_pool
from synelo.service.pages.templating import render

router = APIRouter(include_in_schema=False)
SERVER_ROUNDS = 50  # rounds a server's page lists, newest first


async def _figures(request: Request, found: Pool) -> tuple[dict[str, Any], bool]:
    """The pool's server figures (see `reports.pool_servers`); a 404 page if the pool was
    deleted meanwhile."""
    try:
        return await reports.pool_servers(request, found)
    except UnknownPool:
        raise NotFound(f"There is no public pool named {found.name}.") from None


@router.get("/pools/{pool}/servers", response_class=HTMLResponse)
async def servers_page(request: Request, pool: PoolName) -> HTMLResponse:
    """Every server of the pool, the newest reporting first."""
    found = await public_pool(request, pool)
    context, behind = await _figures(request, found)
    return render(
        request,
        "servers.html",
        pool=context["pool"],
        servers=context["servers"],
        target=BRIER_TARGET,
        behind=behind,
    )


def server_path_id(request: Request, server_id: Annotated[str, Path()]) -> str:
    """The server id of the URL, decoded once if `EncodedSlashes` kept it encoded (an id
    may hold '/'); a 404 page for one no report could have sent."""
    value = unquote(server_id) if request.scope.get(ENCODED) else server_id
    try:
        if 1 <= len(value) <= SERVER_ID_MAX:
            return storable(value)
    except ValueError:
        pass
    raise NotFound("No server has that id.")


@router.get("/pools/{pool}/servers/{server_id}", response_class=HTMLResponse)
async def server_page(
    request: Request, store: StoreDep, pool: PoolName, server_id: str
) -> HTMLResponse:
    """One server: its figures and its newest rounds."""
    key = server_path_id(request, server_id)
    found = await public_pool(request, pool)
    context, behind = await _figures(request, found)
    shown = next((s for s in context["servers"] if s["server"].server_id == key), None)
    listed = await run_in_threadpool(store.server_rounds, found, key, SERVER_ROUNDS)
    if shown is None and not listed:
        raise NotFound(f"Pool {found.name} has no round from server {key}.")
    return render(
        request,
        "server.html",
        pool=context["pool"],
        server_id=key,
        shown=shown,
        rounds=listed,
        listed=SERVER_ROUNDS,
        target=BRIER_TARGET,
        behind=behind,
    )
