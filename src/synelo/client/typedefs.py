"""The answers of API v1 as typed, immutable objects, and the client's exceptions."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

T = TypeVar("T")


def build(cls: type[T], data: dict[str, Any]) -> T:
    """An instance of a dataclass from a JSON object, ignoring fields this client does not
    know (a newer service may add some)."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True, slots=True)
class Player:
    steam_id: str
    rating: int
    visible: bool
    rounds_played: int
    stale: bool
    last_played: str | None
    convergence: float
    k: float


@dataclass(frozen=True, slots=True)
class PlayerChange:
    steam_id: str
    team: str
    before: int
    after: int
    delta: int
    k: float
    visible: bool
    rounds_played: int


@dataclass(frozen=True, slots=True)
class RoundResult:
    round_id: str
    seq: int
    winner: str
    p_a: float
    sum_a: int
    sum_b: int
    players: tuple[PlayerChange, ...]
    created: bool = True  # False: the service had this round already (a retry)

    @classmethod
    def from_json(cls, data: dict[str, Any], created: bool) -> RoundResult:
        players = tuple(build(PlayerChange, p) for p in data["players"])
        return build(cls, {**data, "players": players, "created": created})


@dataclass(frozen=True, slots=True)
class Split:
    k: int
    A: tuple[str, ...]
    B: tuple[str, ...]
    bench: tuple[str, ...]
    sum_a: int
    sum_b: int
    gap: int
    p_a: float
    optimal: bool
    moved: int | None = None
    moved_optimal: bool | None = None
    split_parties: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Split:
        return build(cls, {**data, "A": tuple(data["A"]), "B": tuple(data["B"]),
                           "bench": tuple(data["bench"]),
                           "split_parties": tuple(tuple(p) for p in data["split_parties"])})

    @property
    def players(self) -> frozenset[str]:
        """Everyone the split seats on a team."""
        return frozenset(self.A) | frozenset(self.B)


@dataclass(frozen=True, slots=True)
class Splits:
    splits: tuple[Split, ...]
    solver: str
    elapsed_ms: float


@dataclass(frozen=True, slots=True)
class Move:
    steam_id: str
    from_team: str
    to_team: str


@dataclass(frozen=True, slots=True)
class Autobalance:
    method: str
    moves: tuple[Move, ...]
    gap_before: int
    gap_after: int
    sum_a: int
    sum_b: int
    size_a: int
    size_b: int


@dataclass(frozen=True, slots=True)
class JournalEntry:
    id: int
    kind: str
    round_id: str | None
    seq: int | None
    team: str | None
    before: int
    after: int
    delta: int
    k: float | None
    p: float | None
    s: float | None
    at: str


@dataclass(frozen=True, slots=True)
class PoolInfo:
    name: str
    kmax: int
    theta: float
    player_ids: str
    rounds: int
    created_at: str
    params: dict[str, float]


class SyneloError(Exception):
    """Anything the client could not do."""


class ServiceUnavailable(SyneloError):
    """No answer that counts: connection refused or reset, a timeout, or a 5xx. Transient:
    round reports that fail this way are kept and retried."""


class RequestRejected(SyneloError):
    """A 4xx: the request itself is wrong (or not allowed). Never retried."""

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
    401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 413: Invalid, 422: Invalid}
