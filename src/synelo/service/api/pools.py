"""Pools: create, show, delete, quality (F6 and the health counts)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from synelo.config import Settings
from synelo.domain import (
    POOL_RULES,
    Change,
    JobRunning,
    Pool,
    PoolExists,
    UnknownPool,
)
from synelo.models import MODELS, ParameterError, resolve_params
from synelo.models.synelo import SynElo
from synelo.ratings import SynEloParams
from synelo.ratings.brier import BRIER_TARGET
from synelo.rerate.autotune import AutoTune, AutoTuneError, check_autotune
from synelo.schemas import POOL_NAME, AutoTuneIn, ParamsIn, PoolIn, PoolOut, QualityOut
from synelo.service.api.responses import COMMON, errors
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep, StoreDep
from synelo.service.ids import invalid
from synelo.service.params import ReasonQuery
from synelo.store.rerate import RerateStore

log = logging.getLogger("synelo")

router = APIRouter(prefix="/v1/pools", tags=["pools"], dependencies=[AdminAuth], responses=COMMON)


def pool_out(pool: Pool) -> PoolOut:
    params = dict(pool.model_params)
    if not pool.is_synelo:
        params.update({name: getattr(pool.params, name) for name in POOL_RULES})
    return PoolOut(
        name=pool.name,
        model=pool.model,
        team_size=pool.team_size,
        kmax=pool.team_size,
        theta=pool.params.theta if pool.is_synelo else None,
        player_ids=pool.player_ids,
        rounds=pool.rounds,
        voided=pool.voided,
        autotune=None if pool.autotune is None else dict(pool.autotune),
        public=pool.public,
        created_at=pool.created_at,
        params=params,
    )


@router.post("", status_code=201, response_model=PoolOut, responses=errors(409))
def create_pool(body: PoolIn, request: Request, store: StoreDep) -> PoolOut:
    settings = request.app.state.settings
    team_size = body.team_size if body.team_size is not None else settings.team_size
    params, model_params = model_settings(
        settings, team_size, body.model, body.theta, body.params or {}
    )
    autotune = autotune_setting(body.model, params, model_params, body.autotune)
    try:
        pool = store.create_pool(
            body.name,
            team_size,
            params,
            body.player_ids,
            body.model,
            model_params,
            autotune,
            public=body.public,
        )
    except PoolExists:
        raise HTTPException(409, f"pool {body.name!r} exists already") from None
    return pool_out(pool)


def model_settings(
    settings: Settings,
    team_size: int,
    model: str,
    theta: float | None,
    given: dict[str, Any],
    base: Pool | None = None,
) -> tuple[SynEloParams, dict[str, Any]]:
    """A pool's SynEloParams and its model's own parameters: `given` over `base`'s (a pool
    that keeps its model) or over the settings' and the model's defaults; every error a
    422 naming its field under body.params (body.model, body.theta)."""
    if model not in MODELS:
        raise invalid(("body", "model"), f"unknown model (known: {', '.join(MODELS)})", value=model)
    keep = base is not None and base.model == model
    if model == "synelo":
        current = base.params.to_dict() if keep and base is not None else None
        if base is not None and not keep:  # the pool's shadow and stale rules stay
            given = {**{name: getattr(base.params, name) for name in POOL_RULES}, **given}
        return _synelo_params(settings, team_size, theta, given, current), {}
    if theta is not None:
        raise invalid(("body", "theta"), f"Θ is SynElo's; model {model!r} has none")
    rules = {name: value for name, value in given.items() if name in POOL_RULES}
    own = {k: v for k, v in given.items() if k not in POOL_RULES}
    if base is not None:  # a pool's shadow and stale rules stay unless given
        rules = {**{name: getattr(base.params, name) for name in POOL_RULES}, **rules}
        if keep:
            own = {**base.model_params, **own}
    try:
        return pool_rules(settings, rules), resolve_params(MODELS[model], own)
    except ParameterError as exc:
        raise invalid(("body", "params", exc.name), str(exc), value=given.get(exc.name)) from None


def autotune_setting(
    model: str,
    params: SynEloParams,
    model_params: dict[str, Any],
    given: AutoTuneIn | None,
    loc: tuple[str, ...] | None = None,
) -> dict[str, Any] | None:
    """A pool's auto-tuning setting (None: off), if the pool can fit its parameters: a 422
    at body.autotune.fit otherwise (at `loc`, for a pool's own setting the body left as
    it was)."""
    if given is None:
        return None
    setting = AutoTune(given.every, tuple(given.fit), given.holdout, given.margin)
    own = params.to_dict() if model == "synelo" else model_params
    try:
        return check_autotune(model, own, setting).to_json()
    except AutoTuneError as exc:
        where = loc or ("body", "autotune", exc.field)
        raise invalid(where, f"the pool's auto-tuning: {exc}", value=given.fit) from None


def pool_rules(settings: Settings, given: dict[str, Any]) -> SynEloParams:
    """The shadow and stale rules of a pool whose model is not SynElo: the settings', with
    `given` over them (ParameterError naming a bad one), in a SynEloParams (its other
    fields are unused)."""
    rules = {name: getattr(settings, name) for name in POOL_RULES}
    rules.update({name: SynElo.parameters[name].check(name, v) for name, v in given.items()})
    return SynEloParams(**rules)


def _synelo_params(
    settings: Settings,
    team_size: int,
    theta: float | None,
    given: dict[str, Any],
    current: dict[str, Any] | None = None,
) -> SynEloParams:
    """A SynElo pool's parameters: `given` (checked as ParamsIn, every error named under
    body.params) and its Θ over `current` (a pool's own) or the settings'."""
    try:
        overrides = ParamsIn.model_validate(given).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", "params", *e["loc"])} for e in exc.errors()]
        ) from None
    try:
        if current is not None:
            if theta is not None:
                overrides["theta"] = theta
            return SynEloParams.from_dict({**current, **overrides}).within_bounds()
        return settings.rating_params(
            settings.pool_theta(team_size, theta), **overrides
        ).within_bounds()
    except ValueError as exc:
        raise invalid(("body", "params"), str(exc)) from None


@router.get("", response_model=list[PoolOut])
def list_pools(store: StoreDep) -> list[PoolOut]:
    return [pool_out(p) for p in store.list_pools()]


@router.get("/{pool}", response_model=PoolOut)
def show_pool(pool: PoolDep, store: StoreDep) -> PoolOut:
    return pool_out(store.get_pool(pool.name))


@router.delete("/{pool}", response_model=PoolOut, responses=errors(409))
def delete_pool(
    pool: PoolDep,
    request: Request,
    reason: ReasonQuery = None,
) -> PoolOut | JSONResponse:
    """Delete the pool with its players, rounds, journal and admin log, for good (a
    back-up is the only way back). Refused (409) while a re-rate runs on it. The
    deletion is logged with who and why on the service's log, as the pool's own admin log
    goes with it."""
    rerate: RerateStore = request.app.state.rerate
    try:
        gone = rerate.delete_pool(pool.name)
    except UnknownPool:
        raise HTTPException(404, f"unknown pool {pool.name!r}") from None
    except JobRunning as exc:
        return JSONResponse(
            {"detail": f"a re-rate of pool {pool.name!r} is running", "job_id": exc.job_id},
            status_code=409,
        )
    log.warning(
        "pool %r deleted (%d rounds) by %s: %s", gone.name, gone.rounds, actor(request), reason
    )
    return pool_out(gone)


@router.get("/{pool}/quality", response_model=QualityOut)
def pool_quality(
    pool: Annotated[str, Path(pattern=POOL_NAME)], request: Request, store: StoreDep
) -> QualityOut:
    try:
        info, q = store.quality(pool, request.app.state.settings.brier_recent)
    except UnknownPool:
        raise HTTPException(404, f"unknown pool {pool!r}") from None

    def distance(b: float | None) -> float | None:
        """Signed: above 0 the predictions did worse than always saying 0.5."""
        return None if b is None else b - BRIER_TARGET

    return QualityOut(
        rounds=q.rounds,
        players=q.players,
        shadow=q.shadow,
        stale=q.stale,
        mean_convergence=q.mean_convergence,
        model=info.model,
        theta=info.params.theta if info.is_synelo else None,
        team_size=info.team_size,
        kmax=info.team_size,
        brier_target=BRIER_TARGET,
        brier_all=q.brier_all,
        brier_all_distance=distance(q.brier_all),
        brier_recent=q.brier_recent,
        brier_recent_distance=distance(q.brier_recent),
        brier_recent_rounds=q.recent_rounds,
        theta_suggested=q.theta_fit.theta,
        theta_suggested_status=q.theta_fit.status if info.is_synelo else "n/a",
        theta_suggested_low=q.theta_fit.theta_low,
        theta_suggested_high=q.theta_fit.theta_high,
        theta_suggested_p_value=q.theta_fit.p_value_vs_coin,
        theta_suggested_rounds=q.theta_fit.rounds,
        autotune=None if info.autotune is None else dict(info.autotune),
        last_fit=None if q.last_fit is None else _fit_out(q.last_fit),
    )


def _fit_out(change: Change) -> dict[str, Any]:
    """The newest auto-tune as the quality answer shows it."""
    value = dict(change.value or {})
    return {**value, "at": change.created_at.isoformat(), "seq": change.seq}
