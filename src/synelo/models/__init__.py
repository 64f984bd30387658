"""The rating models a pool can choose, by name: one interface (`base.Model`) that the
service, the replay and the simulator all rate through.

The registry names the built-in models' modules and imports one on first use: Hive and WHR
need SciPy, TrueSkill and OpenSkill their libraries, and a command that rates with SynElo, or
only lists the names, should not wait for them."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
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

# Each built-in model's name → "module:class", in the order the service and the CLI list them.
BUILT_IN = {
    "synelo": "synelo.models.synelo:SynElo",
    "elo": "synelo.models.elo:Elo",
    "trueskill": "synelo.models.trueskill:TrueSkill",
    "hive": "synelo.models.hive:Hive",
    "openskill-pl": "synelo.models.openskill:OpenSkillPlackettLuce",
    "openskill-bt": "synelo.models.openskill:OpenSkillBradleyTerry",
    "openskill-tm": "synelo.models.openskill:OpenSkillThurstoneMosteller",
    "whr": "synelo.models.whr:Whr",
    "margin": "synelo.models.margin:Margin",
    "positional": "synelo.models.positional:Positional",
    "sectors-edge": "synelo.models.sectors_edge:SectorsEdge",
    "epa": "synelo.models.epa:Epa",
}


class Registry(MutableMapping[str, type[Model[Any]]]):
    """Model classes by name. A built-in one is a "module:class" path until it is looked up,
    then its class, imported once; iterating gives the names without importing any."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        self._entries: dict[str, str | type[Model[Any]]] = dict(paths)

    def __getitem__(self, name: str) -> type[Model[Any]]:
        entry = self._entries[name]
        if not isinstance(entry, str):
            return entry
        module, _, attribute = entry.partition(":")
        cls: type[Model[Any]] = getattr(importlib.import_module(module), attribute)
        self._entries[name] = cls
        return cls

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __setitem__(self, name: str, cls: type[Model[Any]]) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]


MODELS = Registry(BUILT_IN)


def register(cls: type[Model[Any]]) -> type[Model[Any]]:
    """Make a model available to pools, the replay and the tuner by its `name`."""
    if cls.name in MODELS:
        raise ValueError(f"a model named {cls.name!r} is registered already")
    MODELS[cls.name] = cls
    return cls


def model_class(name: str) -> type[Model[Any]]:
    """The registered model called `name`; ValueError naming the known ones otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r} (known: {', '.join(MODELS)})") from None


def pool_models() -> list[str]:
    """The models a pool may choose, in the registry's order: all but the replay-only peers
    (`Model.replay_only`), which replays compare with."""
    return [name for name in MODELS if not MODELS[name].replay_only]


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
    "pool_models",
    "register",
    "resolve_params",
    "score_a",
]
