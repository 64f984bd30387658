"""The wire format of API v1: every request and response body, shared by the service and
the client. It needs only pydantic (and the pure parameter bounds), so `synelo.client`
loads no server stack."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictInt,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from synelo.ratings.params import (
    MAX_K,
    MAX_SCALE,
    MAX_STALE_DAYS,
    MAX_T_SHADOW,
    MAX_WEIGHT,
    MIN_K_MAX,
    MIN_SCALE,
    MIN_WRE_SCALE,
)

MAX_SIDE = 64
POOL_NAME = r"^[A-Za-z0-9_.-]{1,64}$"  # in paths as well, so no other text reaches a query
MAX_LABEL = 64  # a map, mode, side or position name
MAX_NAME = 64  # a player's display name
MAX_DURATION = 7 * 86_400.0  # seconds: no round lasts a week


def storable(value: str) -> str:
    """Text that both databases store alike, else a ValueError (a 422 naming the field):
    PostgreSQL refuses a NUL in text, and an unpaired surrogate ("\\udc00", which JSON can
    spell) is not UTF-8, so neither database can store it."""
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must not contain an unpaired surrogate (it is not UTF-8)") from None
    return value


Text = Annotated[str, Strict(), AfterValidator(storable)]  # a JSON string the store can keep
STEAM_ID_MIN = 76561197960265729  # account number 1, individual, public universe
STEAM_ID_MAX = 76561202255233023  # account number 2^32 − 1
TEXT_ID_MAX = 64
# A player id, checked against the pool's id kind by synelo.service.ids (the schema states
# the same rules): a SteamID64 as a JSON string of 17 digits or as an integer, in steam pools;
# 1–64 printable ASCII characters in text pools, which take strings only.
PlayerId = (
    Annotated[
        Text,
        WithJsonSchema(
            {
                "type": "string",
                "pattern": f"^[ -~]{{1,{TEXT_ID_MAX}}}$",
                "description": "a SteamID64 of 17 digits in "
                f"{STEAM_ID_MIN}…{STEAM_ID_MAX} (steam pools), or 1–{TEXT_ID_MAX} printable "
                "ASCII characters (text pools)",
            }
        ),
    ]
    | Annotated[
        StrictInt,
        WithJsonSchema(
            {
                # no minimum/maximum: OpenAPI's numbers are floats, which cannot hold these
                # bounds exactly (the nearest are off by one, outside the range)
                "type": "integer",
                "format": "int64",
                "description": f"a SteamID64 in {STEAM_ID_MIN}…{STEAM_ID_MAX} (steam pools "
                "only; JSON parsers that read numbers as doubles lose its last digits, so "
                "the string form is safer)",
            }
        ),
    ]
)
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]  # a JSON number, not "60"


class ErrorOut(BaseModel):
    """Every error but a 422: what went wrong, in a sentence."""

    detail: str
    job_id: int | None = Field(
        None, description="the running re-rate (a 409 because one runs on the pool)"
    )


class Sides(BaseModel):
    model_config = ConfigDict(extra="forbid")

    A: list[PlayerId] = Field(min_length=1, max_length=MAX_SIDE)
    B: list[PlayerId] = Field(min_length=1, max_length=MAX_SIDE)


class ParticipantSides(BaseModel):
    model_config = ConfigDict(extra="forbid")

    A: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)
    B: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)


class SideNames(BaseModel):
    """The side each team played, e.g. RED/BLU or marines/aliens."""

    model_config = ConfigDict(extra="forbid")

    A: Text = Field(min_length=1, max_length=MAX_LABEL)
    B: Text = Field(min_length=1, max_length=MAX_LABEL)

    @model_validator(mode="after")
    def _different(self) -> SideNames:
        if self.A == self.B:
            raise ValueError("the two teams cannot play the same side")
        return self


class TeamScores(BaseModel):
    """Each team's score, e.g. goals in a game to 10."""

    model_config = ConfigDict(extra="forbid")

    A: StrictInt = Field(ge=0, le=1_000_000)
    B: StrictInt = Field(ge=0, le=1_000_000)


