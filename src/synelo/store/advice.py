"""A pool's advice (`synelo advise` run as a job): kept in its admin log as an entry of kind
"advise" whose value is the advice, so that the latest stays readable after its job ended
and the log says who asked for it and when."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select, update

from synelo.domain import Change, Job, Pool
from synelo.store.admin_log import log_change, read_changes
from synelo.store.core import Core
from synelo.store.rows import as_pool
from synelo.store.tables import jobs, pools

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
    there is none."""
    entries = read_changes(core, pool, [KIND])
    if change_id is not None:
        entries = [c for c in entries if c.id == change_id]
    return entries[-1] if entries else None
