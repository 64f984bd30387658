"""Re-rating (admin): change a pool's model or parameters, void or unvoid a round, follow
the background job that recomputes the pool from its stored rounds, and read the admin log."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import JSONResponse

from synelo.domain import Pool, pool_model
from synelo.schemas import (
    ChangeOut,
    ChangesOut,
    EmptyIn,
    JobOut,
    PoolOut,
    PoolPatchIn,
    UnvoidIn,
    VoidIn,
)
from synelo.service.api import actions, pool_settings
from synelo.service.api.responses import COMMON, errors
from synelo.service.api.views import accepted, job_out, pool_out
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep
from synelo.service.params import RoundPathId

router = APIRouter(
    prefix="/v1/pools/{pool}", tags=["re-rating"], dependencies=[AdminAuth], responses=COMMON
)


def _start(request: Request, pool: Pool, kind: str, spec: dict[str, object]) -> JSONResponse:
    """Start a re-rate job of `kind` with `spec` (see `views.accepted`)."""
    state = request.app.state
    return accepted(
        pool, lambda: actions.start_job(state.rerate, state.jobs, pool, kind, spec, actor(request))
    )


@router.patch(
    "",
    status_code=202,
    response_model=JobOut,
    responses={
        200: {"model": PoolOut, "description": "autotune or public alone: set at once"},
        **errors(409),
    },
)
def patch_pool(pool: PoolDep, body: PoolPatchIn, request: Request) -> JSONResponse:
    """Change the pool's model or parameters. Every stored round is re-rated with them in
    the background; the old ratings answer until the new ones replace them at once."""
    store = request.app.state.store
    current = store.get_pool(pool.name)
    plan = pool_settings.plan_patch(request.app.state.settings, store, current, body)
    if plan.rerate is None:  # auto-tuning or visibility alone: at once, nothing to re-rate
        changed = pool_settings.apply_at_once(store, current, plan, actor(request))
        return JSONResponse(pool_out(changed).model_dump(mode="json"), status_code=200)
    started = _start(request, current, "patch", plan.rerate)  # 409 if a re-rate runs
    if started.status_code == 202:  # the visibility at once, beside the re-rate
        pool_settings.apply_at_once(store, current, plan, actor(request))
    return started


@router.post("/autotune", status_code=202, response_model=JobOut, responses=errors(409))
def autotune_now(pool: PoolDep, request: Request, body: EmptyIn | None = None) -> JSONResponse:
    """Run the pool's auto-tune now rather than when it is next due (409 if the pool has no
    auto-tuning, or a re-rate runs)."""
    current = request.app.state.store.get_pool(pool.name)
    if current.autotune is None:
        raise HTTPException(409, f"pool {pool.name!r} has no auto-tuning (PATCH its autotune)")
    return _start(request, current, "tune", {"at_rounds": current.rated})


@router.post("/refit", status_code=202, response_model=JobOut, responses=errors(409))
def refit_now(pool: PoolDep, request: Request, body: EmptyIn | None = None) -> JSONResponse:
    """Re-rate every stored round and end with the model's full-history fit (WHR's MAP,
    Hive's solve): 409 if the pool's model has none, or a re-rate runs."""
    current = request.app.state.store.get_pool(pool.name)
    if current.is_synelo or not pool_model(current).can_refit():
        raise HTTPException(409, f"pool {pool.name!r}: model {current.model!r} has no refit")
    return _start(request, current, "refit", {"at_rounds": current.rated})


@router.post(
    "/rounds/{round_id}/void", status_code=202, response_model=JobOut, responses=errors(409)
)
def void_round(
    pool: PoolDep, round_id: RoundPathId, body: VoidIn, request: Request
) -> JSONResponse:
    """Take a round out of the ratings: the pool is re-rated without it."""
    state = request.app.state
    return accepted(
        pool,
        lambda: actions.void_round(
            state.rerate, state.jobs, pool, round_id, body.reason, actor(request)
        ),
    )


@router.post(
    "/rounds/{round_id}/unvoid", status_code=202, response_model=JobOut, responses=errors(409)
)
def unvoid_round(
    pool: PoolDep, round_id: RoundPathId, request: Request, body: UnvoidIn | None = None
) -> JSONResponse:
    """Put a voided round back: the pool is re-rated with it."""
    state = request.app.state
    reason = body.reason if body is not None else None
    return accepted(
        pool,
        lambda: actions.unvoid_round(
            state.rerate, state.jobs, pool, round_id, reason, actor(request)
        ),
    )


@router.get("/jobs/{job_id}", response_model=JobOut)
def get_job(
    pool: PoolDep, job_id: Annotated[int, Path(ge=1, le=2**63 - 1)], request: Request
) -> JobOut:
    """A re-rate job's progress and outcome."""
    job = request.app.state.rerate.job(pool, job_id)
    if job is None:
        raise HTTPException(404, f"pool {pool.name!r} has no job {job_id}")
    return job_out(job)


@router.post("/jobs/{job_id}/cancel", response_model=JobOut, responses=errors(409))
def cancel_job(
    pool: PoolDep,
    job_id: Annotated[int, Path(ge=1, le=2**63 - 1)],
    request: Request,
    body: EmptyIn | None = None,
) -> JobOut:
    """Cancel a running advise job: it reads cancelled at once and the pool's job slot is
    free (a re-rate may start); the job stops at its next progress step and leaves no
    advice. 404 for no such job, 409 for a re-rate job (those run to their end) or a job
    that has ended."""
    state = request.app.state
    return job_out(actions.cancel_job(state.rerate, pool, job_id, actor(request)))


@router.get("/changes", response_model=ChangesOut)
def list_changes(pool: PoolDep, request: Request) -> ChangesOut:
    """The pool's admin log, in order: who set, reset, voided, unvoided or re-parametrised
    what, when and why."""
    return ChangesOut(
        changes=[
            ChangeOut(
                id=c.id,
                seq=c.seq,
                kind=c.kind,
                steam_id=c.player_key,
                round_id=c.round_id,
                value=c.value,
                actor=c.actor,
                reason=c.reason,
                at=c.created_at,
            )
            for c in request.app.state.store.changes(pool)
        ]
    )