class PlayedSpan(BaseModel):
    """When a player entered and left the round, in seconds from its start."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    from_: Number = Field(alias="from", ge=0, le=MAX_DURATION)
    to: Number = Field(ge=0, le=MAX_DURATION)

    @model_validator(mode="after")
    def _ordered(self) -> PlayedSpan:
        if self.to < self.from_:
            raise ValueError("'to' comes before 'from'")
        return self


class CommandSpan(PlayedSpan):
    """A commander and when they commanded, in seconds from the round's start; the rest of
    their time in the round they played as a field player."""

    player: PlayerId


class Commanders(BaseModel):
    """Each team's commander (NS2), one of that team's players: a player, who commands for
    their whole time in the round, or `{"player", "from", "to"}`."""

    model_config = ConfigDict(extra="forbid")

    A: PlayerId | CommandSpan
    B: PlayerId | CommandSpan


PlayedFraction = Annotated[Number, Field(ge=0, le=1)]
Label = Annotated[Text, Field(min_length=1, max_length=MAX_LABEL)]  # a position, a side
DisplayName = Annotated[Text, Field(min_length=1, max_length=MAX_NAME)]


class RoundIn(BaseModel):
    """A round report. `teams` are the rosters at round start (they decide P);
    `participants` are the players rated (default: `teams`). The optional fields describe
    the round for the models that use them; the service stores every field as reported, and
    a field it does not know is an error."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "example": {
                "round_id": "srv1-2026-11-21T20:15:03-17",
                "server_id": "srv1",
                "map": "arena_well",
                "winner": "A",
                "teams": {"A": ["76561197960265730"], "B": ["76561197960265731"]},
            }
        },
    )

    round_id: Text = Field(min_length=1, max_length=128)
    server_id: Text = Field(min_length=1, max_length=128)
    map: Text = Field("", max_length=128)
    winner: Literal["A", "B", "draw"]
    teams: Sides
    participants: ParticipantSides | None = None
    mode: Text | None = Field(
        None, min_length=1, max_length=MAX_LABEL, description="game mode, e.g. koth, ctf"
    )
    started_at: AwareDatetime | None = Field(None, description="ISO 8601, with a time zone")
    ended_at: AwareDatetime | None = Field(None, description="ISO 8601, with a time zone")
    duration: Number | None = Field(
        None, gt=0, le=MAX_DURATION, description="the round's length in seconds"
    )
    sides: SideNames | None = None
    commanders: Commanders | None = None
    scores: TeamScores | None = None
    time_played: dict[str, PlayedFraction | PlayedSpan] | None = Field(
        None,
        max_length=2 * MAX_SIDE,
        description="per player: the fraction of the round played from its start (0–1), or "
        '{"from": s, "to": s} in seconds from the start',
    )
    positions: dict[str, Label] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player, e.g. offense/defense"
    )
    player_scores: dict[str, Number] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player: scoreboard points"
    )
    names: dict[str, DisplayName] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player: display name"
    )

    @model_validator(mode="after")
    def _times_ordered(self) -> RoundIn:
        if self.started_at and self.ended_at and self.ended_at < self.started_at:
            raise ValueError("ended_at comes before started_at")
        if self.duration is not None and self.time_played:
            for player, played in self.time_played.items():
                if isinstance(played, PlayedSpan) and played.to > self.duration:
                    raise ValueError(f"time_played.{player}: 'to' is after the round's end")
        if self.duration is not None and self.commanders is not None:
            for side, given in (("A", self.commanders.A), ("B", self.commanders.B)):
                if isinstance(given, CommandSpan) and given.to > self.duration:
                    raise ValueError(f"commanders.{side}: 'to' is after the round's end")
        return self


class PlayerChangeOut(BaseModel):
    steam_id: str
    team: Literal["A", "B"]
    before: int
    after: int
    delta: int
    k: float | None = Field(description="F5's K this round (SynElo pools; null otherwise)")
    visible: bool
    rounds_played: int


class RoundOut(BaseModel):
    round_id: str
    seq: int
    winner: str
    p_a: float
    sum_a: int
    sum_b: int
    players: list[PlayerChangeOut]


