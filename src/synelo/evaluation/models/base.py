"""The model boundary of the replay: one class per rating model, found by name.

A model predicts P(side A wins) from its current ratings, then learns from the result. The
replay calls `step` once per match, in order; nothing else. A new model (NS2 Hive,
positional ratings, Whole History Rating…) is one subclass with a `name`, registered with
`@register`, in a module imported by `synelo.evaluation.models`.

Parameters are given by name (``-p theta=800`` on the command line). A model lists its
numeric parameters with their defaults in `defaults`, and in `choices` those that take one
of a few names (``-p epad=none``) with the names allowed; `tunable` names those `synelo tune`
may fit, with their search bounds, and `scalings` the sets of parameters that only matter
through their ratios, so that `synelo tune` never fits all of a set (one of them is
redundant).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from synelo.evaluation.history import Match
from synelo.evaluation.results import ResultCalibration

OptionValue = float | str  # a model option: a number, or one of a parameter's `choices`


@dataclass(frozen=True, slots=True)
class HistoryInfo:
    """What a model may know of a history before it starts: its largest team and header."""

    max_team_size: int = 1  # over the whole history: for reports, never for a default
    header: Mapping[str, Any] = field(default_factory=dict)
    first_team_size: int = 1  # the first match's larger side: known before anything is rated


@dataclass(frozen=True, slots=True)
class Bounds:
    """Where `synelo tune` searches a parameter (log scale for scale-like parameters)."""

    low: float
    high: float
    log: bool = False


@dataclass(frozen=True, slots=True)
class Scaling:
    """Parameters that matter only through their ratios: multiplying every one of them by the
    same c > 0 leaves every prediction unchanged (tests/unit/test_models.py checks each one
    declared). Fitting all of them searches a line of equal losses and reports an arbitrary
    point of it, so `synelo tune` fits the first of `names` and holds the others."""

    names: tuple[str, ...]
    why: str
    equal_sides: bool = False  # exact only when every match has as many players on each side

    def holds_on(self, matches: Iterable[Match]) -> bool:
        """Whether the scaling is exact on these matches."""
        return not self.equal_sides or all(len(m.team_a) == len(m.team_b) for m in matches)


class RatingModel(ABC):
    """A rating model under replay."""

    name: ClassVar[str]
    summary: ClassVar[str]
    defaults: ClassVar[Mapping[str, float]] = {}
    choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    texts: ClassVar[tuple[str, ...]] = ()  # parameters that take free text (positions…)
    tunable: ClassVar[Mapping[str, Bounds]] = {}
    scalings: ClassVar[tuple[Scaling, ...]] = ()

    @classmethod
    def create(cls, options: Mapping[str, OptionValue], info: HistoryInfo) -> RatingModel:
        """A fresh model (no ratings yet) with `options` over the defaults."""
        return cls(**options)

    @abstractmethod
    def predict(self, match: Match) -> float:
        """P(side A wins) from the ratings before the match."""

    @abstractmethod
    def update(self, match: Match) -> None:
        """Learn from the match's result."""

    def step(self, match: Match) -> float:
        """Predict, then update; returns the prediction."""
        p = self.predict(match)
        self.update(match)
        return p

    @abstractmethod
    def ratings(self) -> dict[str, float]:
        """Each player's current rating (the model's own scale)."""

    def display_ratings(self) -> dict[str, float]:
        """Each player's display rating, as a pool of this model shows it (`--ratings-out`):
        the ratings unless a model shows something else (μ − 3σ for the Gaussian models)."""
        return self.ratings()

    def strength_of(self, player: str) -> float | None:
        """The player's current strength on the model's own scale (None: never rated). The
        replay asks it of every participant after each match when scoring against a
        simulated world's truth, so a model with many players overrides this cheaply."""
        return self.ratings().get(player)

    def traits(self) -> dict[str, dict[str, float]]:
        """Other per-player figures the model learns, by name (a side offset, a commanding
        skill…), for scoring against a simulated world's hidden values of the same name."""
        return {}

    def set_rating(self, player: str, rating: float) -> None:
        """An admin set, as a pool of this model applies it (a history's event line)."""
        raise ValueError(f"model {self.name!r} cannot apply an admin set")

    def reset(self, player: str) -> None:
        """An admin reset: the player starts again as new."""
        raise ValueError(f"model {self.name!r} cannot apply an admin reset")

    def result_calibration(self) -> ResultCalibration | None:
        """For a model that predicts final scores (positional): its predicted against its
        observed results over the matches replayed that reported scores."""
        return None

    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """The parameters in use, for reports."""

    def inert(self) -> dict[str, str]:
        """Parameters that change no prediction as this model is configured, each with why
        (`synelo tune` refuses to fit them)."""
        return {}


MODELS: dict[str, type[RatingModel]] = {}


def register(cls: type[RatingModel]) -> type[RatingModel]:
    """Class decorator: make the model available to replay and tune by its `name`."""
    if cls.name in MODELS:
        raise ValueError(f"a model named {cls.name!r} is registered already")
    MODELS[cls.name] = cls
    return cls


def parse_options(model: type[RatingModel], pairs: Mapping[str, str]) -> dict[str, OptionValue]:
    """``{"theta": "800"}`` → ``{"theta": 800.0}`` for the model's known parameters, a
    parameter of `choices` keeping its name (``{"epad": "none"}``); an unknown parameter, a
    value that is not a number or a name not among the choices raises ValueError."""
    out: dict[str, OptionValue] = {}
    for key, raw in pairs.items():
        if key in model.choices:
            if raw not in model.choices[key]:
                allowed = ", ".join(model.choices[key])
                raise ValueError(f"parameter {key!r}: {raw!r} is not one of {allowed}")
            out[key] = raw
            continue
        if key in model.texts:
            out[key] = raw
            continue
        if key not in model.defaults:
            known = ", ".join([*model.defaults, *model.choices, *model.texts]) or "none"
            raise ValueError(f"model {model.name!r} has no parameter {key!r} (known: {known})")
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"parameter {key!r}: {raw!r} is not a number") from None
        out[key] = (
            int(value) if isinstance(model.defaults[key], int) and value.is_integer() else value
        )
    return out


def create_model(
    name: str, options: Mapping[str, OptionValue] | None = None, info: HistoryInfo | None = None
) -> RatingModel:
    """A fresh model by registered name; ValueError for an unknown name or bad options."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r} (known: {', '.join(sorted(MODELS))})")
    return MODELS[name].create(dict(options or {}), info or HistoryInfo())
