"""`hive`: the NS2 Hive skill model (seed 001, H1–H10 of docs/maths/hive.md).

A round's prediction is a time-weighted logistic regression on the players' skills, with a
side offset per player, a commanding skill for the commanders, and a context bias learned
from the pool's own rounds. The pool's context (its reference side, recent round lengths and
side win rates per bucket) is kept as entries beside the players: `context_keys`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from synelo.models.base import (
    NO_CONTEXT,
    Model,
    Param,
    Rated,
    Refitted,
    RoundFacts,
    SeasonMark,
    mean_of,
    pulled,
    score_a,
)
from synelo.ratings.hive import (
    HiveContext,
    HiveParams,
    HiveRound,
    HiveSkill,
    Presence,
    Team,
    context_bias,
    context_keys,
    display,
    intervals_weight,
    learn_context,
    logit_a,
    median_length,
    minus,
    remember_length,
    side_signs,
    sigmoid,
    update,
)
from synelo.ratings.hive_solve import GRADIENT_TOLERANCE, SolveReport, solve_skills

log = logging.getLogger(__name__)
TEAM_A: Team = "A"
TEAM_B: Team = "B"
REFERENCE = "reference"
LENGTHS = "lengths"
BUCKET = "b:"


def round_duration(extras: Mapping[str, Any]) -> float | None:
    """The round's length in seconds: `duration`, else `ended_at` − `started_at`."""
    if extras.get("duration") is not None:
        return float(extras["duration"])
    started, ended = extras.get("started_at"), extras.get("ended_at")
    if started and ended:
        span = (_instant(ended) - _instant(started)).total_seconds()
        return span if span > 0 else None
    return None


def commanders_of(extras: Mapping[str, Any]) -> dict[str, tuple[str, tuple[float, float] | None]]:
    """Each team's commander and the span they commanded (None: their whole time)."""
    out: dict[str, tuple[str, tuple[float, float] | None]] = {}
    for team, given in (extras.get("commanders") or {}).items():
        if isinstance(given, Mapping):
            out[team] = (str(given["player"]), (float(given["from"]), float(given["to"])))
        else:
            out[team] = (str(given), None)
    return out


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# The maths' own defaults (ratings.hive): each parameter's default is stated there only.
HIVE_DEFAULTS = HiveParams()


