"""`whr`: Whole History Rating (`synelo.models.whr`) under replay, predict-then-update like
every model: each match is predicted from the ratings before it, then learned with the
online Newton steps (W5). The day of a match is the UTC date of its time; a match without
one is dated by the model's own virtual clock (W11), as the service dates such a round.

`-p refit_every=N` (0, the default: never) also fits the whole history so far (W10,
`Whr.refit`) after every N-th match and replaces the players' states and the epads with the
fit, as a pool's re-rate does, with the history's seasons where they fell (S4). The fit
only ever covers matches already predicted, so every
score stays out of sample: a refit can improve the predictions of the matches after it,
never of the ones it learned from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synelo.evaluation.adapters.base import HistoryInfo, OptionValue
from synelo.evaluation.adapters.model import ModelReplay, round_facts
from synelo.evaluation.history import Match
from synelo.models import Model, RoundFacts
from synelo.models.base import SeasonMark
from synelo.models.whr import Whr, round_day


class WhrReplay(ModelReplay):
    """`synelo.models.whr.Whr` under replay, with the days W11 gives its matches and, on
    request, the full-history fit every `refit_every` matches (see the module)."""

    @classmethod
    def create(
        cls, model: type[Model[Any]], options: Mapping[str, OptionValue], info: HistoryInfo
    ) -> ModelReplay:
        """As any model's replay, but without the pool's own `refit_every`: that is the
        service's schedule of refit jobs, which an export does not record, so the replay of
        an export rates online unless `-p refit_every` asks for refits."""
        header = info.header
        stored = dict(header.get("params") or {}) if header.get("model") == model.name else {}
        stored.pop("refit_every", None)
        return cls(model, {**stored, **options})

    def __init__(self, model: type[Model[Any]], options: Mapping[str, OptionValue]) -> None:
        rest = dict(options)
        self.refit_every = int(rest.pop("refit_every", 0))
        if self.refit_every < 0:
            raise ValueError("refit_every must be >= 0 (0: never)")
        super().__init__(model, rest)
        self.history: list[RoundFacts] = []  # the matches learned so far, when refitting
        self.seasons: list[SeasonMark] = []  # where seasons fell among them
        self.refits = 0

    def facts(self, match: Match) -> RoundFacts:
        """The match as the service hands a round to the model, with its day (W11): the UTC
        date of its `time` (an export's `time` is the round's `started_at`, else its
        `ended_at`, else when the service received it)."""
        facts = round_facts(match)
        extras = dict(facts.extras)
        if match.time is not None:
            extras["day"] = round_day({"received_at": match.time.isoformat()})
        return RoundFacts(
            facts.team_a,
            facts.team_b,
            facts.winner,
            facts.participants_a,
            facts.participants_b,
            extras,
        )

    def predict(self, match: Match) -> float:
        facts = self.facts(match)
        return self.model.predict(self.states, facts, self.entries(facts))

    def step(self, match: Match) -> float:
        facts = self.facts(match)
        rated = self.model.rate(self.states, facts, self.entries(facts))
        self.states.update(rated.states)
        self.context.update(rated.context)
        if self.refit_every > 0:
            self.history.append(facts)
            if len(self.history) % self.refit_every == 0:
                self.refit()
        return rated.p_a

    def started(self, fraction: float) -> None:
        if self.refit_every > 0:
            self.seasons.append((len(self.history), fraction))

    def refit(self) -> None:
        """W10 on every match learned so far, with its seasons: the fit's states and epads
        replace the online ones (an admin set or reset in the history is not carried
        through it)."""
        model: Whr = self.model  # type: ignore[assignment]
        refitted = model.refit(self.states, self.history, self.context, seasons=self.seasons)
        if refitted is not None:
            self.states.update(refitted.states)
            self.context.update(refitted.context)
            self.refits += 1

    def inert(self) -> dict[str, str]:
        out = {"refit_every": "a replay option, not a rating parameter"}
        if self.refit_every == 0:
            out["epad_fit"] = "only a refit reads it (-p refit_every=N)"
        if self.model.params["epad"] == "none":
            out["epad_steps"] = "no epad is learned with -p epad=none"
        return out
