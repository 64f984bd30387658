"""The margin model's formulas M1–M10 (docs/maths/margin.md): each player's share of the
points, learned from both sides' scores when a round has them and from the winner alone
when it does not.

Each player's points μ are Gaussian with variance v, kept per player (a diagonal Kalman
filter). A round's two scores, each in units of its mode's learned spread (M1), are seen as
their margin d = (1 + γ)(Σ_A μ − Σ_B μ) + noise and their total u = w_u·(Σ_A μ + Σ_B μ) +
noise, whose noises are uncorrelated: two scalar Kalman steps (M3), the total's weight w_u
learned per mode (M10), the noises too (M9). A round without scores is the probit step of a
margin seen only through its sign (M4). The win probability is the probability that A's
score exceeds B's (M2), so it stays a probability of winning. Pure: no I/O, no globals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SQRT2 = math.sqrt(2.0)
MIN_SPREAD = 1e-9
MIN_VARIANCE_SHARE = 1e-6  # a probit step never shrinks a variance below this share
MIN_BETA = 0.2  # M9's learned noise never below this (in spreads): no score is certain


@dataclass(slots=True)
class Skill:
    """A player's points: mean `mu` and variance `v` (in spread units per player), the prior
    variance `v0` they started with (what a season grows `v` back toward) and `rounds`."""

    mu: float
    v: float
    v0: float
    rounds: int = 0


@dataclass(slots=True)
class Spread:
    """M1: a mode's running, exponentially weighted mean and spread of side scores; M9: the
    same weighting of what the skills leave unexplained of the margin and of the total."""

    weight: float = 0.0
    total: float = 0.0
    squares: float = 0.0
    noise_weight: float = 0.0  # rounds M9 has learned from, weighted as the scores
    margin_noise: float = 0.0  # Σ weighted max(e² − V, 0) of the margin y_A − y_B
    total_noise: float = 0.0  # the same of the total y_A + y_B
    # M10: Σ weighted x² and x·y of the margin on Σ_A μ − Σ_B μ and of the total on
    # Σ_A μ + Σ_B μ, each x taken before the round
    margin_xx: float = 0.0
    margin_xy: float = 0.0
    total_xx: float = 0.0
    total_xy: float = 0.0

    def add(self, score: float, keep: float) -> None:
        """M1: one side's score, the older ones weighing `keep` (1 − 1/memory) as much."""
        self.weight = keep * self.weight + 1.0
        self.total = keep * self.total + score
        self.squares = keep * self.squares + score * score

    def learn(self, score: float, keep: float, clip: float, warmup: float) -> None:
        """M1: a score as the spread learns it: once `warmup` scores are in, bounded to
        mean ± clip·sd, as the round reads it, so that no single score (a mistyped
        1,000,000–0) can move the mean or the spread more than a blow-out does; a score
        whose square is not a finite number is left out."""
        if not math.isfinite(score * score):
            return
        if self.weight >= warmup:
            reach = clip * max(self.sd, MIN_SPREAD)
            score = max(self.mean - reach, min(self.mean + reach, score))
        self.add(score, keep)

    @property
    def mean(self) -> float:
        return self.total / self.weight if self.weight else 0.0

    @property
    def sd(self) -> float:
        mean = self.mean
        return math.sqrt(max(self.squares / self.weight - mean * mean, 0.0)) if self.weight else 0.0

    def normalised(self, score: float, clip: float) -> float:
        """M1: (score − mean)/sd, bounded to ±clip so that one blow-out moves μ a bounded
        amount."""
        y = (score - self.mean) / max(self.sd, MIN_SPREAD)
        return max(-clip, min(clip, y))

    def forget_to(self, weight: float, noise_weight: float) -> None:
        """M7: keep the mean, spread, noises and slopes but weigh them as `weight` scores
        (the noises and slopes as `noise_weight` rounds), so that a new season's game
        re-learns its own within as many."""
        if self.weight > weight > 0:
            share = weight / self.weight
            self.weight, self.total, self.squares = weight, self.total * share, self.squares * share
        if self.noise_weight > noise_weight > 0:
            share = noise_weight / self.noise_weight
            self.noise_weight = noise_weight
            self.margin_noise *= share
            self.total_noise *= share
            self.margin_xx *= share
            self.margin_xy *= share
            self.total_xx *= share
            self.total_xy *= share

    def total_weight(self, margin_weight: float, ready: float) -> float:
        """M10: how much the total y_A + y_B says of Σ_A μ + Σ_B μ, relative to the margin's
        `margin_weight` (1 + γ) of Σ_A μ − Σ_B μ: margin_weight·b_u/b_d, where b_u and b_d
        are the regression slopes of the total and the margin on the skills as they stood
        before each round; within [0, 1]. 0 (the margin alone) until `ready` rounds."""
        if self.noise_weight < ready or self.total_xx <= 0 or self.margin_xx <= 0:
            return 0.0
        slope_margin = self.margin_xy / self.margin_xx
        if slope_margin <= 0:
            return 0.0
        ratio = (self.total_xy / self.total_xx) / slope_margin
        return max(0.0, min(1.0, margin_weight * ratio))

    def noises(self, beta: float, ready: float) -> tuple[float, float]:
        """M9: the noise variances (σ_d², σ_u²) of the margin and of the total once `ready`
        rounds have taught them (each at least 2·MIN_BETA²), 2β² each before: two
        independent sides."""
        if self.noise_weight < ready:
            return 2.0 * beta * beta, 2.0 * beta * beta
        floor = 2.0 * MIN_BETA * MIN_BETA
        return (
            max(floor, self.margin_noise / self.noise_weight),
            max(floor, self.total_noise / self.noise_weight),
        )

    def learn_noise(
        self, margin: tuple[float, float], total: tuple[float, float], keep: float
    ) -> None:
        """M9: the round's (e², V) of the margin and of the total before its update: e² less
        the part V that the skills' own uncertainty explains, floored at 0."""
        self.noise_weight = keep * self.noise_weight + 1.0
        self.margin_noise = keep * self.margin_noise + max(margin[0] - margin[1], 0.0)
        self.total_noise = keep * self.total_noise + max(total[0] - total[1], 0.0)

    def learn_slopes(
        self, margin: tuple[float, float], total: tuple[float, float], keep: float
    ) -> None:
        """M10: one round's (x, y) of the margin and of the total (x before the round), with
        M9's weights (`learn_noise` counts the round)."""
        self.margin_xx = keep * self.margin_xx + margin[0] * margin[0]
        self.margin_xy = keep * self.margin_xy + margin[0] * margin[1]
        self.total_xx = keep * self.total_xx + total[0] * total[0]
        self.total_xy = keep * self.total_xy + total[0] * total[1]


