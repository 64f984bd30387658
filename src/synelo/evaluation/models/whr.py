"""`whr`: Whole History Rating (`synelo.models.whr`) under replay, predict-then-update like
every model: each match is predicted from the ratings before it, then learned with the
online Newton steps (W5). The day of a match is the UTC date of its time; a history without
times (FRC) makes each event one day, in file order, the event being the id before `_`."""

from __future__ import annotations

from synelo.evaluation.history import Match
from synelo.evaluation.models.base import Bounds, register
from synelo.evaluation.models.served import ServedModel, numeric_defaults, round_facts
from synelo.models import RoundFacts
from synelo.models.whr import Whr


@register
class WhrModel(ServedModel):
    """`synelo.models.whr.Whr` under replay, with the days W11 gives its matches."""

    served = Whr
    name = Whr.name
    summary = Whr.summary
    defaults = numeric_defaults(Whr)
    tunable = {
        "game_variance": Bounds(1.0, 20_000.0, log=True),
        "variance_scale": Bounds(1_000.0, 5_000_000.0, log=True),
        "variance_games": Bounds(10.0, 10_000.0, log=True),
    }

    def __init__(self, **options: float) -> None:
        super().__init__(**options)
        self.events: dict[str, int] = {}  # event → day, for matches without a time

    def facts(self, match: Match) -> RoundFacts:
        """The match as the service hands a round to the model, with its day (W11)."""
        facts = round_facts(match)
        extras = dict(facts.extras)
        if match.time is not None:
            extras.setdefault("received_at", match.time.isoformat())
        else:
            event = match.id.split("_", 1)[0]
            extras["day"] = self.events.setdefault(event, len(self.events))
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
        return rated.p_a
