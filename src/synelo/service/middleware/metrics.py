"""Prometheus metrics and the access log, both from one ASGI middleware (the scrape itself,
`GET /metrics`, is `synelo.service.api.metrics`).

Under `synelo serve --workers N` (N > 1), prometheus-client runs in its multiprocess mode:
each worker writes its samples to files in PROMETHEUS_MULTIPROC_DIR (which `serve` sets
before it starts the workers, so before they import prometheus_client), and `/metrics` adds
up every worker's files, so that whichever worker answers the scrape, the figures are the
whole service's. With one worker, or in the tests' in-process server, the metrics live in
the process's default registry.

Label values are bounded: routes are the app's templates (``/v1/pools/{pool}/rounds``, not
the path), methods outside the standard ones are ``other``, and a pool is named only on a
round the pool accepted. When anyone may read the metrics (``hide_private``), the rounds of
every private pool are counted together under ``pool="(private)"``, which no pool can be
named: a pool's name in a label would tell that it exists. An aggregate rather than a hash,
because a pool's name is short and guessable, and a hash would confirm each guess.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
    values,
)
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ROUNDS_ROUTE = "/v1/pools/{pool}/rounds"
PRIVATE = "(private)"  # the pool label of every private pool's rounds under hide_private
_ROUND_POOL = "synelo.round_pool"  # scope key: (name, public) of the pool a round went to
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
# How prometheus_client keeps values, chosen when it was first imported: in files shared by
# the workers, or in memory.
MULTIPROCESS = values.ValueClass is not values.MutexValue

ROUNDS = Counter(
    "synelo_rounds",
    "Round reports answered with ratings: outcome rated (201) or replayed (200, a retry of a "
    "round already rated).",
    ["pool", "outcome"],
)
QUEUE_DEPTH = Gauge(
    "synelo_writer_queue_depth",
    "Rounds waiting for the round writers, all workers together (sampled each second).",
    multiprocess_mode="livesum",
)
LATENCY = Histogram(
    "synelo_http_request_duration_seconds",
    "Time from a request's head to the end of its answer, by method and route template.",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
ERRORS = Counter(
    "synelo_http_errors",
    "Answers with a 4xx or 5xx status, by method, route template and status class.",
    ["method", "route", "status_class"],
)
CONNECTIONS_CLOSED = Counter(
    "synelo_connections_closed",
    "Connections `synelo serve` closed to protect itself: evicted (idle, to make room), "
    "over_limit (503), timeout (request not sent in time), head_too_large (431).",
    ["reason"],
)

access_log = logging.getLogger("synelo.access")


class RequestMetrics:
    """Times every request and counts its outcome; with `log_access`, writes one line per
    request to the "synelo.access" logger (client, method, path as sent without its query,
    status, milliseconds).

    A request refused before routing (413, 429) still gets its route's template: its raw
    path is matched here against `templates` (the OpenAPI document's paths, read once)."""

    def __init__(
        self,
        app: ASGIApp,
        templates: Callable[[], Iterable[str]],
        log_access: bool,
        hide_private: bool = False,
    ) -> None:
        self.app = app
        self.templates = templates
        self.log_access = log_access
        self.hide_private = hide_private
        self._matchers: list[tuple[re.Pattern[str], str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # unless the app answers: an error escaping it is answered 500

        async def send_and_see(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_see)
        except Exception:
            status = 500
            raise
        finally:
            self._record(scope, status, time.perf_counter() - start)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        route, params = self._route(scope)
        method = scope["method"] if scope["method"] in METHODS else "other"
        LATENCY.labels(method, route).observe(seconds)
        if status >= 400:
            ERRORS.labels(method, route, f"{status // 100}xx").inc()
        elif route == ROUNDS_ROUTE and method == "POST" and status in (200, 201):
            ROUNDS.labels(self._pool_label(scope), "rated" if status == 201 else "replayed").inc()
        if self.log_access:
            client = scope.get("client")
            raw = scope.get("raw_path")  # as sent: a decoded %0A would forge a log line
            access_log.info(
                '%s - "%s %s" %d %.1f ms',
                f"{client[0]}:{client[1]}" if client else "-",
                scope["method"],
                raw.decode("latin-1") if raw is not None else scope["path"],
                status,
                seconds * 1000,
                extra={"route": route, "status": status, "duration_ms": seconds * 1000},
            )

    def _pool_label(self, scope: Scope) -> str:
        """The label of the pool a round was rated in (see the module)."""
        name, public = scope.get(_ROUND_POOL, (PRIVATE, False))
        return str(name) if public or not self.hide_private else PRIVATE

    def _route(self, scope: Scope) -> tuple[str, dict[str, Any]]:
        """The template of the route that answered, and its path parameters."""
        route = scope.get("route")
        if route is not None:
            return str(route.path), scope.get("path_params", {})
        # Not routed (refused before, or routed on a copy of the scope): match the raw
        # path, in which a %2F stays inside its segment.
        if self._matchers is None:
            # literal segments first: /players/lookup before /players/{steam_id}
            ordered = sorted(self.templates(), key=lambda t: t.count("{"))
            self._matchers = [(compile_path(t)[0], t) for t in ordered]
        raw = scope.get("raw_path") or scope["path"].encode()
        path = raw.split(b"?", 1)[0].decode("latin-1")
        for regex, template in self._matchers:
            if regex.match(path):
                return template, {}
        return UNMATCHED, {}


def rated_in(scope: Scope, pool: str, public: bool) -> None:
    """Tell the metrics which pool the request's round went to, and whether it is public
    (the round route's, once the pool is known)."""
    scope[_ROUND_POOL] = (pool, public)


def registry() -> CollectorRegistry:
    """Every worker's metrics under `serve`; this process's otherwise."""
    if not MULTIPROCESS:
        return REGISTRY
    merged = CollectorRegistry()
    multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
    return merged


async def sample_queue_depth(queued: Callable[[], int], every_s: float = 1.0) -> None:
    """Keep this worker's writer queue depth in the gauge until cancelled (another worker
    answering a scrape reads it from this worker's file, so it cannot ask for it then)."""
    try:
        while True:
            QUEUE_DEPTH.set(queued())
            await asyncio.sleep(every_s)
    finally:
        if MULTIPROCESS:
            # a stopped worker's queue no longer counts in the sum
            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
