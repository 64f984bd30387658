"""The domain's shapes: pools, round reports, rated rounds, journal entries, and the
errors the store raises. Above the models (a pool names one), below the store, which hands
these out and takes them in; the API and the pages read them too."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import orjson

from synelo.models import Model, create_model
from synelo.ratings import SynEloParams
from synelo.ratings.synelo import Side, Winner

if TYPE_CHECKING:  # its module needs NumPy, which the commands that only store should not load
    from synelo.ratings.theta import ThetaFit
    from synelo.schemas.rerate import ChangeKind

__all__ = [
    "Change",
    "Job",
    "JobEnded",
    "JobRunning",
    "JournalEntry",
    "JournalRound",
    "POOL_RULES",
    "PlayerRow",
    "Pool",
    "PoolExists",
    "PoolQuality",
    "RatedPlayer",
    "RatedRound",
    "RatingStep",
    "RoundConflict",
    "RoundReport",
    "RoundView",
    "Strength",
    "SubmitResult",
    "UnknownPool",
    "UnknownRound",
    "VoidedRound",
    "encode_params",
    "parse_synelo_params",
    "pool_model",
    "pool_params",
    "stored_model",
]

# The rules every pool keeps besides its model's parameters: when a player leaves the shadow
# period and when they turn stale. A SynElo pool keeps them in its SynEloParams.
POOL_RULES = ("t_shadow", "t_stale_days")


@dataclass(frozen=True, slots=True)
class Pool:
    """A pool as stored. `params` are SynElo's for a SynElo pool; for a pool of another
    model only their t_shadow and t_stale_days count (the shadow and stale rules every
    model shares), and `model_params` are that model's own."""

    id: int
    name: str
    team_size: int  # largest team size (stored in the column pools.kmax, its old name)
    player_ids: str  # "steam" or "text"
    params: SynEloParams
    rounds: int
    brier_sum: float
    created_at: datetime
    model: str = "synelo"
    model_params: Mapping[str, Any] = field(default_factory=dict)
    generation: int = 0  # re-rates so far: the journal generation in force
    voided: int = 0  # rounds voided (they keep their seq, and are not rated)
    autotune: Mapping[str, Any] | None = None  # rerate.autotune.AutoTune's JSON; None: off
    public: bool = False  # anyone may read its public endpoints, without a token

    @property
    def is_synelo(self) -> bool:
        return self.model == "synelo"

    @property
    def rated(self) -> int:
        """Rounds whose ratings count: those stored, less those voided."""
        return self.rounds - self.voided


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A stored player as the lookup endpoints need it (no window)."""

    player_key: str
    rating: int
    rounds_played: int
    last_played: datetime | None
    convergence: float  # F3's C (SynElo pools; 1.0 in other models' pools)
    state: str | None = None  # the model's state (Model.encode, JSON) outside SynElo pools
    name: str | None = None  # the display name last reported
    hidden: bool = False  # an admin hid them from public lists


class Strength(NamedTuple):
    """A stored player as balancing needs them: the rating, and the model's state."""

    rating: int
    state: str | None  # the model's state (Model.encode, JSON) outside SynElo pools


@dataclass(frozen=True, slots=True)
class RoundReport:
    """A validated round report with ids already normalised to strings. `extras` holds the
    optional fields that were reported (time_played, sides, scores, names…) in their
    canonical JSON form: ids normalised, times as UTC ISO 8601."""

    round_id: str
    server_id: str
    map: str
    winner: Winner
    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    participants_a: tuple[str, ...]
    participants_b: tuple[str, ...]
    extras: Mapping[str, Any] = field(default_factory=dict)

    def content_hash(self) -> str:
        """Order-insensitive digest of the whole report, to tell a retry from a different
        round. A report without optional fields digests as it did before they existed, so
        a retry of a round stored then still matches."""
        fields: list[Any] = [
            self.server_id,
            self.map,
            self.winner,
            sorted(self.team_a),
            sorted(self.team_b),
            sorted(self.participants_a),
            sorted(self.participants_b),
        ]
        if self.extras:
            fields.append(self.extras)
        return hashlib.sha256(orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)).hexdigest()

    def played_at(self, received: datetime) -> datetime | None:
        """When the round was played, as the report says: its ended_at, else its
        started_at, but never after it was `received` (a game server's clock ahead); None
        when it says neither (then it is dated by when it was received)."""
        moment = self.extras.get("ended_at") or self.extras.get("started_at")
        return None if moment is None else min(datetime.fromisoformat(moment), received)

    def stored(self) -> dict[str, Any]:
        """The report as ``rounds.report`` keeps it: every field, as reported."""
        return {
            "round_id": self.round_id,
            "server_id": self.server_id,
            "map": self.map,
            "winner": self.winner,
            "teams": {"A": list(self.team_a), "B": list(self.team_b)},
            "participants": {"A": list(self.participants_a), "B": list(self.participants_b)},
            **self.extras,
        }


class RatedPlayer(NamedTuple):
    """One participant's change in a rated round. A NamedTuple, not a frozen dataclass: a
    round makes one per participant, and a frozen dataclass's __init__ costs five times as
    much to build."""

    player: str  # the player key: a SteamID64 or a text id
    team: Side
    before: int
    after: int
    delta: int
    k: float | None  # F5's K this round (SynElo); None in other models' pools
    visible: bool  # after this round: out of the shadow (T_shadow rounds played)
    rounds_played: int  # after this round