class Hive(Model[HiveSkill]):
    """H2's prediction and H3–H6's update (`synelo.ratings.hive`). The display rating is
    H9's display_scale·s; the strength the split solver balances is s, side-blind, as the
    seed balances."""

    name = "hive"
    general = True
    summary = "NS2 Hive: time-weighted logistic skill, side offsets, commanders, context bias"
    display = "display_scale·s (H9)"
    parameters = {
        "c": Param(
            HIVE_DEFAULTS.c,
            0.0,
            1e3,
            doc="c: the constant learning rate (H4, H5)",
            tune=(0.01, 100.0),
            tune_log=True,
        ),
        "a": Param(
            HIVE_DEFAULTS.a,
            0.0,
            1e3,
            doc="a: the AdaGrad learning rate (H4)",
            tune=(0.01, 100.0),
            tune_log=True,
        ),
        "eps": Param(
            HIVE_DEFAULTS.eps,
            1e-9,
            1e6,
            log=True,
            doc="ε: a first round's step is c + a/√ε",
            tune=(1e-4, 10.0),
        ),
        "command_rate": Param(
            HIVE_DEFAULTS.command_rate,
            0.0,
            1e3,
            doc="r_χ: the commanding skill's rate against s's (H6)",
            tune=(0.01, 4.0),
            tune_log=True,
        ),
        "k": Param(
            HIVE_DEFAULTS.k,
            1.0,
            1e3,
            log=True,
            doc="k: shape of the Gamma skill prior (H8)",
            tune=(1.01, 100.0),
        ),
        "theta": Param(
            HIVE_DEFAULTS.theta,
            1e-3,
            1e3,
            log=True,
            doc="θ: scale of the Gamma prior; s₀ = kθ",
            tune=(0.01, 100.0),
        ),
        "solve_prior_sd": Param(
            HIVE_DEFAULTS.solve_prior_sd,
            1e-3,
            1e3,
            log=True,
            doc="w: the solve's prior sd of offsets and χ (H8)",
        ),
        "display_scale": Param(
            HIVE_DEFAULTS.display_scale, 1e-3, 1e6, log=True, doc="display points per skill"
        ),
        "round_length": Param(
            HIVE_DEFAULTS.round_length,
            1.0,
            86_400.0,
            log=True,
            doc="r in seconds before the pool reports one",
        ),
        "bias_prior": Param(
            HIVE_DEFAULTS.bias_prior,
            1.0,
            1e6,
            log=True,
            doc="m: pseudo-rounds shrinking a bucket (H7)",
            tune=(1.0, 10_000.0),
        ),
        "bias_half_life": Param(
            HIVE_DEFAULTS.bias_half_life,
            1.0,
            1e9,
            log=True,
            doc="a bucket's rounds halve in weight over this many",
        ),
        "reference_side": Param(
            "", text=True, doc="the side σ = +1 ('': the first side the pool sees)"
        ),
        "solve": Param("off", choices=("off", "on"), doc="a re-rate ends with the full solve (H8)"),
    }

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        p = self.params
        self.hive = HiveParams(
            c=float(p["c"]),
            a=float(p["a"]),
            eps=float(p["eps"]),
            command_rate=float(p["command_rate"]),
            k=float(p["k"]),
            theta=float(p["theta"]),
            solve_prior_sd=float(p["solve_prior_sd"]),
            display_scale=float(p["display_scale"]),
            round_length=float(p["round_length"]),
            bias_prior=float(p["bias_prior"]),
            bias_half_life=float(p["bias_half_life"]),
        )

    # --- the round as H2 sees it --------------------------------------------------------------
    def context_keys(self, round: RoundFacts) -> tuple[str, ...]:
        keys, _ = self._buckets(round)
        return (REFERENCE, LENGTHS, *(BUCKET + k for k in keys))

    def _buckets(self, round: RoundFacts) -> tuple[tuple[str, ...], bool]:
        extras = round.extras
        players = len(round.team_a) + len(round.team_b)
        return context_keys(extras.get("sides"), str(extras.get("map", "")), players)

    def _context(self, round: RoundFacts, entries: Mapping[str, Any]) -> HiveContext:
        keys, _ = self._buckets(round)
        return HiveContext(
            entries.get(REFERENCE) or None,
            [float(x) for x in entries.get(LENGTHS) or ()],
            {k: list(entries[BUCKET + k]) for k in keys if BUCKET + k in entries},
        )

    def _reference(self, context: HiveContext) -> str | None:
        return str(self.params["reference_side"]) or context.reference

    def _bias(self, round: RoundFacts, context: HiveContext) -> float:
        keys, a_first = self._buckets(round)
        return context_bias(context, keys, a_first, self.hive.bias_prior)

    def start_round(self, round: RoundFacts, context: HiveContext) -> HiveRound:
        """The round as its start shows it: the rosters, each for the whole round (the
        future leavers are not known yet), the commanders, the sides and the bias."""
        sign_a, sign_b = side_signs(round.extras.get("sides"), self._reference(context))
        commanders = {team: player for team, (player, _) in commanders_of(round.extras).items()}
        presences = [
            Presence(
                p,
                team,
                t_sign,
                side,
                0.0 if commanders.get(team) == p else 1.0,
                1.0 if commanders.get(team) == p else 0.0,
            )
            for team, players, t_sign, side in (
                (TEAM_A, round.team_a, 1, sign_a),
                (TEAM_B, round.team_b, -1, sign_b),
            )
            for p in players
        ]
        return HiveRound(tuple(presences), self._bias(round, context), score_a(round.winner))

    def played_round(self, round: RoundFacts, context: HiveContext) -> HiveRound:
        """The round as it was played (H1): everyone on a roster or rated, each with the
        time weight of their `time_played` (a fraction f: from the start for f of the
        round; a span: those seconds; absent: the whole round). A commander commands for
        the span `commanders` gives, else for their whole time, and plays as a field
        player for the rest of their time."""
        extras = round.extras
        length = median_length(context, self.hive.round_length)
        played: Mapping[str, Any] = extras.get("time_played") or {}
        spans = [v for v in played.values() if isinstance(v, Mapping)]
        duration = round_duration(extras)
        if duration is None:  # not reported: a typical round, or as long as the spans say
            chairs = [span[1] for _, span in commanders_of(extras).values() if span]
            duration = max([length, *(float(v["to"]) for v in spans), *chairs])
        sign_a, sign_b = side_signs(extras.get("sides"), self._reference(context))
        commanders = commanders_of(extras)
        presences: list[Presence] = []
        for team, roster, rated, t_sign, side in (
            (TEAM_A, round.team_a, round.rated_a, 1, sign_a),
            (TEAM_B, round.team_b, round.rated_b, -1, sign_b),
        ):
            for p in dict.fromkeys((*roster, *rated)):
                given = played.get(p)
                if given is None:
                    span = (0.0, duration)
                elif isinstance(given, Mapping):
                    span = (float(given["from"]), float(given["to"]))
                else:
                    span = (0.0, float(given) * duration)
                command = commanders.get(team)
                if command is None or command[0] != p:
                    t, c = intervals_weight([span], length), 0.0
                else:  # commanding for their span (or whole time), playing for the rest
                    chair = span if command[1] is None else command[1]
                    seat = (max(span[0], chair[0]), min(span[1], chair[1]))
                    t = intervals_weight(minus(span, seat), length)
                    c = intervals_weight([seat], length) if seat[1] > seat[0] else 0.0
                presences.append(Presence(p, team, t_sign, side, t, c))
        return HiveRound(tuple(presences), self._bias(round, context), score_a(round.winner))

    # --- the Model interface -----------------------------------------------------------------
    def new_state(self) -> HiveSkill:
        return HiveSkill(self.hive.s0)

    def predict(
        self,
        states: Mapping[str, HiveSkill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        """H2 at round start."""
        start = self.start_round(round, self._context(round, context))
        return sigmoid(logit_a(start, states, self.hive.s0))

    def rate(
        self,
        states: Mapping[str, HiveSkill],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[HiveSkill]:
        """H2 at round start for P(A); H3–H6 on the round as played; then H7 and H10 learn
        the round's side result and length."""
        ctx = self._context(round, context)
        changed: dict[str, Any] = {}
        sides = round.extras.get("sides")
        if ctx.reference is None and sides and not self.params["reference_side"]:
            ctx.reference = changed[REFERENCE] = str(sides["A"])
        p_a = sigmoid(logit_a(self.start_round(round, ctx), states, self.hive.s0))
        _, new = update(
            self.played_round(round, ctx), states, self.hive, (p for p, _ in round.rated())
        )
        keys, a_first = self._buckets(round)
        g = score_a(round.winner)
        learn_context(ctx, keys, g if a_first else 1.0 - g, self.hive.bias_half_life)
        changed.update({BUCKET + k: ctx.buckets[k] for k in keys})
        duration = round_duration(round.extras)
        if duration is not None:
            remember_length(ctx, duration)
            changed[LENGTHS] = ctx.lengths
        return Rated(p_a, new, changed)

    def refits(self) -> bool:
        return self.params["solve"] == "on"

    def refit(
        self,
        states: Mapping[str, HiveSkill],
        rounds: Sequence[RoundFacts],
        context: Mapping[str, Any],
        starts: Mapping[str, HiveSkill] = NO_CONTEXT,
        seasons: Sequence[SeasonMark] = (),
    ) -> Refitted[HiveSkill] | None:
        """H8 when the pool asks for it (`solve`: on). The solve fits every round at once under
        the skills' prior: it keeps neither an admin's set nor a season (`seasons`)."""
        if not self.refits() or not rounds:
            return None
        return Refitted(self.solve(states, rounds, context))

    def solve(
        self,
        states: Mapping[str, HiveSkill],
        rounds: Sequence[RoundFacts],
        context: Mapping[str, Any],
    ) -> dict[str, HiveSkill]:
        """H8: the s, o and χ of every player in `states` refitted on `rounds` under their
        priors, with the lengths and the context held at their current values (a warning
        is logged if it stops short of its tolerance)."""
        played = [self.played_round(r, self._context(r, context)) for r in rounds]
        report: list[SolveReport] = []
        solved = solve_skills(played, states, self.hive, report)
        if not report[0].converged:
            log.warning(
                "the Hive solve stopped after %d iterations with a projected gradient of "
                "%.2g (tolerance %.0e)",
                report[0].iterations,
                report[0].gradient,
                GRADIENT_TOLERANCE,
            )
        # a roster player never rated (not a participant) keeps being new
        return {player: state for player, state in solved.items() if player in states}

    def season(
        self,
        states: Mapping[str, HiveSkill],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[HiveSkill]:
        """S5: the skill s ← s + f·(s̄ − s) toward the mean s̄ of the players, the commanding
        skill χ likewise toward the mean χ of those who commanded (the others keep theirs),
        and both AdaGrad sums g ← (1 − f)·g, the share f of the way back to a newcomer's 0, so
        that H4's rate grows again. The side offsets o stay."""
        if not states:
            return Refitted({})
        mean_s = mean_of(state.s for state in states.values())
        mean_chi = mean_of(state.chi for state in states.values() if state.commanded > 0)
        keep = 1.0 - fraction
        return Refitted(
            {
                player: HiveSkill(
                    pulled(state.s, mean_s, fraction),
                    keep * state.g,
                    state.o,
                    pulled(state.chi, mean_chi, fraction) if state.commanded > 0 else state.chi,
                    keep * state.g_chi,
                    state.rounds,
                    state.commanded,
                )
                for player, state in states.items()
            }
        )

    # --- what the service shows --------------------------------------------------------------
    def rating(self, state: HiveSkill) -> float:
        return display(state.s, self.hive)

    def strength(self, state: HiveSkill) -> float:
        """s on the display scale: the team sums of H2 at full time are these over
        display_scale (offsets and commanders left out, as the seed balances)."""
        return self.hive.display_scale * state.s

    def with_rating(self, state: HiveSkill, rating: float) -> HiveSkill:
        return HiveSkill(
            rating / self.hive.display_scale,
            state.g,
            state.o,
            state.chi,
            state.g_chi,
            state.rounds,
            state.commanded,
        )

    def fields(self, state: HiveSkill) -> dict[str, float]:
        return {
            "s": state.s,
            "o": state.o,
            "chi": state.chi,
            "rounds": float(state.rounds),
            "commanded": float(state.commanded),
        }

    def traits(self, states: Mapping[str, HiveSkill]) -> dict[str, dict[str, float]]:
        """The side offsets o and, for those who commanded, the commanding skills χ."""
        return {
            "offset": {p: s.o for p, s in states.items()},
            "command": {p: s.chi for p, s in states.items() if s.commanded > 0},
        }

    def encode(self, state: HiveSkill) -> dict[str, Any]:
        return {
            "s": state.s,
            "g": state.g,
            "o": state.o,
            "chi": state.chi,
            "g_chi": state.g_chi,
            "rounds": state.rounds,
            "commanded": state.commanded,
        }

    def decode(self, data: Mapping[str, Any]) -> HiveSkill:
        if not data:
            return self.new_state()
        return HiveSkill(
            float(data["s"]),
            float(data["g"]),
            float(data["o"]),
            float(data["chi"]),
            float(data["g_chi"]),
            int(data["rounds"]),
            int(data["commanded"]),
        )
