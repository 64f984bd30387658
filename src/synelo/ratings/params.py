"""The parameters of seed 000's table, with the seed's values as defaults."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Final

# Bounds of the parameters (the API and the settings check the same): wide enough for any
# game, tight enough that no rating, date or column can overflow.
MAX_K: Final = 10_000.0  # K beyond the rating range means nothing
MAX_SCALE: Final = 1e6  # Θ, σ, wre_scale
MAX_WEIGHT: Final = 1_000.0  # w_vel, w_wre, w_vol
MAX_WINDOW: Final = 5_000  # W (a decoded window is ~90 bytes a round)
MAX_T_SHADOW: Final = 1_000_000  # rounds
MAX_STALE_DAYS: Final = 36_500.0  # 100 years


def theta_for_kmax(kmax: int) -> float:
    """F1: Θ = 400·floor(median{1..k_max}) = 400·floor((k_max+1)/2); k_max = 12 gives 2400."""
    if kmax < 1:
        raise ValueError("kmax must be at least 1")
    return 400.0 * ((kmax + 1) // 2)


@dataclass(frozen=True, slots=True)
class SynEloParams:
    """Everything the SynElo model needs to rate a round; a pool keeps its own copy."""

    r0: int = 1000  # R_0: starting rating
    r_min: int = 100  # R_min: absolute rating floor
    r_max: int = 10_000  # highest rating an admin may set
    r_shadow_cap: int = 2200  # R_T_shadow: maximum rating on shadow graduation
    t_shadow: int = 50  # T_shadow: rounds before a rating is visible
    t_stale_days: float = 30.0  # T_stale: days of inactivity before the stale flag
    k_min: float = 2.0  # K_min
    k_max: float = 72.0  # K_max
    theta: float = 2400.0  # Θ: logistic scale (per pool; see theta_for_kmax)
    window: int = 500  # W: rounds kept in the convergence window
    w_vel: float = 0.25  # velocity weight in C
    w_wre: float = 0.25  # win-rate-excess weight in C
    w_vol: float = 0.50  # volatility weight in C
    wre_scale: float = 0.10  # a 10 % win-rate deviation saturates v_wre
    sigma: float = 400.0  # σ: Gaussian compression width

    def __post_init__(self) -> None:
        """Reject what would break rating later (an overflowing column, a date before year 1,
        an infinite K): a pool keeps its parameters for good."""
        if not (0 < self.r_min <= self.r0 <= self.r_max < 2**31 - 100_000):
            raise ValueError("need 0 < r_min <= r0 <= r_max, r_max well inside 32 bits")
        for name in ("t_stale_days", "k_min", "k_max", "theta", "w_vel", "w_wre", "w_vol",
                     "wre_scale", "sigma"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number")
        if not (0 <= self.k_min <= self.k_max <= MAX_K):
            raise ValueError(f"need 0 <= k_min <= k_max <= {MAX_K}")
        if not (0 < self.theta <= MAX_SCALE and 0 < self.sigma <= MAX_SCALE
                and 0 < self.wre_scale <= MAX_SCALE):
            raise ValueError(f"theta, sigma and wre_scale must be in (0, {MAX_SCALE:g}]")
        if not all(0 <= w <= MAX_WEIGHT for w in (self.w_vel, self.w_wre, self.w_vol)):
            raise ValueError(f"w_vel, w_wre and w_vol must be in [0, {MAX_WEIGHT:g}]")
        if not (2 <= self.window <= MAX_WINDOW):
            raise ValueError(f"window must be in [2, {MAX_WINDOW}]")
        if not (0 <= self.t_shadow <= MAX_T_SHADOW):
            raise ValueError(f"t_shadow must be in [0, {MAX_T_SHADOW}]")
        if not (0 < self.t_stale_days <= MAX_STALE_DAYS):
            raise ValueError(f"t_stale_days must be in (0, {MAX_STALE_DAYS:g}]")

    def with_changes(self, **changes: Any) -> SynEloParams:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SynEloParams:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
