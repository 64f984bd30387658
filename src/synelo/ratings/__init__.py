"""Pure rating math (no I/O, no globals), shared by the service, replay and simulator."""

from synelo.ratings.params import SynEloParams, theta_for_kmax
from synelo.ratings.synelo import (
    PlayerChange,
    PlayerRecord,
    RoundRating,
    apply_change,
    convergence,
    expected_score,
    gaussian_compression,
    is_stale,
    is_visible,
    k_factor,
    rate_player,
    rate_round,
    round_score,
    updated_rating,
    win_probability,
)
from synelo.ratings.window import ConvergenceWindow

__all__ = [
    "ConvergenceWindow",
    "PlayerChange",
    "PlayerRecord",
    "RoundRating",
    "SynEloParams",
    "apply_change",
    "convergence",
    "expected_score",
    "gaussian_compression",
    "is_stale",
    "is_visible",
    "k_factor",
    "rate_player",
    "rate_round",
    "round_score",
    "theta_for_kmax",
    "updated_rating",
    "win_probability",
]
