"""How well a predicted distribution of final scores matches the scores that came.

A positional pool predicts the probability of every result of a game to G goals (2G of
them, 0:G to G:0). Over a replay, each result's predicted probabilities are summed and
compared with how often it came: a calibrated model predicts each result as often as it
happens. The categorical log loss of the results says how sharp the distribution is,
beside the 2G-way coin, log 2G.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ResultCalibration:
    """The predicted and observed counts of each result (index 0: A's 0:G loss)."""

    target: int
    predicted: list[float] = field(default_factory=list)
    observed: list[int] = field(default_factory=list)
    log_loss_sum: float = 0.0
    matches: int = 0

    def __post_init__(self) -> None:
        if not self.predicted:
            self.predicted = [0.0] * (2 * self.target)
            self.observed = [0] * (2 * self.target)

    def add(self, probabilities: Sequence[float], index: int) -> None:
        """One match: its predicted distribution and the index of the result that came."""
        for i, p in enumerate(probabilities):
            self.predicted[i] += p
        self.observed[index] += 1
        self.log_loss_sum -= math.log(max(probabilities[index], 1e-300))
        self.matches += 1

    @property
    def log_loss(self) -> float | None:
        """The mean −log P(the result that came)."""
        return self.log_loss_sum / self.matches if self.matches else None

    @property
    def uniform_log_loss(self) -> float:
        """The log loss of giving every result the same chance: log 2G."""
        return math.log(2 * self.target)

    def label(self, index: int) -> str:
        """Result `index` as "A:B" goals."""
        g = self.target
        return f"{g}:{2 * g - 1 - index}" if index >= g else f"{index}:{g}"

    def to_json(self) -> dict[str, Any]:
        n = self.matches or 1
        return {
            "matches": self.matches,
            "log_loss": self.log_loss,
            "uniform_log_loss": self.uniform_log_loss,
            "results": [
                {
                    "result": self.label(i),
                    "predicted": self.predicted[i] / n,
                    "observed": self.observed[i] / n,
                }
                for i in range(2 * self.target)
            ],
        }
