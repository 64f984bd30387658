"""A pool's re-rate jobs as rows: started one at a time per pool, kept alive by a heartbeat,
their progress, their end (done, failed, or taken for dead), and which pools a schedule owes
an auto-tune or a refit.

The re-rate itself (its snapshot, journal generation and swap) is `store.generations`'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from synelo.domain import Job, JobRunning, Pool, UnknownRound
from synelo.store.admin_log import log_change
from synelo.store.core import Core, locked_pool
from synelo.store.rows import as_job, as_pool
from synelo.store.tables import jobs, pools, rounds

STALE_AFTER = timedelta(seconds=120)  # a running job silent this long has died


def start_job(
    core: Core, pool_name: str, kind: str, spec: Mapping[str, Any], actor: str
) -> tuple[Pool, Job]:
    """A new running job, unless one runs on the pool (JobRunning); a void names a
    stored round not voided yet, an unvoid a voided one (UnknownRound, ValueError)."""
    now = core.clock()
    with core.write_transaction() as conn:
        pool = locked_pool(conn, pool_name)
        no_job_running(conn, pool, now)
        if kind in ("void", "unvoid"):
            voided = conn.execute(
                select(rounds.c.voided).where(
                    rounds.c.pool_id == pool.id, rounds.c.round_id == spec["round_id"]
                )
            ).scalar()
            if voided is None:
                raise UnknownRound(spec["round_id"])
            if voided == (kind == "void"):
                state = "voided" if voided else "not voided"
                raise ValueError(f"round {spec['round_id']!r} is {state} already")
        total = conn.execute(
            select(func.count())
            .select_from(rounds)
            .where(rounds.c.pool_id == pool.id, rounds.c.voided == False)  # noqa: E712
        ).scalar_one() + {"void": -1, "unvoid": 1}.get(kind, 0)
        job_id = conn.execute(
            insert(jobs)
            .values(
                pool_id=pool.id,
                kind=kind,
                spec=json.dumps(dict(spec)),
                status="running",
                phase="queued",
                total=total,
                done=0,
                actor=actor[:64],
                created_at=now,
                updated_at=now,
            )
            .returning(jobs.c.id)
        ).scalar_one()
        row = conn.execute(select(jobs).where(jobs.c.id == job_id)).one()
    return pool, as_job(row, pool.name)


def read_job(core: Core, pool: Pool, job_id: int) -> Job | None:
    """The pool's job of this id (None: no such job of this pool)."""
    with core.engine.connect() as conn:
        row = conn.execute(
            select(jobs).where(jobs.c.id == job_id, jobs.c.pool_id == pool.id)
        ).first()
    return None if row is None else as_job(row, pool.name)


def heartbeat(core: Core, job_id: int) -> None:
    """The job is alive (see STALE_AFTER)."""
    with core.write_transaction() as conn:
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(updated_at=core.clock()))


def progress(core: Core, job_id: int, phase: str, done: int) -> None:
    """The job's phase and rounds rated, and its heartbeat."""
    with core.write_transaction() as conn:
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(phase=phase, done=done, updated_at=core.clock())
        )


def record_fit(core: Core, job: Job, value: Mapping[str, Any]) -> None:
    """An auto-tune that was not adopted: logged, and the job done (nothing swapped)."""
    now = core.clock()
    with core.write_transaction() as conn:
        row = conn.execute(select(pools).join(jobs).where(jobs.c.id == job.id)).one()
        log_change(conn, as_pool(row), "tune", job.actor, None, at=core.clock(), value=value)
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job.id)
            .values(status="done", phase="done", finished_at=now, updated_at=now)
        )


def due_tunes(core: Core) -> list[Pool]:
    """The pools with auto-tuning whose rounds rated since their last auto-tune (by the
    rounds it started at, whatever became of it) reach its `every`."""
    due = []
    with core.engine.connect() as conn:
        for row in conn.execute(select(pools).where(pools.c.autotune.is_not(None))):
            pool = as_pool(row)
            since = last_started_at(conn, pool, "tune")
            if pool.autotune is not None and pool.rated - since >= pool.autotune["every"]:
                due.append(pool)
    return due


def due_refits(core: Core) -> list[Pool]:
    """The pools whose model refits every `refit_every` rounds (WHR) and whose rounds
    rated since their last scheduled or asked-for refit reach it."""
    due = []
    with core.engine.connect() as conn:
        for row in conn.execute(select(pools).where(pools.c.model != "synelo")):
            pool = as_pool(row)
            every = pool.model_params.get("refit_every")
            if (
                isinstance(every, int)
                and every > 0
                and pool.rated - last_started_at(conn, pool, "refit") >= every
            ):
                due.append(pool)
    return due


def fail_job(core: Core, job_id: int, error: str) -> None:
    """Mark the job failed, if it still runs; its journal rows are left for the next
    clean-up."""
    now = core.clock()
    with core.write_transaction() as conn:
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id, jobs.c.status == "running")
            .values(status="failed", error=error[:2000], finished_at=now, updated_at=now)
        )


def no_job_running(conn: Connection, pool: Pool, now: datetime) -> None:
    """JobRunning if a live job re-rates the pool; a running job silent for STALE_AFTER is
    marked failed (its process stopped)."""
    running = conn.execute(
        select(jobs.c.id, jobs.c.updated_at).where(
            jobs.c.pool_id == pool.id, jobs.c.status == "running"
        )
    ).all()
    for job_id, beat in running:
        if now - beat < STALE_AFTER:
            raise JobRunning(job_id)
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(
                status="failed",
                error="abandoned: its process stopped",
                finished_at=now,
                updated_at=now,
            )
        )


def last_started_at(conn: Connection, pool: Pool, kind: str) -> int:
    """The rounds rated when the pool's last job of `kind` started (0: none yet)."""
    last = conn.execute(
        select(jobs.c.spec)
        .where(jobs.c.pool_id == pool.id, jobs.c.kind == kind)
        .order_by(jobs.c.id.desc())
        .limit(1)
    ).scalar()
    return int(json.loads(last)["at_rounds"]) if last is not None else 0
