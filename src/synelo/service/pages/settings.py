"""A pool's settings form, for admins: every setting a pool's PATCH takes (public or private,
the model, Θ and the model's parameters, the auto-tuning) and a reason, and the page that
follows the re-rate a change starts; and the form that starts a new season, as
`POST /v1/pools/{pool}/season` does.

The form shows the pool's settings as they are and sends them all back; what differs from
them becomes the PATCH's body, checked and planned by the functions the API's PATCH calls
(`synelo.service.api.pool_settings.plan_patch` and `apply_at_once`), so a page and the API
refuse and log alike. A
refusal shows the form again with what was sent and the error, naming the field; nothing is
changed. The form carries the session's form token (CSRF), as every admin form does. A
change that re-rates the pool leads to its job's page, which reloads itself (a
`<meta http-equiv="refresh">`: the pages run no script) until the job is done.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from synelo.domain import Change, Job, JobRunning, Pool, UnknownPool, pool_model
from synelo.models import MODELS, pool_models
from synelo.rerate.autotune import new_pool_setting
from synelo.schemas import PoolPatchIn, SeasonIn
from synelo.service.api import actions, pool_settings
from synelo.service.api.views import change_steps, pool_out
from synelo.service.auth import actor
from synelo.service.pages.access import PoolName, Refused, admin_session
from synelo.service.pages.admin import ActedOn
from synelo.service.pages.templating import problems, render
from synelo.store.advice import advice_of, stale
from synelo.store.jobs import CANCELLABLE

router = APIRouter(include_in_schema=False)
PARAM = "params."  # a model parameter's field in the form: params.k_min, params.sigma…
AUTOTUNE = (
    "every",
    "fit",
    "holdout",
    "margin",
    "first",
    "noise",
)  # the auto-tuning's fields: autotune.every…
REFRESH_S = 2  # a running job's page reloads this often


def running_text(job: Job | None) -> str:
    """What runs on a pool, for a notice or a refusal: an advise job (which re-rates
    nothing), else a re-rate."""
    if job is not None and job.kind == "advise":
        return f"An advise job of this pool is running (job {job.id})"
    return "A re-rate of this pool is running" + ("" if job is None else f" (job {job.id})")


def cancellable(job: Job | None) -> bool:
    """Whether the job is one an admin may cancel: a running advise job (`store.jobs`)."""
    return job is not None and job.kind in CANCELLABLE and job.status == "running"


def current_params(pool: Pool) -> dict[str, Any]:
    """The pool's model parameters as the form shows them: SynElo's without Θ (a field
    of its own), another model's with the shadow and stale rules every model shares."""
    if pool.is_synelo:
        return {k: v for k, v in pool.params.to_dict().items() if k != "theta"}
    return dict(pool_out(pool).params)


