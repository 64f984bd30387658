"""Team balancing: the splits of a roster into teams, and autobalance's moves."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from synelo.schemas.fields import MAX_SIDE, PlayerId

MAX_PLAYERS = 2 * MAX_SIDE


# players who want to stay on one team: two or more, each listed once
Party = Annotated[list[PlayerId], Field(min_length=2, max_length=MAX_PLAYERS)]


class Teams(BaseModel):
    """Present teams; either may be empty (a 3v0 is exactly what autobalance is for)."""

    A: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)
    B: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)


class SplitsIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "players": [
                    "76561197960265730",
                    "76561197960265731",
                    "76561197960265732",
                    "76561197960265733",
                    "76561197960265734",
                ],
                "current": {
                    "A": ["76561197960265730", "76561197960265731"],
                    "B": ["76561197960265732", "76561197960265733"],
                },
                "parties": [],
                "must_play": ["76561197960265734"],
                "min_k": 2,
                "max_k": None,
                "prefer": "mix",
            }
        }
    )

    players: list[PlayerId] = Field(min_length=4, max_length=MAX_PLAYERS)
    current: Teams | None = None
    parties: list[Party] = Field(default_factory=list, max_length=MAX_PLAYERS)
    must_play: list[PlayerId] = Field(default_factory=list, max_length=MAX_PLAYERS)
    min_k: int = Field(2, ge=1, le=MAX_SIDE)
    max_k: int | None = Field(None, ge=1, le=MAX_SIDE)
    prefer: Literal["stay", "mix"] | None = "mix"
    mode: Literal["even", "all-play"] | None = Field(
        None,
        description="even: k against k by equal strength sums, for every k from min_k to "
        "max_k; all-play: one split, everyone plays, ⌊n/2⌋ against ⌈n/2⌉, by the least "
        "|logit P(A)| of the pool's model where it has a split logit (W12: whr), otherwise by "
        "the least |Σ_A − Σ_B| of the strengths the even splits use (W12 by F1's sums; every "
        "other model). Default: the model's split mode",
    )


class SplitOut(BaseModel):
    k: int = Field(
        description="even: the players on each team; all-play: ⌊n/2⌋, the size of the smaller "
        "team (A or B; for odd n the other has one more)"
    )
    A: list[str]
    B: list[str]
    bench: list[str] = Field(description="players who sit out (all-play: always empty)")
    sum_a: int
    sum_b: int
    gap: int
    p_a: float
    optimal: bool = Field(
        description="the gap (all-play by a logit: |logit|) is proven minimal at the rating "
        "resolution"
    )
    moved: int | None = Field(
        description="players on a team now who change team (null without current)"
    )
    moved_optimal: bool | None = Field(
        description="prefer is proven honoured among the "
        "splits with this gap (null without current)"
    )
    split_parties: list[list[str]] = Field(description="parties that could not stay together")
    logit: float | None = Field(
        None,
        description="all-play by a logit: the model's logit P(A) on the strengths the split "
        "was chosen by, whose absolute value it minimises (W12); null for even splits and for "
        "all-play splits by sums",
    )


class SplitsOut(BaseModel):
    splits: list[SplitOut]
    mode: Literal["even", "all-play"] = Field(
        "even", description="how the splits were chosen (see the request's mode)"
    )
    solver: Literal["exact", "greedy"]
    elapsed_ms: float = Field(
        description="since the request began: waiting for the solver, reading and solving "
        "(the budget SYNELO_BALANCE_BUDGET_MS covers all of it)"
    )


class AutobalanceIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "teams": {
                    "A": ["76561197960265730", "76561197960265731", "76561197960265732"],
                    "B": ["76561197960265733"],
                },
                "joiner": None,
                "locked": [],
                "alive": ["76561197960265730", "76561197960265731"],
                "parties": [],
                "method": "f11",
            }
        }
    )

    teams: Teams
    joiner: PlayerId | None = None
    unassigned: list[PlayerId] = Field(default_factory=list, max_length=MAX_PLAYERS)
    locked: list[PlayerId] = Field(default_factory=list, max_length=MAX_PLAYERS)
    alive: list[PlayerId] = Field(
        default_factory=list,
        max_length=MAX_PLAYERS,
        description="f11 only: the players now alive, costly to move mid-round. The dead-first "
        "rule then moves dead players only when that leaves the predicted P(A) at most 0.02 "
        "further from 0.5 than the best transfer; otherwise the best transfer stands. Empty: "
        "the best transfer, whoever it moves",
    )
    parties: list[Party] = Field(default_factory=list, max_length=MAX_PLAYERS)
    method: Literal["f11", "min_swaps"] = "f11"


class MoveOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    steam_id: str
    from_: Literal["A", "B", "none"] = Field(alias="from")
    to: Literal["A", "B"]


class AutobalanceOut(BaseModel):
    method: str
    moves: list[MoveOut]
    gap_before: int
    gap_after: int
    sum_a: int
    sum_b: int
    size_a: int
    size_b: int
