"""A pool's advice page, for admins: which general model predicts the pool's own rounds best
(`synelo advise`), the rows side by side, the recommendation with its margin and whether it
is beyond the noise, and a button that switches the pool to it.

"Advise now" starts the advise job the API's `POST /v1/pools/{pool}/advise` starts; the page
then follows it, reloading itself while it runs (a `<meta http-equiv="refresh">`: the pages
run no script), and shows the advice it left; "Cancel" stops it as the API's
`POST …/jobs/{id}/cancel` does (the settings page offers it too while the job runs).
"Switch" changes the pool's model (and the tuned parameters) as the settings form does
(`settings.change_pool`, what the PATCH calls), from the advice stored, not from what the
form says: the form names only which advice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar
from urllib.parse import quote

from fastapi import APIRouter, Form, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from synelo.domain import Job, JobRunning, Pool
from synelo.schemas import PoolPatchIn
from synelo.service.api import actions
from synelo.service.auth import actor
from synelo.service.pages.access import PoolName, Refused
from synelo.service.pages.admin import ActedOn
from synelo.service.pages.settings import REFRESH_S, admin_pool, change_pool
from synelo.service.pages.templating import problems, render
from synelo.store.advice import advice_of, stale

router = APIRouter(include_in_schema=False)
T = TypeVar("T")


def _page(pool: Pool) -> str:
    return f"/pools/{quote(pool.name, safe='')}/advice"


def _show(
    request: Request,
    pool: Pool,
    *,
    job: Job | None = None,
    error: str = "",
    status: int = 200,
) -> HTMLResponse:
    """The page: the latest advice, the job being followed, and an error if one."""
    store = request.app.state.store
    pool = store.get_pool(pool.name)  # as it stands: a switch may have changed it
    change = advice_of(store, pool)
    advice: dict[str, Any] | None = None if change is None else dict(change.value or {})
    return render(
        request,
        "advice.html",
        status=status,
        pool=pool,
        change=change,
        advice=advice,
        stale=None if advice is None else stale(pool, advice),
        job=job,
        error=error,
        refresh=REFRESH_S,
        percent=0 if job is None or not job.total else round(100 * job.done / job.total),
    )


@router.get("/pools/{pool}/advice", response_class=HTMLResponse)
async def advice_page(
    request: Request,
    pool: PoolName,
    job: Annotated[int | None, Query(ge=1, le=2**63 - 1)] = None,
) -> HTMLResponse:
    found = await admin_pool(request, pool)
    followed = None
    if job is not None:
        followed = await run_in_threadpool(request.app.state.rerate.job, found, job)
        if followed is None or followed.kind != "advise":
            raise Refused(404, f"Pool {found.name} has no advise job {job}.")
    return await run_in_threadpool(_show, request, found, job=followed)


async def _attempt(request: Request, pool: Pool, call: Callable[[], T]) -> T | HTMLResponse:
    """`call`'s result, or the page again with its refusal (what it names, its status)."""
    try:
        return await run_in_threadpool(call)
    except ValidationError as exc:
        error, status = problems(exc.errors()), 422
    except HTTPException as exc:
        error, status = str(exc.detail), exc.status_code
    except JobRunning as exc:
        error = f"A job of this pool is running (job {exc.job_id}): wait for it to end."
        status = 409
    return await run_in_threadpool(_show, request, pool, error=error, status=status)


@router.post("/pools/{pool}/advise", response_class=HTMLResponse)
async def advise_now(request: Request, pool: ActedOn) -> Response:
    """Start an advise job (`actions.start_advice`, as the API's route) and follow it."""
    state = request.app.state
    job = await _attempt(
        request,
        pool,
        lambda: actions.start_advice(state.rerate, state.jobs, pool, actor(request)),
    )
    if isinstance(job, HTMLResponse):
        return job
    return RedirectResponse(f"{_page(pool)}?job={job.id}", status_code=303)


@router.post("/pools/{pool}/jobs/{job_id}/cancel", response_class=HTMLResponse)
async def cancel(
    request: Request, pool: ActedOn, job_id: Annotated[int, Path(ge=1, le=2**63 - 1)]
) -> Response:
    """Cancel a running advise job (`actions.cancel_job`, as the API's route), then follow
    it on this page (it reads cancelled); the page again with the refusal otherwise."""
    state = request.app.state
    job = await _attempt(
        request, pool, lambda: actions.cancel_job(state.rerate, pool, job_id, actor(request))
    )
    if isinstance(job, HTMLResponse):
        return job
    return RedirectResponse(f"{_page(pool)}?job={job.id}", status_code=303)


@router.post("/pools/{pool}/advice/switch", response_class=HTMLResponse)
async def switch(request: Request, pool: ActedOn, advice: Annotated[int, Form()]) -> Response:
    """Switch the pool to the advice's recommendation (the stored advice `advice`, an entry
    of the admin log), as the settings form changes a model; refused (409) when the advice
    is out of date (the pool's model or parameters changed since: `store.advice.stale`),
    which also refuses a second click, and when it has no switch (keep the pool)."""
    state = request.app.state
    change = await run_in_threadpool(advice_of, state.store, pool, advice)
    if change is None:
        raise Refused(404, f"Pool {pool.name} has no such advice to switch to.")
    value = change.value or {}
    body = value.get("switch")
    if body is None:
        raise Refused(409, f"Advice {advice} of pool {pool.name} has no switch: keep the pool.")
    now = await run_in_threadpool(state.store.get_pool, pool.name)
    why = stale(now, value)
    if why is not None:
        return await run_in_threadpool(
            _show, request, now, error=f"This advice is out of date: {why}.", status=409
        )
    reason = f"synelo advise (job {value.get('job')}): {body['model']}"

    def switched() -> Job | Pool:
        patch = PoolPatchIn.model_validate({**body, "reason": reason})
        return change_pool(state, pool, patch, actor(request))

    changed = await _attempt(request, pool, switched)
    if isinstance(changed, HTMLResponse):
        return changed
    back = f"/pools/{quote(pool.name, safe='')}"
    if isinstance(changed, Job):
        return RedirectResponse(f"{back}/jobs/{changed.id}", status_code=303)
    return RedirectResponse(f"{back}/settings?done=settings", status_code=303)
