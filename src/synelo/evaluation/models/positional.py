"""`positional`: one Elo rating per position (`synelo.models.positional`) under replay, with
the calibration of its predicted score distribution over the matches that report scores."""

from __future__ import annotations

from typing import Any

from synelo.evaluation.history import Match
from synelo.evaluation.models.base import Bounds, register
from synelo.evaluation.models.served import (
    ServedModel,
    naming,
    numeric_defaults,
    round_facts,
    text_params,
)
from synelo.evaluation.results import ResultCalibration
from synelo.models.positional import Positional
from synelo.ratings.positional import result_index


@register
class PositionalModel(ServedModel):
    """`synelo.models.positional.Positional` under replay. Its traits are the rating at
    each position (`offense`, `defense`…), scored against a world's hidden skill of the same
    name; `calibration` holds the predicted against the observed results."""

    served = Positional
    name = Positional.name
    summary = Positional.summary
    defaults = numeric_defaults(Positional)
    texts = text_params(Positional)
    tunable = {
        "k": Bounds(1.0, 200.0, log=True),
        "own_weight": Bounds(0.0, 1.0),
        "spread_prior": Bounds(0.02, 1.0, log=True),
    }

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        model: Positional = self.model  # type: ignore[assignment]
        self.positional = model
        self.calibration = ResultCalibration(model.target)

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

    def traits(self) -> dict[str, dict[str, float]]:
        """The rating at every position, over the players who played there."""
        out: dict[str, dict[str, float]] = {}
        for player, state in self.states.items():
            for position, rating in state.ratings.items():
                out.setdefault(position, {})[player] = rating
        return out