@dataclass(frozen=True, slots=True)
class RatedRound:
    """The outcome of rating a round, as rated or as recorded then (a retry gets it back)."""

    round_id: str
    seq: int  # the round's place in its pool's rating order, from 1
    winner: Winner
    p_a: float  # F1's P_A from the round-start rosters
    sum_a: int
    sum_b: int
    players: tuple[RatedPlayer, ...]  # in rating order


@dataclass(frozen=True, slots=True)
class SubmitResult:
    created: bool  # False when an identical earlier submission was replayed
    round: RatedRound  # on a retry, the outcome recorded when the round was rated


@dataclass(frozen=True, slots=True)
class Change:
    """An entry of a pool's admin log (`changes`), in order."""

    id: int
    seq: int  # rounds the pool had rated when it was made
    kind: ChangeKind
    player_key: str | None
    round_id: str | None
    value: dict[str, Any] | None
    actor: str
    reason: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Job:
    """A background re-rate, as its row says."""

    id: int
    pool: str
    kind: str  # patch, void, unvoid, tune, refit, advise (re-rates nothing)
    spec: dict[str, Any]
    status: Literal["running", "done", "failed", "cancelled"]  # cancelled: advise alone
    phase: str
    total: int
    done: int
    error: str | None
    actor: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


class JobRunning(RuntimeError):
    """A job (a re-rate, an advise) of the pool is running already: `job_id` is its id."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"job {job_id} is running on this pool")
        self.job_id = job_id


class JobEnded(RuntimeError):
    """The job's row no longer reads running (an admin cancelled it, or it was taken for
    dead): the job stops where it is and writes nothing more."""


class UnknownRound(LookupError):
    """No round of that id in the pool."""


@dataclass(frozen=True, slots=True)
class RatingStep:
    """One entry of a player's rating series: what a chart of their rating draws."""

    kind: Literal["round", "set", "reset", "solve", "season"]
    round_pk: int | None  # the round's row (rows of a pool are numbered in rating order)
    after: int


@dataclass(frozen=True, slots=True)
class VoidedRound:
    """A voided round a player was in: it left no journal entry, so charts mark it."""

    round_pk: int
    round_id: str


@dataclass(frozen=True, slots=True)
class JournalEntry:
    id: int
    # a round, an admin change (set, reset, season), a refit
    kind: Literal["round", "set", "reset", "solve", "season"]
    round_id: str | None
    seq: int | None
    team: str | None
    before: int
    after: int
    k: float | None
    p: float | None
    s: float | None
    at: datetime  # a round's: when it was played (`store.tables.round_time`); else when made


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
    theta_fit: ThetaFit  # F1's Θ fitted to the newest rounds, with how sure it is
    last_fit: Change | None = None  # the newest auto-tune, adopted or not


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
    report: dict[str, Any] | None = None  # the report as sent (None: stored before 0004)
    voided: bool = False


class UnknownPool(LookupError):
    """No pool of that name."""


class PoolExists(ValueError):
    """A pool of that name exists already."""


class RoundConflict(ValueError):
    """The round_id was used before for a round with different content."""


@dataclass(frozen=True, slots=True)
class RoundView:
    """A stored round as its page shows it: the round, its report's rosters and names,
    and each rated player's change in the journal in force (none for a voided round)."""

    round_id: str
    seq: int
    winner: str
    p_a: float
    voided: bool
    at: datetime  # when it was played (`store.tables.round_time`)
    map: str
    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    names: Mapping[str, str]
    changes: tuple[tuple[str, str, int, int], ...]  # (player, team, before, after)
    hidden: frozenset[str] = frozenset()  # players an admin hid from public pages
    provisional: frozenset[str] = frozenset()  # players still in the shadow period now


# A pool's parameters as the store keeps them (JSON text), and the model they make.


@lru_cache(maxsize=256)
def parse_synelo_params(text: str) -> SynEloParams:
    """A pool's parameters from their stored JSON (immutable, so parsed once)."""
    return SynEloParams.from_dict(json.loads(text))


@lru_cache(maxsize=256)
def pool_params(model: str, text: str) -> tuple[SynEloParams, Mapping[str, Any]]:
    """A pool's SynEloParams (for another model: its shadow and stale rules in them) and
    its model's own parameters, from the stored JSON."""
    if model == "synelo":
        params = parse_synelo_params(text)
        return params, MappingProxyType(params.to_dict())
    data = json.loads(text)
    rules = {name: data.pop(name) for name in POOL_RULES if name in data}
    return SynEloParams(**rules), MappingProxyType(data)  # shared by the cache: read-only


@lru_cache(maxsize=256)
def stored_model(model: str, text: str) -> Model[Any]:
    """The rating model of a pool whose model and parameters (JSON) these are."""
    return create_model(model, pool_params(model, text)[1])


def pool_model(pool: Pool) -> Model[Any]:
    """The pool's rating model, with its parameters."""
    return stored_model(pool.model, encode_params(pool.model, pool.params, pool.model_params))


def encode_params(model: str, params: SynEloParams, model_params: Mapping[str, Any]) -> str:
    """What pools.params keeps (see POOL_RULES)."""
    if model == "synelo":
        return json.dumps(params.to_dict())
    rules = {name: getattr(params, name) for name in POOL_RULES}
    return json.dumps({**model_params, **rules})
