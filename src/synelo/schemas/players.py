"""A pool's players as admins and servers see them: look-ups, an admin's set and hide,
the rating history and the leaderboard."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from synelo.schemas.fields import DisplayName, PlayerId, Reason


class PlayerOut(BaseModel):
    steam_id: str
    name: str | None = Field(description="the display name last reported; never an id")
    rating: int
    visible: bool
    rounds_played: int
    stale: bool
    last_played: datetime | None
    convergence: float | None = Field(
        description="F3's C for the next round (SynElo pools; null otherwise)"
    )
    k: float | None = Field(description="F5's K for the next round (SynElo pools; null otherwise)")
    skill: dict[str, float] = Field(
        description="the pool's model's own figures of the player: SynElo's convergence and "
        "k, Elo's rating, TrueSkill's and openskill's mu and sigma"
    )
    hidden: bool = Field(False, description="an admin hid the player from public lists")
    place: int | None = Field(
        None,
        description="the player's place on the pool's public board (1 = the best), the one "
        "the public leaderboard gives; null when not listed there: in the shadow period, "
        "stale, or hidden",
    )


class LookupIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steam_ids: list[PlayerId] = Field(min_length=1, max_length=256)
    names: dict[str, DisplayName] | None = Field(
        None,
        max_length=256,
        description="display names of players among steam_ids, recorded for players the "
        "pool has stored (a player not yet rated keeps none until a round names them)",
    )


class LookupOut(BaseModel):
    shadow_rounds: int = Field(
        description="T: rounds a player needs before being listed (the pool's t_shadow)"
    )
    players: list[PlayerOut]


class RatingIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: StrictInt
    reason: Reason | None = None


class HiddenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hidden: StrictBool = Field(description="true: left out of every public list")
    reason: Reason | None = None


class JournalOut(BaseModel):
    id: int
    kind: Literal["round", "set", "reset", "solve", "season"]
    round_id: str | None
    seq: int | None
    team: str | None
    before: int
    after: int
    delta: int
    k: float | None
    p: float | None = Field(
        description="the expected score the step used (F2: after = before + k·(s − p)); in a "
        "SynElo pool with a temperature T ≠ 1 the round's shown chance differs (F1t)"
    )
    s: float | None
    at: datetime = Field(
        description="a round's: when it was played (the report's ended_at, else its "
        "started_at, never after the service received it; else when it received it); another "
        "entry's: when it was made"
    )


class HistoryOut(BaseModel):
    steam_id: str
    name: str | None
    entries: list[JournalOut]


class LeaderOut(BaseModel):
    rank: int
    steam_id: str
    name: str | None
    rating: int
    rounds_played: int
    stale: bool
    last_played: datetime | None


class LeaderboardOut(BaseModel):
    players: list[LeaderOut]
