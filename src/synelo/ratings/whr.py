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


class Stack:
    """Several players' kept days side by side, for Newton steps of all of them at once: W5
    for each, everyone else held at their ratings before the step. Their Hessians are
    tridiagonal blocks, so one tridiagonal solve (LAPACK's gtsv) takes every step; the
    links between one player's last day and the next player's first are 0."""

    def __init__(self, players: Sequence[PlayerDays], drift: Drift) -> None:
        self.players = list(players)
        sizes = np.asarray([len(p.days) for p in players], dtype=np.int64)
        if np.any(sizes == 0):
            raise ValueError("every player of a stack needs a kept day")
        self.sizes = sizes
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.lasts = self.starts + sizes - 1
        counts = np.asarray([len(p.coef) for p in players], dtype=np.int64)
        self.game_starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self.r = np.concatenate([p.r for p in players])
        self.game_day = np.concatenate(
            [p.game_day + start for p, start in zip(players, self.starts.tolist(), strict=True)]
        )
        self.coef = np.concatenate([p.coef for p in players])
        self.offset = np.concatenate([p.offset for p in players])
        self.score = np.concatenate([p.score for p in players])
        n = len(self.r)
        self.inv = np.zeros(max(n - 1, 0))  # 1/σ² between a kept day and the next (W4)
        for p, start in zip(players, self.starts.tolist(), strict=True):
            links = drift_variances(p, drift)
            self.inv[start : start + len(links)] = 1.0 / np.asarray(links)
        self.virtual = np.asarray([p.anchor is None for p in players])  # W3 on the first day
        self.anchor_mean = np.asarray([p.anchor.mean if p.anchor else 0.0 for p in players])
        self.anchor_precision = np.asarray(
            [1.0 / p.anchor.variance if p.anchor else 0.0 for p in players]
        )

    def _system(self) -> tuple[FloatArray, FloatArray]:
        """The gradient and the Hessian's diagonal at the current ratings (the off-diagonal
        is `inv`)."""
        r, c, n = self.r, self.coef, len(self.r)
        p = scipy.special.expit(c * r[self.game_day] + self.offset)
        grad = _sums(self.game_day, c * (self.score - p), n)
        diag = _sums(self.game_day, c * c * p * (p - 1.0), n)
        first = r[self.starts]
        q = scipy.special.expit(first)
        grad[self.starts] += np.where(
            self.virtual, 1.0 - 2.0 * q, -(first - self.anchor_mean) * self.anchor_precision
        )
        diag[self.starts] += np.where(self.virtual, -2.0 * q * (1.0 - q), -self.anchor_precision)
        inv = self.inv
        flow = (r[1:] - r[:-1]) * inv
        grad[:-1] += flow
        grad[1:] -= flow
        diag[:-1] -= inv
        diag[1:] -= inv
        np.minimum(diag, -MIN_CURVATURE, out=diag)
        return grad, diag

    def step(self) -> float:
        """W5: one Newton step of every player's days; the largest change."""
        grad, diag = self._system()
        step = solve_tridiagonal(diag, self.inv, grad)
        largest = np.maximum.reduceat(np.abs(step), self.starts)
        scale = np.where(largest > MAX_STEP, MAX_STEP / np.maximum(largest, MAX_STEP), 1.0)
        self.r -= step * np.repeat(scale, self.sizes)
        return float(np.max(largest * scale))

    def last_day_variances(self) -> FloatArray:
        """W9: each player's last-day variance, the last diagonal entry of their −H⁻¹: one
        solve with a 1 at every player's last day gives each block's own last column."""
        _, diag = self._system()
        unit = np.zeros(len(self.r))
        unit[self.lasts] = 1.0
        column = solve_tridiagonal(diag, self.inv, unit)
        return np.asarray(np.maximum(-column[self.lasts], 0.0), dtype=np.float64)

    def unstack(self) -> None:
        """Give every player back their ratings and their games' offsets."""
        for i, p in enumerate(self.players):
            start, games = int(self.starts[i]), int(self.game_starts[i])
            p.r = self.r[start : start + int(self.sizes[i])].copy()
            p.offset = self.offset[games : games + len(p.coef)].copy()


def newton_step(player: PlayerDays, drift: Drift) -> float:
    """W5 for one player: one Newton step on all their kept days, everyone else held
    fixed. Returns the largest change."""
    if not player.days:
        return 0.0
    stack = Stack([player], drift)
    largest = stack.step()
    stack.unstack()
    return largest


def solve_tridiagonal(diag: FloatArray, off: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with H·x = rhs for the symmetric tridiagonal H (diagonal `diag`, off-diagonal `off`)
    by LAPACK's gtsv (Gaussian elimination with partial pivoting)."""
    if len(diag) == 1:
        return np.asarray(rhs / diag, dtype=np.float64)
    *_, x, info = scipy.linalg.lapack.dgtsv(off, diag, off, rhs)
    if info != 0:
        raise ValueError(f"a singular tridiagonal system (gtsv info {info})")
    return np.asarray(x, dtype=np.float64)


def last_day_variance(player: PlayerDays, drift: Drift) -> float:
    """W9 for one player: the last day's posterior variance, everyone else held fixed."""
    if not player.days:
        return player.anchor.variance if player.anchor else 0.0
    return float(Stack([player], drift).last_day_variances()[0])


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
