"""Bearer tokens with two roles: "server" (game servers) and "admin" (everything)."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from typing import Literal

from fastapi import HTTPException, Request

Role = Literal["server", "admin"]


class TokenChecker:
    """Resolves a token to its role: configured tokens first (compared in constant time,
    every one of them, so the time does not say which matched), then the token table
    (looked up by SHA-256, which reveals nothing of the token)."""

    def __init__(self, admin: list[str], server: list[str],
                 stored: Callable[[str], str | None], remember_s: float = 60.0) -> None:
        self._configured = [(t.encode(), "admin") for t in admin] + \
                           [(t.encode(), "server") for t in server]
        self._stored = stored
        self._remember_s = remember_s
        self._seen: dict[str, tuple[str, float]] = {}  # token hash → (role, when looked up)

    def role(self, token: str) -> str | None:
        given = token.encode()
        found = None
        for known, role in self._configured:
            if hmac.compare_digest(known, given) and found is None:
                found = role
        return found or self._stored_role(token)

    def _stored_role(self, token: str) -> str | None:
        """A stored token's role, remembered for a minute so that a game server's requests
        do not each cost a database read."""
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        hit = self._seen.get(key)
        if hit is not None and now - hit[1] < self._remember_s:
            return hit[0]
        role = self._stored(token)
        if role is not None:
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[key] = (role, now)
        return role


def require(role: Role) -> Callable[[Request], str]:
    """A dependency: 401 without a valid token, 403 when a server token calls an admin route."""

    def check(request: Request) -> str:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPException(401, "missing bearer token",
                                headers={"WWW-Authenticate": "Bearer"})
        found = request.app.state.tokens.role(token.strip())
        if found is None:
            raise HTTPException(401, "invalid token", headers={"WWW-Authenticate": "Bearer"})
        if role == "admin" and found != "admin":
            raise HTTPException(403, "this route needs an admin token")
        return found

    return check
