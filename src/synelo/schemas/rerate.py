"""The admin changes that re-rate a pool in the background (a patch, a void, an unvoid, a
refit) and what they leave: the job and the pool's admin log."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from synelo.ratings.params import MAX_SCALE, MIN_SCALE
from synelo.schemas.fields import Number, Reason, Text
from synelo.schemas.pools import AutoTuneIn

# What an admin-log entry records (`domain.Change.kind` is the same type).
ChangeKind = Literal[
    "set",
    "reset",
    "void",
    "unvoid",
    "patch",
    "tune",
    "refit",
    "hide",
    "rename",
    "season",
    "advise",
]


class PoolPatchIn(BaseModel):
    """A change of a pool's model or parameters, applied by re-rating every stored round."""

    model_config = ConfigDict(extra="forbid")

    model: Text | None = Field(
        None, max_length=32, description="a new rating model (default: the pool's)"
    )
    params: dict[str, Any] | None = Field(
        None,
        description="parameters over the pool's own (same model) or over the new model's "
        "defaults (another model), each within its bounds",
    )
    theta: Number | None = Field(None, ge=MIN_SCALE, le=MAX_SCALE, description="SynElo's Θ")
    autotune: AutoTuneIn | None = Field(
        None, description="auto-tuning; null turns it off (alone: applied at once, no re-rate)"
    )
    public: StrictBool | None = Field(
        None, description="open or close the public endpoints (applied at once, no re-rate)"
    )
    reason: Reason | None = None


class EmptyIn(BaseModel):
    """A body with nothing in it (any field is unknown)."""

    model_config = ConfigDict(extra="forbid")


class VoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Reason


class UnvoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Reason | None = None


class SeasonIn(BaseModel):
    """A new season of the pool: every rating pulled part of the way back toward its mean."""

    model_config = ConfigDict(extra="forbid")

    fraction: Number | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="the share of the way back, 0 (nothing) to 1 (everyone at the mean); "
        "default: the pool's model's (its `season` parameter, else 0.3)",
    )
    reason: Reason | None = None


class SeasonOut(BaseModel):
    """What a new season did."""

    pool: str
    fraction: float = Field(description="the share of the way back it took")
    default: bool = Field(description="true: none was given, it took the model's default")
    players: int = Field(description="the players it moved: every one who is not new")
    seq: int = Field(description="rounds the pool had stored when it began")


class ChangeOut(BaseModel):
    """An entry of a pool's admin log."""

    id: int
    seq: int = Field(description="rounds the pool had stored when it was made")
    kind: ChangeKind
    steam_id: str | None = Field(description="the player set, reset, hidden or renamed")
    round_id: str | None = Field(description="the round voided or unvoided")
    value: dict[str, Any] | None = Field(
        description='{"rating"}, {"model", "params"} (a re-rate\'s, with "changed": {name: '
        '[was, becomes]} since it is logged, and "autotune" when it set that), {"public"}, '
        '{"autotune"}, {"hidden"}, for a season '
        '{"fraction"} as given or {"default"} (the model\'s share it took), or, for a '
        'rename by a lookup\'s names, {"name", "was"}'
    )
    actor: str = Field(description="the token that made it: its label, or config:<role>#<n>")
    reason: str | None
    at: datetime


class ChangesOut(BaseModel):
    changes: list[ChangeOut]


class JobOut(BaseModel):
    """A background re-rate: running until the new ratings replace the old at once."""

    id: int
    pool: str
    kind: Literal["patch", "void", "unvoid", "tune", "refit", "advise"]
    status: Literal["running", "done", "failed", "cancelled"] = Field(
        description="cancelled: an advise job an admin stopped (POST …/jobs/{id}/cancel)"
    )
    phase: str = Field(
        description="queued, rating, solving (a full-history refit), swapping, advising "
        "(an advise job) or done"
    )
    total: int = Field(description="rounds to rate (those stored when the job started)")
    done: int = Field(
        description="rounds rated so far (an advise job: its share of the work done, as a "
        "number of rounds of total)"
    )
    error: str | None
    actor: str = Field(description="who asked for it")
    reason: str | None
    spec: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
