"""Pools: create, show, quality (F6 and the health counts)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request

from synelo.ratings.brier import BRIER_TARGET
from synelo.schemas import PoolIn, PoolOut, QualityOut
from synelo.service.deps import AdminAuth, PoolDep, StoreDep
from synelo.service.ids import invalid
from synelo.store.typedefs import Pool, PoolExists, UnknownPool

router = APIRouter(prefix="/v1/pools", tags=["pools"], dependencies=[AdminAuth])


def pool_out(pool: Pool) -> PoolOut:
    return PoolOut(
        name=pool.name,
        team_size=pool.team_size,
        kmax=pool.team_size,
        theta=pool.params.theta,
        player_ids=pool.player_ids,
        rounds=pool.rounds,
        created_at=pool.created_at,
        params=pool.params.to_dict(),
    )


@router.post("", status_code=201, response_model=PoolOut)
def create_pool(body: PoolIn, request: Request, store: StoreDep) -> PoolOut:
    settings = request.app.state.settings
    team_size = body.team_size if body.team_size is not None else settings.team_size
    theta = settings.pool_theta(team_size, body.theta)
    overrides = body.params.model_dump(exclude_none=True) if body.params else {}
    try:
        params = settings.rating_params(theta, **overrides).within_bounds()
    except ValueError as exc:
        raise invalid(("body", "params"), str(exc)) from None
    try:
        return pool_out(store.create_pool(body.name, team_size, params, body.player_ids))
    except PoolExists:
        raise HTTPException(409, f"pool {body.name!r} exists already") from None


@router.get("", response_model=list[PoolOut])
def list_pools(store: StoreDep) -> list[PoolOut]:
    return [pool_out(p) for p in store.list_pools()]


@router.get("/{pool}", response_model=PoolOut)
def show_pool(pool: PoolDep, store: StoreDep) -> PoolOut:
    return pool_out(store.get_pool(pool.name))


@router.get("/{pool}/quality", response_model=QualityOut)
def pool_quality(
    pool: Annotated[str, Path(max_length=64)], request: Request, store: StoreDep
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
        theta=info.params.theta,
        team_size=info.team_size,
        kmax=info.team_size,
        brier_target=BRIER_TARGET,
        brier_all=q.brier_all,
        brier_all_distance=distance(q.brier_all),
        brier_recent=q.brier_recent,
        brier_recent_distance=distance(q.brier_recent),
        brier_recent_rounds=q.recent_rounds,
        theta_suggested=q.theta_fit.theta,
        theta_suggested_status=q.theta_fit.status,
        theta_suggested_low=q.theta_fit.theta_low,
        theta_suggested_high=q.theta_fit.theta_high,
        theta_suggested_p_value=q.theta_fit.p_value_vs_coin,
        theta_suggested_rounds=q.theta_fit.rounds,
    )
