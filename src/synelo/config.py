"""Configuration from the environment (SYNELO_*), with the design's values as defaults."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from synelo.ratings.params import (
    Convergence,
    ParameterError,
    SynEloParams,
    ThetaRule,
    default_k_min,
    default_theta,
)

TokenList = Annotated[list[str], NoDecode]


class Settings(BaseSettings):
    """Every variable is documented in docs/operators/configuration.md."""

    model_config = SettingsConfigDict(env_prefix="SYNELO_", extra="ignore")

    data_dir: Path = Field(Path("data"), description="Folder for the SQLite file and tokens")
    database_url: str | None = Field(None, description="SQLAlchemy URL; default SQLite in data_dir")
    admin_tokens: TokenList = Field(default_factory=list)
    server_tokens: TokenList = Field(default_factory=list)
    max_body_bytes: int = 64 * 1024
    db_pool_size: int = 8
    window_cache: int = 5_000  # decoded convergence windows the writer keeps (~45 KB each)

    # Seed 000's parameter table: defaults for every new pool.
    r0: int = 1000
    r_min: int = 100
    r_max: int = 10_000
    r_shadow_cap: int = 2200
    t_shadow: int = 50
    t_stale_days: float = 30.0
    k_min: float | None = None  # None: 12 with F3 (revised), 2 with the seed's (default_k_min)
    k_max: float = 72.0
    team_size: int = Field(12, ge=1, le=64)  # largest team size feeding a pool (gives Θ)
    kmax: int | None = Field(None, ge=1, le=64)  # SYNELO_KMAX: team_size's deprecated name
    theta: float | None = None  # Θ of new pools instead of the one their team size gives
    theta_rule: ThetaRule = "linear"  # Θ from the team size: 100·max(k, 2), or "seed"
    window: int = 500
    w_vel: float = 0.25
    w_wre: float = 0.25
    w_vol: float = 0.50
    wre_scale: float = 0.10
    sigma: float = 400.0
    convergence: Convergence = "revised"  # F3's version for new pools: "revised" or "seed"
    brier_recent: int = 500
    autotune_check_s: float = 60.0  # how often to look for auto-tunes and refits due; 0: never
    n_max: int = 32  # largest pool the exact split solver takes on; beyond, the greedy
    balance_budget_ms: int = Field(1000, ge=1)  # time for one splits request; then greedy

    # Hardening (issue 16): every variable is documented in docs/operators/configuration.md.
    sqlite_synchronous: Literal["NORMAL", "FULL"] = "FULL"  # what a power cut may lose
    queue_max: int = Field(1000, ge=1)  # rounds waiting for the writer; beyond, 503
    limit_concurrency: int = Field(512, ge=1)  # connections + tasks per worker; beyond, 503
    timeout_keep_alive_s: float = Field(5.0, gt=0)  # an idle keep-alive connection closes
    timeout_request_s: float = Field(10.0, gt=0)  # a whole request must arrive within this
    access_log: bool = False  # one line per request on the "synelo.access" logger
    metrics_public: bool = False  # /metrics without an admin token
    redis_url: str | None = None  # shared rate-limit counters across workers and hosts
    trusted_proxies: TokenList = Field(default_factory=list)  # X-Forwarded-For honoured from
    rate_server_rounds: float | None = Field(50.0, gt=0)  # per server token, rounds/s
    rate_server_requests: float | None = Field(200.0, gt=0)  # per server token, requests/s
    rate_admin_requests: float | None = Field(None, gt=0)  # per admin token; None: unlimited
    rate_address_requests: float | None = Field(1000.0, gt=0)  # per client address, requests/s
    # per client address on the public read endpoints (/v1/public/…), requests/s
    rate_public_requests: float | None = Field(20.0, gt=0)
    # requests of one token (or, without one, one client address) in progress at once per
    # worker; the rest wait their turn (synelo.service.middleware.fairshare). None: no bound
    fair_share: int | None = Field(2, ge=1)
    # how long an admin's login to the pages lasts (synelo.service.pages.admin)
    session_hours: float = Field(12.0, gt=0, le=24 * 30)

    @field_validator("admin_tokens", "server_tokens", "trusted_proxies", mode="before")
    @classmethod
    def _split_tokens(cls, value: object) -> object:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()]
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_addresses(cls, value: list[str]) -> list[str]:
        """A typo in SYNELO_TRUSTED_PROXIES fails at start-up, named (not when the app is
        built in each worker)."""
        for entry in value:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or network") from None
        return value

    @field_validator(
        "theta",
        "redis_url",
        "rate_server_rounds",
        "rate_server_requests",
        "rate_admin_requests",
        "rate_address_requests",
        "rate_public_requests",
        "fair_share",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value  # SYNELO_THETA= in a compose file

    @model_validator(mode="after")
    def _team_size_from_old_name(self) -> Settings:
        """SYNELO_KMAX was the team size's name until it was confused with the K-factor cap
        SYNELO_K_MAX; it is still read, and contradicting SYNELO_TEAM_SIZE is an error."""
        if self.kmax is not None:
            if "team_size" in self.model_fields_set and self.team_size != self.kmax:
                raise ValueError(
                    "SYNELO_KMAX (deprecated) and SYNELO_TEAM_SIZE differ: set SYNELO_TEAM_SIZE"
                )
            self.team_size = self.kmax
        return self

    @model_validator(mode="after")
    def _rating_parameters_valid(self) -> Settings:
        """A bad SYNELO_K_MAX (or any parameter) fails at start-up, named, not in a pool."""
        try:
            self.rating_params(self.pool_theta(self.team_size)).within_bounds()
        except ParameterError as exc:
            names = ", ".join(f"SYNELO_{name.upper()}" for name in exc.names)
            raise ValueError(f"{names}: {str(exc).split(': ', 1)[1]}") from None
        return self

    def pool_theta(self, team_size: int, theta: float | None = None) -> float:
        """F1's Θ of a new pool: its own override, else SYNELO_THETA, else the rule of
        SYNELO_THETA_RULE for its team size (100·max(k, 2), or the design's
        400·floor((k+1)/2))."""
        if theta is not None:
            return theta
        if self.theta is not None:
            return self.theta
        return default_theta(team_size, self.theta_rule)

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'synelo.db').resolve()}"

    def rating_params(self, theta: float, **overrides: Any) -> SynEloParams:
        """The parameters a new pool snapshots: the settings, its own Θ (from its team size or
        an override) and its `overrides`. Without SYNELO_K_MIN or a `k_min` override, K_min
        follows the pool's F3 (`default_k_min`), so that a pool asking for the seed's F3
        gets the design's K_min too."""
        convergence = overrides.get("convergence", self.convergence)
        k_min = self.k_min if self.k_min is not None else default_k_min(convergence)
        return SynEloParams(
            r0=self.r0,
            r_min=self.r_min,
            r_max=self.r_max,
            r_shadow_cap=self.r_shadow_cap,
            t_shadow=self.t_shadow,
            t_stale_days=self.t_stale_days,
            k_min=k_min,
            k_max=self.k_max,
            theta=theta,
            window=self.window,
            w_vel=self.w_vel,
            w_wre=self.w_wre,
            w_vol=self.w_vol,
            wre_scale=self.wre_scale,
            sigma=self.sigma,
            convergence=self.convergence,
            uneven="headcount",  # F1u for every new pool (the dataclass keeps the seed's)
        ).with_changes(**overrides)
