"""A prediction for two teams before a round starts: P(A wins), the strengths, and the
score distribution of models that predict one."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from synelo.schemas.fields import MAX_LABEL, MAX_SIDE, Label, Text
from synelo.schemas.rounds import Commanders, SideNames, Sides


class PredictIn(BaseModel):
    """Two teams as they would start a round, and any optional round field the pool's
    model reads (validated as in a round report)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "example": {"teams": {"A": ["76561197960265730"], "B": ["76561197960265731"]}}
        },
    )

    teams: Sides
    map: Text = Field("", max_length=128)
    mode: Text | None = Field(None, min_length=1, max_length=MAX_LABEL)
    sides: SideNames | None = None
    commanders: Commanders | None = None
    positions: dict[str, Label] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player, e.g. offense/defense"
    )


class ResultOut(BaseModel):
    """One possible final score of the round and its predicted probability."""

    A: int = Field(description="team A's score (goals)")
    B: int = Field(description="team B's score (goals)")
    p: float = Field(description="its probability")


class PredictOut(BaseModel):
    p_a: float = Field(description="P(team A wins) from the current ratings")
    strength_a: float = Field(description="Σ of team A's strengths (what balancing evens out)")
    strength_b: float
    results: list[ResultOut] | None = Field(
        None,
        description="every possible final score with its probability, A's 0:G loss first "
        "(models that predict scores: positional); p_a is the sum over A's wins",
    )
