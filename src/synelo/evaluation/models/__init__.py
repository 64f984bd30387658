"""The rating models a replay can run, by name (see `base` for the boundary)."""

from synelo.evaluation.models import (  # noqa: F401 (register)
    elo,
    hive,
    openskill,
    positional,
    sectors_edge,
    synelo,
    trueskill,
    whr,
)
from synelo.evaluation.models.base import (
    MODELS,
    Bounds,
    HistoryInfo,
    RatingModel,
    create_model,
    parse_options,
    register,
)

__all__ = [
    "MODELS",
    "Bounds",
    "HistoryInfo",
    "RatingModel",
    "create_model",
    "parse_options",
    "register",
]
