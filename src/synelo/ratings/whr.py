"""Whole History Rating with the extra-player advantage (seed 004, W1–W9 of docs/maths/whr.md).

WHR gives every player a rating per day they played (a PlayerDay) and finds the most
probable ratings of all days at once (MAP), so a game today also moves what we believe of
yesterday. This module holds the pure formulas and one player's Newton step; `whr_fit` fits a
whole history at once. Ratings are on the natural scale: 1 unit = 400/ln 10 Elo, 0 = 1500.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.linalg.lapack
import scipy.special
from numpy.typing import NDArray

NATURAL = 400.0 / math.log(10.0)  # Elo per natural unit (W1)
ELO_ZERO = 1500.0  # the Elo of natural rating 0 (W1)
EPAD_PRIOR_SD = 1000.0 / NATURAL  # W6: epad ~ Normal(0, 1000 Elo)
BPST_CENTRE = 2000.0  # W7: rh(b) = sigmoid((b − 2000)/200), b in Elo
BPST_WIDTH = 200.0
SMOOTH_MAX_TEMPERATURE = 50.0  # Elo: the smooth maximum's softness (W7)
# W5's safeguards, met only where the logistic saturates (ratings thousands of Elo apart): no
# day's curvature is taken below MIN_CURVATURE, and no Newton step moves a day more than
# MAX_STEP natural units (870 Elo). Neither changes where the iteration converges.
MIN_CURVATURE = 1e-9
MAX_STEP = 5.0

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
DriftKind = Literal["zero-k", "constant"]
EpadKind = Literal["simple", "bpst", "none"]


def sigmoid(x: float) -> float:
    """σ(x) = 1/(1 + e^(−x)), without overflow for large |x|."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def to_elo(r: float) -> float:
    """W1: the Elo of natural rating r."""
    return ELO_ZERO + NATURAL * r


def to_natural(elo: float) -> float:
    """W1: the natural rating of an Elo."""
    return (elo - ELO_ZERO) / NATURAL


@dataclass(frozen=True, slots=True)
class Drift:
    """W4, the prior on a player's change between two days they played, Normal(0, σ²).

    Zero-K's: σ² = w·per_weight + (d₂ − d₁)·V Elo², V = scale/(W + games_offset), with w the
    game weight of day d₂ and W the weight played before d₁. Standard WHR's: σ² = (d₂ − d₁)·w2."""

    kind: DriftKind = "zero-k"
    w2: float = 300.0  # Elo² per day (constant)
    per_weight: float = 500.0  # Elo² per unit of game weight on d₂ (zero-k)
    scale: float = 200_000.0  # Elo²·weight per day (zero-k)
    games_offset: float = 400.0  # weight (zero-k)

    def variance(self, gap: float, weight_on_day: float, weight_before: float) -> float:
        """W4: σ² in natural units² between two days `gap` days apart."""
        if self.kind == "constant":
            elo2 = gap * self.w2
        else:
            elo2 = weight_on_day * self.per_weight + gap * self.scale / (
                weight_before + self.games_offset
            )
        return elo2 / (NATURAL * NATURAL)


# --- W2, W3: the extra-player advantage -------------------------------------------------------


def epad_terms(size_a: int, size_b: int, steps: int) -> list[tuple[int, float]]:
    """W2: the epad parameters a game of `size_a` against `size_b` uses, as (step, multiplier)
    with step k the parameter of kv(k+1) (1-based, at most `steps`), positive when A is the
    larger team. A difference of several players sums the steps between them (3v5 =
    epad(3v4) + epad(4v5)); a step past the last one is the last one scaled by
    steps/(smaller size), the seed's footnote 1."""
    if size_a == size_b or min(size_a, size_b) < 1:
        return []
    sign = 1.0 if size_a > size_b else -1.0
    small, large = min(size_a, size_b), max(size_a, size_b)
    terms: dict[int, float] = {}
    for k in range(small, large):
        if k < steps:
            terms[k] = terms.get(k, 0.0) + sign
        else:
            terms[steps] = terms.get(steps, 0.0) + sign * steps / k
    return sorted(terms.items())


