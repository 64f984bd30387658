"""The answers of API v1 as typed objects, and the client's exceptions."""

from __future__ import annotations

import re
from typing import Any

from synelo.schemas import (
    AutobalanceOut,
    JournalOut,
    MoveOut,
    PlayerChangeOut,
    PlayerOut,
    PoolOut,
    RoundOut,
    SplitOut,
)

# The answers are the service's own response models (pydantic), parsed from the JSON: one
# definition of the wire format for both sides.
Player = PlayerOut
PlayerChange = PlayerChangeOut
JournalEntry = JournalOut
PoolInfo = PoolOut
Move = MoveOut
Autobalance = AutobalanceOut


class RoundResult(RoundOut):
    """A round's answer; `created` is False when the service had the round already (a retry
    answered 200 with the stored result)."""

    created: bool = True


class Split(SplitOut):
    """One team size's split; `players` are everyone it seats on a team."""

    @property
    def players(self) -> frozenset[str]:
        return frozenset(self.A) | frozenset(self.B)


class SyneloError(Exception):
    """Anything the client could not do."""


class ServiceUnavailable(SyneloError):
    """No answer that counts: connection refused or reset, a timeout, a 5xx (503: the round
    queue is full), a 408 or a 429 (a rate limit). Transient: round reports that fail this
    way are kept and retried later with the same round_id. `retry_after`: the seconds the
    service asked to wait (its Retry-After header), None when it said nothing. `status`: the
    HTTP status, 0 when there was no answer (given, or read from the message's "answered
    NNN", the form `SyneloClient.request` writes)."""

    def __init__(
        self, message: str, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        if status is None:
            found = _ANSWERED.search(message)
            status = int(found.group(1)) if found else 0
        self.status = status


_ANSWERED = re.compile(r" answered (\d{3})\b")

# 4xx answers that say "not now" rather than "never": the request timed out, or a rate limit
TRANSIENT = frozenset({408, 429})


class RequestRejected(SyneloError):
    """A 4xx: the request itself is wrong (or not allowed). Never retried by the client; a
    round report answered 401, 403 or 404 (a server being set up) is kept and retried by
    `RoundReporter` (docs/client.md, "Report delivery policy")."""

    def __init__(self, status: int, detail: Any, method: str, path: str) -> None:
        self.status, self.detail, self.method, self.path = status, detail, method, path
        super().__init__(f"{method} {path} answered {status}: {detail}")


class Unauthorized(RequestRejected):
    """401: no or a wrong token."""


class Forbidden(RequestRejected):
    """403: a server token on an admin route."""


class NotFound(RequestRejected):
    """404: unknown pool (or route)."""


class Conflict(RequestRejected):
    """409: the round_id was used for another round, or the pool exists."""


class Invalid(RequestRejected):
    """422 (the detail names the field) or 413 (body too large)."""


REJECTIONS: dict[int, type[RequestRejected]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: Invalid,
    422: Invalid,
}
