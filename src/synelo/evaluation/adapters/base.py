"""The replay's side of a rating model: the interface `replay` drives, match by match.

A rating model under replay predicts P(side A wins) from its current ratings, then learns
from the result. The replay calls `step` once per match, in order; nothing else. The models
themselves, their parameters and what `synelo tune` may fit of them, are `synelo.models`'
(one registry, each parameter declared once); this package only adapts them to a history
held in memory (see `synelo.evaluation.adapters`).

Options are given by name (``-p theta=800`` on the command line): a number, or one of a
parameter's `choices` by name (``-p epad=none``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from synelo.evaluation.history import Match
from synelo.evaluation.results import ResultCalibration

OptionValue = float | str  # a model option: a number, or one of a parameter's `choices`


@dataclass(frozen=True, slots=True)
class HistoryInfo:
    """What a model may know of a history before it starts: its largest team and header."""

    max_team_size: int = 1  # over the whole history: for reports, never for a default
    header: Mapping[str, Any] = field(default_factory=dict)
    first_team_size: int = 1  # the first match's larger side: known before anything is rated


class RatingModel(ABC):
    """A rating model under replay; `name` is the registered model's."""

    name: str

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

    def new_season(self, fraction: float | None) -> None:
        """A new season, as a pool of this model starts one: every rating pulled `fraction`
        of the way back toward the mean (None: the model's default share)."""
        raise ValueError(f"model {self.name!r} cannot start a season")

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
