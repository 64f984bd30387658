"""The admin login of the pages and the admin actions on them.

An admin logs in with an admin token and gets a session cookie (HttpOnly, SameSite=Strict,
Secure over HTTPS); the token itself is never kept, in the cookie or in any page. Every
form an admin posts carries the session's form token (CSRF): a post without it, or with
another, is refused with 403 and changes nothing. The login form has a form token of its
own, in a short-lived cookie, since there is no session yet.

The actions (set a rating, reset, hide or show, void or unvoid a round) run the functions the
API's routes run (`synelo.service.api.actions`), so that a page and the API check, log and
answer alike.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from synelo.domain import JobRunning, Pool, UnknownPool
from synelo.schemas import POOL_NAME, HiddenIn, RatingIn, UnvoidIn, VoidIn
from synelo.service.api import actions
from synelo.service.auth import TokenChecker, actor
from synelo.service.pages.access import COOKIE, Refused, admin_session
from synelo.service.pages.templating import render
from synelo.service.params import PlayerPathId, RoundPathId
from synelo.store.repository import hash_token
from synelo.store.sessions import AdminSession, SessionStore

log = logging.getLogger("synelo.web")
router = APIRouter(include_in_schema=False)
LOGIN_COOKIE = "synelo_login"  # the login form's form token, before there is a session
LOGIN_FORM_S = 3600  # how long a login form may stay open before it is sent
FormText = Annotated[str, Form(max_length=500)]


async def posted_by_admin(request: Request, csrf: str) -> AdminSession:
    """The session of an admin's form post: 401 without a login, 403 when the form token is
    missing or is not the session's (a form sent from another site)."""
    session = await admin_session(request)
    if session is None:
        raise Refused(401, "Log in as an admin first.")
    if not hmac.compare_digest(csrf.encode(), session.csrf.encode()):
        raise Refused(403, "This form was not sent from one of this site's pages.")
    return session


def local_path(target: str) -> str:
    """Where to go after logging in: a path of this site only (never another host)."""
    # browsers drop tabs and newlines from a URL and read a backslash as a slash, so
    # "/\t/evil.example" would leave the site: a path of printable characters only
    if (
        target.startswith("/")
        and not target.startswith(("//", "/\\"))
        and target.isprintable()
        and not any(c.isspace() for c in target)
    ):
        return target
    return "/"


def _login_page(request: Request, next: str, status: int = 200, error: str = "") -> HTMLResponse:
    """The login form, with a fresh form token in its page and in its cookie."""
    form_token = secrets.token_urlsafe(32)
    page = render(
        request,
        "login.html",
        status=status,
        next=local_path(next),
        form_token=form_token,
        error=error,
    )
    page.set_cookie(
        LOGIN_COOKIE,
        form_token,
        max_age=LOGIN_FORM_S,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/login",
    )
    return page


@router.get("/login", response_class=HTMLResponse)
async def login_form(
    request: Request, next: Annotated[str, Query(max_length=500)] = "/"
) -> HTMLResponse:
    await admin_session(request)  # for the page's header, and its "logged in as"
    return _login_page(request, next)


