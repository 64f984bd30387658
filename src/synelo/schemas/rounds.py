"""A round report and its answer: the teams, the optional round fields the models read,
and each player's rating change."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from synelo.schemas.fields import (
    MAX_DURATION,
    MAX_LABEL,
    MAX_SIDE,
    DisplayName,
    Label,
    Moment,
    Number,
    PlayerId,
    RoundId,
    ServerId,
    Text,
)


class Sides(BaseModel):
    model_config = ConfigDict(extra="forbid")

    A: list[PlayerId] = Field(min_length=1, max_length=MAX_SIDE)
    B: list[PlayerId] = Field(min_length=1, max_length=MAX_SIDE)


class ParticipantSides(BaseModel):
    model_config = ConfigDict(extra="forbid")

    A: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)
    B: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)


class SideNames(BaseModel):
    """The side each team played, e.g. RED/BLU or marines/aliens."""

    model_config = ConfigDict(extra="forbid")

    A: Text = Field(min_length=1, max_length=MAX_LABEL)
    B: Text = Field(min_length=1, max_length=MAX_LABEL)

    @model_validator(mode="after")
    def _different(self) -> SideNames:
        if self.A == self.B:
            raise ValueError("the two teams cannot play the same side")
        return self


class TeamScores(BaseModel):
    """Each team's score, e.g. goals in a game to 10."""

    model_config = ConfigDict(extra="forbid")

    A: StrictInt = Field(ge=0, le=1_000_000)
    B: StrictInt = Field(ge=0, le=1_000_000)


class PlayedSpan(BaseModel):
    """When a player entered and left the round, in seconds from its start."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    from_: Number = Field(alias="from", ge=0, le=MAX_DURATION)
    to: Number = Field(ge=0, le=MAX_DURATION)

    @model_validator(mode="after")
    def _ordered(self) -> PlayedSpan:
        if self.to < self.from_:
            raise ValueError("'to' comes before 'from'")
        return self


class CommandSpan(PlayedSpan):
    """A commander and when they commanded, in seconds from the round's start; the rest of
    their time in the round they played as a field player."""

    player: PlayerId


class Commanders(BaseModel):
    """Each team's commander (NS2), one of that team's players: a player, who commands for
    their whole time in the round, or `{"player", "from", "to"}`."""

    model_config = ConfigDict(extra="forbid")

    A: PlayerId | CommandSpan
    B: PlayerId | CommandSpan


PlayedFraction = Annotated[Number, Field(ge=0, le=1)]


class RoundIn(BaseModel):
    """A round report. `teams` are the rosters at round start (they decide P);
    `participants` are the players rated (default: `teams`). The optional fields describe
    the round for the models that use them; the service stores every field as reported, and
    a field it does not know is an error."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "example": {
                "round_id": "srv1-2026-11-21T20:15:03-17",
                "server_id": "srv1",
                "map": "arena_well",
                "winner": "A",
                "teams": {"A": ["76561197960265730"], "B": ["76561197960265731"]},
            }
        },
    )

    round_id: RoundId = Field(description="unique in the pool; not '.' or '..'")
    server_id: ServerId = Field(description="the reporting server; not '.' or '..'")
    map: Text = Field("", max_length=128)
    winner: Literal["A", "B", "draw"]
    teams: Sides
    participants: ParticipantSides | None = None
    mode: Text | None = Field(
        None, min_length=1, max_length=MAX_LABEL, description="game mode, e.g. koth, ctf"
    )
    started_at: Moment | None = Field(None, description="ISO 8601, with a time zone")
    ended_at: Moment | None = Field(None, description="ISO 8601, with a time zone")
    duration: Number | None = Field(
        None, gt=0, le=MAX_DURATION, description="the round's length in seconds"
    )
    sides: SideNames | None = None
    commanders: Commanders | None = None
    scores: TeamScores | None = None
    time_played: dict[str, PlayedFraction | PlayedSpan] | None = Field(
        None,
        max_length=2 * MAX_SIDE,
        description="per player: the fraction of the round played from its start (0–1), or "
        '{"from": s, "to": s} in seconds from the start',
    )
    positions: dict[str, Label] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player, e.g. offense/defense"
    )
    player_scores: dict[str, Number] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player: scoreboard points"
    )
    names: dict[str, DisplayName] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player: display name"
    )

    @model_validator(mode="after")
    def _times_ordered(self) -> RoundIn:
        if self.started_at and self.ended_at and self.ended_at < self.started_at:
            raise ValueError("ended_at comes before started_at")
        if self.duration is not None and self.time_played:
            for player, played in self.time_played.items():
                if isinstance(played, PlayedSpan) and played.to > self.duration:
                    raise ValueError(f"time_played.{player}: 'to' is after the round's end")
        if self.duration is not None and self.commanders is not None:
            for side, given in (("A", self.commanders.A), ("B", self.commanders.B)):
                if isinstance(given, CommandSpan) and given.to > self.duration:
                    raise ValueError(f"commanders.{side}: 'to' is after the round's end")
        return self


class PlayerChangeOut(BaseModel):
    steam_id: str
    team: Literal["A", "B"]
    before: int
    after: int
    delta: int
    k: float | None = Field(description="F5's K this round (SynElo pools; null otherwise)")
    visible: bool
    rounds_played: int


class RoundOut(BaseModel):
    round_id: str
    seq: int
    winner: str
    p_a: float
    sum_a: int
    sum_b: int
    players: list[PlayerChangeOut]
