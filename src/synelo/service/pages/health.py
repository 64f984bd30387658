"""The pool health page: the figures of `synelo.service.api.reports` (kept once for all
readers, the API's included), with their charts, for a public pool or a logged-in admin."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from synelo.domain import UnknownPool
from synelo.service.api import reports
from synelo.service.pages.access import NotFound, PoolName, public_pool
from synelo.service.pages.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/pools/{pool}/health", response_class=HTMLResponse)
async def health_page(request: Request, pool: PoolName) -> HTMLResponse:
    """The pool's health figures (a private pool is a 404 unless an admin is logged in)."""
    found = await public_pool(request, pool)
    try:
        context, behind = await reports.pool_figures(request, found)
    except UnknownPool:  # deleted meanwhile
        raise NotFound(f"There is no public pool named {found.name}.") from None
    return render(request, "health.html", behind=behind, **context)
