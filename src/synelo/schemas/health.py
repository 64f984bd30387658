"""A pool's public health figures: the Brier score by blocks, reliability, spread, Θ and
rounds per day."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field


class HealthBlockOut(BaseModel):
    first: int = Field(description="the block's first seq")
    last: int
    rounds: int = Field(description="its rounds not voided")
    brier: float = Field(description="F6 over them")


class HealthBinOut(BaseModel):
    low: float
    high: float
    rounds: int
    predicted: float | None = Field(description="their mean P_A (null: no round)")
    observed: float | None = Field(description="how often team A won (a draw: ½)")


class HealthSpreadOut(BaseModel):
    name: str = Field(description='"k" (SynElo) or the model\'s uncertainty field ("sigma"…)')
    players: int = Field(description="the players of the stale period it is over")
    low: float
    median: float
    high: float


class HealthThetaOut(BaseModel):
    current: float | None
    temperature: float | None = None  # F1t's T; the suggestion is a scale for Θ·T
    suggested: float | None
    status: str
    low: float | None
    high: float | None
    p_value: float | None
    rounds: int


class HealthDayOut(BaseModel):
    day: date
    rounds: int


class PublicHealthOut(BaseModel):
    pool: str
    model: str
    as_of_round: int = Field(description="the pool's rounds when the figures were computed")
    behind: bool = Field(description="newer rounds are being added to the figures")
    rounds: int = Field(description="rounds in the figures: rated and not voided")
    voided: int
    brier_target: float
    brier_all: float | None
    brier_recent: float | None
    blocks: list[HealthBlockOut] = Field(
        description="F6 by whole blocks of 400 rounds or more, the newest ending with the "
        "newest round, in seq order (none before 400 rounds)"
    )
    reliability: list[HealthBinOut] = Field(description="ten bins of P_A")
    spread: HealthSpreadOut | None = Field(description="K or the uncertainty; null: none")
    theta: HealthThetaOut
    rounds_per_day: list[HealthDayOut] = Field(description="UTC days, oldest first")
