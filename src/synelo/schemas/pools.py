"""Creating a pool and reading it back: its model, parameters, auto-tuning, and the
quality figures of its ratings."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from synelo.ratings.params import (
    MAX_K,
    MAX_SCALE,
    MAX_STALE_DAYS,
    MAX_T_SHADOW,
    MAX_TEMPERATURE,
    MAX_WEIGHT,
    MIN_K_MAX,
    MIN_SCALE,
    MIN_TEMPERATURE,
    MIN_WRE_SCALE,
)
from synelo.schemas.fields import POOL_NAME, Number, Text, addressable


class ParamsIn(BaseModel):
    """Optional per-pool overrides of the SynElo rating parameters (defaults: the settings), within
    the bounds of SynEloParams.within_bounds; NaN and infinities are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    r0: StrictInt | None = Field(None, ge=1, le=10_000)
    r_min: StrictInt | None = Field(None, ge=1, le=10_000)
    r_max: StrictInt | None = Field(None, ge=1, le=10_000)
    r_shadow_cap: StrictInt | None = Field(None, ge=1, le=10_000)
    t_shadow: StrictInt | None = Field(None, ge=0, le=MAX_T_SHADOW)
    t_stale_days: Number | None = Field(None, gt=0, le=MAX_STALE_DAYS)
    k_min: Number | None = Field(None, ge=0, le=MAX_K)
    k_max: Number | None = Field(None, ge=MIN_K_MAX, le=MAX_K)
    window: StrictInt | None = Field(None, ge=2, le=5000)
    w_vel: Number | None = Field(None, ge=0, le=MAX_WEIGHT)
    w_wre: Number | None = Field(None, ge=0, le=MAX_WEIGHT)
    w_vol: Number | None = Field(None, ge=0, le=MAX_WEIGHT)
    wre_scale: Number | None = Field(None, ge=MIN_WRE_SCALE, le=MAX_SCALE)
    sigma: Number | None = Field(None, ge=MIN_SCALE, le=MAX_SCALE)
    temperature: Number | None = Field(
        None,
        ge=MIN_TEMPERATURE,
        le=MAX_TEMPERATURE,
        description="F1t's T: the P the pool shows and is scored by is σ(logit/T); ratings "
        "move by F1's σ(logit) whatever T is. 1 until auto-tune fits it",
    )
    convergence: Literal["seed", "revised"] | None = Field(
        None,
        description="F3's version: 'revised' (default SYNELO_CONVERGENCE) or 'seed', the "
        "seed design's (with an explicit theta, rates exactly as pools made before it)",
    )
    uneven: Literal["headcount", "sums"] | None = Field(
        None,
        description="F1 for rosters of unequal size: 'headcount' (F1u, new pools' default: "
        "each sum at the larger roster's size, plus ln(n_A/n_B)) or 'sums', the seed's "
        "(pools made before F1u)",
    )


# A new pool's auto-tuning (`rerate.autotune.default_autotune`), and what a setting given
# without them takes: the first fit at 200 rounds, then at 400, 800, 1600…, at most 5,000
# rounds apart; the newest 40 % held out (one parameter needs few rounds to fit, while the
# paired test's standard error falls as 1/√(held-out rounds)); a gain of 0.001 nats a round
# at least, and of two standard errors of the paired differences. Here, in the wire's
# layer, so that turning auto-tuning on gives a new pool's setting whatever the way in.
DEFAULT_FIRST = 200
DEFAULT_EVERY = 5000
DEFAULT_NEW_HOLDOUT = 0.4
DEFAULT_NEW_MARGIN = 0.001
DEFAULT_NOISE = 2.0


class AutoTuneIn(BaseModel):
    """Auto-tuning: re-fit `fit` on the pool's own rounds (first at `first` rounds, then at
    gaps that double up to `every`); adopt the fit (re-rating the pool) when the newest
    `holdout` of the rounds, which the fit did not see, get a log loss lower by `margin` or
    more and by more than `noise` standard errors. What is left out takes a new pool's
    default (`first`: 200, or `every` if that is smaller)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    every: StrictInt = Field(
        DEFAULT_EVERY, ge=100, le=10_000_000, description="rounds between fits, at most"
    )
    fit: list[Text] = Field(
        min_length=1, max_length=8, description="parameters to fit (the model's tunable ones)"
    )
    holdout: Number = Field(
        DEFAULT_NEW_HOLDOUT, gt=0, lt=0.5, description="share of the newest rounds held out"
    )
    margin: Number = Field(
        DEFAULT_NEW_MARGIN,
        ge=0,
        le=1,
        description="held-out log-loss gain (nats per round) to adopt",
    )
    first: StrictInt | None = Field(
        DEFAULT_FIRST,
        ge=100,
        le=10_000_000,
        description="rounds at the first fit, then gaps that double up to `every` (left "
        "out: 200, or `every` if smaller; null: the first at `every`, then `every` apart)",
    )
    noise: Number = Field(
        DEFAULT_NOISE,
        ge=0,
        le=10,
        description="standard errors of the paired held-out log-loss differences the gain "
        "must exceed too (0: the margin alone)",
    )

    @model_validator(mode="after")
    def _first_within_every(self) -> AutoTuneIn:
        """`first` left out: a new pool's 200, or `every` when fits are to come sooner."""
        if "first" not in self.model_fields_set and self.first is not None:
            self.first = min(self.first, self.every)
        return self


class PoolIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the first segment of its routes' and pages' paths, so not `.` or `..` either
    name: Annotated[Text, AfterValidator(addressable)] = Field(
        pattern=POOL_NAME, description="not '.' or '..'"
    )
    team_size: StrictInt | None = Field(
        None,
        ge=1,
        le=64,
        description="largest team size on the pool's servers (default SYNELO_TEAM_SIZE); "
        "Θ = 100·max(team_size, 2) (SYNELO_THETA_RULE) unless SYNELO_THETA or theta",
    )
    kmax: StrictInt | None = Field(
        None,
        ge=1,
        le=64,
        deprecated=True,
        description="the old name of team_size (not the K-factor cap params.k_max)",
    )
    theta: Number | None = Field(
        None,
        ge=MIN_SCALE,
        le=MAX_SCALE,
        description="overrides SYNELO_THETA and the Θ of team_size",
    )
    player_ids: Literal["steam", "text"] = "steam"
    model: Text = Field(
        "synelo", max_length=32, description="the rating model (GET /v1/models lists them)"
    )
    params: dict[str, Any] | None = Field(
        None,
        description="the model's parameters over its defaults, each within its bounds (GET "
        "/v1/models); every model also takes t_shadow and t_stale_days. For synelo: ParamsIn",
    )
    autotune: AutoTuneIn | None = Field(
        None,
        description="auto-tuning; left out: on, fitting the model's scale (docs: the "
        "operator's guide); null: off",
    )
    public: StrictBool = Field(
        False, description="anyone may read its public endpoints (/v1/public/…) without a token"
    )

    @model_validator(mode="before")
    @classmethod
    def _team_size_from_old_name(cls, data: Any) -> Any:
        """`kmax` still sets the team size, validated as one (on the raw body, so that no
        one reads the deprecated field and gets its warning)."""
        if (
            isinstance(data, dict)
            and data.get("kmax") is not None
            and data.get("team_size") is None
        ):
            return {**data, "team_size": data["kmax"]}
        return data

    @field_validator("kmax")
    @classmethod
    def _agrees_with_team_size(cls, kmax: int | None, info: ValidationInfo) -> int | None:
        if kmax is not None and info.data.get("team_size") not in (None, kmax):
            raise ValueError("kmax is the old name of team_size and differs from it: send one")
        return kmax


class PoolOut(BaseModel):
    name: str
    model: str
    team_size: int
    kmax: int = Field(deprecated=True, description="team_size under its old name")
    theta: float | None = Field(description="F1's Θ (SynElo pools; null otherwise)")
    player_ids: str
    rounds: int
    voided: int = Field(0, description="rounds voided (stored, not rated)")
    autotune: dict[str, Any] | None = Field(None, description="auto-tuning (null: off)")
    public: bool = Field(False, description="its public endpoints answer anyone")
    created_at: datetime
    params: dict[str, float | int | str] = Field(
        description="the rating parameters; convergence is F3's version ('seed' for pools "
        "created before there was a choice)"
    )


class QualityOut(BaseModel):
    rounds: int
    players: int
    shadow: int
    stale: int
    mean_convergence: float | None = Field(description="mean F3 C (SynElo pools; else null)")
    model: str
    theta: float | None = Field(description="F1's Θ (SynElo pools; null otherwise)")
    temperature: float | None = Field(
        None,
        description="F1t's T (SynElo pools; null otherwise): the P the pool shows is "
        "σ(logit/T), so theta_suggested is to be read against Θ·T",
    )
    team_size: int
    kmax: int = Field(deprecated=True, description="team_size under its old name")
    brier_target: float
    brier_all: float | None
    brier_all_distance: float | None = Field(
        description="brier_all − 0.25, signed: positive means worse than a coin (always 0.5)"
    )
    brier_recent: float | None
    brier_recent_distance: float | None = Field(
        description="brier_recent − 0.25, signed: positive means worse than a coin"
    )
    brier_recent_rounds: int
    theta_suggested: float | None = Field(
        description=(
            "F1's Θ that maximises the likelihood of the pool's newest rounds (round-start "
            "sums and outcomes), when theta_suggested_status is 'fit'; else null"
        )
    )
    theta_suggested_status: Literal["fit", "no signal", "separated", "too few", "n/a"] = Field(
        description="'fit': a finite 95 % interval; 'no signal': the ratings predict no "
        "better than a coin at 95 %, only a lower bound on Θ is known; 'separated': the gaps "
        "order every outcome, no finite fit; 'too few': under 500 rounds, or none with a gap; "
        "'n/a': the pool's model is not SynElo, which alone has a Θ"
    )
    theta_suggested_low: float | None = Field(
        description="the 95 % profile-likelihood interval's lower end (also for 'no signal')"
    )
    theta_suggested_high: float | None = Field(
        description="the interval's upper end; null when unbounded ('no signal')"
    )
    theta_suggested_p_value: float | None = Field(
        description="the likelihood-ratio test of the fit against a coin (Θ = ∞)"
    )
    theta_suggested_rounds: int = Field(
        description="rounds the suggestion rests on "
        "(the most recent, at most 100,000; 0 before 500)"
    )
    autotune: dict[str, Any] | None = Field(None, description="the pool's auto-tuning setting")
    last_fit: dict[str, Any] | None = Field(
        None,
        description="the newest auto-tune: the parameters fitted, the held-out log loss of the "
        "pool's parameters and of the fit, the rounds of each part, whether it was adopted, "
        "when (at, seq) and by which job",
    )
