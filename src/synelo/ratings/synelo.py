"""The SynElo model (F1–F6, see docs/maths/rating.md): pure functions, no I/O.

Ratings are integers. A round is rated against the rosters at round start; every participant
moves by K·(S − P), K shrinking as the player's rating converges (F3) and as it leaves R_0
(F4). The service, the replay and the simulator all call these functions.

F3 comes in two versions, chosen per pool by `SynEloParams.convergence`: the seed's
("seed", `seed_convergence`) and the revised one ("revised", `revised_convergence`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, NamedTuple

from synelo.ratings.params import SynEloParams
from synelo.ratings.window import ConvergenceWindow

# F3 (revised)'s constants (docs/maths/rating.md): n₁ = PRIOR_ROUNDS·Θ/K_max, and
# v_z = clamp((max_L |z_L| − Z_THRESHOLD)/Z_SPAN, 0, 1).
PRIOR_ROUNDS = 9.0
Z_THRESHOLD = 2.5
Z_SPAN = 2.0

Side = Literal["A", "B"]
Winner = Literal["A", "B", "draw"]


def round_half_even(x: float) -> int:
    """Banker's rounding, as Python's `round(x)`, in native arithmetic (x − floor(x) is
    exact for every double of magnitude at least 1, and for |x| < 1 the comparison with 1/2
    still decides the same way; a property test checks it against `round`)."""
    f = math.floor(x)
    diff = x - f
    if diff > 0.5 or (diff == 0.5 and f % 2 == 1):
        return f + 1
    return f


def win_probability(sum_a: float, sum_b: float, theta: float) -> float:
    """F1: P_A = 1/(1+exp(−(Σ_A − Σ_B)/Θ)), Σ over the rosters at round start."""
    return logistic((sum_a - sum_b) / theta)


def logistic(x: float) -> float:
    """σ(x) = 1/(1 + exp(−x)), written so that neither branch can overflow, whatever x."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def roster_logit(
    sum_a: float, size_a: int, sum_b: float, size_b: int, theta: float, headcount: bool = True
) -> float:
    """F1's logit over rosters of any size: (Σ_A − Σ_B)/Θ when they have as many players
    (F1 itself), or without `headcount` (the seed's F1: a pool's `uneven` "sums"); for
    k + j against k, each sum is taken at the larger roster's size n,
    n·Σ/size (the smaller roster's mean filling its empty places), and the larger side is
    ahead by the log-ratio of the headcounts (F1u):

        x = (n·Σ_A/n_A − n·Σ_B/n_B)/Θ + ln(n_A/n_B).

    A rating sum carries the ratings' origin (k·R_0), which Θ was never scaled for: an extra
    player would otherwise count R_0/Θ logits, 7.5 at 2v2's defaults."""
    if not headcount or size_a == size_b or size_a <= 0 or size_b <= 0:
        return (sum_a - sum_b) / theta
    n = max(size_a, size_b)
    return (n * sum_a / size_a - n * sum_b / size_b) / theta + math.log(size_a / size_b)


def shown_probability(x: float, temperature: float) -> float:
    """F1t: the P a pool shows for F1's (F1u's) logit x, σ(x/T); σ(x) itself at T = 1."""
    return logistic(x if temperature == 1.0 else x / temperature)


def roster_probability(
    sum_a: float,
    size_a: int,
    sum_b: float,
    size_b: int,
    theta: float,
    headcount: bool = True,
    temperature: float = 1.0,
) -> float:
    """F1 (F1u) over rosters of any size: P_A = σ(x), x `roster_logit`; with a
    `temperature` T, the P a pool shows (F1t): σ(x/T)."""
    return shown_probability(
        roster_logit(sum_a, size_a, sum_b, size_b, theta, headcount), temperature
    )


def expected_score(p_a: float, side: Side) -> float:
    """F2: P_i = P_A on team A, 1 − P_A on team B (the same for mid-round joiners)."""
    return p_a if side == "A" else 1.0 - p_a