def smooth_max(elos: Sequence[float], temperature: float = SMOOTH_MAX_TEMPERATURE) -> float:
    """W7: a differentiable maximum, t·log Σ exp(x/t), at most t·log n above the true one."""
    top = max(elos)
    return top + temperature * math.log(sum(math.exp((x - top) / temperature) for x in elos))


def rating_highness(best_elo: float) -> float:
    """W7: rh(b) = σ((b − 2000)/200), how far the smaller team's best player counts as high."""
    return sigmoid((best_elo - BPST_CENTRE) / BPST_WIDTH)


def epad_design(
    kind: EpadKind, steps: int, team_a: Sequence[float], team_b: Sequence[float]
) -> dict[str, float]:
    """The epad parameters a game reads, by name, with their multipliers: logit P(A) gains
    Σ multiplier·epad[name]. `team_a`, `team_b` are the players' natural ratings (the BPST
    variant reads the smaller team's best). Names: "k" (simple) or "k:low"/"k:high" (BPST)."""
    if kind == "none":
        return {}
    terms = epad_terms(len(team_a), len(team_b), steps)
    if not terms:
        return {}
    if kind == "simple":
        return {str(k): m for k, m in terms}
    smaller = team_a if len(team_a) < len(team_b) else team_b
    rh = rating_highness(smooth_max([to_elo(r) for r in smaller]))
    out: dict[str, float] = {}
    for k, m in terms:
        out[f"{k}:high"] = m * rh
        out[f"{k}:low"] = m * (1.0 - rh)
    return out


def team_logit(
    team_a: Sequence[float],
    team_b: Sequence[float],
    design: dict[str, float],
    epad: dict[str, float],
) -> float:
    """W1: logit P(A) = mean_A − mean_B + epad, with natural ratings."""
    mean_a = sum(team_a) / len(team_a) if team_a else 0.0
    mean_b = sum(team_b) / len(team_b) if team_b else 0.0
    return mean_a - mean_b + sum(m * epad.get(name, 0.0) for name, m in design.items())


# --- W5: one player's days and their Newton step ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Day:
    """One PlayerDay as built or stored: its number, the rating and the day's games seen from
    the player, each (coefficient, offset, score): logit P(player's side wins) =
    coefficient·r + offset, the offset holding everyone else's ratings and epad as they were
    last computed, the coefficient 1/(players on the player's team)."""

    day: int
    r: float
    games: Sequence[tuple[float, float, float]] = ()


@dataclass(slots=True)
class Anchor:
    """The prior of a player's first kept day: Normal(mean, variance) once older days are
    folded into it (W8) or an admin set a rating; None means W3's virtual win and loss."""

    mean: float
    variance: float


@dataclass(slots=True)
class PlayerDays:
    """A player's kept days (numbers and ratings) and all their games as arrays (the day
    each belongs to, coefficient, offset, score), the prior of the first kept day, the game
    weight already folded, and the last day's variance (W9; 0 before any game)."""

    days: list[int] = field(default_factory=list)
    r: FloatArray = field(default_factory=lambda: np.zeros(0))
    game_day: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    coef: FloatArray = field(default_factory=lambda: np.zeros(0))
    offset: FloatArray = field(default_factory=lambda: np.zeros(0))
    score: FloatArray = field(default_factory=lambda: np.zeros(0))
    anchor: Anchor | None = None
    weight_before: float = 0.0
    variance: float = 0.0

    @classmethod
    def of(
        cls,
        days: Sequence[Day],
        anchor: Anchor | None = None,
        weight_before: float = 0.0,
        variance: float = 0.0,
    ) -> PlayerDays:
        games = [(i, *g) for i, d in enumerate(days) for g in d.games]
        table = np.asarray(games, dtype=np.float64).reshape(-1, 4)
        return cls(
            [d.day for d in days],
            np.asarray([d.r for d in days], dtype=np.float64),
            table[:, 0].astype(np.int64),
            table[:, 1].copy(),
            table[:, 2].copy(),
            table[:, 3].copy(),
            anchor,
            weight_before,
            variance,
        )

    def copy(self) -> PlayerDays:
        return PlayerDays(
            list(self.days),
            self.r.copy(),
            self.game_day,  # the arrays are replaced, never written in place, once shared
            self.coef,
            self.offset,
            self.score,
            self.anchor,
            self.weight_before,
            self.variance,
        )

    @property
    def rating(self) -> float:
        """The last day's rating; before any day, the anchor's mean (0 for a newcomer)."""
        if len(self.r):
            return float(self.r[-1])
        return self.anchor.mean if self.anchor else 0.0

    def day_weights(self) -> FloatArray:
        """Each kept day's game weight (W4's w): the sum of its games' coefficients."""
        return _sums(self.game_day, self.coef, len(self.days))

    def open_day(self, day: int) -> int:
        """The index of the day a round on `day` counts on: a new last day, or the last one
        when the round is not later (a late report never opens a day before one played)."""
        if not self.days or self.days[-1] < day:
            self.days.append(day)
            self.r = np.append(self.r, self.rating)
        return len(self.days) - 1

    def add_game(self, day_index: int, coef: float, offset: float, score: float) -> int:
        """Append a game to a kept day; its index among the games."""
        self.game_day = np.append(self.game_day, day_index)
        self.coef = np.append(self.coef, coef)
        self.offset = np.append(self.offset, offset)
        self.score = np.append(self.score, score)
        return len(self.coef) - 1

    def set_game(self, game: int, coef: float, offset: float, score: float) -> None:
        """Rewrite a game in place: only one that `add_game` appended to this state, which
        gave it arrays of its own rather than those of the state it was copied from."""
        self.coef[game], self.offset[game], self.score[game] = coef, offset, score


