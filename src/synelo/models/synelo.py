"""`synelo`: SynElo F1–F6, through the very functions the service's own path rates with."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from synelo.models.base import (
    NO_CONTEXT,
    Model,
    Param,
    Rated,
    Refitted,
    RoundFacts,
    mean_of,
    pulled,
)
from synelo.ratings import (
    PlayerRecord,
    Rater,
    RecordBook,
    SynEloParams,
    default_k_min,
    k_factor,
    linear_theta,
    new_window,
    roster_probability,
)
from synelo.ratings.params import (
    MAX_K,
    MAX_SCALE,
    MAX_STALE_DAYS,
    MAX_T_SHADOW,
    MAX_TEMPERATURE,
    MAX_WEIGHT,
    MIN_K_MAX,
    MIN_SCALE,
    MIN_TEMPERATURE,
    MIN_WRE_SCALE,
)


def _parameters() -> dict[str, Param]:
    """SynEloParams' fields with the defaults of a new pool (F3 revised, its K_min), the
    bounds a pool's parameters must keep and the ranges `synelo tune` searches."""
    d = SynEloParams()

    def rating(default: int, doc: str) -> Param:
        return Param(default, 1, 10_000, integer=True, doc=doc)

    return {
        "r0": rating(d.r0, "R_0: a new player's rating"),
        "r_min": rating(d.r_min, "R_min: the rating floor"),
        "r_max": rating(d.r_max, "the highest rating an admin may set"),
        "r_shadow_cap": rating(d.r_shadow_cap, "R at shadow graduation, at most"),
        "t_shadow": Param(d.t_shadow, 0, MAX_T_SHADOW, integer=True, doc="rounds in shadow"),
        "t_stale_days": Param(d.t_stale_days, 0, MAX_STALE_DAYS, above=True, doc="days to stale"),
        "k_min": Param(
            default_k_min("revised"), 0, MAX_K, doc="K_min (12 with F3 revised)", tune=(0.0, 64.0)
        ),
        "k_max": Param(d.k_max, MIN_K_MAX, MAX_K, log=True, doc="K_max", tune=(4.0, 400.0)),
        "theta": Param(
            linear_theta(12),
            MIN_SCALE,
            MAX_SCALE,
            log=True,
            doc="F1's Θ: 100·max(team size, 2)",
            tune=(50.0, 20_000.0),
        ),
        "window": Param(d.window, 2, 5000, integer=True, doc="W: rounds in F3's window"),
        "w_vel": Param(d.w_vel, 0, MAX_WEIGHT, doc="seed F3: velocity weight", tune=(0.0, 2.0)),
        "w_wre": Param(
            d.w_wre, 0, MAX_WEIGHT, doc="seed F3: win-rate-excess weight", tune=(0.0, 2.0)
        ),
        "w_vol": Param(d.w_vol, 0, MAX_WEIGHT, doc="seed F3: volatility weight", tune=(0.0, 2.0)),
        "wre_scale": Param(d.wre_scale, MIN_WRE_SCALE, MAX_SCALE, doc="seed F3: win-rate scale"),
        "sigma": Param(
            d.sigma,
            MIN_SCALE,
            MAX_SCALE,
            log=True,
            doc="F4's compression width",
            tune=(50.0, 5_000.0),
        ),
        "temperature": Param(
            d.temperature,
            MIN_TEMPERATURE,
            MAX_TEMPERATURE,
            log=True,
            doc="F1t's T: the shown P is σ(logit/T); auto-tune fits it",
            tune=(0.25, MAX_TEMPERATURE),
        ),
        "convergence": Param("revised", choices=("revised", "seed"), doc="F3's version"),
        "uneven": Param(
            "headcount",
            choices=("headcount", "sums"),
            doc="F1 for rosters of unequal size: F1u (headcount) or the seed's sums",
        ),
    }


