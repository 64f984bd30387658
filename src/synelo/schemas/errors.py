"""The body of every error answer but a 422."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorOut(BaseModel):
    """Every error but a 422: what went wrong, in a sentence."""

    detail: str
    job_id: int | None = Field(
        None, description="the running re-rate (a 409 because one runs on the pool)"
    )
