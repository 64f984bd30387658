"""The shapes the repository hands out and takes in."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import orjson

from synelo.ratings import SynEloParams
from synelo.ratings.synelo import Winner


@dataclass(frozen=True, slots=True)
class Pool:
    id: int
    name: str
    kmax: int
    player_ids: str  # "steam" or "text"
    params: SynEloParams
    rounds: int
    brier_sum: float
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A stored player as the lookup endpoints need it (no window)."""

    player_key: str
    rating: int
    rounds_played: int
    last_played: datetime | None
    convergence: float


@dataclass(frozen=True, slots=True)
class RoundReport:
    """A validated round report with ids already normalised to strings."""

    round_id: str
    server_id: str
    map: str
    winner: Winner
    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    participants_a: tuple[str, ...]
    participants_b: tuple[str, ...]

    def content_hash(self) -> str:
        """Order-insensitive digest of the report, to tell a retry from a different round."""
        canonical = orjson.dumps(
            [
                self.server_id,
                self.map,
                self.winner,
                sorted(self.team_a),
                sorted(self.team_b),
                sorted(self.participants_a),
                sorted(self.participants_b),
            ]
        )
        return hashlib.sha256(canonical).hexdigest()


@dataclass(frozen=True, slots=True)
class SubmitResult:
    created: bool  # False when an identical earlier submission was replayed
    body: bytes  # the JSON answer, byte for byte the same on a retry


@dataclass(frozen=True, slots=True)
class JournalEntry:
    id: int
    kind: str
    round_id: str | None
    seq: int | None
    team: str | None
    before: int
    after: int
    k: float | None
    p: float | None
    s: float | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PoolQuality:
    rounds: int
    players: int
    shadow: int
    stale: int
    mean_convergence: float | None
    brier_all: float | None
    brier_recent: float | None
    recent_rounds: int
    theta_suggested: float | None = None  # F1's Θ fitted to the rounds (None below 500)
    theta_rounds: int = 0  # the rounds that fit rests on


@dataclass(frozen=True, slots=True)
class JournalRound:
    """A rated round with its participants as journaled: (player key, team, before, after)."""

    seq: int
    round_id: str
    server_id: str
    map: str
    winner: Winner
    sum_a: int
    sum_b: int
    p_a: float
    created_at: datetime
    participants: list[tuple[str, str, int, int]]


class UnknownPool(LookupError):
    """No pool of that name."""


class PoolExists(ValueError):
    """A pool of that name exists already."""


class RoundConflict(ValueError):
    """The round_id was used before for a round with different content."""
