"""The rating models a pool can choose, by name: one interface (`base.Model`) that the
service, the replay and the simulator all rate through."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synelo.models.base import (
    Model,
    Param,
    ParameterError,
    ParamValue,
    Rated,
    Refitted,
    RoundError,
    RoundFacts,
    Scaling,
    resolve_params,
    score_a,
)
from synelo.models.elo import Elo
from synelo.models.hive import Hive
from synelo.models.openskill import (
    OpenSkillBradleyTerry,
    OpenSkillPlackettLuce,
    OpenSkillThurstoneMosteller,
)
from synelo.models.positional import Positional
from synelo.models.sectors_edge import SectorsEdge
from synelo.models.synelo import SynElo
from synelo.models.trueskill import TrueSkill
from synelo.models.whr import Whr

MODELS: dict[str, type[Model[Any]]] = {}


def register(cls: type[Model[Any]]) -> type[Model[Any]]:
    """Make a model available to pools, the replay and the tuner by its `name`."""
    if cls.name in MODELS:
        raise ValueError(f"a model named {cls.name!r} is registered already")
    MODELS[cls.name] = cls
    return cls


for _model in (
    SynElo,
    Elo,
    TrueSkill,
    Hive,
    OpenSkillPlackettLuce,
    OpenSkillBradleyTerry,
    OpenSkillThurstoneMosteller,
    Whr,
    Positional,
    SectorsEdge,
):
    register(_model)


def model_class(name: str) -> type[Model[Any]]:
    """The registered model called `name`; ValueError naming the known ones otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r} (known: {', '.join(MODELS)})") from None


def create_model(name: str, params: Mapping[str, object] | None = None) -> Model[Any]:
    """A model by name with `params` over its defaults (ParameterError if one is wrong)."""
    return model_class(name)(params)


__all__ = [
    "MODELS",
    "Model",
    "Param",
    "ParamValue",
    "ParameterError",
    "Rated",
    "Refitted",
    "RoundError",
    "RoundFacts",
    "Scaling",
    "create_model",
    "model_class",
    "register",
    "resolve_params",
    "score_a",
]