def phi(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def Phi(x: float) -> float:  # noqa: N802 (the normal CDF's usual name)
    return 0.5 * math.erfc(-x / SQRT2)


def side_sums(a: Sequence[Skill], b: Sequence[Skill]) -> tuple[float, float, float, float]:
    """Σμ and Σv of each side: (μ_A, μ_B, v_A, v_B)."""
    return (
        sum(s.mu for s in a),
        sum(s.mu for s in b),
        sum(s.v for s in a),
        sum(s.v for s in b),
    )


def win_probability(
    a: Sequence[Skill], b: Sequence[Skill], margin_var: float, gamma: float
) -> float:
    """M2: P(y_A > y_B) = Φ((1 + γ)(Σ_A μ − Σ_B μ) / √(σ_d² + (1 + γ)²(Σ_A v + Σ_B v))), σ_d²
    the margin's noise variance (M9)."""
    mu_a, mu_b, v_a, v_b = side_sums(a, b)
    g1 = 1.0 + gamma
    return Phi(g1 * (mu_a - mu_b) / math.sqrt(margin_var + g1 * g1 * (v_a + v_b)))


def _terms(plus: Sequence[Skill], minus: Sequence[Skill], coef: float) -> tuple[float, float]:
    """coef·(Σ_plus μ − Σ_minus μ) and coef²·(Σ_plus v + Σ_minus v): an observation's
    prediction and the part of its variance the skills' uncertainty makes."""
    mean = sum(s.mu for s in plus) - sum(s.mu for s in minus)
    var = sum(s.v for s in plus) + sum(s.v for s in minus)
    return coef * mean, coef * coef * var


def learn_round(
    spread: Spread,
    sums: tuple[float, float, float, float],
    y_a: float,
    y_b: float,
    margin_weight: float,
    total_weight: float,
    keep: float,
) -> None:
    """M9 and M10 from one round, before its update, with the rated sides' `sums` (Σμ_A, Σμ_B,
    Σv_A, Σv_B; `side_sums`): the margin's and the total's (e², V), e being the observation
    less its prediction and V = w²·Σv, and their (x, y) for the slopes."""
    mu_a, mu_b, v_a, v_b = sums
    d, u = y_a - y_b, y_a + y_b
    gap, both, var = mu_a - mu_b, mu_a + mu_b, v_a + v_b
    spread.learn_noise(
        ((d - margin_weight * gap) ** 2, margin_weight * margin_weight * var),
        ((u - total_weight * both) ** 2, total_weight * total_weight * var),
        keep,
    )
    spread.learn_slopes((gap, d), (both, u), keep)


def _kalman_step(
    plus: Sequence[Skill], minus: Sequence[Skill], observed: float, coef: float, noise: float
) -> None:
    """M3: observed = coef·(Σ_plus μ − Σ_minus μ) + noise. With S = noise + coef²·Σv and
    g = (observed − prediction)/S, each μ of `plus` moves by +coef·v·g and of `minus` by
    −coef·v·g, and each v shrinks by coef²·v²/S."""
    predicted, var = _terms(plus, minus, coef)
    s_var = noise + var
    gain = coef * (observed - predicted) / s_var
    shrink = coef * coef / s_var
    for s in plus:
        s.mu += s.v * gain
        s.v -= shrink * s.v * s.v
    for s in minus:
        s.mu -= s.v * gain
        s.v -= shrink * s.v * s.v


def learn_scores(
    a: Sequence[Skill],
    b: Sequence[Skill],
    y_a: float,
    y_b: float,
    noises: tuple[float, float],
    gamma: float,
    total_weight: float,
) -> None:
    """M3: both sides' normalised scores, as their margin d = y_A − y_B = (1 + γ)(Σ_A μ − Σ_B μ)
    + noise of variance σ_d², then their total u = y_A + y_B = c·(Σ_A μ + Σ_B μ) + noise of
    variance σ_u² (`noises`; c the total's weight, M10). The two noises are uncorrelated
    whatever the correlation of the sides' own (they have equal variances), so two scalar
    Kalman steps take what the round says; with c = 0 the total is skipped."""
    margin_var, total_var = noises
    _kalman_step(a, b, y_a - y_b, 1.0 + gamma, margin_var)
    if total_weight > 0.0:
        _kalman_step((*a, *b), (), y_a + y_b, total_weight, total_var)


def learn_winner(
    a: Sequence[Skill], b: Sequence[Skill], s_a: float, margin_var: float, gamma: float
) -> None:
    """M4: the winner alone. The margin d = (1 + γ)(Σ_A μ − Σ_B μ) + noise is seen only by
    its sign: with c² = σ_d² + (1 + γ)²·Σv (σ_d² the margin's noise, M9) and
    t = ±mean/c for the winner's side, each μ moves by ±(1 + γ)·v/c·λ(t) and each v shrinks
    by the factor 1 − (1 + γ)²·v/c²·λ(t)(λ(t) + t),
    λ = φ/Φ (the truncated Gaussian's moments, as TrueSkill's win update). A draw seen
    without scores is a margin of 0 observed with the margin's noise (M3's form)."""
    mu_a, mu_b, v_a, v_b = side_sums(a, b)
    g1 = 1.0 + gamma
    c2 = margin_var + g1 * g1 * (v_a + v_b)
    if s_a == 0.5:
        gain = -g1 * (mu_a - mu_b) / c2
        for sign, side in ((1.0, a), (-1.0, b)):
            for s in side:
                s.mu += sign * g1 * s.v * gain
                s.v -= g1 * g1 * s.v * s.v / c2
        return
    c = math.sqrt(c2)
    sign = 1.0 if s_a > 0.5 else -1.0
    t = sign * g1 * (mu_a - mu_b) / c
    lam = phi(t) / max(Phi(t), 1e-300)
    w = lam * (lam + t)
    for side_sign, side in ((sign, a), (-sign, b)):
        for s in side:
            s.mu += side_sign * g1 * s.v / c * lam
            s.v *= max(1.0 - g1 * g1 * s.v / c2 * w, MIN_VARIANCE_SHARE)


def drift(skill: Skill, tau2: float) -> None:
    """M5: before each round a player's variance grows by τ²/k (k: players a side), never
    beyond their prior v0: skills change, so the model never stops learning."""
    skill.v = min(skill.v + tau2, skill.v0)


def season_pull(skills: Sequence[Skill], fraction: float) -> None:
    """M6: a season as one step of a process whose skills correlate ρ = 1 − f across it:
    every μ moves `fraction` f of the way to their mean, and every v becomes ρ²·v + (1 − ρ²)·v0,
    that is, grows the share f(2 − f) of the way back to its prior v0."""
    if not skills:
        return
    mean = math.fsum(s.mu for s in skills) / len(skills)  # exact: the same in any order
    regrow = fraction * (2.0 - fraction)
    for s in skills:
        s.mu += fraction * (mean - s.mu)
        s.v += regrow * (s.v0 - s.v)


@dataclass(slots=True)
class Newcomers:
    """M8: the running mean of a side's worth of points (μ·k) that players have after their
    first rounds: where a new player starts, learned from the pool (in FRC, rookie teams
    start well below the veterans; on a game server, new players below the regulars)."""

    weight: float = 0.0
    total: float = 0.0

    def add(self, side_points: float, keep: float) -> None:
        self.weight = keep * self.weight + 1.0
        self.total = keep * self.total + side_points

    def mean(self, ready: float) -> float:
        """The learned start once `ready` players have been seen, 0 (the mean) before."""
        return self.total / self.weight if self.weight >= ready else 0.0
