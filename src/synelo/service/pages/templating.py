"""The pages' Jinja2 environment and how a page is rendered: every page knows whether an
admin is logged in (for the header and the admin forms), and never sees a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

# what an admin's action did, shown on the page it returns to (?done=…): fixed texts only
NOTICES = {
    "set": "The rating was set.",
    "reset": "The player was reset to a new player's rating.",
    "hidden": "The player is hidden from the public pages.",
    "shown": "The player is shown on the public pages again.",
    "void": "The round is voided: the pool is being re-rated without it.",
    "unvoid": "The round is back: the pool is being re-rated with it.",
    "settings": "The pool's settings are saved.",
    "season": "A new season has begun: every rating was pulled back toward the pool's mean.",
}
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
# an id as one path segment: a text id or round id may hold / ? # or %
templates.env.filters["segment"] = lambda text: quote(str(text), safe="")


def count_of(count: float, noun: str) -> str:
    """A count and its noun, plural but for one: "1 day", "2 days", "1,200 rounds", "0.5
    days" (a setting such as T_stale may be a fraction; a whole one is written whole)."""
    shown = f"{count:,}" if isinstance(count, int) else f"{count:g}"
    return f"{shown} {noun}{'' if count == 1 else 's'}"


templates.env.filters["count_of"] = count_of


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page, with `admin` (the admin session, or None) in its context; the answers of
    a logged-in admin are never kept by a browser or proxy."""
    admin = getattr(request.state, "admin_session", None)
    page = templates.TemplateResponse(
        request,
        template,
        {"admin": admin, "notice": NOTICES.get(request.query_params.get("done", "")), **context},
        status_code=status,
    )
    if admin is not None:
        page.headers["Cache-Control"] = "no-store"
    return page


# paths that are not pages: the API, its documents, the metrics and the health check
_NOT_PAGES = ("/v1/", "/openapi", "/docs", "/redoc", "/metrics", "/healthz")


def is_page(path: str) -> bool:
    """Whether a path is one of the pages', whose errors are pages too (not JSON)."""
    return not path.startswith(_NOT_PAGES)


def problems(errors: Any) -> str:
    """A validation error's entries as one line: where (without "body" or "query"), and
    what is wrong, for a page to show."""
    return "; ".join(
        f"{'.'.join(str(x) for x in e.get('loc', ()) if x not in ('body', 'query', 'path'))}: "
        f"{e.get('msg')}"
        for e in errors
    )
