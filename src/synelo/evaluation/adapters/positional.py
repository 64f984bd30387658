"""`positional`: one Elo rating per position (`synelo.models.positional`) under replay, with
the calibration of its predicted score distribution over the matches that report scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synelo.evaluation.adapters.base import OptionValue
from synelo.evaluation.adapters.model import ModelReplay, naming, round_facts
from synelo.evaluation.history import Match
from synelo.evaluation.results import ResultCalibration
from synelo.models import Model
from synelo.models.positional import Positional
from synelo.ratings.positional import result_index


class PositionalReplay(ModelReplay):
    """`synelo.models.positional.Positional` under replay. Its traits are the rating at
    each position (`offense`, `defense`…), scored against a world's hidden skill of the same
    name; `calibration` holds the predicted against the observed results."""

    # a pool's check of the positions reported, which the replay has never offered
    not_options = ("one_per_position",)

    def __init__(self, model: type[Model[Any]], options: Mapping[str, OptionValue]) -> None:
        super().__init__(model, options)
        positional: Positional = self.model  # type: ignore[assignment]
        self.positional = positional
        self.calibration = ResultCalibration(positional.target)

    def step(self, match: Match) -> float:
        facts = round_facts(match)
        scores = facts.extras.get("scores")
        if scores is not None and match.winner != "draw":
            with naming(match):
                self.positional.check_round(facts)
            probabilities = [
                p for _, _, p in self.positional.results(self.states, facts, self.entries(facts))
            ]
            index = result_index(
                match.winner, int(scores["A"]), int(scores["B"]), self.positional.target
            )
            self.calibration.add(probabilities, index)
        return super().step(match)

    def result_calibration(self) -> ResultCalibration:
        return self.calibration
