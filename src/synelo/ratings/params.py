"""The parameters of SynElo's table, with its design's values as defaults."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Final, Literal

Convergence = Literal["seed", "revised"]
CONVERGENCES: Final = ("seed", "revised")  # F3's versions, by name (docs/maths/rating.md)
Uneven = Literal["sums", "headcount"]
UNEVENS: Final = ("sums", "headcount")  # F1 or F1u for rosters of unequal size

# Bounds on new parameter values (settings, a new pool's overrides): past them a pool's later
# rounds would break (a rating or count overflowing its column, a date before year 1) or the
# value is not a number. Parameters already stored are loaded as they are.
MAX_K: Final = 1_000_000.0  # keeps every rating far inside 32 bits
MAX_T_SHADOW: Final = 2**31 - 1  # rounds_played is a 32-bit column
MAX_STALE_DAYS: Final = 700_000.0  # now − T_stale stays after year 1
# Scales below these are not meaningful for integer ratings, and smaller ones overflow or
# divide by zero: F4's 2σ² underflows to 0 from σ ≈ 1e-162, and F3's v/K_max and excess/scale
# turn into ∞ (then NaN, times a zero weight) as K_max or the scale approach 0.
MIN_SCALE: Final = 1.0  # Θ and σ, in rating points
MIN_K_MAX: Final = 0.01
MIN_WRE_SCALE: Final = 0.001
MAX_SCALE: Final = 1e6
MAX_WEIGHT: Final = 1e6
# F1t's temperature: below 1/20 or above 20 a shown P would claim (or throw away) more than
# twenty times the evidence the ratings carry, which no fit on a pool's rounds supports.
MIN_TEMPERATURE: Final = 0.05
MAX_TEMPERATURE: Final = 20.0


class ParameterError(ValueError):
    """A rating parameter out of bounds; `names` are the parameters concerned."""

    def __init__(self, names: tuple[str, ...], message: str) -> None:
        super().__init__(f"{', '.join(names)}: {message}")
        self.names = names


ThetaRule = Literal["linear", "seed"]
THETA_RULES: Final = ("linear", "seed")


def linear_theta(team_size: int) -> float:
    """F1 (this project's default): Θ = 100·max(k, 2) for the largest team size k; 3 gives
    300, 12 gives 1200. Fitted Θ on every FRC season (2v2 and 3v3) lay at 190–430 where the
    design's rule gave 800; 100·k had the least regret there (2 millinats of log loss)."""
    if team_size < 1:
        raise ValueError("team_size must be at least 1")
    return 100.0 * max(team_size, 2)


# K_min of a new pool that names none, by F3's version. The seed's F3 keeps K near K_max, so
# its floor hardly matters (the design's 2). The revised F3 lets K fall with evidence; its
# floor is then the step that follows real skill drift (docs/maths/rating.md, "K_min").
SEED_K_MIN: Final = 2.0
REVISED_K_MIN: Final = 12.0


def default_k_min(convergence: Convergence) -> float:
    """F5's K_min of a pool that names none: 12 with F3 (revised), the design's 2 with the
    seed's F3 (so that a seed pool rates exactly as the design's)."""
    return REVISED_K_MIN if convergence == "revised" else SEED_K_MIN


def default_theta(team_size: int, rule: ThetaRule = "linear") -> float:
    """F1's Θ of a pool that names none: `linear_theta`, or the design's `seed_theta`."""
    return seed_theta(team_size) if rule == "seed" else linear_theta(team_size)


def seed_theta(team_size: int) -> float:
    """F1 (the design's rule): Θ = 400·floor(median{1..k}) = 400·floor((k+1)/2) for the largest
    team size k; 12 gives 2400."""
    if team_size < 1:
        raise ValueError("team_size must be at least 1")
    return 400.0 * ((team_size + 1) // 2)


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
    theta: float = 2400.0  # Θ: logistic scale (per pool; see seed_theta)
    window: int = 500  # W: rounds kept in the convergence window
    w_vel: float = 0.25  # velocity weight in C
    w_wre: float = 0.25  # win-rate-excess weight in C
    w_vol: float = 0.50  # volatility weight in C
    wre_scale: float = 0.10  # a 10 % win-rate deviation saturates v_wre
    sigma: float = 400.0  # σ: Gaussian compression width
    # F3's version. The dataclass keeps the seed's, so that parameters stored before the
    # field existed (pools, journal headers) load as they rated; new pools get the
    # setting SYNELO_CONVERGENCE ("revised" unless set), the replay's model "revised".
    convergence: Convergence = "seed"
    # F1 for rosters of unequal size: the seed's sums, or F1u's "headcount". The dataclass
    # keeps the seed's, so that stored parameters from before it load as they rated; new
    # pools and the replay of a history that is not a pool's export take "headcount".
    uneven: Uneven = "sums"
    # F1t: the temperature T of the P a pool shows and scores, σ(x/T) for F1's (F1u's) logit
    # x; F2's update keeps σ(x). 1 (no change) for stored pools and new ones alike: a new
    # pool's auto-tune fits it (docs/maths/rating.md, "F1t").
    temperature: float = 1.0

    def __post_init__(self) -> None:
        """The model's own invariants (stored pools are loaded through this too)."""
        if not (0 < self.r_min <= self.r0 <= self.r_max < 2**31 - 100_000):
            raise ParameterError(
                ("r_min", "r0", "r_max"), "need 0 < r_min <= r0 <= r_max, r_max well inside 32 bits"
            )
        if not (0 <= self.k_min <= self.k_max):
            raise ParameterError(("k_min", "k_max"), "need 0 <= k_min <= k_max")
        if self.theta <= 0 or self.sigma <= 0 or self.wre_scale <= 0:
            raise ParameterError(("theta", "sigma", "wre_scale"), "must be positive")
        if self.window < 2 or self.t_shadow < 0:
            raise ParameterError(
                ("window", "t_shadow"), "window must be at least 2 and t_shadow non-negative"
            )
        if self.convergence not in CONVERGENCES:
            raise ParameterError(("convergence",), "must be 'seed' or 'revised'")
        if self.uneven not in UNEVENS:
            raise ParameterError(("uneven",), "must be 'sums' or 'headcount'")
        if not self.temperature > 0:
            raise ParameterError(("temperature",), "must be positive")

    def within_bounds(self) -> SynEloParams:  # noqa: C901
        """These parameters, if every one is a finite number inside the bounds above; else
        ParameterError naming it. For new values only: a pool keeps its parameters for good."""
        for name in (
            "t_stale_days",
            "k_min",
            "k_max",
            "theta",
            "w_vel",
            "w_wre",
            "w_vol",
            "wre_scale",
            "sigma",
            "temperature",
        ):
            if not math.isfinite(getattr(self, name)):
                raise ParameterError((name,), "must be a finite number")
        if not MIN_K_MAX <= self.k_max <= MAX_K:
            raise ParameterError(("k_max",), f"must be in [{MIN_K_MAX:g}, {MAX_K:g}]")
        for name in ("theta", "sigma"):
            if not MIN_SCALE <= getattr(self, name) <= MAX_SCALE:
                raise ParameterError((name,), f"must be in [{MIN_SCALE:g}, {MAX_SCALE:g}]")
        if not MIN_TEMPERATURE <= self.temperature <= MAX_TEMPERATURE:
            raise ParameterError(
                ("temperature",), f"must be in [{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}]"
            )
        if not MIN_WRE_SCALE <= self.wre_scale <= MAX_SCALE:
            raise ParameterError(("wre_scale",), f"must be in [{MIN_WRE_SCALE:g}, {MAX_SCALE:g}]")
        for name in ("w_vel", "w_wre", "w_vol"):
            if not 0 <= getattr(self, name) <= MAX_WEIGHT:
                raise ParameterError((name,), f"must be in [0, {MAX_WEIGHT:g}]")
        if self.t_shadow > MAX_T_SHADOW:
            raise ParameterError(("t_shadow",), f"must be at most {MAX_T_SHADOW}")
        if not 0 < self.t_stale_days <= MAX_STALE_DAYS:
            raise ParameterError(("t_stale_days",), f"must be in (0, {MAX_STALE_DAYS:g}]")
        return self

    def prediction_scale(self) -> float:
        """Θ·T: the rating gap that one logit of a shown P stands for on even rosters (F1t),
        where the balancer and the health page's fit read a scale."""
        return self.theta * self.temperature

    def with_changes(self, **changes: Any) -> SynEloParams:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SynEloParams:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