def game_terms(player: PlayerDays, r: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each kept day's game log-likelihood at ratings `r`, with its first and second
    derivatives (W1 for every game, from the player's side)."""
    n = len(player.days)
    x = player.coef * r[player.game_day] + player.offset
    s = player.score
    log_p = -np.logaddexp(0.0, -x)
    value = _sums(player.game_day, s * log_p + (1.0 - s) * (log_p - x), n)
    grad, hess = game_derivatives(player, r)
    return value, grad, hess


def game_derivatives(player: PlayerDays, r: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The first and second derivatives of each kept day's game log-likelihood at `r`."""
    n = len(player.days)
    c = player.coef
    p = scipy.special.expit(c * r[player.game_day] + player.offset)
    grad = _sums(player.game_day, c * (player.score - p), n)
    hess = _sums(player.game_day, c * c * p * (p - 1.0), n)
    return grad, hess


def _sums(day: IntArray, values: FloatArray, n: int) -> FloatArray:
    """`values` summed per kept day."""
    return np.asarray(np.bincount(day, weights=values, minlength=n), dtype=np.float64)


def anchor_terms(anchor: Anchor | None, r: float) -> tuple[float, float]:
    """W3 (first-day virtual win and loss against a 0 player) or a Gaussian anchor: the
    gradient and second derivative of the first kept day's prior at r."""
    if anchor is None:
        p = sigmoid(r)
        return 1.0 - 2.0 * p, -2.0 * p * (1.0 - p)
    return -(r - anchor.mean) / anchor.variance, -1.0 / anchor.variance


def drift_variances(player: PlayerDays, drift: Drift) -> list[float]:
    """W4 between each pair of consecutive kept days."""
    if len(player.days) < 2:
        return []
    weights = player.day_weights()
    gaps = np.diff(np.asarray(player.days, dtype=np.float64))
    if drift.kind == "constant":
        elo2 = gaps * drift.w2
    else:
        before = player.weight_before + np.cumsum(weights[:-1]) - weights[:-1]
        elo2 = weights[1:] * drift.per_weight + gaps * drift.scale / (before + drift.games_offset)
    out: list[float] = (elo2 / (NATURAL * NATURAL)).tolist()
    return out


def _system(
    player: PlayerDays, drift: Drift, variances: Sequence[float] | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The gradient, the Hessian's diagonal and its off-diagonal for a player's kept days
    (`variances`: W4's between them, when the caller has them already)."""
    r = player.r
    grad, diag = game_derivatives(player, r)
    g0, h0 = anchor_terms(player.anchor, float(r[0]))
    grad[0] += g0
    diag[0] += h0
    s2 = np.asarray(drift_variances(player, drift) if variances is None else variances)
    inv = 1.0 / s2  # H[i, i+1]
    flow = (r[1:] - r[:-1]) * inv
    grad[:-1] += flow
    grad[1:] -= flow
    diag[:-1] -= inv
    diag[1:] -= inv
    return grad, diag, inv


def newton_step(
    player: PlayerDays, drift: Drift, variances: Sequence[float] | None = None
) -> float:
    """W5: one Newton step on all of a player's kept days, everyone else held fixed. The
    Hessian is tridiagonal (each day is tied only to its neighbours), so the step costs
    O(days) beyond evaluating the games (LAPACK's tridiagonal solver, gtsv). `variances`:
    W4's, if known. Returns the largest change."""
    if not player.days:
        return 0.0
    grad, diag, off = _system(player, drift, variances)
    np.minimum(diag, -MIN_CURVATURE, out=diag)
    step = solve_tridiagonal(diag, off, grad)
    largest = float(np.max(np.abs(step)))
    scale = MAX_STEP / largest if largest > MAX_STEP else 1.0
    player.r = player.r - scale * step
    return scale * largest


def solve_tridiagonal(diag: FloatArray, off: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with H·x = rhs for the symmetric tridiagonal H (diagonal `diag`, off-diagonal `off`)
    by LAPACK's gtsv (Gaussian elimination with partial pivoting)."""
    if len(diag) == 1:
        return np.asarray(rhs / diag, dtype=np.float64)
    *_, x, info = scipy.linalg.lapack.dgtsv(off, diag, off, rhs)
    if info != 0:
        raise ValueError(f"a singular tridiagonal system (gtsv info {info})")
    return np.asarray(x, dtype=np.float64)


def last_day_variance(
    player: PlayerDays, drift: Drift, variances: Sequence[float] | None = None
) -> float:
    """W9: the last day's posterior variance, the last diagonal entry of −H⁻¹ with everyone
    else held fixed: forward elimination of the tridiagonal −H gives it as 1/(last pivot)."""
    if not player.days:
        return player.anchor.variance if player.anchor else 0.0
    _, diag_array, off_array = _system(player, drift, variances)
    diag, off = diag_array.tolist(), off_array.tolist()
    pivot = 0.0
    for i, h in enumerate(diag):
        a = -h
        if i > 0:
            a -= off[i - 1] ** 2 / pivot
        pivot = max(a, MIN_CURVATURE)
    return 1.0 / pivot


def fold_days(player: PlayerDays, drift: Drift, keep: int, iterations: int = 20) -> None:
    """W8: forget the oldest kept days, one at a time, until `keep` are left. Each goes into
    the prior of the next: its rating given only its own prior and its own games (a one-day
    MAP, Normal by Laplace's approximation) becomes, widened by the drift between the two
    days, the next day's anchor. The games are cut from the arrays once, at the end."""
    fold = len(player.days) - keep
    if fold <= 0:
        return
    weights = player.day_weights().tolist()
    ends = np.searchsorted(player.game_day, np.arange(1, fold + 1)).tolist()
    start = 0
    for i in range(fold):
        end = ends[i]
        c = player.coef[start:end]
        o = player.offset[start:end]
        s = player.score[start:end]
        r = float(player.r[i])
        h = 0.0
        for _ in range(iterations):
            p = scipy.special.expit(c * r + o)
            ga, ha = anchor_terms(player.anchor, r)
            h = min(float(np.dot(c * c, p * (p - 1.0))) + ha, -MIN_CURVATURE)
            step = (float(np.dot(c, s - p)) + ga) / h
            step = max(-MAX_STEP, min(MAX_STEP, step))
            r -= step
            if abs(step) < 1e-12:
                break
        p = scipy.special.expit(c * r + o)
        h = min(
            float(np.dot(c * c, p * (p - 1.0))) + anchor_terms(player.anchor, r)[1], -MIN_CURVATURE
        )
        gap = drift.variance(
            player.days[i + 1] - player.days[i], weights[i + 1], player.weight_before
        )
        player.anchor = Anchor(r, -1.0 / h + gap)
        player.weight_before += weights[i]
        start = end
    player.days = player.days[fold:]
    player.r = player.r[fold:]
    player.game_day = player.game_day[start:] - fold
    player.coef = player.coef[start:]
    player.offset = player.offset[start:]
    player.score = player.score[start:]
