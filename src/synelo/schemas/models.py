"""The rating models a pool can choose, and the parameters each takes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ModelParamOut(BaseModel):
    name: str
    default: float | int | str
    low: float | None = Field(description="the smallest value allowed (null: none)")
    high: float | None = Field(description="the largest value allowed (null: none)")
    above: bool = Field(description="the value must exceed `low`, not merely reach it")
    integer: bool
    log: bool = Field(description="scale-like: the tuner searches it on a log scale")
    choices: list[str] = Field(description="the values allowed, for a parameter that is text")
    doc: str


class ModelOut(BaseModel):
    name: str
    summary: str
    rating: str = Field(description="what the display rating is (e.g. μ − 3σ)")
    balance_by: Literal["strength", "p"] = Field(
        description="'strength': splits even out team sums of each player's strength; 'p': "
        "only the model's prediction says how even two teams are"
    )
    parameters: list[ModelParamOut]


class ModelsOut(BaseModel):
    models: list[ModelOut]
    pool_rules: list[ModelParamOut] = Field(
        description="parameters every pool takes whatever its model: the shadow and stale rules"
    )
