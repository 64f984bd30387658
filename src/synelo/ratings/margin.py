"""The margin model's formulas M1–M7 (docs/maths/margin.md): each player's share of the
points, learned from both sides' scores when a round has them and from the winner alone
when it does not.

A side's score, in units of its mode's learned spread (M1), is modelled as

    y_A = Σ_A μ − γ·Σ_B μ + ε_A,    ε_A ~ N(0, β²),

and the same for B: γ = 1 makes the margin the only evidence (a zero-sum score), γ = 0 makes
each side's score its own players' points alone (FRC's offence). Each player's μ is Gaussian
with variance v, kept per player (a diagonal Kalman filter): a round with scores updates it
by two scalar Kalman steps (M3), a round without by the probit step of a Gaussian margin
observed only through its sign (M4). The win probability is the probability that A's score
exceeds B's (M2), so it stays a probability of winning. Pure: no I/O, no globals.
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
    same weighting of what the skills leave unexplained of them (β²)."""

    weight: float = 0.0
    total: float = 0.0
    squares: float = 0.0
    noise_weight: float = 0.0
    noise: float = 0.0  # Σ weighted max(e² − the skills' own variance, 0), per side score

    def add(self, score: float, keep: float) -> None:
        """M1: one side's score, the older ones weighing `keep` (1 − 1/memory) as much."""
        self.weight = keep * self.weight + 1.0
        self.total = keep * self.total + score
        self.squares = keep * self.squares + score * score

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
        """M7: keep the mean, spread and noise but weigh them as `weight` scores (the noise
        as `noise_weight`), so that a new season's game re-learns its own within as many."""
        if self.weight > weight > 0:
            share = weight / self.weight
            self.weight, self.total, self.squares = weight, self.total * share, self.squares * share
        if self.noise_weight > noise_weight > 0:
            share = noise_weight / self.noise_weight
            self.noise_weight, self.noise = noise_weight, self.noise * share

    def beta(self, default: float, ready: float) -> float:
        """M9: the mode's learned score noise β once `ready` scores have taught it (at least
        MIN_BETA), `default` before."""
        if self.noise_weight < ready:
            return default
        return max(MIN_BETA, math.sqrt(self.noise / self.noise_weight))

    def learn_noise(self, error2: float, explained: float, keep: float) -> None:
        """M9: one side's squared error e² before the round's update, less the part the
        skills' own uncertainty explains (their variance sum), floored at 0."""
        self.noise_weight = keep * self.noise_weight + 1.0
        self.noise = keep * self.noise + max(error2 - explained, 0.0)


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
    """M2: P(y_A > y_B) = Φ((1 + γ)(Σ_A μ − Σ_B μ) / √(σ² + (1 + γ)²(Σ_A v + Σ_B v))), σ² = 2β²
    the margin's noise variance (β the parameter: see docs/maths/margin.md, M9)."""
    mu_a, mu_b, v_a, v_b = side_sums(a, b)
    g1 = 1.0 + gamma
    return Phi(g1 * (mu_a - mu_b) / math.sqrt(margin_var + g1 * g1 * (v_a + v_b)))


def _kalman_step(
    own: Sequence[Skill], other: Sequence[Skill], y: float, beta: float, gamma: float
) -> None:
    """M3: one side's normalised score y observed: predicted Σ_own μ − γ·Σ_other μ with
    variance S = β² + Σ_own v + γ²·Σ_other v; each μ moves by its v (times −γ for the other
    side) × (y − prediction)/S and each v shrinks by v²/S (γ²·v²/S)."""
    predicted = sum(s.mu for s in own) - gamma * sum(s.mu for s in other)
    s_var = beta * beta + sum(s.v for s in own) + gamma * gamma * sum(s.v for s in other)
    gain = (y - predicted) / s_var
    for s in own:
        s.mu += s.v * gain
        s.v -= s.v * s.v / s_var
    if gamma:
        for s in other:
            s.mu -= gamma * s.v * gain
            s.v -= gamma * gamma * s.v * s.v / s_var


def prediction_error(
    own: Sequence[Skill], other: Sequence[Skill], y: float, gamma: float
) -> tuple[float, float]:
    """M9: (e², V) of one side's normalised score before the round: e = y − (Σ_own μ −
    γ·Σ_other μ) and V = Σ_own v + γ²·Σ_other v, the part of E[e²] the skills' own
    uncertainty accounts for (the rest is β²)."""
    e = y - sum(s.mu for s in own) + gamma * sum(s.mu for s in other)
    return e * e, sum(s.v for s in own) + gamma * gamma * sum(s.v for s in other)


def learn_scores(
    a: Sequence[Skill], b: Sequence[Skill], y_a: float, y_b: float, beta: float, gamma: float
) -> None:
    """M3: both sides' normalised scores, as two scalar Kalman steps (A's, then B's)."""
    _kalman_step(a, b, y_a, beta, gamma)
    _kalman_step(b, a, y_b, beta, gamma)


def learn_winner(
    a: Sequence[Skill], b: Sequence[Skill], s_a: float, margin_var: float, gamma: float
) -> None:
    """M4: the winner alone. The margin d = (1 + γ)(Σ_A μ − Σ_B μ) + noise is seen only by
    its sign: with c² = σ² + (1 + γ)²·Σv (σ² = 2β², β the parameter) and
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
    mean = sum(s.mu for s in skills) / len(skills)
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
