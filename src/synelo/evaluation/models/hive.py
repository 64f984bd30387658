"""`hive`: the NS2 Hive model (`synelo.models.hive`) under replay, with its pool context in
memory and, on request, the full-history solve (H8) every `solve_every` matches."""

from __future__ import annotations

from collections.abc import Mapping

from synelo.evaluation.history import Match
from synelo.evaluation.models.base import Bounds, HistoryInfo, OptionValue, register
from synelo.evaluation.models.served import ServedModel, numeric_defaults, round_facts
from synelo.models import RoundFacts
from synelo.models.hive import Hive


@register
class HiveModel(ServedModel):
    """`synelo.models.hive.Hive` under replay. `-p solve_every=N` (0: never) re-fits every
    skill on all the matches so far (H8) after every N-th match, so that its gain is
    measured out of sample: each prediction still comes before its match is learned."""

    served = Hive
    name = Hive.name
    summary = Hive.summary
    defaults = {**numeric_defaults(Hive), "solve_every": 0}
    tunable = {
        "c": Bounds(0.01, 100.0, log=True),
        "a": Bounds(0.01, 100.0, log=True),
        "eps": Bounds(1e-4, 10.0, log=True),
        "command_rate": Bounds(0.01, 4.0, log=True),
        "k": Bounds(1.01, 100.0, log=True),
        "theta": Bounds(0.01, 100.0, log=True),
        "bias_prior": Bounds(1.0, 10_000.0, log=True),
    }

    @classmethod
    def create(cls, options: Mapping[str, OptionValue], info: HistoryInfo) -> ServedModel:
        """As any served model, and with the history's `reference_side` when its header
        names one (a simulated world's does): its side offsets are then on the truth's
        side."""
        model = super().create(options, info)
        side = info.header.get("reference_side")
        if isinstance(side, str) and side and isinstance(model, HiveModel):
            model.model = Hive({**model.model.params, "reference_side": side})
        return model

    def __init__(self, **options: OptionValue) -> None:
        self.solve_every = int(options.pop("solve_every", 0))
        super().__init__(**options)
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

    def traits(self) -> dict[str, dict[str, float]]:
        """The side offsets o and, for those who commanded, the commanding skills χ."""
        return {
            "offset": {p: s.o for p, s in self.states.items()},
            "command": {p: s.chi for p, s in self.states.items() if s.commanded > 0},
        }