def round_score(winner: Winner, side: Side) -> float:
    """F2: S = 1 for a win, 0.5 for a draw or stalemate, 0 for a loss."""
    if winner == "draw":
        return 0.5
    return 1.0 if winner == side else 0.0


def convergence(
    window: ConvergenceWindow, params: SynEloParams, rounds_played: int | None = None
) -> float:
    """F3: C of the window before a round, by the pool's version of F3 (`params.convergence`):
    `seed_convergence`, or `revised_convergence`, which also needs `rounds_played`, the
    rounds the player has played before this round (ValueError without it)."""
    if params.convergence == "revised":
        if rounds_played is None:
            raise ValueError("F3 (revised) needs the rounds played before the round")
        return revised_convergence(window, rounds_played, params)
    return seed_convergence(window, params)


def seed_convergence(window: ConvergenceWindow, params: SynEloParams) -> float:
    """F3 (seed): C = clamp(w_vel·v_vel + w_wre·v_wre + w_vol·v_vol, 0, 1).

    v_vel = |mean(w_new) − mean(w_old)|/K_max with halves of m = floor(|w|/2) (an odd
    window's middle entry is in neither), v_wre = |mean(o) − mean(e)|/0.10, v_vol =
    std(w)/K_max (population std). With fewer than 2 rounds, C = 1: new players move fastest.
    """
    return _convergence(
        window, params.w_vel, params.w_wre, params.w_vol, params.k_max, params.wre_scale
    )


def prior_convergence(rounds_played: int, k_max: float, theta: float) -> float:
    """F3 (revised): c_prior = 1/(1 + n/n₁), n₁ = 9·Θ/K_max, for a player with n rounds
    played before this one (computed as 1/(1 + n·K_max/(9·Θ)): K_max = 0 gives 1)."""
    return 1.0 / (1.0 + rounds_played * k_max / (PRIOR_ROUNDS * theta))


def z_evidence(largest_z: float) -> float:
    """F3 (revised): v_z = clamp((max_L |z_L| − 2.5)/2.0, 0, 1)."""
    v = (largest_z - Z_THRESHOLD) / Z_SPAN
    return 1.0 if v > 1.0 else (v if v > 0.0 else 0.0)


def revised_convergence(
    window: ConvergenceWindow, rounds_played: int, params: SynEloParams
) -> float:
    """F3 (revised): C = max(c_prior, v_z), and C = 1 with fewer than 2 rounds in the window.

    c_prior = 1/(1 + n/n₁) with n₁ = 9·Θ/K_max (`prior_convergence`); v_z =
    clamp((max_L |z_L| − 2.5)/2.0, 0, 1) (`z_evidence`), z_L = Σ(o − e)/√Σe(1 − e) over the
    window's last min(L, |w|) entries for L in {25, 50, 100, 200, 500}, L ≤ W
    (`ConvergenceWindow.largest_z`)."""
    return _revised(window, rounds_played, params.k_max, params.theta)


def _revised(window: ConvergenceWindow, rounds_played: int, k_max: float, theta: float) -> float:
    """F3 (revised) with the parameters unpacked (`revised_convergence`, and `Rater`)."""
    if len(window) < 2:
        return 1.0
    prior = prior_convergence(rounds_played, k_max, theta)
    evidence = z_evidence(window.largest_z())
    return prior if prior > evidence else evidence


def _convergence(
    window: ConvergenceWindow,
    w_vel: float,
    w_wre: float,
    w_vol: float,
    k_max: float,
    wre_scale: float,
) -> float:
    """F3 (seed) with the parameters unpacked (`seed_convergence`, and `Rater` without
    re-reading them)."""
    if len(window) < 2:
        return 1.0
    new_minus_old, excess, std = window.statistics()
    if new_minus_old < 0.0:  # |·| and the clamp as comparisons: native in the compiled build
        new_minus_old = -new_minus_old
    if excess < 0.0:
        excess = -excess
    c = w_vel * (new_minus_old / k_max) + w_wre * (excess / wre_scale) + w_vol * (std / k_max)
    return 1.0 if c > 1.0 else (c if c > 0.0 else 0.0)


