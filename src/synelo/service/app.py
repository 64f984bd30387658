"""The FastAPI application: wiring only (routers, auth, limits, JSON errors)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from synelo import __version__
from synelo.config import Settings
from synelo.domain import UnknownPool
from synelo.rerate.job import JobRunner
from synelo.rerate.schedule import AutoTuneSchedule
from synelo.service.api import advice, balance, models, players, pools, public, rerate, rounds
from synelo.service.api import metrics as metrics_route
from synelo.service.auth import TokenChecker
from synelo.service.gate import BalanceGate
from synelo.service.middleware import metrics
from synelo.service.middleware.cors import PublicCors
from synelo.service.middleware.errors import ErrorLog
from synelo.service.middleware.fairshare import FairShare
from synelo.service.middleware.headers import SecurityHeaders, security_headers
from synelo.service.middleware.limits import BodyLimit, escape_surrogates
from synelo.service.middleware.paths import EncodedSlashes
from synelo.service.middleware.ratelimit import LimitGate, RateLimits
from synelo.service.pages import admin, docs, health, scramble, servers
from synelo.service.pages import advice as advice_pages
from synelo.service.pages import public as public_pages
from synelo.service.pages import settings as settings_pages
from synelo.service.pages.access import NotFound, Refused, not_found_page, refused_page
from synelo.service.pages.templating import is_page, problems
from synelo.store.checkpoint import Checkpointer
from synelo.store.engine import create_store_engine
from synelo.store.generations import RerateStore
from synelo.store.repository import Clock, Store, utcnow
from synelo.store.sessions import SessionStore
from synelo.store.writer import RoundWriter

log = logging.getLogger("synelo")


def create_app(  # noqa: C901
    settings: Settings | None = None, *, store: Store | None = None, clock: Clock = utcnow
) -> FastAPI:
    """Build the app. Tests pass their own store or clock; `synelo serve` passes neither."""
    settings = settings or Settings()
    if store is None:
        store = Store(
            create_store_engine(
                settings.sqlalchemy_url,
                pool_size=settings.db_pool_size,
                synchronous=settings.sqlite_synchronous,
            ),
            clock,
            window_cache=settings.window_cache,
        )
    # the checkpointer first: it sets up every SQLite connection opened after it, the
    # writer's own included
    checkpointer = Checkpointer(store.engine) if store.engine.dialect.name == "sqlite" else None
    writer = RoundWriter(store, max_queued=settings.queue_max)
    jobs = JobRunner(RerateStore(store))
    schedule = AutoTuneSchedule(jobs, settings.autotune_check_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        schedule.start()
        sampler = asyncio.create_task(metrics.sample_queue_depth(writer.queued))
        yield
        sampler.cancel()
        schedule.stop()
        await limits.close()
        writer.close()
        jobs.wait(timeout=5.0)  # a job cut short is dead with its process; rows are swept
        if checkpointer is not None:
            checkpointer.stop()

    app = _App(
        title="synelo",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,  # synelo.service.pages.docs: packaged assets, under the CSP
        redoc_url=None,
        description="Skill ratings and optimal team splits for team games (SynElo).",
    )
    app.state.settings = settings
    app.state.store = store
    app.state.writer = writer
    app.state.rerate = jobs.rerate
    app.state.jobs = jobs
    app.state.autotune = schedule
    app.state.balance_gate = BalanceGate()  # one split search at a time per worker
    app.state.error_log = error_log = ErrorLog(log)
    # Configured tokens, when there are any, are the only tokens (the token table is not
    # consulted); otherwise the generated and created ones of the token table are, each
    # lookup noting the token's use (to the minute: `synelo token list` shows it).
    configured = bool(settings.admin_tokens or settings.server_tokens)
    app.state.tokens = tokens = TokenChecker(
        settings.admin_tokens, settings.server_tokens, None if configured else store.use_token
    )
    app.state.limits = limits = RateLimits.from_settings(settings)
    app.state.sessions = SessionStore(store)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        """FastAPI's 422, except that a NaN or an infinity the client sent (Python's JSON
        reader takes them) is echoed as text, and a lone surrogate as its escape: JSON has no
        such numbers, UTF-8 no such characters, and encoding one would turn the 422 into a
        500. A page's 422 is a page that names the field."""
        errors = capped(exc.errors())
        if is_page(request.url.path):
            return await refused_page(request, Refused(422, problems(errors)))
        return JSONResponse({"detail": _echoable(jsonable_encoder(errors))}, 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """FastAPI's JSON answer, except on a page's path, where a 404 is the not-found
        page and any other refusal the refused page. A 405's `Allow` lists the methods of
        every route of the path (Starlette's, those of the first route only)."""
        if exc.status_code == 405:
            exc.headers = {**(exc.headers or {}), "Allow": allowed_methods(app, request.scope)}
        if not is_page(request.url.path):
            return await http_exception_handler(request, exc)
        if exc.status_code == 404:
            return await not_found_page(request, NotFound("There is no such page."))
        answer = await refused_page(request, Refused(exc.status_code, str(exc.detail)))
        answer.headers.update(exc.headers or {})
        return answer

    @app.exception_handler(UnknownPool)
    async def pool_gone(_: Request, exc: UnknownPool) -> JSONResponse:
        """A pool deleted (by another worker perhaps) while this request was using it."""
        return JSONResponse({"detail": f"unknown pool {exc.args[0]!r}"}, status_code=404)

    app.add_exception_handler(NotFound, not_found_page)
    app.add_exception_handler(Refused, refused_page)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        """A 500; the traceback is logged, unless the same error was logged lately.
        Starlette sends it from ServerErrorMiddleware, outside SecurityHeaders, so it adds
        the security headers itself."""
        error_log.error(exc, "unhandled error on %s %s", request.method, request.url.path)
        request.scope[_LOGGED] = exc
        answer = JSONResponse({"detail": "internal server error"}, status_code=500)
        answer.raw_headers.extend(security_headers(request.scope["path"]))
        return answer

    @app.get("/healthz", tags=["health"])
    def healthz() -> JSONResponse:
        """Liveness and database reachability (503 when the database does not answer)."""
        ok = store.ping()
        return JSONResponse(
            {"status": "ok" if ok else "database unreachable", "version": __version__},
            status_code=200 if ok else 503,
        )

    # the update route first: it is the one called for every round, and routes are matched
    # in order
    app.include_router(rounds.router)
    app.include_router(pools.router)
    app.include_router(players.router)
    app.include_router(balance.router)
    app.include_router(models.router)
    app.include_router(rerate.router)
    app.include_router(advice.router)
    app.include_router(public.router)
    app.include_router(public_pages.router)
    app.include_router(health.router)
    app.include_router(admin.router)
    app.include_router(scramble.router)
    app.include_router(servers.router)
    app.include_router(settings_pages.router)
    app.include_router(advice_pages.router)
    app.include_router(metrics_route.router(settings.metrics_public, writer.queued))
    app.include_router(docs.router)
    app.mount("/static/docs", StaticFiles(directory=docs.DOCS_ASSETS), name="docs-assets")
    app.mount("/static", StaticFiles(directory=docs.OWN_ASSETS), name="assets")
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(EncodedSlashes)
    if settings.fair_share is not None:  # a client's body is read in its turn
        app.add_middleware(FairShare, trusted=limits.trusted, per_client=settings.fair_share)
    app.add_middleware(LimitGate, limits=limits, known=tokens.known)  # before all that
    app.add_middleware(PublicCors)  # a refusal of the limits gets CORS too
    # around everything, so that a 413 or a 429 is timed, counted and logged too
    app.add_middleware(
        metrics.RequestMetrics,
        templates=lambda: [*app.openapi()["paths"], "/metrics"],
        log_access=settings.access_log,
        hide_private=settings.metrics_public,
    )
    app.add_middleware(SecurityHeaders)  # outermost: every answer has them, a 429 too
    return app


_LOGGED = "synelo.logged_error"  # scope key: the error the 500 handler logged (or held back)


class _App(FastAPI):
    """FastAPI, except that an error answered 500 stops here. Starlette raises it again
    after the 500, for the server to log, and uvicorn would log its traceback each time:
    `ErrorLog` has logged it already, or held it back on purpose."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except Exception as exc:
            if scope.get(_LOGGED) is not exc:
                raise


def app_from_env() -> FastAPI:
    """The factory `synelo serve` hands to uvicorn (one app per worker)."""
    return create_app()


MAX_ERRORS = 20  # a 422 lists this many errors at most


def capped(errors: Sequence[Any]) -> list[Any]:
    """The first MAX_ERRORS of a validation's errors, and one entry saying how many more
    were left out: a 54 KB body with 6,500 unknown fields was answered 633 KB."""
    if len(errors) <= MAX_ERRORS:
        return list(errors)
    left_out = len(errors) - MAX_ERRORS
    return [
        *errors[:MAX_ERRORS],
        {"loc": [], "msg": f"{left_out} more errors left out", "type": "too_many_errors"},
    ]


_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def allowed_methods(app: FastAPI, scope: Scope) -> str:
    """The methods some route takes at the request's path, for a 405's `Allow`: each asked
    of the routes by `matches` (BaseRoute's interface, which FastAPI's included routers
    keep), as the router itself does."""
    return ", ".join(
        method
        for method in _METHODS
        if any(r.matches({**scope, "method": method})[0] is Match.FULL for r in app.router.routes)
    )


def _echoable(value: Any) -> Any:
    """`value` with every non-finite float replaced by its JSON5 spelling, as text, and
    every lone surrogate by its escape."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, dict):
        return {escape_surrogates(k): _echoable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_echoable(v) for v in value]
    return value
