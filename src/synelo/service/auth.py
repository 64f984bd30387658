"""Bearer tokens with two roles: "server" (game servers) and "admin" (everything)."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Literal

from fastapi import HTTPException, Request

Role = Literal["server", "admin"]


class TokenChecker:
    """Resolves a token to its role: configured tokens first (compared in constant time,
    every one of them, so the time does not say which matched), then the token table
    (looked up by SHA-256, which reveals nothing of the token)."""

    def __init__(self, admin: list[str], server: list[str],
                 stored: Callable[[str], str | None]) -> None:
        self._configured = [(t.encode(), "admin") for t in admin] + \
                           [(t.encode(), "server") for t in server]
        self._stored = stored

    def role(self, token: str) -> str | None:
        given = token.encode()
        found = None
        for known, role in self._configured:
            if hmac.compare_digest(known, given) and found is None:
                found = role
        return found or self._stored(token)


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
