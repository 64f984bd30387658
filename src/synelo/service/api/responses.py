"""The error answers of the routes, for the OpenAPI document: every /v1 route may answer
400, 401, 403, 404, 413 and 429 besides its own (422 is FastAPI's, with the fields at fault)."""

from __future__ import annotations

from typing import Any

from synelo.schemas import ErrorOut

WHY = {
    400: "the body could not be read: not UTF-8, or not JSON at all",
    401: "no bearer token, or one the service does not know (the scheme is case-insensitive)",
    403: "a server token on a route that needs an admin token",
    404: "no such pool, or one the token is not scoped to (or no such player, round or job "
    "where the path names one)",
    409: "a conflict with what is stored (see the route)",
    413: "the body is larger than SYNELO_MAX_BODY_BYTES",
    429: "over a rate limit of the token or of the client address: retry after Retry-After seconds",
    503: "busy: retry after Retry-After seconds",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these status codes, each with ErrorOut's body."""
    return {code: {"model": ErrorOut, "description": WHY[code]} for code in codes}


COMMON = errors(400, 401, 403, 404, 413, 429)