def new_window(params: SynEloParams) -> ConvergenceWindow:
    """An empty window of W rounds that keeps running the sums of the pool's F3."""
    return ConvergenceWindow(params.window, params.convergence == "revised")


def gaussian_compression(rating: float, params: SynEloParams) -> float:
    """F4: G = exp(−(R − R_0)²/(2σ²)), symmetric around R_0."""
    d = rating - params.r0
    return math.exp(-(d * d) / (2.0 * params.sigma * params.sigma))


def k_factor(c: float, rating: float, params: SynEloParams) -> float:
    """F5: K = K_min + (K_max − K_min)·C·G, from the rating and window before the round."""
    return params.k_min + (params.k_max - params.k_min) * c * gaussian_compression(rating, params)


def updated_rating(
    rating: int, k: float, s: float, p: float, rounds_after: int, params: SynEloParams
) -> int:
    """F2: R' = max(R_min, round_half_even(R + K·(S − P))).

    On the update that brings rounds_played to exactly T_shadow, R' is capped at R_T_shadow
    (shadow graduation).
    """
    new = max(params.r_min, round_half_even(rating + k * (s - p)))
    if rounds_after == params.t_shadow:
        new = min(new, params.r_shadow_cap)
    return new


class PlayerChange:
    """One participant's rating change in one round (a journal row). A plain class that
    mypyc compiles to a C struct: a round creates one per participant."""

    __slots__ = ("player", "side", "before", "after", "k", "p", "s", "rounds_played")

    def __init__(
        self,
        player: str,
        side: Side,
        before: int,
        after: int,
        k: float,
        p: float,
        s: float,
        rounds_played: int,
    ) -> None:
        self.player = player
        self.side: Side = side
        self.before = before
        self.after = after
        self.k = k
        self.p = p
        self.s = s
        self.rounds_played = rounds_played  # after this round

    @property
    def delta(self) -> int:
        return self.after - self.before

    def _fields(self) -> tuple[str, str, int, int, float, float, float, int]:
        return (
            self.player,
            self.side,
            self.before,
            self.after,
            self.k,
            self.p,
            self.s,
            self.rounds_played,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlayerChange) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type, tuple[str, str, int, int, float, float, float, int]]:
        return PlayerChange, self._fields()  # picklable, copyable, like the named tuple was

    def __repr__(self) -> str:
        return (
            f"PlayerChange({self.player!r}, {self.side!r}, {self.before} -> {self.after}, "
            f"k={self.k}, p={self.p}, s={self.s}, rounds_played={self.rounds_played})"
        )


@dataclass(slots=True)
class PlayerRecord:
    """What the model knows of a player between rounds. `convergence` caches F3's C of
    `window` and `rounds_played` (None: not computed yet)."""

    rating: int
    rounds_played: int
    window: ConvergenceWindow
    convergence: float | None = None

    def current_convergence(self, params: SynEloParams) -> float:
        """F3: C of the window and rounds played as they stand, computed once per change."""
        if self.convergence is None:
            self.convergence = convergence(self.window, params, self.rounds_played)
        return self.convergence


class RecordBook:
    """The records of every player a replay has seen, by id; a new player starts at R_0
    with an empty window."""

    def __init__(self, params: SynEloParams) -> None:
        self.params = params
        self.records: dict[str, PlayerRecord] = {}

    def get(self, player: str) -> PlayerRecord:
        rec = self.records.get(player)
        if rec is None:
            rec = PlayerRecord(self.params.r0, 0, new_window(self.params))
            self.records[player] = rec
        return rec

    def team(self, players: tuple[str, ...]) -> list[PlayerRecord]:
        return [self.get(p) for p in players]

    def rating_sum(self, players: tuple[str, ...]) -> int:
        """Σ of the players' ratings, R_0 for one not seen yet (who is not added)."""
        total = 0
        for p in players:
            rec = self.records.get(p)
            total += self.params.r0 if rec is None else rec.rating
        return total