class PlayerOut(BaseModel):
    steam_id: str
    name: str | None = Field(description="the display name last reported; never an id")
    rating: int
    visible: bool
    rounds_played: int
    stale: bool
    last_played: datetime | None
    convergence: float | None = Field(
        description="F3's C for the next round (SynElo pools; null otherwise)"
    )
    k: float | None = Field(description="F5's K for the next round (SynElo pools; null otherwise)")
    skill: dict[str, float] = Field(
        description="the pool's model's own figures of the player: SynElo's convergence and "
        "k, Elo's rating, TrueSkill's and openskill's mu and sigma"
    )
    hidden: bool = Field(False, description="an admin hid the player from public lists")
    place: int | None = Field(
        None,
        description="the player's place on the pool's public board (1 = the best), the one "
        "the public leaderboard gives; null when not listed there: in the shadow period, "
        "stale, or hidden",
    )


class LookupIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steam_ids: list[PlayerId] = Field(min_length=1, max_length=256)
    names: dict[str, DisplayName] | None = Field(
        None,
        max_length=256,
        description="display names of players among steam_ids, recorded for players the "
        "pool has stored (a player not yet rated keeps none until a round names them)",
    )


class LookupOut(BaseModel):
    shadow_rounds: int = Field(
        description="T: rounds a player needs before being listed (the pool's t_shadow)"
    )
    players: list[PlayerOut]


Reason = Annotated[
    Text, Field(min_length=1, max_length=500, description="why, kept in the pool's admin log")
]


class RatingIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: StrictInt
    reason: Reason | None = None


class PoolPatchIn(BaseModel):
    """A change of a pool's model or parameters, applied by re-rating every stored round."""

    model_config = ConfigDict(extra="forbid")

    model: Text | None = Field(
        None, max_length=32, description="a new rating model (default: the pool's)"
    )
    params: dict[str, Any] | None = Field(
        None,
        description="parameters over the pool's own (same model) or over the new model's "
        "defaults (another model), each within its bounds",
    )
    theta: Number | None = Field(None, ge=MIN_SCALE, le=MAX_SCALE, description="SynElo's Θ")
    autotune: AutoTuneIn | None = Field(
        None, description="auto-tuning; null turns it off (alone: applied at once, no re-rate)"
    )
    public: StrictBool | None = Field(
        None, description="open or close the public endpoints (applied at once, no re-rate)"
    )
    reason: Reason | None = None


class HiddenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hidden: StrictBool = Field(description="true: left out of every public list")
    reason: Reason | None = None


class PublicPoolOut(BaseModel):
    name: str
    model: str
    rating: str = Field(description="what its ratings are (the model's display rating)")
    rounds: int = Field(description="rounds rated (voided ones not counted)")
    active_week: int = Field(description="players who played in the last 7 days")


class PublicPoolsOut(BaseModel):
    pools: list[PublicPoolOut]


class PublicPlayerOut(BaseModel):
    steam_id: str = Field(description="the player's id (a SteamID64 or a text id)")
    name: str | None
    rounds_played: int
    last_played: datetime | None
    provisional: bool = Field(description="still in the shadow period: no rating shown")
    rounds_left: int = Field(description="rounds until the rating is shown (0 once it is)")
    rating: int | None = Field(description="the display rating; null while provisional")
    place: int | None = Field(
        description="place on the public board (null: not listed there: provisional, stale)"
    )


class RatingBinsOut(BaseModel):
    """A rating distribution: counts[i] players rated within the i-th of len(counts) equal
    ranges from low to high (the highest rating in the last)."""

    low: float
    high: float
    counts: list[int]


class PublicBoardOut(BaseModel):
    pool: str
    shadow_rounds: int = Field(description="T: rounds a player needs before being listed")
    total: int = Field(description="players listed (matching the search, if any)")
    offset: int
    players: list[PublicPlayerOut]
    trends: dict[str, int] = Field(
        description="each player of this page's rating change over their last 10 rounds "
        "(an admin's set or reset in between is left out), by steam_id"
    )
    histogram: RatingBinsOut = Field(
        description="the ratings of the whole board (every listed player, whatever the "
        "search or page) in 20 equal ranges"
    )


