"""F1's Θ fitted to a pool's own rounds (maximum likelihood), with how sure the fit is.

Given each round's round-start gap d = Σ_A − Σ_B and team A's score o (1, 0.5, 0), the
log likelihood of Θ under F1 is ℓ = Σ o·ln P(d) + (1 − o)·ln(1 − P(d)) with
P(d) = 1/(1+exp(−d/Θ)); a draw counts as half a win and half a loss, as S = 0.5 does in F2.
In β = 1/Θ this is a logistic regression without intercept, concave in β, solved by Newton's
method: β is the calibration slope of the pool's predictions. The ratings that made the gaps
were themselves rated under the pool's Θ, so the answer is "the Θ these ratings call for", a
suggestion to re-check by `synelo tune`, not a fixed point.

How sure: the 95 % profile-likelihood interval {β ≥ 0 : 2(ℓ(β̂) − ℓ(β)) ≤ χ²₁,₀.₉₅}, mapped
to Θ = 1/β (exact under that mapping, unlike a Wald interval), and the likelihood-ratio test
of β̂ against β = 0, predictions no better than a coin. When the interval reaches β = 0 the
rounds cannot tell the ratings from a coin, and only a lower bound on Θ is known: that is
what a huge point estimate such as "Θ 20,642" meant. Balanced teams make the gaps small, and
the information Σd²·P(1 − P) with them, so even thousands of rounds may say "no signal".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

MIN_ROUNDS = 500  # the design: tune Θ "after 500 rounds"
CHI2_1_95 = 3.841458820694124  # the 95 % point of χ² with one degree of freedom

ThetaStatus = Literal["fit", "no signal", "separated", "too few"]


@dataclass(frozen=True, slots=True)
class ThetaFit:
    """What the rounds say about Θ.

    - "fit": theta is the maximum-likelihood Θ and [theta_low, theta_high] its 95 % interval;
    - "no signal": the ratings predict no better than a coin at 95 %: theta is None and only
      theta_low is known (theta_high is None: unbounded);
    - "separated": the gaps order every outcome, so the likelihood grows without bound as
      Θ → 0 (no finite fit);
    - "too few": fewer than MIN_ROUNDS rounds, or none with a non-zero gap.
    """

    status: ThetaStatus
    rounds: int
    informative_rounds: int  # rounds with a non-zero gap: the others say nothing about Θ
    theta: float | None = None
    theta_low: float | None = None
    theta_high: float | None = None
    p_value_vs_coin: float | None = None


def _log_likelihood(beta: float, d: np.ndarray, o: np.ndarray) -> float:
    x = beta * d  # o·ln σ(x) + (1 − o)·ln σ(−x), without overflow
    return float(np.sum(-o * np.logaddexp(0.0, -x) - (1.0 - o) * np.logaddexp(0.0, x)))


def _slope(beta: float, d: np.ndarray, o: np.ndarray) -> tuple[float, float]:
    """ℓ'(β) and −ℓ''(β)."""
    p = 0.5 * (1.0 + np.tanh(0.5 * beta * d))  # the logistic, without overflow
    return float(np.dot(d, o - p)), float(np.dot(d * d, p * (1.0 - p)))


def _separated(d: np.ndarray, o: np.ndarray) -> bool:
    """Every outcome on the side its gap predicts, no draw: ℓ grows without bound as β → ∞."""
    return bool(np.all(((d > 0) & (o == 1.0)) | ((d < 0) & (o == 0.0))))


def _maximum(d: np.ndarray, o: np.ndarray, start: float) -> float | None:
    """β̂ ≥ 0, the maximum of the concave ℓ over β ≥ 0 (0 when ℓ'(0) ≤ 0), or None when the
    outcomes are separated. Newton's method inside a bracket [low, high] with ℓ'(low) > 0 >
    ℓ'(high), bisecting whenever a step would leave it, so it converges from any start."""
    if _separated(d, o):
        return None
    if _slope(0.0, d, o)[0] <= 0:
        return 0.0
    low, high = 0.0, start
    while _slope(high, d, o)[0] > 0:  # not separated: ℓ' turns negative for β large enough
        low, high = high, 2.0 * high
    beta = 0.5 * (low + high)
    for _ in range(200):
        g, h = _slope(beta, d, o)
        if g > 0:
            low = beta
        else:
            high = beta
        new = beta + g / h if h > 0 else 0.5 * (low + high)
        if not low < new < high:
            new = 0.5 * (low + high)
        if abs(new - beta) <= 1e-13 * beta:
            return new
        beta = new
    return beta


def _bisect(f: Callable[[float], float], a: float, b: float) -> float:
    """The root of f between a and b (f changes sign there), to machine precision."""
    fa = f(a)
    for _ in range(200):
        c = 0.5 * (a + b)
        fc = f(c)
        if (fc > 0) == (fa > 0):
            a, fa = c, fc
        else:
            b = c
        if b - a <= 1e-15 * max(abs(a), abs(b)):
            break
    return 0.5 * (a + b)


def fit_theta_interval(
    gaps: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    start: float = 2400.0,
    min_rounds: int = MIN_ROUNDS,
) -> ThetaFit:
    """F1: the maximum-likelihood Θ of the outcomes given the gaps, its 95 % profile-likelihood
    interval and the test against a coin (see the module)."""
    d = np.asarray(gaps, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    if d.shape != o.shape:
        raise ValueError("gaps and outcomes must have the same length")
    rounds = int(d.size)
    keep = d != 0
    d, o = d[keep], o[keep]
    informative = int(d.size)
    if rounds < min_rounds or not informative:
        return ThetaFit("too few", rounds, informative)
    best = _maximum(d, o, 1.0 / start)
    if best is None:
        return ThetaFit("separated", rounds, informative)
    top = _log_likelihood(best, d, o)
    lr = 2.0 * (top - _log_likelihood(0.0, d, o))
    p_value = math.erfc(math.sqrt(max(lr, 0.0) / 2.0))  # the χ²₁ tail beyond lr

    def excess(b: float) -> float:
        return 2.0 * (top - _log_likelihood(b, d, o)) - CHI2_1_95

    step = 1.0 / math.sqrt(float(np.dot(d, d)) / 4.0)  # about β's standard error at β = 0
    high = best + step
    while excess(high) < 0:
        high = best + 2.0 * (high - best)
    beta_high = _bisect(excess, best, high)
    beta_low = 0.0 if excess(0.0) <= 0 else _bisect(excess, 0.0, best)
    if beta_low <= 0:
        return ThetaFit("no signal", rounds, informative, None, 1.0 / beta_high, None, p_value)
    return ThetaFit(
        "fit", rounds, informative, 1.0 / best, 1.0 / beta_high, 1.0 / beta_low, p_value
    )


def fit_theta(
    gaps: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    start: float = 2400.0,
) -> float | None:
    """F1: the Θ > 0 that maximises the likelihood of the outcomes given the gaps, or None
    when there is no finite maximum (the ratings do not predict better than a coin — the
    best "Θ" would be infinite or negative — or they separate the outcomes perfectly). No
    interval and no minimum count: `fit_theta_interval` says how sure the fit is."""
    d = np.asarray(gaps, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    if d.shape != o.shape:
        raise ValueError("gaps and outcomes must have the same length")
    keep = d != 0
    d, o = d[keep], o[keep]
    if not d.size:
        return None
    beta = _maximum(d, o, 1.0 / start)
    return 1.0 / beta if beta is not None and beta > 0 else None
