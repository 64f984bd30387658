"""A pool's advice: which general model predicts its own rounds best (`synelo advise`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class AdviceOut(BaseModel):
    """The pool's latest advice, as its advise job left it in the admin log."""

    pool: str
    job: int | None = Field(description="the advise job that made it")
    actor: str = Field(description="who asked for it")
    at: datetime
    verdict: str = Field(description="the recommendation in a sentence")
    recommended: dict[str, Any] = Field(
        description='{"model", "setting", "params", "log_loss"}: the general model (and '
        "setting: defaults or tuned) with the lowest log loss on the newer rounds"
    )
    switch: dict[str, Any] | None = Field(
        description="the PATCH body that makes the pool rate with it: its model and every "
        "parameter it was scored with (null: keep the pool as it is, or the advice is stale)"
    )
    stale: str | None = Field(
        None,
        description="why the advice no longer fits the pool (its model or parameters "
        "changed since it was made); null while it does",
    )
    runner_up: dict[str, Any] | None = Field(
        description="the best row of another general model: the mean paired per-round "
        "log-loss difference, its standard error and whether it exceeds 2 SE"
    )
    over_current: dict[str, Any] | None = Field(
        description="the same, against the pool's model as set up"
    )
    rows: list[dict[str, Any]] = Field(
        description="every model and setting: log loss, Brier, ECE, calibration-in-the-"
        "large and slope on the newer rounds"
    )
    warnings: list[str] = Field(
        description="general models over 3 % worse than plain Elo, tuned values on their "
        "search bound, and a note when the pool auto-tunes (its own row is then optimistic)"
    )
    details: dict[str, Any] = Field(description="everything `synelo advise --json` writes")
