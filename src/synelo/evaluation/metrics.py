"""Scores of a run of predictions p_i = P(side A wins) against outcomes o_i (1, 0.5, 0).

- accuracy: share of decided matches (ties excluded) whose winner got p > 0.5; a prediction
  of exactly 0.5 counts as half right (it is a coin flip).
- log loss: mean of −ln(p) when A won and −ln(1 − p) when B won, ties excluded; p is
  clipped to [1e-15, 1 − 1e-15] so that one certain miss does not make it infinite.
- Brier: F6, mean of (p − o)² with a tie as o = 0.5 (every match).
- calibration: 10 bins of equal width over p ([0, 0.1), …, [0.9, 1.0]); per bin the number
  of matches, the mean p and the observed rate of A's score (a tie counts 0.5, as in Brier);
  ECE = Σ_bins (n_bin/N)·|mean p − observed| over every match.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BINS = 10
EPS = 1e-15


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    low: float
    high: float
    count: int
    mean_p: float | None
    observed: float | None


@dataclass(frozen=True, slots=True)
class Scores:
    matches: int
    ties: int
    accuracy: float | None
    log_loss: float | None
    brier: float | None
    ece: float | None
    reliability: tuple[ReliabilityBin, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "matches": self.matches,
            "ties": self.ties,
            "accuracy": self.accuracy,
            "log_loss": self.log_loss,
            "brier": self.brier,
            "ece": self.ece,
            "reliability": [
                {
                    "low": b.low,
                    "high": b.high,
                    "count": b.count,
                    "mean_p": b.mean_p,
                    "observed": b.observed,
                }
                for b in self.reliability
            ],
        }


def _none_if_nan(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def score(
    predictions: Sequence[float] | np.ndarray, outcomes: Sequence[float] | np.ndarray
) -> Scores:
    """Every score of predictions p_i against outcomes o_i ∈ {1, 0.5, 0} (see the module)."""
    p = np.asarray(predictions, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    if p.shape != o.shape or p.ndim != 1:
        raise ValueError("predictions and outcomes must be two sequences of the same length")
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError("predictions must be probabilities within 0…1")
    if not np.isin(o, (0.0, 0.5, 1.0)).all():
        raise ValueError("outcomes must be 1, 0.5 or 0")
    n = int(p.size)
    decided = o != 0.5
    nd = int(decided.sum())
    if nd:
        pd, od = p[decided], o[decided]
        right = np.where(pd == 0.5, 0.5, ((pd > 0.5) == (od == 1.0)).astype(float))
        accuracy: float | None = float(right.mean())
        log_loss: float | None = float(log_losses(p, o).mean())
    else:
        accuracy = log_loss = None
    brier = float(np.mean((p - o) ** 2)) if n else None
    index = np.minimum((p * BINS).astype(int), BINS - 1)
    bins = []
    ece = 0.0
    for b in range(BINS):
        inside = index == b
        count = int(inside.sum())
        mean_p = float(p[inside].mean()) if count else math.nan
        observed = float(o[inside].mean()) if count else math.nan
        if count:
            ece += count / n * abs(mean_p - observed)
        bins.append(
            ReliabilityBin(
                b / BINS, (b + 1) / BINS, count, _none_if_nan(mean_p), _none_if_nan(observed)
            )
        )
    return Scores(n, n - nd, accuracy, log_loss, brier, ece if n else None, tuple(bins))


def outcome(winner: str) -> float:
    """o: side A's score, 1 for a win, 0.5 for a draw, 0 for a loss."""
    return 1.0 if winner == "A" else 0.5 if winner == "draw" else 0.0


def log_losses(
    predictions: Sequence[float] | np.ndarray, outcomes: Sequence[float] | np.ndarray
) -> np.ndarray:
    """−ln of the probability given to what happened, per decided match (ties dropped)."""
    p = np.asarray(predictions, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    decided = o != 0.5
    clipped = np.clip(p[decided], EPS, 1 - EPS)
    losses: np.ndarray = -np.where(o[decided] == 1.0, np.log(clipped), np.log1p(-clipped))
    return losses
