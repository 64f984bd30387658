"""A fair share of a worker for each client: at most `PER_CLIENT` requests of one token (or,
without a token, of one client address) in the app at once; the rest wait their turn here.

Why: a worker's requests share one interpreter. Sync routes run on the thread pool, and
Python hands the GIL to each runnable thread in turn, so N requests in progress each get
about 1/N of the worker. The rate limits bound how many requests a client sends a second,
not how many it keeps in progress: one server token looking up players from 8 connections,
within its 200 requests a second, kept 8 lookups in progress, and another token's lookup
took its turn behind all 8 (p50 25–35 times its quiet figure). With this gate the flooder
has at most `PER_CLIENT` requests in progress, and everybody else's share the worker with
those only; the rest of its requests wait before their body is read or their token looked
up, in order, at no CPU cost (``bench/ratelimit.py``'s lookup flood; the figures are in
docs/operators/production.md, "Flood figures").

The waiting requests are bounded by the connections a worker takes (SYNELO_LIMIT_CONCURRENCY):
an HTTP/1.1 connection has one request in progress. /healthz never waits.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Receive, Scope, Send

from synelo.service.middleware.ratelimit import (
    TrustedProxies,
    bearer,
    client_address,
    token_key,
)

PER_CLIENT = 2  # requests of one client in the app at once, per worker


class _Turns:
    """The requests of one client: a semaphore of `PER_CLIENT`, and how many hold or wait
    for it (the entry goes when none does, so idle clients cost nothing)."""

    __slots__ = ("semaphore", "users")

    def __init__(self, per_client: int) -> None:
        self.semaphore = asyncio.Semaphore(per_client)
        self.users = 0


class FairShare:
    """ASGI middleware, inside the rate limits' gate: see the module's docstring."""

    def __init__(self, app: ASGIApp, trusted: TrustedProxies, per_client: int = PER_CLIENT) -> None:
        self.app = app
        self.trusted = trusted
        self.per_client = per_client
        self._clients: dict[str, _Turns] = {}

    def waiting(self) -> int:
        """How many requests wait for their turn now."""
        return sum(max(0, turns.users - self.per_client) for turns in self._clients.values())

    def clients(self) -> int:
        """How many clients have a request in the app or waiting now."""
        return len(self._clients)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        token = bearer(scope)
        key = "t:" + token_key(token) if token else "a:" + client_address(scope, self.trusted)
        turns = self._clients.get(key)
        if turns is None:
            turns = self._clients[key] = _Turns(self.per_client)
        turns.users += 1
        try:
            async with turns.semaphore:
                await self.app(scope, receive, send)
        finally:
            turns.users -= 1
            if not turns.users:
                del self._clients[key]
