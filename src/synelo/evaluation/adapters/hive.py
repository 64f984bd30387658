"""`hive`: the NS2 Hive model (`synelo.models.hive`) under replay, with its pool context in
memory and, on request, the full-history solve (H8) every `solve_every` matches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synelo.evaluation.adapters.base import HistoryInfo, OptionValue
from synelo.evaluation.adapters.model import ModelReplay, round_facts
from synelo.evaluation.history import Match
from synelo.models import Model, Param, RoundFacts
from synelo.models.hive import Hive


class HiveReplay(ModelReplay):
    """`synelo.models.hive.Hive` under replay. `-p solve_every=N` (0: never) re-fits every
    skill on all the matches so far (H8) after every N-th match, so that its gain is
    measured out of sample: each prediction still comes before its match is learned. (The
    solve, as a pool's, keeps no season of the history.)"""

    # the reference side comes from the history's header (see `create`), and the solve
    # runs every `solve_every` matches rather than at the end of a re-rate
    not_options = ("reference_side", "solve")

    @classmethod
    def options(cls, model: type[Model[Any]]) -> dict[str, Param]:
        """The model's options, and `solve_every`."""
        return {**super().options(model), "solve_every": Param(0)}

    @classmethod
    def create(
        cls, model: type[Model[Any]], options: Mapping[str, OptionValue], info: HistoryInfo
    ) -> ModelReplay:
        """As any model's replay, and with the history's `reference_side` when its header
        names one (a simulated world's does): its side offsets are then on the truth's
        side."""
        replayed = super().create(model, options, info)
        side = info.header.get("reference_side")
        if isinstance(side, str) and side and isinstance(replayed, HiveReplay):
            replayed.model = Hive({**replayed.model.params, "reference_side": side})
        return replayed

    def __init__(self, model: type[Model[Any]], options: Mapping[str, OptionValue]) -> None:
        rest = dict(options)
        self.solve_every = int(rest.pop("solve_every", 0))
        super().__init__(model, rest)
        self.history: list[RoundFacts] = []

    def step(self, match: Match) -> float:
        p_a = super().step(match)
        if self.solve_every > 0:
            self.history.append(round_facts(match))
            if len(self.history) % self.solve_every == 0:
                model: Hive = self.model  # type: ignore[assignment]
                self.states.update(model.solve(self.states, self.history, self.context))
        return p_a

    def inert(self) -> dict[str, str]:
        return {
            "display_scale": "it scales the display only",
            "solve_every": "a replay option, not a rating parameter",
        }
