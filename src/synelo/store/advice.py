"""A pool's advice (`synelo advise` run as a job): kept in its admin log as an entry of kind
"advise" whose value is the advice, so that the latest stays readable after its job ended
and the log says who asked for it and when."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select, update

from synelo.domain import Change, Job, Pool, encode_params
from synelo.ratings.params import SynEloParams
from synelo.store.admin_log import log_change
from synelo.store.core import Core
from synelo.store.rows import as_change, as_pool
from synelo.store.tables import changes, jobs, pools

KIND = "advise"


def record_advice(core: Core, job: Job, value: Mapping[str, Any]) -> bool:
    """The job's advice: logged, and the job done; not if it was taken for dead meanwhile
    (False)."""
    now = core.clock()
    with core.write_transaction() as conn:
        ended = conn.execute(
            update(jobs)
            .where(jobs.c.id == job.id, jobs.c.status == "running")
            .values(status="done", phase="done", done=job.total, finished_at=now, updated_at=now)
        ).rowcount
        if ended:
            row = conn.execute(select(pools).join(jobs).where(jobs.c.id == job.id)).one()
            log_change(conn, as_pool(row), KIND, job.actor, None, at=now, value=value)
    return bool(ended)


def advice_of(core: Core, pool: Pool, change_id: int | None = None) -> Change | None:
    """The pool's latest advice (or the one of the admin log's entry `change_id`); None if
    there is none. One entry is read, not the whole log's advice."""
    stmt = select(changes).where(changes.c.pool_id == pool.id, changes.c.kind == KIND)
    if change_id is not None:
        stmt = stmt.where(changes.c.id == change_id)
    stmt = stmt.order_by(changes.c.seq.desc(), changes.c.id.desc()).limit(1)
    with core.read() as conn:
        row = conn.execute(stmt).first()
    return None if row is None else as_change(row)


def setup_of(pool: Pool) -> dict[str, Any]:
    """What an advice was made for: the pool's model, its parameters as stored, and its
    generation (its re-rates so far)."""
    params = json.loads(encode_params(pool.model, pool.params, pool.model_params))
    return {"model": pool.model, "params": params, "generation": pool.generation}


def stale(pool: Pool, value: Mapping[str, Any]) -> str | None:
    """Why the advice `value` no longer fits the pool (None: it does): the pool's model or
    parameters changed since it was made (a switch, a PATCH, an auto-tune), so its switch
    and its row of the pool's own setup are out of date."""
    made = value.get("pool")
    if not isinstance(made, Mapping):
        return "it does not say which setup of the pool it was made for: advise again"
    now = setup_of(pool)
    if made.get("model") != now["model"] or _as_loaded(made) != now["params"]:
        return (
            f"the pool's model or parameters changed since it was made (then {made.get('model')}, "
            f"now {now['model']}): advise again"
        )
    return None


def _as_loaded(made: Mapping[str, Any]) -> Any:
    """The parameters an advice names, as the pool would load them: a SynElo parameter added
    since (F1t's temperature) takes its default, as the stored pool's did, rather than
    reading as a change."""
    params = made.get("params")
    if made.get("model") != "synelo" or not isinstance(params, Mapping):
        return params
    try:
        loaded = SynEloParams.from_dict(dict(params))
    except (TypeError, ValueError):
        return params
    return json.loads(encode_params("synelo", loaded, {}))
