"""The rating-model boundary that the service, the replay and the simulator share.

A model rates one round at a time from the states of the players in it. A state is the
model's own (SynElo's player record, Elo's rating, TrueSkill's μ and σ…); `encode` turns it
into a JSON object the store keeps per player and `decode` reads one back, an empty object
being a new player. The model holds no players itself: whoever calls it owns the states, so
the service keeps them in its database, and the replay and simulator in memory.

Besides predicting and rating, a model answers what the service shows and balances by: the
player's display `rating`, and the additive `strength` whose team sums the split solver
evens out. A model whose predictions do not follow from such sums says so in `balance_by`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from synelo.ratings.synelo import Side, Winner

S = TypeVar("S")
ParamValue = float | int | str
# A pool's context entries (JSON values by key) that a round reads: none for most models.
NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})
MAX_TEXT_PARAM = 64
# A new season's share of the way back toward the pool's mean when neither its event nor the
# pool's model names one (docs/maths/seasons.md says why this value).
DEFAULT_SEASON_FRACTION = 0.3
# A season among a refit's rounds: (how many of the rounds came before it, its fraction).
SeasonMark = tuple[int, float]


class ParameterError(ValueError):
    """A model parameter that is unknown, of the wrong type or out of its bounds."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name


class RoundError(ValueError):
    """A round this model cannot rate as reported (no positions for a positional pool…):
    `field` is the path of the report's field at fault, which the service's 422 names."""

    def __init__(self, field: tuple[str, ...], message: str) -> None:
        super().__init__(f"{'.'.join(field)}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a model: its default, the values a pool may choose and where
    `synelo tune` searches it.

    Numbers lie in [low, high]; `log` says the parameter is scale-like (the tuner searches
    it on a log scale). A parameter with `choices` is one of those strings instead.

    `tune` is the (low, high) range `synelo tune` and a pool's auto-tune search for a fit,
    None for a parameter they never fit. The search is on a log scale when `log` is, unless
    `tune_log` says otherwise: a rate whose bounds reach 0 is not scale-like for a pool, yet
    searched on a log scale inside a range that stops short of 0."""

    default: ParamValue
    low: float | None = None
    high: float | None = None
    log: bool = False
    integer: bool = False
    above: bool = False  # the value must exceed `low`, not merely reach it
    choices: tuple[str, ...] = ()
    text: bool = False  # free text of at most MAX_TEXT_PARAM characters ("" for none)
    doc: str = ""
    tune: tuple[float, float] | None = None
    tune_log: bool | None = None  # None: as `log`

    @property
    def log_search(self) -> bool:
        """Whether the tuner searches the parameter's `tune` range on a log scale."""
        return self.log if self.tune_log is None else self.tune_log

    def check(self, name: str, value: object) -> ParamValue:  # noqa: C901
        """`value` as this parameter takes it, or ParameterError naming `name`."""
        if self.text:
            if not isinstance(value, str) or len(value) > MAX_TEXT_PARAM:
                raise ParameterError(name, f"must be text of at most {MAX_TEXT_PARAM} characters")
            return value
        if self.choices:
            if value not in self.choices:
                raise ParameterError(name, f"must be one of {', '.join(self.choices)}")
            return str(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParameterError(name, "must be a number")
        if not math.isfinite(value):
            raise ParameterError(name, "must be a finite number")
        if self.integer:
            if not float(value).is_integer():
                raise ParameterError(name, "must be a whole number")
            value = int(value)
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            relation = "above" if self.above else "at least"
            raise ParameterError(name, f"must be {relation} {self.low:g}")
        if self.high is not None and value > self.high:
            raise ParameterError(name, f"must be at most {self.high:g}")
        return value


class Sides(Protocol):
    """Anything with two rosters: a replay's match, a round's facts."""

    @property
    def team_a(self) -> Sequence[str]: ...

    @property
    def team_b(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class Scaling:
    """Parameters that matter only through their ratios: multiplying every one of them by the
    same c > 0 leaves every prediction unchanged (tests/unit/test_models.py checks each one
    declared). Fitting all of them searches a line of equal losses and reports an arbitrary
    point of it, so `synelo tune` fits the first of `names` and holds the others."""

    names: tuple[str, ...]
    why: str
    equal_sides: bool = False  # exact only when every match has as many players on each side

    def holds_on(self, matches: Iterable[Sides]) -> bool:
        """Whether the scaling is exact on these matches."""
        return not self.equal_sides or all(len(m.team_a) == len(m.team_b) for m in matches)


@dataclass(frozen=True, slots=True)
class RoundFacts:
    """What a model may read of a round: the round-start rosters (they decide P), the
    players rated on each side (default: the rosters), the result and the report's
    optional fields as the service stores them (time_played, sides, positions…)."""

    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    winner: Winner
    participants_a: tuple[str, ...] | None = None
    participants_b: tuple[str, ...] | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def rated_a(self) -> tuple[str, ...]:
        return self.team_a if self.participants_a is None else self.participants_a

    @property
    def rated_b(self) -> tuple[str, ...]:
        return self.team_b if self.participants_b is None else self.participants_b

    def rated(self) -> list[tuple[str, Side]]:
        """Every rated player with their side, A first, in report order."""
        return [(p, "A") for p in self.rated_a] + [(p, "B") for p in self.rated_b]


@dataclass(frozen=True, slots=True)
class Rated(Generic[S]):
    """A rated round: P(A wins) before it, the new state of every rated player, and the
    pool context entries the round changed (a model with a context: see `context_keys`)."""

    p_a: float
    states: dict[str, S]
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Refitted(Generic[S]):
    """A full-history fit's result: the players' states it changed and the pool context
    entries it sets (see `Model.refit`)."""

    states: dict[str, S]
    context: dict[str, Any] = field(default_factory=dict)


class Model(ABC, Generic[S]):
    """A rating model with one pool's parameters. Subclasses set `name`, `summary` and
    `parameters`, and register with `synelo.models.register`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    parameters: ClassVar[Mapping[str, Param]] = {}
    # the sets of parameters that only matter through their ratios (see `Scaling`)
    scalings: ClassVar[tuple[Scaling, ...]] = ()
    # the tunable parameters `synelo tune` names first when it lists them, where their
    # declaration's order is not the one to show (see `tunable`)
    fit_order: ClassVar[tuple[str, ...]] = ()
    # "strength": teams are even when their strength sums are (the solver's F7 on strengths);
    # "p": only the model's prediction says how even two teams are.
    balance_by: ClassVar[Literal["strength", "p"]] = "strength"
    display: ClassVar[str] = "rating"  # what `rating` is, for the docs and the model list
    # "even": splits are k against k by equal strength sums; "all-play": every player plays,
    # k against k + 1 when their number is odd, by the model's own |logit P(A)| (`split_logit`)
    split_mode: ClassVar[Literal["even", "all-play"]] = "even"
    # whether a refit treats a player an admin set or reset as a new identity from then on,
    # starting from `refit`'s `starts` (WHR), rather than fitting all their rounds (Hive)
    restarts_identities: ClassVar[bool] = False
    # the key of `fields` that says how unsure the model still is of a player (TrueSkill's
    # σ, SynElo's K), which the pool health page charts; None: the model keeps no such figure
    uncertainty: ClassVar[str | None] = None
    # a peer that replays compare with (`epa`, a reimplementation of another system), never
    # a pool's model: the service refuses it with a 422 naming `model`
    replay_only: ClassVar[bool] = False
    # one of synelo's own models that suits any team game, which `synelo advise` weighs up:
    # not a peer (Elo, TrueSkill, OpenSkill, EPA) nor one that needs fields of its own
    general: ClassVar[bool] = False

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        self.params: dict[str, ParamValue] = resolve_params(type(self), params or {})

    @classmethod
    def tunable(cls) -> dict[str, Param]:
        """The parameters `synelo tune` may fit (those with a `tune` range), those of
        `fit_order` first, then the others in the order of `parameters`."""
        tuned = {name: spec for name, spec in cls.parameters.items() if spec.tune is not None}
        return {**{name: tuned[name] for name in cls.fit_order}, **tuned}

    # --- rating -----------------------------------------------------------------------------
    @abstractmethod
    def new_state(self) -> S:
        """The state of a player never rated."""

    @abstractmethod
    def predict(
        self, states: Mapping[str, S], round: RoundFacts, context: Mapping[str, Any] = NO_CONTEXT
    ) -> float:
        """P(side A wins) from the states before the round (a player absent is new) and the
        pool's context entries of the round (`context_keys`; an entry absent is new)."""

    @abstractmethod
    def rate(
        self, states: Mapping[str, S], round: RoundFacts, context: Mapping[str, Any] = NO_CONTEXT
    ) -> Rated[S]:
        """P(A wins) and every rated player's state after the round, with the context
        entries it changed. A mutable state given may be updated in place: the caller hands
        over states it owns."""

    def check_round(self, round: RoundFacts, rated: bool = True) -> None:
        """RoundError when the round lacks what this model rates by, so that the service
        refuses the report (a 422) before storing anything; with `rated` False, when a
        prediction's optional fields are wrong (a prediction may lack what a rated round
        needs). Every round is fine for most models."""

    def duel(self, player: str, other: str, winner: Winner) -> RoundFacts:
        """A 1v1 round of `player` against `other` that this model can rate, with whatever
        optional fields it needs: the service checks with it that a rating an admin sets
        can still be rated."""
        return RoundFacts((player,), (other,), winner)

    def results(
        self, states: Mapping[str, S], round: RoundFacts, context: Mapping[str, Any] = NO_CONTEXT
    ) -> list[tuple[int, int, float]] | None:
        """The predicted distribution of the round's final scores, as (A's score, B's score,
        probability) for every possible result, for a model that predicts one (positional);
        None for the others."""
        return None

    def strengths(self, states: Sequence[S], round: RoundFacts | None = None) -> list[float]:
        """The additive strengths of players balanced together (the split solver's input),
        or of a round's rosters, A's then B's (`round`: what it says of the round, such as
        its mode): each one's `strength`, unless a model ranks them against each other
        (Sector's Edge's sortedPower)."""
        return [self.strength(s) for s in states]

    # --- what the pool learns beside its players ---------------------------------------------
    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        """The pool-level entries (JSON values by key) that `predict` and `rate` read for
        this round, such as Hive's side win rates per map: the caller fetches them, hands
        them in, and stores the ones `rate` returns. None for most models."""
        return ()

    def refits(self) -> bool:
        """Whether every re-rate of the pool ends with `refit` (Hive's `solve`: on)."""
        return False

    def can_refit(self) -> bool:
        """Whether `refit` does anything when asked for (a refit job): WHR's MAP always."""
        return self.refits()

    def refit(
        self,
        states: Mapping[str, S],
        rounds: Sequence[RoundFacts],
        context: Mapping[str, Any],
        starts: Mapping[str, S] = NO_CONTEXT,
        seasons: Sequence[SeasonMark] = (),
    ) -> Refitted[S] | None:
        """A full-history fit run after a re-rate has replayed every round (`rounds`, in
        order, with the final `states` and the whole `context`): the players' states and
        context entries it changes, or None for a model that has none or a pool that does
        not ask for it. A player an admin set or reset starts again from `starts[player]`
        (their state just after it); their rounds before it come under another name. The
        pool's seasons fell among the rounds where `seasons` says."""
        return None

    # --- seasons ------------------------------------------------------------------------------
    def season_fraction(self) -> float:
        """The share of the way back a season takes when its event names none: the model's
        `season` parameter where it has one (tunable), else DEFAULT_SEASON_FRACTION."""
        value = self.params.get("season", DEFAULT_SEASON_FRACTION)
        return float(value)

    def is_new(self, state: S) -> bool:
        """Whether `state` is a new player's, about whom the pool has learned nothing: a
        season leaves such a player as they are and out of the pool's mean."""
        return self.encode(state) == self.encode(self.new_state())

    def season(
        self, states: Mapping[str, S], fraction: float, context: Mapping[str, Any] = NO_CONTEXT
    ) -> Refitted[S]:
        """S1, a new season: every player's state (`states`: every player of the pool who is
        not new, see `is_new`) pulled `fraction` (0–1) of the way back toward the pool's
        mean, and the context entries a season changes (all of `context` is the pool's).

        By default each display rating R moves that share toward the mean R̄ of them all,
        R ← R + fraction·(R̄ − R), through `with_rating`; a model with an uncertainty, a
        drift or a learned scale says here what else a season does to it
        (docs/maths/seasons.md)."""
        if not states:
            return Refitted({})
        ratings = {player: self.rating(state) for player, state in states.items()}
        mean = mean_of(ratings.values())
        return Refitted(
            {
                player: self.with_rating(state, pulled(ratings[player], mean, fraction))
                for player, state in states.items()
            }
        )

    # --- all-play splits ------------------------------------------------------------------------
    def split_logit(
        self, strengths_a: Sequence[float], strengths_b: Sequence[float], context: Mapping[str, Any]
    ) -> float:
        """logit P(A) of a split from its players' strengths and the pool's context entries
        (an all-play model's objective: the solver minimises its absolute value)."""
        raise NotImplementedError(f"model {self.name!r} has no all-play splits")

    def has_split_logit(self) -> bool:
        """Whether `split_logit` scores this pool's all-play splits (W12): a model that
        defines it, unless its parameters leave it out (SynElo's seed sums)."""
        return type(self).split_logit is not Model.split_logit

    def split_line(
        self, size_a: int, size_b: int, context: Mapping[str, Any]
    ) -> tuple[float, float] | None:
        """(c, b) when `split_logit` = c·(mean_A − mean_B) + b for teams of these sizes: the
        exact solver then minimises it as a closest-sum problem. None when it is not linear."""
        return None

    # --- what the service shows and balances by ---------------------------------------------
    @abstractmethod
    def rating(self, state: S) -> float:
        """The display rating (the leaderboard's order)."""

    def strength(self, state: S) -> float:
        """The additive strength the split solver balances team sums of."""
        return self.rating(state)

    def fields(self, state: S) -> dict[str, float]:
        """The model's own figures of a player, shown by the lookup (μ and σ…)."""
        return {k: float(v) for k, v in self.encode(state).items() if isinstance(v, int | float)}

    def traits(self, states: Mapping[str, S]) -> dict[str, dict[str, float]]:
        """Per-player figures the model learns besides the strength (a side offset, a
        commanding skill…), by name and then player: what a replay scores against a
        simulated world's hidden values of the same name. None for most models."""
        return {}

    @abstractmethod
    def with_rating(self, state: S, rating: float) -> S:
        """The state after an admin sets the display rating to `rating`."""

    @classmethod
    def check_params(cls, params: Mapping[str, ParamValue]) -> None:
        """ParameterError when parameters each within bounds are not together: a model
        whose formulas need a relation between them says so here."""

    def set_span(self) -> float | None:
        """How far from a new player's display rating an admin may set one; None: as far as
        the service allows. Gaussian models bound it by their noise β (see trueskill)."""
        return None

    # --- storage ----------------------------------------------------------------------------
    @abstractmethod
    def encode(self, state: S) -> dict[str, Any]:
        """The state as a JSON object."""

    @abstractmethod
    def decode(self, data: Mapping[str, Any]) -> S:
        """A state from `encode`'s object; an empty object is a new player."""

    def state_of(self, states: Mapping[str, S], player: str) -> S:
        found = states.get(player)
        return self.new_state() if found is None else found


def resolve_params(model: type[Model[Any]], given: Mapping[str, object]) -> dict[str, ParamValue]:
    """The model's defaults with `given` over them, each checked against its bounds."""
    out: dict[str, ParamValue] = {n: p.default for n, p in model.parameters.items()}
    for name, value in given.items():
        spec = model.parameters.get(name)
        if spec is None:
            known = ", ".join(model.parameters) or "none"
            raise ParameterError(name, f"model {model.name!r} has no such parameter ({known})")
        out[name] = spec.check(name, value)
    model.check_params(out)
    return out


def pulled(value: float, mean: float, fraction: float) -> float:
    """S1: a value moved `fraction` of the way toward `mean`: x + fraction·(mean − x)."""
    return value + fraction * (mean - value)


def mean_of(values: Iterable[float]) -> float:
    """The mean of `values`, whatever their order (math.fsum rounds their sum once): the
    service, a re-rate and a replay meet a pool's players in different orders, and a
    season's mean must be the same number in all three."""
    items = list(values)
    return math.fsum(items) / len(items) if items else 0.0


def check_fraction(fraction: float) -> float:
    """A season's fraction as a float, or ValueError unless it is a number within 0…1."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise ValueError("fraction must be a number")
    if not 0.0 <= fraction <= 1.0:  # NaN fails this too
        raise ValueError("fraction must be within 0…1")
    return float(fraction)


@dataclass(frozen=True, slots=True)
class Season(Generic[S]):
    """A season as applied to a pool's players: the fraction it took, and the states of the
    players it moved (every one who was not new) with the context entries it changed."""

    fraction: float
    states: dict[str, S]
    context: dict[str, Any] = field(default_factory=dict)


def new_season(
    model: Model[S],
    states: Mapping[str, S],
    fraction: float | None = None,
    context: Mapping[str, Any] = NO_CONTEXT,
) -> Season[S]:
    """A season of a pool whose players have `states`: `fraction` of the way back (the
    model's `season_fraction` when None), for every player who is not new. The service's
    admin action, a re-rate and a replay all start a season through this."""
    share = model.season_fraction() if fraction is None else check_fraction(fraction)
    moved = {player: state for player, state in states.items() if not model.is_new(state)}
    result = model.season(moved, share, context)
    return Season(share, result.states, result.context)


def score_a(winner: Winner) -> float:
    """S for side A: 1 for a win, ½ for a draw, 0 for a loss."""
    return 0.5 if winner == "draw" else float(winner == "A")