@router.post("/login", response_class=HTMLResponse)
async def login(
    request: Request,
    token: Annotated[str, Form(max_length=512)] = "",
    csrf: FormText = "",
    next: FormText = "/",
) -> Response:
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(csrf.encode(), expected.encode()):
        raise Refused(403, "This login form was not sent from this site's login page.")
    tokens: TokenChecker = request.app.state.tokens
    token = token.strip()
    holder = tokens.configured_role(token) if token else None
    if token and holder is None:
        holder = await run_in_threadpool(tokens.stored_role, token)
    if holder is None or holder.role != "admin":
        log.warning("a page login with a token that is not an admin's was refused")
        return _login_page(request, next, 401, "That is not an admin token.")
    sessions: SessionStore = request.app.state.sessions
    if earlier := request.cookies.get(COOKIE):  # a new login ends the browser's last one
        await run_in_threadpool(sessions.close, earlier)
    hours = request.app.state.settings.session_hours
    cookie, _ = await run_in_threadpool(
        sessions.open, hash_token(token), holder.who, timedelta(hours=hours)
    )
    log.info("%s logged in to the pages", holder.who)
    answer = RedirectResponse(local_path(next), status_code=303)
    answer.set_cookie(
        COOKIE,
        cookie,
        max_age=int(hours * 3600),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    answer.delete_cookie(LOGIN_COOKIE, path="/login")
    return answer


@router.post("/logout")
async def logout(request: Request, csrf: FormText = "") -> Response:
    await posted_by_admin(request, csrf)
    sessions: SessionStore = request.app.state.sessions
    await run_in_threadpool(sessions.close, request.cookies[COOKIE])
    answer = RedirectResponse("/", status_code=303)
    answer.delete_cookie(COOKIE, path="/")
    return answer


async def acting_on(
    request: Request, pool: Annotated[str, Path(pattern=POOL_NAME)], csrf: FormText = ""
) -> Pool:
    """The pool an admin's form acts on, once the form is known to be an admin's own
    (`posted_by_admin`); a refusal with 404 when there is no such pool."""
    await posted_by_admin(request, csrf)
    try:
        found: Pool = await run_in_threadpool(request.app.state.store.get_pool, pool)
    except UnknownPool:
        raise Refused(404, f"There is no pool named {pool}.") from None
    return found


ActedOn = Annotated[Pool, Depends(acting_on)]


async def _act(call: Callable[[], Any], back: str, done: str) -> Response:
    """Run an admin action (`synelo.service.api.actions`) for a page's form: back to the
    page on success (with what was done), the refusal's own status and message otherwise."""
    try:
        await run_in_threadpool(call)
    except HTTPException as exc:
        raise Refused(exc.status_code, _detail(exc.detail)) from None
    except ValidationError as exc:
        raise Refused(422, "; ".join(str(e["msg"]) for e in exc.errors())) from None
    except JobRunning as exc:
        raise Refused(
            409, f"a job of this pool is running (job {exc.job_id}): wait for it to end"
        ) from None
    return RedirectResponse(f"{back}?done={done}", status_code=303)


def _detail(detail: object) -> str:
    """A refusal's message from an HTTPException's detail (a text, or FastAPI's list)."""
    if isinstance(detail, list):
        return "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in detail)
    return str(detail)


def _player_page(pool: str, steam_id: str) -> str:
    return f"/pools/{quote(pool, safe='')}/players/{quote(steam_id, safe='')}"


def _round_page(pool: str, round_id: str) -> str:
    return f"/pools/{quote(pool, safe='')}/rounds/{quote(round_id, safe='')}"


@router.post("/pools/{pool}/players/{steam_id}/rating")
async def set_rating(
    request: Request,
    pool: ActedOn,
    steam_id: PlayerPathId,
    rating: Annotated[int, Form()],
    reason: FormText = "",
) -> Response:
    store = request.app.state.store
    body = {"rating": rating, "reason": reason or None}
    return await _act(
        lambda: actions.set_rating(
            store, pool, steam_id, RatingIn.model_validate(body), actor(request)
        ),
        _player_page(pool.name, steam_id),
        "set",
    )


@router.post("/pools/{pool}/players/{steam_id}/reset")
async def reset(
    request: Request, pool: ActedOn, steam_id: PlayerPathId, reason: FormText = ""
) -> Response:
    store = request.app.state.store
    return await _act(
        lambda: actions.reset_player(store, pool, steam_id, reason or None, actor(request)),
        _player_page(pool.name, steam_id),
        "reset",
    )


@router.post("/pools/{pool}/players/{steam_id}/hidden")
async def hide(
    request: Request,
    pool: ActedOn,
    steam_id: PlayerPathId,
    hidden: Annotated[bool, Form()],
    reason: FormText = "",
) -> Response:
    store = request.app.state.store
    body = {"hidden": hidden, "reason": reason or None}
    return await _act(
        lambda: actions.hide_player(
            store, pool, steam_id, HiddenIn.model_validate(body), actor(request)
        ),
        _player_page(pool.name, steam_id),
        "hidden" if hidden else "shown",
    )


@router.post("/pools/{pool}/rounds/{round_id}/void")
async def void(
    request: Request, pool: ActedOn, round_id: RoundPathId, reason: FormText = ""
) -> Response:
    state = request.app.state
    return await _act(
        lambda: actions.void_round(
            state.rerate,
            state.jobs,
            pool,
            round_id,
            VoidIn.model_validate({"reason": reason}).reason,
            actor(request),
        ),
        _round_page(pool.name, round_id),
        "void",
    )


@router.post("/pools/{pool}/rounds/{round_id}/unvoid")
async def unvoid(
    request: Request, pool: ActedOn, round_id: RoundPathId, reason: FormText = ""
) -> Response:
    state = request.app.state
    body = {"reason": reason or None}
    return await _act(
        lambda: actions.unvoid_round(
            state.rerate,
            state.jobs,
            pool,
            round_id,
            UnvoidIn.model_validate(body).reason,
            actor(request),
        ),
        _round_page(pool.name, round_id),
        "unvoid",
    )