def shown(value: object) -> object:
    """A setting as the form writes it: a whole float without its ".0", any other number
    exactly (its repr), so that the form sent back unchanged changes nothing."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _read(text: str, like: object) -> object:
    """A form's text as the setting it stands for (`like` its current value): the text
    for a text setting, else the number it spells, else the text itself (which the
    PATCH's checks refuse, naming the field)."""
    if isinstance(like, str):
        return text
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def _same(given: object, current: object) -> bool:
    if isinstance(given, int | float) and isinstance(current, int | float):
        return float(given) == float(current)
    return given == current


def patch_body(form: Mapping[str, str], pool: Pool) -> dict[str, Any]:
    """The PATCH body of a posted settings form: each setting that differs from the pool's
    own, and the reason. A parameter left as it was is not sent, so a new model takes its
    own default for it (as a PATCH that names only the model)."""
    body: dict[str, Any] = {}
    public = form.get("public")
    if public in ("true", "false") and (public == "true") != pool.public:
        body["public"] = public == "true"
    model = form.get("model", pool.model)
    if model != pool.model:
        body["model"] = model
    if "theta" in form and pool.is_synelo:
        theta = _read(form["theta"], pool.params.theta)
        if not _same(theta, pool.params.theta):
            body["theta"] = theta
    if params := _changed_params(form, pool):
        body["params"] = params
    autotune = _autotune(form)
    if not _same_autotune(autotune, pool.autotune):
        body["autotune"] = autotune
    if reason := form.get("reason", "").strip():
        body["reason"] = reason
    return body


def _changed_params(form: Mapping[str, str], pool: Pool) -> dict[str, Any]:
    """The model parameters of the form (`params.NAME`) that differ from the pool's."""
    current = current_params(pool)
    changed = {}
    for field, text in form.items():
        if field.startswith(PARAM):
            name = field[len(PARAM) :]
            value = _read(text, current.get(name, 0))
            if name not in current or not _same(value, current[name]):
                changed[name] = value
    return changed


def _autotune(form: Mapping[str, str]) -> dict[str, Any] | None:
    """The auto-tuning the form asks for (None: off)."""
    if form.get("autotune") != "on":
        return None
    return {
        "every": _read(form.get("autotune.every", ""), 0),
        "fit": [f.strip() for f in form.get("autotune.fit", "").split(",") if f.strip()],
        "holdout": _read(form.get("autotune.holdout", ""), 0.0),
        "margin": _read(form.get("autotune.margin", ""), 0.0),
        # blank: the first fit at `every` rounds
        "first": _read(first, 0) if (first := form.get("autotune.first", "").strip()) else None,
        "noise": _read(form.get("autotune.noise", ""), 0.0),
    }


def _same_autotune(given: dict[str, Any] | None, current: Mapping[str, Any] | None) -> bool:
    if given is None or current is None:
        return given is None and current is None
    stored = {"first": None, "noise": 0.0, **current}  # a setting from before they were
    return all(
        _same(given[k], stored.get(k)) if k != "fit" else list(given[k]) == list(stored[k])
        for k in AUTOTUNE
    )


def autotune_shown(pool: Pool) -> dict[str, Any]:
    """The auto-tuning the form shows: the pool's own (a setting stored before `first` and
    `noise` existed, as it works: without them), or when it is off, what a new pool of
    its model and parameters would have (`pool_settings.default_setting`; a model without
    a scale: those defaults with nothing to fit), so that ticking the box turns on a new
    pool's setting."""
    if pool.autotune:
        return {"first": None, "noise": 0.0, **pool.autotune}
    default = pool_settings.default_setting(pool.model)
    return new_pool_setting(()).to_json() if default is None else default


def _form(
    request: Request,
    pool: Pool,
    *,
    status: int = 200,
    error: str = "",
    sent: Mapping[str, str] | None = None,
    running: int | None = None,
    running_note: str = "A re-rate of this pool is running",
    cancellable: bool = False,
    season: Mapping[str, str] | None = None,
    advice: Change | None = None,
) -> HTMLResponse:
    """The settings form: the pool's settings, or what was `sent` with the `error` it
    met; `running`, the id of a re-rate that runs on the pool (`cancellable`: an advise
    job, which a button cancels); `season`, what the season's
    form sent when it met the error; `advice`, the pool's latest (`store.advice`)."""
    model = MODELS[pool.model]
    params = [
        {
            "name": name,
            "value": shown(value),
            "doc": model.parameters[name].doc if name in model.parameters else "",
            "choices": model.parameters[name].choices if name in model.parameters else (),
        }
        for name, value in current_params(pool).items()
    ]
    autotune = dict(pool.autotune) if pool.autotune else {}
    return render(
        request,
        "settings.html",
        status=status,
        pool=pool,
        models=[(name, MODELS[name].summary) for name in pool_models()],
        params=params,
        autotune=autotune,
        autotune_shown=autotune_shown(pool),
        theta=shown(pool.params.theta) if pool.is_synelo else None,
        season_default=shown(pool_model(pool).season_fraction()),
        season=season or {},
        sent=sent,
        error=error,
        running=running,
        running_note=running_note,
        cancellable=cancellable,
        advice_stale=None if advice is None else stale(pool, advice.value or {}),
        advice=advice,
    )


async def admin_pool(request: Request, name: str) -> Pool:
    """The pool of an admin's page: 401 without a login, 404 for no such pool."""
    if await admin_session(request) is None:
        raise Refused(401, "A pool's settings are for admins: log in first.")
    try:
        found: Pool = await run_in_threadpool(request.app.state.store.get_pool, name)
    except UnknownPool:
        raise Refused(404, f"There is no pool named {name}.") from None
    return found


@router.get("/pools/{pool}/settings", response_class=HTMLResponse)
async def settings_form(request: Request, pool: PoolName) -> HTMLResponse:
    found = await admin_pool(request, pool)
    state = request.app.state
    running = await run_in_threadpool(state.rerate.running_job, found)
    job = None if running is None else await run_in_threadpool(_running_job, state, found, running)
    advice = await run_in_threadpool(advice_of, state.store, found)
    note = running_text(job).rsplit(" (job", 1)[0]
    return _form(
        request,
        found,
        running=running,
        running_note=note,
        cancellable=cancellable(job),
        advice=advice,
    )


def _running_job(state: Any, pool: Pool, job_id: int) -> Job | None:
    job: Job | None = state.rerate.job(pool, job_id)
    return job


def change_pool(state: Any, pool: Pool, body: PoolPatchIn, who: str) -> Job | Pool:
    """Change the pool as `PATCH /v1/pools/{pool}` does: `plan_patch`'s checks (a 422
    naming the field), then the re-rate job it needs (JobRunning if one runs: nothing set)
    with the visibility set beside it, or the auto-tuning and visibility set at once."""
    current = state.store.get_pool(pool.name)
    plan = pool_settings.plan_patch(state.settings, state.store, current, body)
    if plan.rerate is None:
        return pool_settings.apply_at_once(state.store, current, plan, who)
    job = actions.start_job(state.rerate, state.jobs, current, "patch", plan.rerate, who)
    pool_settings.apply_at_once(state.store, current, plan, who)
    return job


@router.post("/pools/{pool}/settings", response_class=HTMLResponse)
async def change_settings(request: Request, pool: ActedOn) -> Response:
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    back = f"/pools/{quote(pool.name, safe='')}"
    try:
        body = PoolPatchIn.model_validate(patch_body(form, pool))
        changed = await run_in_threadpool(
            change_pool, request.app.state, pool, body, actor(request)
        )
    except (ValidationError, RequestValidationError) as exc:
        return _form(request, pool, status=422, error=problems(exc.errors()), sent=form)
    except HTTPException as exc:
        return _form(request, pool, status=exc.status_code, error=str(exc.detail), sent=form)
    except JobRunning as exc:
        job = await run_in_threadpool(_running_job, request.app.state, pool, exc.job_id)
        error = f"{running_text(job)}: wait for it to end, then try again."
        note = running_text(job).rsplit(" (job", 1)[0]
        return _form(
            request,
            pool,
            status=409,
            error=error,
            sent=form,
            running=exc.job_id,
            running_note=note,
            cancellable=cancellable(job),
        )
    if isinstance(changed, Job):
        return RedirectResponse(f"{back}/jobs/{changed.id}", status_code=303)
    return RedirectResponse(f"{back}/settings?done=settings", status_code=303)


@router.post("/pools/{pool}/season", response_class=HTMLResponse)
async def start_season(request: Request, pool: ActedOn) -> Response:
    """Start a new season (`actions.start_season`, as the API's route): back to the
    settings with a notice, or the form again with the error, naming the field, and
    nothing changed."""
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    fraction = form.get("fraction", "").strip()
    body = {
        "fraction": _read(fraction, 0.0) if fraction else None,
        "reason": form.get("season_reason", "").strip() or None,
    }
    state = request.app.state
    try:
        change = SeasonIn.model_validate(body)
        await run_in_threadpool(actions.start_season, state.store, pool, change, actor(request))
    except ValidationError as exc:
        return _form(request, pool, status=422, error=problems(exc.errors()), season=form)
    except HTTPException as exc:
        raise Refused(exc.status_code, str(exc.detail)) from None
    back = f"/pools/{quote(pool.name, safe='')}/settings"
    return RedirectResponse(f"{back}?done=season#season", status_code=303)


@router.get("/pools/{pool}/jobs/{job_id}", response_class=HTMLResponse)
async def job_page(
    request: Request, pool: PoolName, job_id: Annotated[int, Path(ge=1, le=2**63 - 1)]
) -> Response:
    """A re-rate's progress, reloading itself while it runs (as `GET …/jobs/{id}`); an
    advise job's is the advice page, which follows it."""
    found = await admin_pool(request, pool)
    job = await run_in_threadpool(request.app.state.rerate.job, found, job_id)
    if job is None:
        raise Refused(404, f"Pool {found.name} has no job {job_id}.")
    if job.kind == "advise":  # it re-rates nothing: its page is the advice's
        where = f"/pools/{quote(found.name, safe='')}/advice?job={job.id}"
        return RedirectResponse(where, status_code=303)
    page = render(request, "job.html", pool=found, job=job, what=job_what(job), refresh=REFRESH_S)
    return page


def job_what(job: Job) -> str:
    """What a job does, in a line: its kind and, for a change, each setting it changes
    (`patch: Θ 1200 → 900, k_max 72 → 60`), and the visibility set at once beside it."""
    spec = job.spec
    if spec.get("changed"):
        what = f"{job.kind}: {change_steps(spec['changed'])}"
    elif spec.get("model"):
        what = f"{job.kind}: model {spec['model']}"  # nothing differs, or a job of before
    else:
        what = job.kind
    if spec.get("round_id"):
        what += f" round {spec['round_id']}"
    if spec.get("public") is not None:
        what += f"; made {'public' if spec['public'] else 'private'} at once"
    return what
