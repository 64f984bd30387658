"""Re-rating (admin): change a pool's model or parameters, void or unvoid a round, follow
the background job that recomputes the pool from its stored rounds, and read the admin log."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import JSONResponse

from synelo.schemas import ChangeOut, ChangesOut, JobOut, PoolPatchIn, UnvoidIn, VoidIn
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep
from synelo.service.routers.pools import model_settings
from synelo.store.repository import _encode_params
from synelo.store.rerate import RerateStore
from synelo.store.typedefs import Job, JobRunning, Pool, UnknownRound

router = APIRouter(prefix="/v1/pools/{pool}", tags=["re-rating"], dependencies=[AdminAuth])
RoundPathId = Annotated[str, Path(min_length=1, max_length=128)]


def job_out(job: Job) -> JobOut:
    return JobOut(
        id=job.id,
        pool=job.pool,
        kind=job.kind,  # type: ignore[arg-type]
        status=job.status,
        phase=job.phase,
        total=job.total,
        done=job.done,
        error=job.error,
        actor=job.actor,
        reason=job.spec.get("reason"),
        spec=job.spec,
        created_at=job.created_at,
        updated_at=job.updated_at,
        finished_at=job.finished_at,
    )


def _start(request: Request, pool: Pool, kind: str, spec: dict[str, object]) -> JSONResponse:
    """Start a re-rate job: 202 with the job and where to follow it, 409 with the running
    job's id if one runs on the pool."""
    rerate: RerateStore = request.app.state.rerate
    try:
        fresh, job = rerate.start(pool.name, kind, spec, actor(request))
    except JobRunning as exc:
        return JSONResponse(
            {"detail": f"a re-rate of pool {pool.name!r} is running", "job_id": exc.job_id},
            status_code=409,
            headers={"Location": f"/v1/pools/{pool.name}/jobs/{exc.job_id}"},
        )
    except UnknownRound as exc:
        raise HTTPException(404, f"pool {pool.name!r} has no round {exc.args[0]!r}") from None
    except ValueError as exc:
        raise HTTPException(409, str(exc)) from None
    request.app.state.jobs.start(fresh, job)
    return JSONResponse(
        job_out(job).model_dump(mode="json"),
        status_code=202,
        headers={"Location": f"/v1/pools/{pool.name}/jobs/{job.id}"},
    )


@router.patch("", status_code=202, response_model=JobOut, responses={409: {}})
def patch_pool(pool: PoolDep, body: PoolPatchIn, request: Request) -> JSONResponse:
    """Change the pool's model or parameters. Every stored round is re-rated with them in
    the background; the old ratings answer until the new ones replace them at once."""
    current = request.app.state.store.get_pool(pool.name)
    model = body.model if body.model is not None else current.model
    params, model_params = model_settings(
        request.app.state.settings,
        current.team_size,
        model,
        body.theta,
        body.params or {},
        base=current,
    )
    spec: dict[str, object] = {
        "model": model,
        "params": _encode_params(model, params, model_params),
    }
    if body.reason is not None:
        spec["reason"] = body.reason
    return _start(request, current, "patch", spec)


@router.post("/rounds/{round_id}/void", status_code=202, response_model=JobOut, responses={409: {}})
def void_round(
    pool: PoolDep, round_id: RoundPathId, body: VoidIn, request: Request
) -> JSONResponse:
    """Take a round out of the ratings: the pool is re-rated without it."""
    return _start(request, pool, "void", {"round_id": round_id, "reason": body.reason})


@router.post(
    "/rounds/{round_id}/unvoid", status_code=202, response_model=JobOut, responses={409: {}}
)
def unvoid_round(
    pool: PoolDep, round_id: RoundPathId, request: Request, body: UnvoidIn | None = None
) -> JSONResponse:
    """Put a voided round back: the pool is re-rated with it."""
    spec: dict[str, object] = {"round_id": round_id}
    if body is not None and body.reason is not None:
        spec["reason"] = body.reason
    return _start(request, pool, "unvoid", spec)


@router.get("/jobs/{job_id}", response_model=JobOut)
def get_job(pool: PoolDep, job_id: Annotated[int, Path(ge=1)], request: Request) -> JobOut:
    """A re-rate job's progress and outcome."""
    job = request.app.state.rerate.job(pool, job_id)
    if job is None:
        raise HTTPException(404, f"pool {pool.name!r} has no job {job_id}")
    return job_out(job)


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
