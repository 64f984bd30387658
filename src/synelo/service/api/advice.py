"""Advice (admin): which general model predicts the pool's own rounds best. `POST` starts an
advise job in the background, like a re-rate (followed at `GET …/jobs/{id}`); `GET` reads the
latest advice it left. Switching is then the pool's `PATCH`, with the advice's `switch`."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from synelo.schemas import AdviceOut, EmptyIn, JobOut
from synelo.service.api import actions
from synelo.service.api.responses import COMMON, errors
from synelo.service.api.views import accepted, advice_out
from synelo.service.auth import actor
from synelo.service.deps import AdminAuth, PoolDep
from synelo.store.advice import advice_of

router = APIRouter(
    prefix="/v1/pools/{pool}", tags=["advice"], dependencies=[AdminAuth], responses=COMMON
)


@router.post("/advise", status_code=202, response_model=JobOut, responses=errors(409))
def start_advice(pool: PoolDep, request: Request, body: EmptyIn | None = None) -> JSONResponse:
    """Replay the pool's rounds through every general model and plain Elo, at their defaults
    and tuned on the older 70 %, scored on the newer 30 % (docs/evaluation.md, "Choosing a
    model"): a job in the background, which re-rates nothing. 409 below 200 rounds, or
    while a job runs on the pool."""
    state = request.app.state
    current = state.store.get_pool(pool.name)
    return accepted(
        current, lambda: actions.start_advice(state.rerate, state.jobs, current, actor(request))
    )


@router.get("/advice", response_model=AdviceOut, responses=errors(404))
def latest_advice(pool: PoolDep, request: Request) -> AdviceOut:
    """The pool's latest advice: every row, the recommendation, its margins and whether they
    are beyond the noise (404 before any advise job has ended)."""
    change = advice_of(request.app.state.store, pool)
    if change is None:
        raise HTTPException(404, f"pool {pool.name!r} has no advice yet (POST …/advise)")
    return advice_out(pool, change)
