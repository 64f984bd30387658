"""Bearer tokens with two roles: "server" (game servers) and "admin" (everything).

Each token also names who holds it, for the admin change log: a stored token by its label,
a configured one as ``config:<role>#<n>`` (its place in the settings' list, never the token).
A stored server token may be scoped to some pools (`synelo token create --pool NAME`): on
any other pool it gets what a pool that does not exist gets (`may_use`). Configured tokens,
admin tokens and stored tokens made without a scope may use every pool.

The scheme is matched case-insensitively (``bearer`` works too), as RFC 7235 has it.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Literal, NamedTuple

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool

from synelo.service.middleware.ratelimit import RateLimits, retry_after

Role = Literal["server", "admin"]
Scope = frozenset[str] | None  # the pools a token may use; None: every pool


class Identity(NamedTuple):
    """Who a token is: its role, who holds it, and the pools it may use."""

    role: str
    who: str
    pools: Scope = None


class TokenChecker:
    """Resolves a token to its role: configured tokens first (compared in constant time,
    every one of them, so the time does not say which matched), then the token table
    (looked up by SHA-256, which reveals nothing of the token). A stored token's role is
    remembered for `remember_s` only, so that a token taken out of the table stops working
    on every worker within that time."""

    def __init__(
        self,
        admin: list[str],
        server: list[str],
        stored: Callable[[str], tuple[str, str, Scope] | None] | None,
        remember_s: float = 1.0,
    ) -> None:
        """`stored` finds a token of the token table by its SHA-256 (hex): its role, label
        and scope; None: no token table (the configured tokens are the only ones)."""
        self._configured = [
            (t.encode(), Identity(role, f"config:{role}#{n}"))
            for role, tokens in (("admin", admin), ("server", server))
            for n, t in enumerate(tokens, start=1)
        ]
        self._stored = stored
        self._remember_s = remember_s
        # token hash → (role, who), when looked up
        self._seen: dict[str, tuple[Identity, float]] = {}

    def configured_role(self, token: str) -> Identity | None:
        """Who a configured token is; every one is compared, in constant time."""
        given = token.encode()
        found = None
        for known, identity in self._configured:
            if hmac.compare_digest(known, given) and found is None:
                found = identity
        return found

    def known(self, token: str) -> bool:
        """Whether the token is valid as far as this worker knows without reading the
        token table: configured, or a stored one found within `remember_s`."""
        return self.configured_role(token) is not None or self.remembered_role(token) is not None

    @property
    def has_table(self) -> bool:
        """Whether a token not configured is looked up in the token table."""
        return self._stored is not None

    def remembered_role(self, token: str) -> Identity | None:
        """Who a stored token looked up within `remember_s` is (no database read)."""
        hit = self._seen.get(_digest(token))
        if hit is not None and time.monotonic() - hit[1] < self._remember_s:
            return hit[0]
        return None

    def stored_role(self, token: str) -> Identity | None:
        """Who a token of the token table is (a database read), then remembered as of
        when the read began: a revocation committed meanwhile may not be in what it saw."""
        asked = time.monotonic()
        identity = self._holder(_digest(token))
        if identity is not None:
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[_digest(token)] = (identity, asked)
        return identity

    def digest_role(self, digest: str) -> Identity | None:
        """Who the token with this SHA-256 is, as it stands now (no memory): how a page
        session checks, on every use, that the token it was opened with still holds."""
        given = digest.encode()
        found = None
        for known, identity in self._configured:
            if hmac.compare_digest(_digest(known.decode()).encode(), given) and found is None:
                found = identity
        if found is None and not self._configured:
            found = self._holder(digest)
        return found

    def _holder(self, digest: str) -> Identity | None:
        holder = None if self._stored is None else self._stored(digest)
        return None if holder is None else Identity(*holder)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def require(role: Role, *, rounds: bool = False) -> Callable[[Request], Awaitable[str]]:
    """A dependency: 401 without a valid token, 429 when the token is over its rate limit
    (`rounds`: the route reports rounds, which count against the rounds limit too), 403 when
    a server token calls an admin route. Who holds the token is left in
    ``request.state.actor`` (see `actor`), the pools it may use in ``request.state.pools``
    (see `may_use`)."""

    async def check(request: Request) -> str:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise HTTPException(401, "missing bearer token", headers={"WWW-Authenticate": "Bearer"})
        tokens: TokenChecker = request.app.state.tokens
        found = tokens.configured_role(token) or tokens.remembered_role(token)
        if found is None and tokens.has_table:
            found = await run_in_threadpool(tokens.stored_role, token)
        limits: RateLimits | None = getattr(request.app.state, "limits", None)
        if found is None:
            if limits is not None:
                await limits.failed(request.scope)  # too many: the gate refuses the next
            raise HTTPException(401, "invalid token", headers={"WWW-Authenticate": "Bearer"})
        if limits is not None:
            wait, what = await limits.token(token, found.role, rounds)
            if wait > 0:
                raise HTTPException(
                    429,
                    f"too many {what} with this token; retry after {retry_after(wait)} s",
                    headers={"Retry-After": retry_after(wait)},
                )
        if role == "admin" and found.role != "admin":
            raise HTTPException(403, "this route needs an admin token")
        request.state.actor = found.who
        request.state.pools = found.pools
        return found.role

    return check


def may_use(request: Request, pool: str) -> bool:
    """Whether the request's token, as `require` checked it, may use the pool named `pool`.
    A request whose token was not checked may use none (a route that takes a pool and
    forgot its token fails closed)."""
    if not hasattr(request.state, "pools"):
        return False
    scope: Scope = request.state.pools
    return scope is None or pool in scope


def actor(request: Request) -> str:
    """Who made the request, as its token was checked (for the admin change log)."""
    return str(getattr(request.state, "actor", "unknown"))
