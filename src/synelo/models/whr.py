"""`whr`: Whole History Rating with Zero-K's priors and the extra-player advantage (seed 004,
W1–W11 of docs/maths/whr.md).

A player's state is their recent PlayerDays: each day's rating and the day's games, seen from
the player with everyone else's part frozen into an offset. A new round adds a game to the
day of every player in it and runs a few Newton iterations over those players (W5), so a
game also revises the days before it. Days past the kept window fold into a Gaussian prior
on the first kept one (W8). A re-rate ends with the full MAP of the whole history (W10),
which the online steps only approach. The epads live in the pool's context.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from synelo.models.base import (
    NO_CONTEXT,
    Model,
    Param,
    ParameterError,
    ParamValue,
    Rated,
    Refitted,
    RoundFacts,
    SeasonMark,
    mean_of,
    pulled,
    score_a,
)
from synelo.models.rounds import UNDATED
from synelo.ratings.whr import (
    EPAD_PRIOR_SD,
    NATURAL,
    Anchor,
    Drift,
    EpadKind,
    PlayerDays,
    Stack,
    epad_design,
    fold_days,
    sigmoid,
    team_logit,
    to_elo,
    to_natural,
)
from synelo.ratings.whr_fit import FitGame, FitResult, fit

EPAD = "epad:"  # a context entry per epad: {"mean": natural, "precision": 1/natural²}
CLOCK = "whr.clock"  # W11's virtual clock, for rounds without a time
TIME_KEYS = ("started_at", "ended_at", "received_at")
EPOCH = date(1970, 1, 1)
# W5 online: the sweeps over a round's players stop early once none moves more than this
# (natural units: 0.002 Elo); `iterations` bounds them
SETTLED = 1e-5


def round_day(extras: Mapping[str, Any]) -> int | None:
    """W11: the round's day: `day` when a history gives one, else the UTC date of
    `started_at`, `ended_at` or `received_at` (not an `undated` round's: an import's), as
    days since 1970-01-01; None without any (W11's virtual clock dates it)."""
    if extras.get("day") is not None:
        return int(extras["day"])
    keys = ("started_at", "ended_at") if extras.get(UNDATED) else TIME_KEYS
    for key in keys:
        value = extras.get(key)
        if value:
            instant = (
                value
                if isinstance(value, datetime)
                else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            )
            if instant.tzinfo is not None:
                instant = instant.astimezone(UTC)
            return (instant.date() - EPOCH).days
    return None


class VirtualClock(NamedTuple):
    """W11's clock for rounds without a time, on the axis of the real days: `time` in
    virtual days, `players` seen; `real` the latest real day seen (None: none yet), `shift`
    what the axis adds to a real day, `mark` the time when `real` was seen."""

    time: float = 0.0
    players: int = 0
    real: int | None = None
    shift: int = 0
    mark: float = 0.0

    def today(self) -> int:
        """W11: the clock's day on the axis, a + ⌊t − t_a⌋, with a the latest real day's
        place on the axis (0 before any) and t_a the time then."""
        base = 0 if self.real is None else self.real + self.shift
        return base + math.floor(self.time - self.mark)

    def date(self, day: int | None, played: int, newcomers: int) -> tuple[int, VirtualClock]:
        """W11, a round's day on the axis and the clock after it, `newcomers` among the
        `played`. Without a time (`day` None): the clock's day, then t moves on by m/n, n the
        players seen (this round's newcomers included), m the players who played it, so the
        typical player plays about one round a virtual day. With a real day d: d + shift,
        but never before the clock's day, and a first real day after rounds without a time
        on the clock's day; the axis is re-anchored at it unless d is earlier than the
        latest real day (a late report)."""
        seen = self.players + newcomers
        if day is None:
            step = played / max(seen, 1)
            return self.today(), self._replace(time=self.time + step, players=seen)
        if self.real is not None and day < self.real:
            return day + self.shift, self._replace(players=seen)
        if self.real is None:
            shift = self.today() - day if self.time > 0 else 0
        else:
            shift = max(self.shift, self.today() - day)
        return day + shift, VirtualClock(self.time, seen, day, shift, self.time)

    def encode(self) -> dict[str, float]:
        out: dict[str, float] = {"time": self.time, "players": self.players}
        if self.real is not None:
            out.update(real=self.real, shift=self.shift, mark=self.mark)
        return out

    @classmethod
    def decode(cls, entry: Mapping[str, Any] | None) -> VirtualClock:
        if not entry:
            return cls()
        real = entry.get("real")
        return cls(
            float(entry["time"]),
            int(entry["players"]),
            None if real is None else int(real),
            int(entry.get("shift", 0)),
            float(entry.get("mark", 0.0)),
        )


def virtual_days(rounds: Sequence[tuple[Sequence[str], int | None]]) -> list[int]:
    """W11 over a whole history, as the online rounds date it (`VirtualClock.date`): each
    round's day on the axis, given each round's players and its own day (None: without a
    time); a player is new the first time they play."""
    clock, seen, out = VirtualClock(), set[str](), []
    for players, own in rounds:
        newcomers = len(set(players) - seen)
        day, clock = clock.date(own, len(players), newcomers)
        seen.update(players)
        out.append(day)
    return out


class Whr(Model[PlayerDays]):
    """W1's prediction, W5's online Newton steps and W10's refit (`synelo.ratings.whr`).
    The display rating and the strength are the last day's Elo (1500 + 400/ln 10 · r)."""

    name = "whr"
    general = True
    summary = "Whole History Rating (Zero-K priors) with the extra-player advantage"
    display = "Elo of the last day played (W1)"
    uncertainty = "uncertainty"  # the last day's standard deviation, in Elo
    split_mode: ClassVar[Literal["even", "all-play"]] = "all-play"
    restarts_identities = True
    parameters = {
        "drift": Param("zero-k", choices=("zero-k", "constant"), doc="the prior between days (W4)"),
        "w2": Param(300.0, 1e-6, 1e7, log=True, doc="Elo² a day, for drift 'constant' (W4)"),
        "game_variance": Param(
            500.0,
            0.0,
            1e7,
            doc="Elo² per unit of game weight on the later day (W4, zero-k)",
            tune=(1.0, 200_000.0),
            tune_log=True,
        ),
        "variance_scale": Param(
            200_000.0,
            0.0,
            1e9,
            doc="V = variance_scale/(W + variance_games) Elo² a day (W4)",
            tune=(1_000.0, 5_000_000.0),
            tune_log=True,
        ),
        "variance_games": Param(
            400.0,
            1e-3,
            1e9,
            log=True,
            doc="game weight that halves a newcomer's V (W4)",
            tune=(10.0, 10_000.0),
        ),
        "epad": Param(
            "simple", choices=("simple", "bpst", "none"), doc="the extra-player advantage (W6, W7)"
        ),
        "epad_steps": Param(
            15, 1, 64, integer=True, doc="kv(k+1) steps with their own epad; past: footnote 1"
        ),
        "epad_fit": Param(
            "joint", choices=("joint", "fixed"), doc="a refit fits epad with the ratings or after"
        ),
        "iterations": Param(
            3, 1, 50, integer=True, doc="Newton iterations over a round's players (W5)"
        ),
        "refit_every": Param(
            0, 0, 1e9, integer=True, doc="rounds between scheduled full refits (0: on demand)"
        ),
        "window_days": Param(
            30, 2, 10_000, integer=True, doc="days kept per player before folding (W8)"
        ),
    }

    @classmethod
    def check_params(cls, params: Mapping[str, ParamValue]) -> None:
        """W4 needs a drift above 0 between any two days: game_variance and variance_scale
        may not both be (near) 0."""
        if float(params["game_variance"]) + float(params["variance_scale"]) < 1.0:
            raise ParameterError(
                "variance_scale", "game_variance + variance_scale must be at least 1 Elo²"
            )

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        p = self.params
        drift_kind: Literal["zero-k", "constant"] = (
            "constant" if p["drift"] == "constant" else "zero-k"
        )
        self.drift = Drift(
            drift_kind,
            float(p["w2"]),
            float(p["game_variance"]),
            float(p["variance_scale"]),
            float(p["variance_games"]),
        )
        self.epad_kind: EpadKind = str(p["epad"])  # type: ignore[assignment]
        self.steps = int(p["epad_steps"])
        self.iterations = int(p["iterations"])
        self.window = int(p["window_days"])

    # --- the round ------------------------------------------------------------------------
    def new_state(self) -> PlayerDays:
        return PlayerDays()

    def _names(self, size_a: int, size_b: int) -> list[str]:
        zeros_a, zeros_b = [0.0] * size_a, [0.0] * size_b
        return list(epad_design(self.epad_kind, self.steps, zeros_a, zeros_b))

    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        names = {
            *self._names(len(round.team_a), len(round.team_b)),
            *self._names(len(round.rated_a), len(round.rated_b)),
        }
        return (*(EPAD + n for n in sorted(names)), CLOCK)

    def epads(self, context: Mapping[str, Any]) -> dict[str, float]:
        """The epads in natural units, by name, from the pool's context."""
        return {
            key[len(EPAD) :]: float(value["mean"])
            for key, value in context.items()
            if key.startswith(EPAD)
        }

    def logit(
        self, ratings_a: Sequence[float], ratings_b: Sequence[float], context: Mapping[str, Any]
    ) -> float:
        """W1: logit P(A) of two teams of natural ratings, epad included."""
        design = epad_design(self.epad_kind, self.steps, ratings_a, ratings_b)
        return team_logit(ratings_a, ratings_b, design, self.epads(context))

    def predict(
        self,
        states: Mapping[str, PlayerDays],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        ra = [self.state_of(states, p).rating for p in round.team_a]
        rb = [self.state_of(states, p).rating for p in round.team_b]
        return sigmoid(self.logit(ra, rb, context))

    def rate(
        self,
        states: Mapping[str, PlayerDays],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[PlayerDays]:
        """W5 over the round's rated players (the sides as played), then W8's fold and W9's
        uncertainty; W6's online epad step for an uneven round."""
        p_a = self.predict(states, round, context)
        s_a = score_a(round.winner)
        side_a, side_b = list(round.rated_a), list(round.rated_b)
        players = {p: self.state_of(states, p).copy() for p in (*side_a, *side_b)}
        if not side_a or not side_b:  # nobody played against them: nothing to learn
            return Rated(p_a, players)
        before = VirtualClock.decode(context.get(CLOCK))
        newcomers = sum(not players[p].days for p in players)
        day, clock = before.date(round_day(round.extras), len(players), newcomers)
        ticked = {CLOCK: clock.encode()} if clock != before else {}
        today = {p: players[p].open_day(day) for p in players}
        epad = self.epads(context)
        ra = [float(players[p].r[today[p]]) for p in side_a]
        rb = [float(players[p].r[today[p]]) for p in side_b]
        design = epad_design(self.epad_kind, self.steps, ra, rb)
        changed = self._learn_epad(design, ra, rb, s_a, context)
        bonus = sum(m * epad.get(name, 0.0) for name, m in design.items())
        order = [*side_a, *side_b]
        side = np.asarray([0] * len(side_a) + [1] * len(side_b))
        sizes = np.asarray([len(side_a), len(side_b)], dtype=np.float64)
        shift = np.asarray([bonus, -bonus])  # each side's epad, from its own view
        scores = (s_a, 1.0 - s_a)
        slots = [
            players[p].add_game(today[p], 1.0 / sizes[k], 0.0, scores[k])
            for p, k in zip(order, side.tolist(), strict=True)
        ]
        stack = Stack([players[p] for p in order], self.drift)
        new_games = stack.game_starts + np.asarray(slots)
        on_day = stack.starts + np.asarray([today[p] for p in order])

        def refresh() -> None:
            """Each new game's offset from everyone else's current rating that day."""
            r = stack.r[on_day]
            totals = np.bincount(side, weights=r, minlength=2)
            mates = (totals[side] - r) / sizes[side]
            stack.offset[new_games] = mates - totals[1 - side] / sizes[1 - side] + shift[side]

        for _ in range(self.iterations):
            refresh()
            if stack.step() < SETTLED:
                break
        refresh()
        variances = stack.last_day_variances().tolist()
        stack.unstack()
        for p, variance in zip(order, variances, strict=True):
            state = players[p]
            state.variance = variance
            fold_days(state, self.drift, self.window)
        return Rated(p_a, players, {**changed, **ticked})

    def _learn_epad(
        self,
        design: Mapping[str, float],
        ra: Sequence[float],
        rb: Sequence[float],
        s_a: float,
        context: Mapping[str, Any],
    ) -> dict[str, Any]:
        """W6 online: one Newton step of each epad the round reads on its running Gaussian
        posterior (Laplace's approximation), the players' ratings before the round held."""
        if not design:
            return {}
        p = sigmoid(self.logit(ra, rb, context))
        out: dict[str, Any] = {}
        for name, mult in design.items():
            entry = context.get(EPAD + name) or {}
            mean = float(entry.get("mean", 0.0))
            precision = float(entry.get("precision", 1.0 / EPAD_PRIOR_SD**2))
            precision += mult * mult * p * (1.0 - p)
            mean += mult * (s_a - p) / precision
            out[EPAD + name] = {"mean": mean, "precision": precision}
        return out

    # --- the full-history fit --------------------------------------------------------------
    def can_refit(self) -> bool:
        """The MAP is asked for (a refit job, on demand or every `refit_every` rounds); other
        re-rates (void, unvoid, a parameter change) rate online, as an export replays."""
        return True

    def refit(
        self,
        states: Mapping[str, PlayerDays],
        rounds: Sequence[RoundFacts],
        context: Mapping[str, Any],
        starts: Mapping[str, PlayerDays] = NO_CONTEXT,
        seasons: Sequence[SeasonMark] = (),
    ) -> Refitted[PlayerDays] | None:
        """W10: the MAP of every round's PlayerDays and (per `epad_fit`) the epads, folded
        back into states of `window_days` days each. A player an admin set starts from the
        prior the set gave them; one reset, from a newcomer's.

        With seasons, each stretch of rounds between two is fitted in turn (S4): a season
        takes every player's last day of the fit so far (its MAP rating and W9 variance)
        through `seasoned`, which gives the next stretch its first-day priors and the weight
        W played before it, and the epads' posterior becomes their prior."""
        if not rounds:
            return None
        anchors = {p: s.anchor for p, s in starts.items() if s.anchor is not None}
        weights: dict[str, float] = {}
        fitted: dict[str, PlayerDays] = {}  # each player as the fit so far leaves them
        epads: dict[str, tuple[float, float]] | None = None  # (mean, variance) by name
        days = self.days(rounds)  # W11 over the whole history, seasons or not
        begin = 0
        for end, fraction in [*seasons, (len(rounds), None)]:
            start, begin = begin, end
            if stretch := rounds[start:end]:
                result = self.fit(
                    states, stretch, context, anchors, weights, epads, days[start:end]
                )
                for player, state in result.players.items():
                    state.anchor = anchors.get(player)
                    state.weight_before = weights.get(player, 0.0)
                    state.variance = result.variances[player][-1]
                    fitted[player] = state
                epads = {n: (v, result.epad_variance[n]) for n, v in result.epad.items()}
            if fraction is not None and fitted:
                fitted.update(self.season(fitted, fraction).states)
                for player, state in fitted.items():
                    if state.anchor is not None:  # every state `seasoned` gives has one
                        anchors[player], weights[player] = state.anchor, state.weight_before
        out: dict[str, PlayerDays] = {}
        for player, state in fitted.items():
            if player in states:
                fold_days(state, self.drift, self.window)
                out[player] = state
        entries = {
            EPAD + name: {"mean": mean, "precision": 1.0 / variance}
            for name, (mean, variance) in (epads or {}).items()
        }
        return Refitted(out, entries)

    def fit(
        self,
        states: Mapping[str, PlayerDays],
        rounds: Sequence[RoundFacts],
        context: Mapping[str, Any],
        anchors: Mapping[str, Anchor] | None = None,
        weights: Mapping[str, float] | None = None,
        epad_prior: Mapping[str, tuple[float, float]] | None = None,
        days: Sequence[int | None] | None = None,
    ) -> FitResult:
        """W10 over `rounds` (the sides as played), starting from the current ratings; the
        game weight each player played before them (`weights`) and the epads' prior
        (`epad_prior`) when a season came before them (S4); each round's day given (`days`)
        when `rounds` are a stretch of a longer history, else W11's over `rounds`."""
        days = self.days(rounds) if days is None else days
        games = [
            FitGame(tuple(r.rated_a), tuple(r.rated_b), day, score_a(r.winner))
            for r, day in zip(rounds, days, strict=True)
            if day is not None
        ]
        start = {p: s.rating for p, s in states.items()}
        return fit(
            games,
            self.drift,
            self.epad_kind,
            self.steps,
            start=start,
            epad_start=self.epads(context),
            epad_mode=str(self.params["epad_fit"]),
            anchors=anchors,
            weights=weights,
            epad_prior=epad_prior,
        )

    def days(self, rounds: Sequence[RoundFacts]) -> list[int | None]:
        """W11: each round's day on the axis, as the online rounds from a new pool date them
        (`virtual_days`); None for a round a side of which did not play (it teaches nothing)."""
        played = [r for r in rounds if r.rated_a and r.rated_b]
        dated = iter(
            virtual_days([((*r.rated_a, *r.rated_b), round_day(r.extras)) for r in played])
        )
        return [next(dated) if r.rated_a and r.rated_b else None for r in rounds]

    # --- what the service shows ------------------------------------------------------------
    def rating(self, state: PlayerDays) -> float:
        return to_elo(state.rating)

    def with_rating(self, state: PlayerDays, rating: float) -> PlayerDays:
        """An admin's set: the kept days are dropped and the player starts again from a prior
        centred on `rating`, as certain as they were (a newcomer's first-day spread if new), their
        played weight W counted afresh as the refit counts it."""
        variance = state.variance if state.variance > 0 else _NEWCOMER_VARIANCE
        return PlayerDays(anchor=Anchor(to_natural(rating), variance), variance=variance)

    # --- seasons ---------------------------------------------------------------------------
    def season(
        self,
        states: Mapping[str, PlayerDays],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[PlayerDays]:
        """S4 for every player (`seasoned`), r̄ the mean of their last days' ratings."""
        if not states:
            return Refitted({})
        mean = mean_of(state.rating for state in states.values())
        return Refitted({p: self.seasoned(state, mean, fraction) for p, state in states.items()})

    def seasoned(self, state: PlayerDays, mean: float, fraction: float) -> PlayerDays:
        """S4: the player's days end, and the next season starts from a prior on its first
        day: Normal(r + f·(r̄ − r), v + f·max(v₀ − v, 0)), with r and v the last day's rating
        and W9 variance (an anchor's, before any game), r̄ the pool's mean and v₀ a
        newcomer's variance (W3's 2 natural²). The season is a gap in W4's Wiener process:
        it adds variance, the share f of what the player's certainty took away, never
        removes any. The weight W played so far carries over, so W4's drift stays a
        veteran's."""
        variance = state.variance if state.variance > 0 else _NEWCOMER_VARIANCE
        grown = variance + fraction * max(_NEWCOMER_VARIANCE - variance, 0.0)
        return PlayerDays(
            anchor=Anchor(pulled(state.rating, mean, fraction), grown),
            weight_before=state.weight_before + float(np.sum(state.coef)),
            variance=grown,
        )

    def fields(self, state: PlayerDays) -> dict[str, float]:
        return {
            "rating": to_elo(state.rating),
            # a player with no game yet is as uncertain as W3 makes a newcomer
            "uncertainty": math.sqrt(state.variance or _NEWCOMER_VARIANCE) * NATURAL,
            "natural": state.rating,
            "days": float(len(state.days)),
            "games": float(len(state.coef)),
        }

    # --- all-play splits (W12) -------------------------------------------------------------
    def split_logit(
        self,
        strengths_a: Sequence[float],
        strengths_b: Sequence[float],
        context: Mapping[str, Any],
    ) -> float:
        return self.logit(
            [to_natural(s) for s in strengths_a], [to_natural(s) for s in strengths_b], context
        )

    def split_line(
        self, size_a: int, size_b: int, context: Mapping[str, Any]
    ) -> tuple[float, float] | None:
        if self.epad_kind == "bpst" and size_a != size_b:
            return None  # W7's epad depends on the smaller team's best player
        design = epad_design(self.epad_kind, self.steps, [0.0] * size_a, [0.0] * size_b)
        epad = self.epads(context)
        return 1.0 / NATURAL, sum(m * epad.get(n, 0.0) for n, m in design.items())

    # --- storage -----------------------------------------------------------------------------
    def encode(self, state: PlayerDays) -> dict[str, Any]:
        out: dict[str, Any] = {
            "days": state.days,
            "r": state.r.tolist(),
            "game_day": state.game_day.tolist(),
            "coef": state.coef.tolist(),
            "offset": state.offset.tolist(),
            "score": state.score.tolist(),
            "variance": state.variance,
        }
        if state.anchor is not None:
            out["anchor"] = [state.anchor.mean, state.anchor.variance]
        if state.weight_before:
            out["weight_before"] = state.weight_before
        return out

    def decode(self, data: Mapping[str, Any]) -> PlayerDays:
        if not data:
            return self.new_state()
        anchor = data.get("anchor")
        return PlayerDays(
            [int(d) for d in data["days"]],
            np.asarray(data["r"], dtype=np.float64),
            np.asarray(data["game_day"], dtype=np.int64),
            np.asarray(data["coef"], dtype=np.float64),
            np.asarray(data["offset"], dtype=np.float64),
            np.asarray(data["score"], dtype=np.float64),
            Anchor(float(anchor[0]), float(anchor[1])) if anchor else None,
            float(data.get("weight_before", 0.0)),
            float(data.get("variance", 0.0)),
        )


# a newcomer's first-day variance: the curvature of one virtual win and one loss at 0 is ½
_NEWCOMER_VARIANCE = 2.0
