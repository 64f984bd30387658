"""`margin`: each player's share of the points, learned from both sides' scores when a round
reports them and from the winner alone when it does not (M1–M10, docs/maths/margin.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synelo.models.base import NO_CONTEXT, Model, Param, Rated, Refitted, RoundFacts, score_a
from synelo.ratings.margin import (
    Newcomers,
    Skill,
    Spread,
    drift,
    learn_round,
    learn_scores,
    learn_winner,
    season_pull,
    side_sums,
    win_probability,
)

NEWCOMERS = "margin.newcomers"
SLOPES = ("margin_xx", "margin_xy", "total_xx", "total_xy")  # M10's sums, in Spread's order
SPREAD = "margin.spread:"  # + the round's mode ("" when it names none)
DISPLAY_ORIGIN, DISPLAY_SCALE = 1500.0, 1000.0
# a season keeps this many scores' worth of its mode's spread (M7): the next season's game
# re-learns its own within as many
SEASON_SCORES = 40.0
NEWCOMERS_READY = 5.0  # players seen past their first rounds before M8's start is used
# rounds with scores a mode's noises (M9) need before they replace 2β²: enough that their
# standard error is about a seventh of them
NOISE_READY = 100.0


class Margin(Model[Skill]):
    """M2's win probability from the round-start rosters; M3 (both sides' scores) or M4 (the
    winner) for the rated players, after M5's drift. The state is a player's `Skill`; the
    pool's context keeps each mode's score spread (M1) and the newcomers' start (M8)."""

    name = "margin"
    general = True
    summary = "points from both sides' scores (Kalman), the winner alone without them"
    display = "1500 + 1000·μ"
    uncertainty = "uncertainty"  # 1000·√v: one standard deviation, in rating points
    parameters = {
        "beta": Param(
            0.9,
            0.05,
            10.0,
            log=True,
            doc="β: a side's score noise, in spreads, until a mode has learned its own (M9)",
            tune=(0.3, 3.0),
        ),
        "gamma": Param(
            0.45,
            0.0,
            1.0,
            doc="γ: the margin's weight is 1 + γ (the scale of μ against the noise) and the "
            "total's at most 1 (M10)",
        ),
        "prior": Param(
            0.6, 0.01, 10.0, log=True, doc="a new side's points' sd, in spreads", tune=(0.1, 3.0)
        ),
        "drift": Param(
            0.02, 0.0, 10.0, doc="τ: a side's points' drift per round, in spreads", tune=(0.0, 0.5)
        ),
        "clip": Param(3.0, 0.5, 100.0, doc="the bound on a normalised score (blow-outs)"),
        "memory": Param(
            1000.0, 10.0, 1e7, log=True, doc="scores a mode's spread remembers (M1, M9)"
        ),
        "warmup": Param(
            20, 2, 10_000, integer=True, doc="scores a mode needs before they count (M1)"
        ),
        "newcomer_rounds": Param(
            20, 1, 10_000, integer=True, doc="rounds after which a player's points teach M8"
        ),
        "margins": Param("on", choices=("on", "off"), doc="learn from scores (off: winner only)"),
        "season": Param(
            0.3, 0.0, 1.0, doc="a season's pull toward the mean when it names none", tune=(0.0, 1.0)
        ),
    }
    fit_order = ("beta", "prior", "drift")

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        p = self.params
        self.beta, self.gamma = float(p["beta"]), float(p["gamma"])
        self.prior2, self.tau2 = float(p["prior"]) ** 2, float(p["drift"]) ** 2
        self.clip, self.keep = float(p["clip"]), 1.0 - 1.0 / float(p["memory"])
        self.warmup, self.newcomer_rounds = int(p["warmup"]), int(p["newcomer_rounds"])
        self.margins = p["margins"] == "on"

    def new_state(self) -> Skill:
        return Skill(0.0, self.prior2, self.prior2)

    # --- the pool's context ----------------------------------------------------------------
    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        return (NEWCOMERS, SPREAD + str(round.extras.get("mode") or ""))

    @staticmethod
    def _newcomers(context: Mapping[str, Any]) -> Newcomers:
        entry = context.get(NEWCOMERS)
        return Newcomers(entry["weight"], entry["total"]) if entry else Newcomers()

    @staticmethod
    def _spread(entry: Mapping[str, Any] | None) -> Spread:
        if not entry:
            return Spread()
        return Spread(
            entry["weight"],
            entry["total"],
            entry["squares"],
            entry.get("noise_weight", 0.0),
            entry.get("margin_noise", 0.0),
            entry.get("total_noise", 0.0),
            *(entry.get(name, 0.0) for name in SLOPES),
        )

    @staticmethod
    def _entry(spread: Spread) -> dict[str, float]:
        return {
            "weight": spread.weight,
            "total": spread.total,
            "squares": spread.squares,
            "noise_weight": spread.noise_weight,
            "margin_noise": spread.margin_noise,
            "total_noise": spread.total_noise,
            **{name: getattr(spread, name) for name in SLOPES},
        }

    def _noises(self, spread: Spread) -> tuple[float, float]:
        """(σ_d², σ_u²): the margin's and the total's noise, the mode's own once M9 has
        learned them, 2β² each before (and with `margins` off)."""
        if not self.margins:
            return 2.0 * self.beta * self.beta, 2.0 * self.beta * self.beta
        return spread.noises(self.beta, NOISE_READY)

    # --- rating ----------------------------------------------------------------------------
    def _skills(
        self, states: Mapping[str, Skill], players: Sequence[str], k: int, start: float
    ) -> list[Skill]:
        """The players' skills, a new one at M8's start with prior v0 = prior²/k."""
        out = []
        for player in players:
            found = states.get(player)
            if found is None:
                v0 = self.prior2 / k
                found = Skill(start / k, v0, v0)
            out.append(found)
        return out

    def predict(
        self,
        states: Mapping[str, Skill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        k = max(len(round.team_a), len(round.team_b))
        start = self._newcomers(context).mean(NEWCOMERS_READY)
        a = self._skills(states, round.team_a, k, start)
        b = self._skills(states, round.team_b, k, start)
        spread = self._spread(context.get(SPREAD + str(round.extras.get("mode") or "")))
        return win_probability(a, b, self._noises(spread)[0], self.gamma)

    def rate(
        self,
        states: Mapping[str, Skill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[Skill]:
        k = max(len(round.team_a), len(round.team_b))
        newcomers = self._newcomers(context)
        start = newcomers.mean(NEWCOMERS_READY)
        players = (*round.team_a, *round.team_b)
        rosters = dict(zip(players, self._skills(states, players, k, start), strict=True))
        for joiner in (*round.rated_a, *round.rated_b):  # rated without a seat at the start
            if joiner not in rosters:
                rosters[joiner] = self._skills(states, (joiner,), k, start)[0]
        key = SPREAD + str(round.extras.get("mode") or "")
        spread = self._spread(context.get(key))
        noises = self._noises(spread)
        p_a = win_probability(
            [rosters[p] for p in round.team_a],
            [rosters[p] for p in round.team_b],
            noises[0],
            self.gamma,
        )
        rated_a = [rosters[p] for p in round.rated_a]
        rated_b = [rosters[p] for p in round.rated_b]
        tau2 = self.tau2 / k
        for skill in (*rated_a, *rated_b):
            drift(skill, tau2)
        changed: dict[str, Any] = {}
        scores = self._scores(round)
        if scores is not None and self.margins and spread.weight >= self.warmup:
            y_a = spread.normalised(scores[0], self.clip)
            y_b = spread.normalised(scores[1], self.clip)
            g = self.gamma
            total_weight = spread.total_weight(1.0 + g, NOISE_READY)
            sums = side_sums(rated_a, rated_b)
            learn_round(spread, sums, y_a, y_b, 1.0 + g, total_weight, self.keep)
            learn_scores(rated_a, rated_b, y_a, y_b, noises, g, total_weight)
        else:
            learn_winner(rated_a, rated_b, score_a(round.winner), noises[0], self.gamma)
        if scores is not None:
            spread.learn(scores[0], self.keep, self.clip, self.warmup)
            spread.learn(scores[1], self.keep, self.clip, self.warmup)
            changed[key] = self._entry(spread)
        learned = False
        for skill in (*rated_a, *rated_b):
            skill.rounds += 1
            if skill.rounds == self.newcomer_rounds:
                newcomers.add(skill.mu * k, self.keep)
                learned = True
        if learned:
            changed[NEWCOMERS] = {"weight": newcomers.weight, "total": newcomers.total}
        new = dict(zip(round.rated_a, rated_a, strict=True))
        new.update(zip(round.rated_b, rated_b, strict=True))
        return Rated(p_a, new, changed)

    @staticmethod
    def _scores(round: RoundFacts) -> tuple[float, float] | None:
        """The round's (A, B) scores when it has them and they agree with its winner (a
        report whose scores contradict its winner is learned from by the winner alone)."""
        scores = round.extras.get("scores")
        if not isinstance(scores, Mapping):
            return None
        a, b = float(scores["A"]), float(scores["B"])
        agree = {"A": a > b, "B": b > a, "draw": a == b}[round.winner]
        return (a, b) if agree else None

    # --- seasons ---------------------------------------------------------------------------
    def season(
        self, states: Mapping[str, Skill], fraction: float, context: Mapping[str, Any] = NO_CONTEXT
    ) -> Refitted[Skill]:
        """M6 on every player, then M7 on every mode's spread."""
        skills = {p: Skill(s.mu, s.v, s.v0, s.rounds) for p, s in states.items()}
        season_pull(list(skills.values()), fraction)
        changed: dict[str, Any] = {}
        for key, entry in context.items():
            if key.startswith(SPREAD) and entry:
                spread = self._spread(entry)
                spread.forget_to(SEASON_SCORES, NOISE_READY)
                changed[key] = self._entry(spread)
        return Refitted(skills, changed)

    # --- what the service shows ------------------------------------------------------------
    def rating(self, state: Skill) -> float:
        return DISPLAY_ORIGIN + DISPLAY_SCALE * state.mu

    def strength(self, state: Skill) -> float:
        return DISPLAY_SCALE * state.mu

    def fields(self, state: Skill) -> dict[str, float]:
        return {
            "mu": state.mu,
            "uncertainty": DISPLAY_SCALE * state.v**0.5,
            "rounds": float(state.rounds),
        }

    def with_rating(self, state: Skill, rating: float) -> Skill:
        return Skill((rating - DISPLAY_ORIGIN) / DISPLAY_SCALE, state.v, state.v0, state.rounds)

    def encode(self, state: Skill) -> dict[str, Any]:
        return {"mu": state.mu, "v": state.v, "v0": state.v0, "rounds": state.rounds}

    def decode(self, data: Mapping[str, Any]) -> Skill:
        if not data:
            return self.new_state()
        return Skill(float(data["mu"]), float(data["v"]), float(data["v0"]), int(data["rounds"]))