class SynElo(Model[PlayerRecord]):
    """P_A from the round-start rosters' rating sums (F1), then F2–F5 for each participant on
    their side, by `Rater`, which the service's `rate_round` and the replay use as well. The
    state is the player's record: rating, rounds played and F3's convergence window. The
    service keeps SynElo pools' windows in chunks of its own (`synelo.store`); this model's
    `encode` is the plain form, for any other owner of states."""

    name = "synelo"
    general = True
    summary = "SynElo F1–F6 (F3 revised by default)"
    uncertainty = "k"  # F5: how far the next round may move the rating
    parameters = _parameters()
    fit_order = ("theta", "k_min", "k_max", "sigma")  # Θ first: what `synelo tune` fits unasked

    def __init__(self, params: Mapping[str, object] | None = None) -> None:
        super().__init__(params)
        self.synelo = SynEloParams.from_dict(dict(self.params))
        self._rater = Rater(self.synelo)

    def new_state(self) -> PlayerRecord:
        return PlayerRecord(self.synelo.r0, 0, new_window(self.synelo))

    def predict(
        self,
        states: Mapping[str, PlayerRecord],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        r0 = self.synelo.r0

        def total(players: tuple[str, ...]) -> int:
            return sum(states[p].rating if p in states else r0 for p in players)

        a, b = round.team_a, round.team_b
        p = self.synelo
        headcount = p.uneven == "headcount"
        return roster_probability(
            total(a), len(a), total(b), len(b), p.theta, headcount, p.temperature
        )

    def rate(
        self,
        states: Mapping[str, PlayerRecord],
        round: RoundFacts,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Rated[PlayerRecord]:
        book = RecordBook(self.synelo)
        book.records.update(states)
        p_a = self._rater.play_with_participants(
            book, round.team_a, round.team_b, round.rated_a, round.rated_b, round.winner
        )
        return Rated(p_a, {p: book.records[p] for p in (*round.rated_a, *round.rated_b)})

    def rating(self, state: PlayerRecord) -> float:
        return state.rating

    def fields(self, state: PlayerRecord) -> dict[str, float]:
        c = state.current_convergence(self.synelo)
        return {"convergence": c, "k": k_factor(c, state.rating, self.synelo)}

    def with_rating(self, state: PlayerRecord, rating: float) -> PlayerRecord:
        """An admin set: the window restarts (C = 1 until two rounds are rated)."""
        return PlayerRecord(int(rating), state.rounds_played, new_window(self.synelo))

    def is_new(self, state: PlayerRecord) -> bool:
        return is_new_record(state, self.synelo)

    # --- all-play splits (W12 on F1u) ---------------------------------------------------------
    def has_split_logit(self) -> bool:
        """A headcount pool balances k + 1 against k by F1u's logit, the P it predicts; with
        the seed's sums, the all-play split is F1's least sum gap (`all_play_by_sums`)."""
        return self.synelo.uneven == "headcount"

    def split_logit(
        self,
        strengths_a: Sequence[float],
        strengths_b: Sequence[float],
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> float:
        """logit of the P(A) the pool shows (`roster_probability`, F1u and F1t):
        ((n·Σ_A/n_A − n·Σ_B/n_B)/Θ + ln(n_A/n_B))/T, n the larger roster's size. Dividing
        by T moves no split (the least |logit| is the same), only the P it shows."""
        c, b = self._line(len(strengths_a), len(strengths_b))
        return c * (mean_of(strengths_a) - mean_of(strengths_b)) + b

    def split_line(
        self, size_a: int, size_b: int, context: Mapping[str, Any]
    ) -> tuple[float, float] | None:
        return self._line(size_a, size_b)

    def _line(self, size_a: int, size_b: int) -> tuple[float, float]:
        """F1u's shown logit as c·(mean_A − mean_B) + b: c = n/(Θ·T), b = ln(n_A/n_B)/T."""
        t = self.synelo.temperature
        return max(size_a, size_b) / self.synelo.prediction_scale(), math.log(size_a / size_b) / t

    def season(
        self,
        states: Mapping[str, PlayerRecord],
        fraction: float,
        context: Mapping[str, Any] = NO_CONTEXT,
    ) -> Refitted[PlayerRecord]:
        """S2, SynElo's season (`season_records`): ratings pulled, windows restarted."""
        return Refitted(season_records(states, fraction, self.synelo))

    def encode(self, state: PlayerRecord) -> dict[str, Any]:
        win = state.window
        return {
            "rating": state.rating,
            "rounds_played": state.rounds_played,
            "window": [list(e) for e in zip(win.ratings, win.probs, win.scores2, strict=True)],
            "appended": win.appended,
        }

    def decode(self, data: Mapping[str, Any]) -> PlayerRecord:
        if not data:
            return self.new_state()
        win = new_window(self.synelo)
        for rating, p, s2 in data["window"]:
            win.append(rating, p, s2 / 2)
        win.appended = data["appended"]
        return PlayerRecord(data["rating"], data["rounds_played"], win)


def is_new_record(record: PlayerRecord, params: SynEloParams) -> bool:
    """Whether a SynElo record is a new player's: R_0, no round played, an empty window."""
    return record.rounds_played == 0 and record.rating == params.r0 and not len(record.window)


def season_records(
    records: Mapping[str, PlayerRecord], fraction: float, params: SynEloParams
) -> dict[str, PlayerRecord]:
    """S2: each rating R ← round(R + fraction·(R̄ − R)), R̄ the mean rating of `records`,
    the rounds played kept and F3's window restarted, as an admin's set restarts it: C = 1
    until two rounds are rated, so that K is back at its highest (F5). The service, a
    re-rate and a SynElo replay all start a season through this."""
    if not records:
        return {}
    mean = mean_of(float(r.rating) for r in records.values())
    return {
        player: PlayerRecord(
            round(pulled(r.rating, mean, fraction)), r.rounds_played, new_window(params)
        )
        for player, r in records.items()
    }
