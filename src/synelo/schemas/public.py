"""The public endpoints' answers (/v1/public/…): pools, the board, a player's history
and a round, as anyone may read them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class PublicPoolOut(BaseModel):
    name: str
    model: str
    rating: str = Field(description="what its ratings are (the model's display rating)")
    rounds: int = Field(description="rounds rated (voided ones not counted)")
    active_week: int = Field(description="players who played in the last 7 days")


class PublicPoolsOut(BaseModel):
    pools: list[PublicPoolOut]


class PublicPlayerOut(BaseModel):
    steam_id: str = Field(description="the player's id (a SteamID64 or a text id)")
    name: str | None
    rounds_played: int
    last_played: datetime | None
    provisional: bool = Field(description="still in the shadow period: no rating shown")
    rounds_left: int = Field(description="rounds until the rating is shown (0 once it is)")
    rating: int | None = Field(description="the display rating; null while provisional")
    place: int | None = Field(
        description="place on the public board (null: not listed there: provisional, stale)"
    )


class RatingBinsOut(BaseModel):
    """A rating distribution: counts[i] players rated within the i-th of len(counts) equal
    ranges from low to high (the highest rating in the last)."""

    low: float
    high: float
    counts: list[int]


class PublicBoardOut(BaseModel):
    pool: str
    shadow_rounds: int = Field(description="T: rounds a player needs before being listed")
    total: int = Field(description="players listed (matching the search, if any)")
    offset: int
    players: list[PublicPlayerOut]
    trends: dict[str, int] = Field(
        description="each player of this page's rating change over their last 10 rounds "
        "(an admin's set or reset in between is left out), by steam_id"
    )
    histogram: RatingBinsOut = Field(
        description="the ratings of the whole board (every listed player, whatever the "
        "search or page) in 20 equal ranges"
    )


class PublicEntryOut(BaseModel):
    """One entry of a player's rating history as public pages show it."""

    kind: Literal["round", "set", "reset", "solve", "season"] = Field(
        description="a rated round, an admin's set or reset, a model's refit, or a new season"
    )
    round_id: str | None
    team: str | None
    p: float | None = Field(
        description="the player's team's predicted chance (rounds), to the percent"
    )
    s: float | None = Field(description="the player's result: 1 won, 0 lost, ½ a draw")
    before: int | None = Field(description="null while the player is provisional")
    after: int | None = Field(description="null while the player is provisional")
    at: datetime = Field(
        description="a round's: when it was played (the report's ended_at, else its "
        "started_at, never after the service received it; else when it received it); another "
        "entry's: when it was made"
    )


class PublicHistoryOut(BaseModel):
    player: PublicPlayerOut
    entries: list[PublicEntryOut] = Field(description="newest first")
    voided: list[str] = Field(description="round_ids of the player's rounds an admin voided")


class PublicRoundPlayerOut(BaseModel):
    steam_id: str | None = Field(description="null for a player an admin hid")
    name: str = Field(description='the display name, the id, or "a hidden player"')
    provisional: bool
    before: int | None = Field(description="null when provisional, hidden or not rated")
    after: int | None


class PublicRoundOut(BaseModel):
    round_id: str
    seq: int
    at: datetime = Field(
        description="when it was played: the report's ended_at, else its started_at, never "
        "after the service received it; else when it received it"
    )
    map: str
    winner: str
    p_a: float = Field(
        description="team A's predicted chance when the round was rated, to the percent"
    )
    voided: bool
    A: list[PublicRoundPlayerOut]
    B: list[PublicRoundPlayerOut]
