"""The balance routes: scramble splits, mid-round autobalance and predictions, on the
pool's current ratings (the work itself: `synelo.service.api.balancing`)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from synelo.schemas import (
    AutobalanceIn,
    AutobalanceOut,
    PredictIn,
    PredictOut,
    SplitsIn,
    SplitsOut,
)
from synelo.service.api import balancing
from synelo.service.api.responses import COMMON, errors
from synelo.service.deps import PoolDep, PoolReadAgainDep, ServerAuth, StoreDep

router = APIRouter(prefix="/v1/pools/{pool}", tags=["balance"], responses=COMMON)


@router.post("/splits", response_model=SplitsOut, dependencies=[ServerAuth], responses=errors(503))
async def splits(pool: PoolReadAgainDep, body: SplitsIn, request: Request) -> Response:
    """The best split for every team size from min_k to max_k (F7, exact up to N_max), or
    for an all-play pool (the model's split mode, or `mode`) the one split of every player
    with the least |logit P(A)| (W12).

    The time budget (SYNELO_BALANCE_BUDGET_MS) runs from the request's start: waiting for
    this worker's solver (one request at a time), reading the ratings and solving all count.
    The search stops at the budget with the best splits found; a request whose budget runs
    out before its turn gets 503 with Retry-After. The request is checked first, on the
    event loop (no database); it waits for its turn there too, and only the turn itself
    takes one of the thread pool's threads."""
    state = request.app.state
    answer = await balancing.find_splits(
        pool, body, state.store, state.settings, state.balance_gate
    )
    return Response(answer, media_type="application/json")


@router.post("/autobalance", response_model=AutobalanceOut, dependencies=[ServerAuth])
def autobalance(pool: PoolDep, body: AutobalanceIn, store: StoreDep) -> AutobalanceOut:
    """Moves that fix a mid-round imbalance: the odd joiner and F11, or NS2 Hive's pair swaps
    (`min_swaps`)."""
    return balancing.find_moves(pool, body, store)


@router.post("/predict", response_model=PredictOut, dependencies=[ServerAuth])
def predict(pool: PoolDep, body: PredictIn, store: StoreDep) -> PredictOut:
    """P(team A wins) if these teams started a round now, from the pool's current ratings,
    with the optional round fields the model reads (validated as in a round report)."""
    return balancing.predict_win(pool, body, store)