class PublicEntryOut(BaseModel):
    """One entry of a player's rating history as public pages show it."""

    kind: Literal["round", "set", "reset", "solve"] = Field(
        description="a rated round, an admin's set or reset, or a model's refit"
    )
    round_id: str | None
    team: str | None
    p: float | None = Field(
        description="the player's team's predicted chance (rounds), to the percent"
    )
    s: float | None = Field(description="the player's result: 1 won, 0 lost, ½ a draw")
    before: int | None = Field(description="null while the player is provisional")
    after: int | None = Field(description="null while the player is provisional")
    at: datetime


class PublicHistoryOut(BaseModel):
    player: PublicPlayerOut
    entries: list[PublicEntryOut] = Field(description="newest first")
    voided: list[str] = Field(description="round_ids of the player's rounds an admin voided")


class PublicRoundPlayerOut(BaseModel):
    steam_id: str | None = Field(description="null for a player an admin hid")
    name: str = Field(description='the display name, the id, or "a hidden player"')
    provisional: bool
    before: int | None = Field(description="null when provisional, hidden or not rated")
    after: int | None


class PublicRoundOut(BaseModel):
    round_id: str
    seq: int
    at: datetime
    map: str
    winner: str
    p_a: float = Field(
        description="team A's predicted chance when the round was rated, to the percent"
    )
    voided: bool
    A: list[PublicRoundPlayerOut]
    B: list[PublicRoundPlayerOut]


class HealthBlockOut(BaseModel):
    first: int = Field(description="the block's first seq")
    last: int
    rounds: int = Field(description="its rounds not voided")
    brier: float = Field(description="F6 over them")


class HealthBinOut(BaseModel):
    low: float
    high: float
    rounds: int
    predicted: float | None = Field(description="their mean P_A (null: no round)")
    observed: float | None = Field(description="how often team A won (a draw: ½)")


class HealthSpreadOut(BaseModel):
    name: str = Field(description='"k" (SynElo) or the model\'s uncertainty field ("sigma"…)')
    players: int = Field(description="the players of the stale period it is over")
    low: float
    median: float
    high: float


class HealthThetaOut(BaseModel):
    current: float | None
    suggested: float | None
    status: str
    low: float | None
    high: float | None
    p_value: float | None
    rounds: int


class HealthDayOut(BaseModel):
    day: date
    rounds: int


class PublicHealthOut(BaseModel):
    pool: str
    model: str
    as_of_round: int = Field(description="the pool's rounds when the figures were computed")
    behind: bool = Field(description="newer rounds are being added to the figures")
    rounds: int = Field(description="rounds in the figures: rated and not voided")
    voided: int
    brier_target: float
    brier_all: float | None
    brier_recent: float | None
    blocks: list[HealthBlockOut] = Field(description="F6 by blocks of rounds, in seq order")
    reliability: list[HealthBinOut] = Field(description="ten bins of P_A")
    spread: HealthSpreadOut | None = Field(description="K or the uncertainty; null: none")
    theta: HealthThetaOut
    rounds_per_day: list[HealthDayOut] = Field(description="UTC days, oldest first")


class VoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Reason


class UnvoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Reason | None = None


class ChangeOut(BaseModel):
    """An entry of a pool's admin log."""

    id: int
    seq: int = Field(description="rounds the pool had stored when it was made")
    kind: Literal["set", "reset", "void", "unvoid", "patch", "tune", "refit", "hide"]
    steam_id: str | None = Field(description="the player set or reset")
    round_id: str | None = Field(description="the round voided or unvoided")
    value: dict[str, Any] | None = Field(
        description='{"rating"}, {"model", "params"}, {"public"} or {"hidden"}'
    )
    actor: str = Field(description="the token that made it: its label, or config:<role>#<n>")
    reason: str | None
    at: datetime


class ChangesOut(BaseModel):
    changes: list[ChangeOut]


class JobOut(BaseModel):
    """A background re-rate: running until the new ratings replace the old at once."""

    id: int
    pool: str
    kind: Literal["patch", "void", "unvoid", "tune", "refit"]
    status: Literal["running", "done", "failed"]
    phase: str = Field(
        description="queued, rating, solving (a full-history refit), swapping or done"
    )
    total: int = Field(description="rounds to rate (those stored when the job started)")
    done: int = Field(description="rounds rated so far")
    error: str | None
    actor: str = Field(description="who asked for it")
    reason: str | None
    spec: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


