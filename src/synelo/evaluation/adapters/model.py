"""The replay of a `synelo.models` model: its own code, with the players' states in memory.

A pool of that model rates its rounds with the very same `predict` and `rate`; the replay
only keeps the states itself, so that an export of a pool replays to its stored ratings.
`ModelReplay` replays any registered model; a model whose replay needs more (options of its
own, a full-history fit on a schedule) has an adapter deriving from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar

from synelo.evaluation.adapters.base import HistoryInfo, OptionValue, RatingModel
from synelo.evaluation.history import Match
from synelo.models import Model, Param, RoundError, RoundFacts
from synelo.models.base import new_season


def round_facts(match: Match) -> RoundFacts:
    """What a model reads of a match: rosters, participants, result and the report's
    optional fields, the map among them (as the service hands a round to its model), and
    the match's `type` (`epa` weighs a playoff less)."""
    extras: dict[str, Any] = dict(match.details or {})
    if match.time_played is not None:
        extras["time_played"] = match.time_played
    if match.scores is not None:
        extras["scores"] = {"A": match.scores[0], "B": match.scores[1]}
    if match.mode is not None:
        extras["mode"] = match.mode
    if match.type is not None:
        extras["type"] = match.type
    if match.map:
        extras["map"] = match.map
    part_a, part_b = match.participants if match.participants is not None else (None, None)
    return RoundFacts(match.team_a, match.team_b, match.winner, part_a, part_b, extras)


@contextmanager
def naming(match: Match) -> Iterator[None]:
    """A RoundError (a match the model cannot rate: no positions…) as a ValueError that
    names the match, which the command line reports as an error, not a traceback."""
    try:
        yield
    except RoundError as exc:
        raise ValueError(f"match {match.id!r}: {exc}") from None


class ModelReplay(RatingModel):
    """A `synelo.models` model under replay, with the states of its players and the pool's
    context entries (`Model.context_keys`) in memory."""

    # the model's parameters that are no option of its replay (see `options`)
    not_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, model: type[Model[Any]], options: Mapping[str, OptionValue]) -> None:
        self.name = model.name
        self.model = model(options)
        self.states: dict[str, Any] = {}
        self.context: dict[str, Any] = {}  # the pool's context entries (Model.context_keys)

    @classmethod
    def options(cls, model: type[Model[Any]]) -> dict[str, Param]:
        """The options (``-p name=value``) that a replay of `model` takes: the model's
        parameters, but those of `not_options`."""
        return {n: p for n, p in model.parameters.items() if n not in cls.not_options}

    @classmethod
    def create(
        cls, model: type[Model[Any]], options: Mapping[str, OptionValue], info: HistoryInfo
    ) -> ModelReplay:
        """With `options` over the parameters of the pool a history was exported from, when
        that pool rated with this model."""
        header = info.header
        stored = header.get("params") if header.get("model") == model.name else None
        return cls(model, {**(stored or {}), **options})

    def entries(self, facts: RoundFacts) -> dict[str, Any]:
        """The context entries a round reads, as a pool would hand them in."""
        context = self.context
        return {k: context[k] for k in self.model.context_keys(facts) if k in context}

    def predict(self, match: Match) -> float:
        facts = round_facts(match)
        return self.model.predict(self.states, facts, self.entries(facts))

    def update(self, match: Match) -> None:
        self.step(match)

    def step(self, match: Match) -> float:
        facts = round_facts(match)
        with naming(match):
            rated = self.model.rate(self.states, facts, self.entries(facts))
        self.states.update(rated.states)
        self.context.update(rated.context)
        return rated.p_a

    def set_rating(self, player: str, rating: float) -> None:
        self.states[player] = self.model.with_rating(self.rating_of(player), rating)

    def reset(self, player: str) -> None:
        if player in self.states:
            self.states[player] = self.model.new_state()

    def new_season(self, fraction: float | None) -> None:
        """The model's season (`models.base.new_season`) over every player and the context."""
        season = new_season(self.model, self.states, fraction, self.context)
        self.states.update(season.states)
        self.context.update(season.context)
        self.started(season.fraction)

    def started(self, fraction: float) -> None:
        """A season was started with `fraction` (a replay that refits keeps where)."""

    def ratings(self) -> dict[str, float]:
        """Each player's strength (Elo's rating, the Gaussian models' μ)."""
        strength = self.model.strength
        return {p: strength(s) for p, s in self.states.items()}

    def display_ratings(self) -> dict[str, float]:
        """Each player's display rating: the model's `rating`, as a pool shows it."""
        rating = self.model.rating
        return {p: rating(s) for p, s in self.states.items()}

    def strength_of(self, player: str) -> float | None:
        """One player's strength without building every player's (see `ratings`)."""
        if player not in self.states:
            return None
        return self.model.strength(self.model.state_of(self.states, player))

    def traits(self) -> dict[str, dict[str, float]]:
        """The model's own traits of the players (`Model.traits`)."""
        return self.model.traits(self.states)

    def rating_of(self, player: str) -> Any:
        """The model's state of a player (a new one if never seen)."""
        return self.model.state_of(self.states, player)

    def parameters(self) -> dict[str, Any]:
        return dict(self.model.params)
