"""The rating models under replay: every model of `synelo.models`' one registry, replayed by
`ModelReplay` unless its replay needs an adapter of its own.

A model is found by its registered name, and its replay by its class: SynElo's replays
through the service's fast path (`SynEloReplay`), Hive's can solve every N matches, WHR's
gives its matches days and can refit every N, and Positional's scores its predicted results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synelo.evaluation.adapters.base import HistoryInfo, OptionValue, RatingModel
from synelo.evaluation.adapters.hive import HiveReplay
from synelo.evaluation.adapters.model import ModelReplay
from synelo.evaluation.adapters.positional import PositionalReplay
from synelo.evaluation.adapters.synelo import SynEloReplay
from synelo.evaluation.adapters.whr import WhrReplay
from synelo.models import MODELS, Model
from synelo.models.hive import Hive
from synelo.models.positional import Positional
from synelo.models.synelo import SynElo
from synelo.models.whr import Whr

Adapter = type[ModelReplay] | type[SynEloReplay]

# The models whose replay is more than `ModelReplay`: by model class, not by name.
SPECIAL: Mapping[type[Model[Any]], Adapter] = {
    SynElo: SynEloReplay,
    Hive: HiveReplay,
    Whr: WhrReplay,
    Positional: PositionalReplay,
}


def replayer(model: type[Model[Any]]) -> Adapter:
    """The adapter that replays `model`: its own where it has one, else `ModelReplay`."""
    return SPECIAL.get(model, ModelReplay)


def _registered(name: str) -> type[Model[Any]]:
    """The registered model called `name`; ValueError naming the known ones otherwise."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r} (known: {', '.join(sorted(MODELS))})")
    return MODELS[name]


def parse_options(model: type[Model[Any]], pairs: Mapping[str, str]) -> dict[str, OptionValue]:
    """``{"theta": "800"}`` → ``{"theta": 800.0}`` for the options the model's replay takes
    (`replayer(model).options`), a parameter of `choices` keeping its name
    (``{"epad": "none"}``); an unknown parameter, a value that is not a number or a name not
    among the choices raises ValueError."""
    specs = replayer(model).options(model)
    numbers = [name for name, spec in specs.items() if not spec.choices and not spec.text]
    out: dict[str, OptionValue] = {}
    for key, raw in pairs.items():
        spec = specs.get(key)
        if spec is not None and spec.choices:
            if raw not in spec.choices:
                allowed = ", ".join(spec.choices)
                raise ValueError(f"parameter {key!r}: {raw!r} is not one of {allowed}")
            out[key] = raw
            continue
        if spec is not None and spec.text:
            out[key] = raw
            continue
        if spec is None:
            choices = [name for name, s in specs.items() if s.choices]
            texts = [name for name, s in specs.items() if s.text]
            known = ", ".join([*numbers, *choices, *texts]) or "none"
            raise ValueError(f"model {model.name!r} has no parameter {key!r} (known: {known})")
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"parameter {key!r}: {raw!r} is not a number") from None
        out[key] = int(value) if isinstance(spec.default, int) and value.is_integer() else value
    return out


def create_replay(
    name: str, options: Mapping[str, OptionValue] | None = None, info: HistoryInfo | None = None
) -> RatingModel:
    """A fresh replay of the model registered as `name` (`synelo.models.MODELS`), through its
    adapter; ValueError for an unknown name or bad options."""
    model = _registered(name)
    return replayer(model).create(model, dict(options or {}), info or HistoryInfo())


__all__ = [
    "SPECIAL",
    "Adapter",
    "HistoryInfo",
    "ModelReplay",
    "OptionValue",
    "RatingModel",
    "create_replay",
    "parse_options",
    "replayer",
]