class JournalOut(BaseModel):
    id: int
    kind: Literal["round", "set", "reset", "solve"]
    round_id: str | None
    seq: int | None
    team: str | None
    before: int
    after: int
    delta: int
    k: float | None
    p: float | None
    s: float | None
    at: datetime


class HistoryOut(BaseModel):
    steam_id: str
    name: str | None
    entries: list[JournalOut]


class LeaderOut(BaseModel):
    rank: int
    steam_id: str
    name: str | None
    rating: int
    rounds_played: int
    stale: bool
    last_played: datetime | None


class LeaderboardOut(BaseModel):
    players: list[LeaderOut]


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
    convergence: Literal["seed", "revised"] | None = Field(
        None,
        description="F3's version: 'revised' (default SYNELO_CONVERGENCE) or 'seed', the "
        "seed design's (with an explicit theta, rates exactly as pools made before it)",
    )


class EmptyIn(BaseModel):
    """A body with nothing in it (any field is unknown)."""

    model_config = ConfigDict(extra="forbid")


class AutoTuneIn(BaseModel):
    """Auto-tuning: re-fit `fit` on the pool's own rounds every `every` rounds; adopt the fit
    (re-rating the pool) when the newest `holdout` of the rounds, which the fit did not see,
    get a log loss lower by `margin` or more."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    every: StrictInt = Field(ge=100, le=10_000_000, description="rounds between fits")
    fit: list[Text] = Field(
        min_length=1, max_length=8, description="parameters to fit (the model's tunable ones)"
    )
    holdout: Number = Field(0.2, gt=0, lt=0.5, description="share of the newest rounds held out")
    margin: Number = Field(
        0.002, ge=0, le=1, description="held-out log-loss gain (nats per round) to adopt"
    )


class PoolIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(pattern=POOL_NAME)
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
    autotune: AutoTuneIn | None = Field(None, description="auto-tuning (default: off)")
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


# --- balancing: splits and autobalance ---------------------------------------------------
MAX_PLAYERS = 2 * MAX_SIDE


# players who want to stay on one team: two or more, each listed once
Party = Annotated[list[PlayerId], Field(min_length=2, max_length=MAX_PLAYERS)]


class Teams(BaseModel):
    """Present teams; either may be empty (a 3v0 is exactly what autobalance is for)."""

    A: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)
    B: list[PlayerId] = Field(default_factory=list, max_length=MAX_SIDE)


class SplitsIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "players": [
                    "76561197960265730",
                    "76561197960265731",
                    "76561197960265732",
                    "76561197960265733",
                    "76561197960265734",
                ],
                "current": {
                    "A": ["76561197960265730", "76561197960265731"],
                    "B": ["76561197960265732", "76561197960265733"],
                },
                "parties": [],
                "must_play": ["76561197960265734"],
                "min_k": 2,
                "max_k": None,
                "prefer": "mix",
            }
        }
    )

    players: list[PlayerId] = Field(min_length=4, max_length=MAX_PLAYERS)
    current: Teams | None = None
    parties: list[Party] = Field(default_factory=list, max_length=MAX_PLAYERS)
    must_play: list[PlayerId] = Field(default_factory=list, max_length=MAX_PLAYERS)
    min_k: int = Field(2, ge=1, le=MAX_SIDE)
    max_k: int | None = Field(None, ge=1, le=MAX_SIDE)
    prefer: Literal["stay", "mix"] | None = "mix"
    mode: Literal["even", "all-play"] | None = Field(
        None,
        description="even: k against k by equal strength sums, for every k from min_k to "
        "max_k; all-play: everyone plays, ⌊n/2⌋ against ⌈n/2⌉, by the least |logit P(A)| of "
        "the pool's model (W12; only models that have one, such as whr). Default: the model's",
    )


class SplitOut(BaseModel):
    k: int
    A: list[str]
    B: list[str]
    bench: list[str]
    sum_a: int
    sum_b: int
    gap: int
    p_a: float
    optimal: bool = Field(
        description="the gap (all-play: |logit|) is proven minimal at the rating resolution"
    )
    moved: int | None = Field(
        description="players on a team now who change team (null without current)"
    )
    moved_optimal: bool | None = Field(
        description="prefer is proven honoured among the "
        "splits with this gap (null without current)"
    )
    split_parties: list[list[str]] = Field(description="parties that could not stay together")
    logit: float | None = Field(
        None,
        description="all-play: the model's logit P(A) on the strengths the split was chosen "
        "by, whose absolute value it minimises (W12); null for even splits",
    )


class SplitsOut(BaseModel):
    splits: list[SplitOut]
    mode: Literal["even", "all-play"] = Field(
        "even", description="how the splits were chosen (see the request's mode)"
    )
    solver: Literal["exact", "greedy"]
    elapsed_ms: float = Field(
        description="since the request began: waiting for the solver, reading and solving "
        "(the budget SYNELO_BALANCE_BUDGET_MS covers all of it)"
    )


class AutobalanceIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "teams": {
                    "A": ["76561197960265730", "76561197960265731", "76561197960265732"],
                    "B": ["76561197960265733"],
                },
                "joiner": None,
                "locked": [],
                "parties": [],
                "method": "f11",
            }
        }
    )

    teams: Teams
    joiner: PlayerId | None = None
    unassigned: list[PlayerId] = Field(default_factory=list, max_length=MAX_PLAYERS)
    locked: list[PlayerId] = Field(default_factory=list, max_length=MAX_PLAYERS)
    parties: list[Party] = Field(default_factory=list, max_length=MAX_PLAYERS)
    method: Literal["f11", "min_swaps"] = "f11"


class MoveOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    steam_id: str
    from_: Literal["A", "B", "none"] = Field(alias="from")
    to: Literal["A", "B"]


class AutobalanceOut(BaseModel):
    method: str
    moves: list[MoveOut]
    gap_before: int
    gap_after: int
    sum_a: int
    sum_b: int
    size_a: int
    size_b: int


# --- models and prediction ---------------------------------------------------------------
class ModelParamOut(BaseModel):
    name: str
    default: float | int | str
    low: float | None = Field(description="the smallest value allowed (null: none)")
    high: float | None = Field(description="the largest value allowed (null: none)")
    above: bool = Field(description="the value must exceed `low`, not merely reach it")
    integer: bool
    log: bool = Field(description="scale-like: the tuner searches it on a log scale")
    choices: list[str] = Field(description="the values allowed, for a parameter that is text")
    doc: str


class ModelOut(BaseModel):
    name: str
    summary: str
    rating: str = Field(description="what the display rating is (e.g. μ − 3σ)")
    balance_by: Literal["strength", "p"] = Field(
        description="'strength': splits even out team sums of each player's strength; 'p': "
        "only the model's prediction says how even two teams are"
    )
    parameters: list[ModelParamOut]


class ModelsOut(BaseModel):
    models: list[ModelOut]
    pool_rules: list[ModelParamOut] = Field(
        description="parameters every pool takes whatever its model: the shadow and stale rules"
    )


class PredictIn(BaseModel):
    """Two teams as they would start a round, and any optional round field the pool's
    model reads (validated as in a round report)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "example": {"teams": {"A": ["76561197960265730"], "B": ["76561197960265731"]}}
        },
    )

    teams: Sides
    map: Text = Field("", max_length=128)
    mode: Text | None = Field(None, min_length=1, max_length=MAX_LABEL)
    sides: SideNames | None = None
    commanders: Commanders | None = None
    positions: dict[str, Label] | None = Field(
        None, max_length=2 * MAX_SIDE, description="per player, e.g. offense/defense"
    )


class ResultOut(BaseModel):
    """One possible final score of the round and its predicted probability."""

    A: int = Field(description="team A's score (goals)")
    B: int = Field(description="team B's score (goals)")
    p: float = Field(description="its probability")


class PredictOut(BaseModel):
    p_a: float = Field(description="P(team A wins) from the current ratings")
    strength_a: float = Field(description="Σ of team A's strengths (what balancing evens out)")
    strength_b: float
    results: list[ResultOut] | None = Field(
        None,
        description="every possible final score with its probability, A's 0:G loss first "
        "(models that predict scores: positional); p_a is the sum over A's wins",
    )
