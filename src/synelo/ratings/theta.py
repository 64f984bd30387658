"""F1's Θ fitted to a pool's own rounds (maximum likelihood), for the quality endpoint.

Given each round's round-start gap d = Σ_A − Σ_B and team A's score o (1, 0.5, 0), the
log likelihood of Θ under F1 is ℓ = Σ o·ln P(d) + (1 − o)·ln(1 − P(d)) with
P(d) = 1/(1+exp(−d/Θ)); a draw counts as half a win and half a loss, as S = 0.5 does in F2.
In β = 1/Θ this is a logistic regression without intercept, concave in β, solved by Newton's
method. The ratings that made the gaps were themselves rated under the pool's Θ, so the
answer is "the Θ these ratings call for", a suggestion to re-check by `synelo tune`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MIN_ROUNDS = 500  # the seed: tune Θ "after 500 rounds"


def fit_theta(
    gaps: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    start: float = 2400.0,
) -> float | None:
    """F1: the Θ > 0 that maximises the likelihood of the outcomes given the gaps, or None
    when there is no finite maximum (the ratings do not predict better than a coin — the
    best "Θ" would be infinite or negative — or they separate the outcomes perfectly)."""
    d = np.asarray(gaps, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    if d.shape != o.shape:
        raise ValueError("gaps and outcomes must have the same length")
    informative = d != 0
    d, o = d[informative], o[informative]
    if not d.size or float(np.dot(d, o - 0.5)) <= 0:
        return None  # ℓ'(0) <= 0: the maximum is at β <= 0

    def gradient(beta: float) -> tuple[float, float]:
        p = 0.5 * (1.0 + np.tanh(0.5 * beta * d))  # the logistic, without overflow
        return float(np.dot(d, o - p)), float(np.dot(d * d, p * (1.0 - p)))

    beta = 1.0 / start
    for _ in range(100):
        g, h = gradient(beta)
        if h <= 0:
            return None
        step = g / h
        new = beta + step
        while new <= 0:  # stay at β > 0, where the maximum is
            step /= 2
            new = beta + step
        if abs(new - beta) <= 1e-12 * max(beta, 1e-300):
            beta = new
            break
        beta = new
        if beta > 1e6 / max(float(np.abs(d).max()), 1.0):
            return None  # running off to Θ → 0: the outcomes are separated by the gaps
    else:
        return None
    return 1.0 / beta