class Rater:
    """F2–F5 with one pool's parameters unpacked once: the one place that rates a player,
    for the service (through `rate_participants`) and the replay (through `play`) alike."""

    def __init__(self, params: SynEloParams) -> None:
        self.r0 = params.r0
        self.r_min = params.r_min
        self.cap = params.r_shadow_cap
        self.t_shadow = params.t_shadow
        self.k_min = params.k_min
        self.k_span = params.k_max - params.k_min
        self.two_sigma2 = 2.0 * params.sigma * params.sigma
        self.theta = params.theta
        self.w_vel, self.w_wre, self.w_vol = params.w_vel, params.w_wre, params.w_vol
        self.k_max, self.wre_scale = params.k_max, params.wre_scale
        self.revised = params.convergence == "revised"
        self.headcount = params.uneven == "headcount"
        self.temperature = params.temperature

    def rate(self, rec: PlayerRecord, p: float, s: float) -> tuple[float, int]:
        """(K, R') for one participant with expected score `p` and score `s`.

        C from the record's window and rounds played (F3, the pool's version, cached in the
        record), G (F4), K = K_min +
        (K_max − K_min)·C·G (F5), R' = max(R_min, round_half_even(R + K·(S − P))) capped at
        R_T_shadow on the update that brings rounds_played to T_shadow (F2). This is
        `k_factor` and `updated_rating` written out in the same order (the unit tests check
        they agree bit for bit): a round rates up to 128 players, a replay millions.
        """
        c = rec.convergence
        if c is None:
            if self.revised:
                c = _revised(rec.window, rec.rounds_played, self.k_max, self.theta)
            else:
                c = _convergence(
                    rec.window, self.w_vel, self.w_wre, self.w_vol, self.k_max, self.wre_scale
                )
            rec.convergence = c
        rating = rec.rating
        d = rating - self.r0
        k = self.k_min + self.k_span * c * math.exp(-(d * d) / self.two_sigma2)
        after = round_half_even(rating + k * (s - p))
        if after < self.r_min:
            after = self.r_min
        if rec.rounds_played + 1 == self.t_shadow and after > self.cap:
            after = self.cap
        return k, after

    def play(
        self, book: RecordBook, team_a: tuple[str, ...], team_b: tuple[str, ...], winner: Winner
    ) -> float:
        """Rate a match in which everyone on the two sides took part (distinct players, in
        tuples: the compiled loop reads them natively; `Match` makes its sides tuples), and
        move every record in `book` past it: `rate_round` then `apply_change` for each,
        without building the journal rows. The replay's loop; returns the shown P_A (F1t:
        σ(x/T); the updates use F1's σ(x))."""
        recs_a = book.team(team_a)
        recs_b = book.team(team_b)
        sum_a = 0
        for rec in recs_a:
            sum_a += rec.rating
        sum_b = 0
        for rec in recs_b:
            sum_b += rec.rating
        x = roster_logit(sum_a, len(recs_a), sum_b, len(recs_b), self.theta, self.headcount)
        self._move(recs_a, recs_b, logistic(x), winner)
        return shown_probability(x, self.temperature)

    def play_with_participants(
        self,
        book: RecordBook,
        team_a: tuple[str, ...],
        team_b: tuple[str, ...],
        participants_a: tuple[str, ...],
        participants_b: tuple[str, ...],
        winner: Winner,
    ) -> float:
        """`play` for a round whose participants differ from its round-start rosters, as
        the service rates it: P_A from the rosters' sums (F1), then F2–F5 for each
        participant on their side. Returns the shown P_A (F1t)."""
        x = roster_logit(
            book.rating_sum(team_a),
            len(team_a),
            book.rating_sum(team_b),
            len(team_b),
            self.theta,
            self.headcount,
        )
        self._move(book.team(participants_a), book.team(participants_b), logistic(x), winner)
        return shown_probability(x, self.temperature)

    def _move(
        self, recs_a: list[PlayerRecord], recs_b: list[PlayerRecord], p_a: float, winner: Winner
    ) -> None:
        p_b = 1.0 - p_a
        s_a = round_score(winner, "A")
        s_b = 1.0 - s_a
        # a player's update reads only their own record, so each moves on at once
        for rec in recs_a:
            advance(rec, self.rate(rec, p_a, s_a)[1], p_a, s_a)
        for rec in recs_b:
            advance(rec, self.rate(rec, p_b, s_b)[1], p_b, s_b)


