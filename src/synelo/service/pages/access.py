"""Who may see a page, and the pages' refusals: the admin session of a request (from its
cookie), a pool's pages open to the public or to a logged-in admin, and the HTML answers of a
refusal and of a page that is not there. Every page module reads these; none of them is a
route."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from synelo.domain import Pool
from synelo.schemas import POOL_NAME
from synelo.service.auth import TokenChecker
from synelo.service.pages.templating import render
from synelo.store.repository import Store
from synelo.store.sessions import AdminSession, SessionStore

COOKIE = "synelo_session"  # the admin session's cookie
PoolName = Annotated[str, Path(pattern=POOL_NAME)]  # a pool's name in a page's path


async def admin_session(request: Request) -> AdminSession | None:
    """The request's admin session: its cookie names a session that has not ended, opened
    with a token that is still an admin's. Looked up once per request."""
    if hasattr(request.state, "admin_session"):
        found: AdminSession | None = request.state.admin_session
        return found
    found = None
    cookie = request.cookies.get(COOKIE)
    if cookie:
        sessions: SessionStore = request.app.state.sessions
        session = await run_in_threadpool(sessions.find, cookie)
        tokens: TokenChecker = request.app.state.tokens
        if session is not None:
            holder = await run_in_threadpool(tokens.digest_role, session.token_hash)
            if holder is not None and holder.role == "admin":
                found = session
                request.state.actor = session.actor
    request.state.admin_session = found
    return found


class Refused(Exception):
    """A page request refused: answered as an HTML page with this status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def refused_page(request: Request, exc: Exception) -> HTMLResponse:
    """The page of a refusal (registered for Refused by the app)."""
    status = exc.status if isinstance(exc, Refused) else 400
    return render(request, "refused.html", status=status, message=str(exc))


class NotFound(Exception):
    """A page that is not there: answered as an HTML 404 page, not the API's JSON."""


async def public_pool(request: Request, name: str) -> Pool:
    """The pool if this request may read its pages: a public pool, or any pool for a
    logged-in admin; NotFound otherwise, as for a pool that does not exist (a private
    pool's name leaks nothing, by the answer or by its time: one query answers both)."""
    admin = await admin_session(request)
    store: Store = request.app.state.store
    pool = await run_in_threadpool(store.visible_pool, name, admin is not None)
    if pool is None:
        raise NotFound(f"There is no public pool named {name}.")
    return pool


async def not_found_page(request: Request, exc: Exception) -> HTMLResponse:
    """The 404 page (registered for NotFound by the app)."""
    return render(request, "not_found.html", status=404, message=str(exc))
