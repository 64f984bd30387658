"""Pools: create, show, delete, start a new season, quality (F6 and the health counts)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import JSONResponse

from synelo.domain import (
    Change,
    JobRunning,
    PoolExists,
    UnknownPool,
)
from synelo.ratings.brier import BRIER_TARGET
from synelo.schemas import POOL_NAME, PoolIn, PoolOut, QualityOut, SeasonIn, SeasonOut
from synelo.service.api import actions
from synelo.service.api.pool_settings import autotune_setting, default_setting, model_settings
from synelo.service.api.responses import COMMON, errors
from synelo.service.api.views import pool_out
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep, StoreDep
from synelo.service.params import ReasonQuery
from synelo.store.generations import RerateStore

log = logging.getLogger("synelo")

router = APIRouter(prefix="/v1/pools", tags=["pools"], dependencies=[AdminAuth], responses=COMMON)


@router.post("", status_code=201, response_model=PoolOut, responses=errors(409))
def create_pool(body: PoolIn, request: Request, store: StoreDep) -> PoolOut:
    settings = request.app.state.settings
    team_size = body.team_size if body.team_size is not None else settings.team_size
    params, model_params = model_settings(
        settings, team_size, body.model, body.theta, body.params or {}
    )
    if "autotune" in body.model_fields_set:
        autotune = autotune_setting(body.model, params, model_params, body.autotune)
    else:  # on by default: the model's scale, when it has one
        autotune = default_setting(body.model)
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


@router.post("/{pool}/season", response_model=SeasonOut)
def start_season(
    pool: PoolDep, request: Request, store: StoreDep, body: SeasonIn | None = None
) -> SeasonOut:
    """Start a new season: every rating is pulled `fraction` of the way back toward the
    pool's mean (none given: the model's default share), at once, and each model does to
    its state what a season does (docs/maths/seasons.md). Logged with who and why, like a
    set: a re-rate applies it at its place among the rounds, and an export writes it there
    as an event line."""
    return actions.start_season(store, pool, body or SeasonIn(), actor(request))


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
        temperature=info.params.temperature if info.is_synelo else None,
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