def rate_player(
    player: str,
    side: Side,
    rating: int,
    rounds_played: int,
    window: ConvergenceWindow,
    p_a: float,
    winner: Winner,
    params: SynEloParams,
    c: float | None = None,
) -> PlayerChange:
    """F2–F5 for one participant: K from the window and rating before the round.

    `c` is F3's score of `window` when the caller already has it (it is stored with the
    player), so that each round computes it once. The window is only read.
    """
    record = PlayerRecord(rating, rounds_played, window, c)
    return rate_participants(((player, side, record),), p_a, winner, params)[0]


def rate_participants(
    participants: Iterable[tuple[str, Side, PlayerRecord]],
    p_a: float,
    winner: Winner,
    params: SynEloParams,
) -> tuple[PlayerChange, ...]:
    """F2–F5 (`Rater.rate`) for each participant of a round whose P_A is known.
    Records are read, never moved (see `apply_change`)."""
    rater = Rater(params)
    p_b = 1.0 - p_a
    s_a = round_score(winner, "A")
    s_b = round_score(winner, "B")
    changes = []
    for player, side, rec in participants:
        p, s = (p_a, s_a) if side == "A" else (p_b, s_b)
        k, after = rater.rate(rec, p, s)
        changes.append(
            PlayerChange(player, side, rec.rating, after, k, p, s, rec.rounds_played + 1)
        )
    return tuple(changes)


class RoundRating(NamedTuple):
    """The outcome of rating one round: the shown P_A (F1t; each change's `p` is F1's, which
    its update used), the round-start sums and every change."""

    p_a: float
    sum_a: int
    sum_b: int
    changes: tuple[PlayerChange, ...]

    def brier_term(self, winner: Winner) -> float:
        """F6: (P_A − O_A)², O_A being team A's score (1, 0.5 or 0)."""
        return (self.p_a - round_score(winner, "A")) ** 2


def rate_round(
    roster_a: Iterable[int],
    roster_b: Iterable[int],
    participants: Sequence[tuple[str, Side, PlayerRecord]],
    winner: Winner,
    params: SynEloParams,
) -> RoundRating:
    """Rate a round: P from the round-start rosters' ratings (F1, F1u), then F2–F5 per
    participant; the round's P_A is the shown one (F1t).

    Pure apart from caching each record's C; call `apply_change` to move a record forward.
    """
    ratings_a, ratings_b = list(roster_a), list(roster_b)
    sum_a, sum_b = sum(ratings_a), sum(ratings_b)
    x = roster_logit(
        sum_a, len(ratings_a), sum_b, len(ratings_b), params.theta, params.uneven == "headcount"
    )
    changes = rate_participants(participants, logistic(x), winner, params)
    return RoundRating(shown_probability(x, params.temperature), sum_a, sum_b, changes)


def apply_change(record: PlayerRecord, change: PlayerChange) -> None:
    """Move a record past a rated round: new rating, one more round, the round in the window."""
    advance(record, change.after, change.p, change.s)
    record.rounds_played = change.rounds_played


def advance(record: PlayerRecord, after: int, p: float, s: float) -> None:
    """A record past one rated round: rating R', one more round, (R', P, S) in the window."""
    record.rating = after
    record.rounds_played += 1
    record.window.append(after, p, s)
    record.convergence = None


def is_visible(rounds_played: int, params: SynEloParams) -> bool:
    """Shadow period: a rating is shown once the player has T_shadow rated rounds."""
    return rounds_played >= params.t_shadow


def is_stale(last_played: datetime | None, now: datetime, params: SynEloParams) -> bool:
    """Stale: the last rated round is more than T_stale days old (never rated: not stale)."""
    return last_played is not None and now - last_played > timedelta(days=params.t_stale_days)
