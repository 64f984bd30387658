"""A pool's re-rate jobs as rows: started one at a time per pool, owned by a process and kept
alive by a heartbeat, their progress, their end (done, failed, or taken for dead), and which
pools a schedule owes an auto-tune or a refit.

The re-rate itself (its snapshot, journal generation and swap) is `store.generations`'.

**When a running job is dead.** Its row names the process that runs it (`ProcessId`:
written by the worker that starts the job, then claimed by the job's own process). A job
whose process is on this machine (the same boot and pid namespace) is alive exactly while
that process is: its pid answers, with the start time recorded (a pid used again is
another process), and it is not a zombie. So a job killed with its process is seen dead at
once (by the next re-rate's start, or the next read of the job), and a job alive, however
slow and whatever its heartbeat, is never taken for dead.
A job of another machine, or of an unknown process (a row from before 0011, or a system
without /proc), is dead after `STALE_AFTER` without a heartbeat: its heartbeat (every
`rerate.job.HEARTBEAT_S`) can wait on locks and a busy machine, and nothing shorter is
proven safe. Taking a job for dead is one conditional UPDATE: the job must still be
running, with the heartbeat and process read. On PostgreSQL a job's last write (an
auto-tune's record of its fit) may hold the row while the UPDATE waits for it; the UPDATE
then re-reads the row and must not overwrite the `done` the job wrote. (A swap cannot
race it so: both lock the pool first.)
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from synelo.domain import Job, JobRunning, Pool, UnknownRound
from synelo.store.admin_log import log_change
from synelo.store.core import Core, locked_pool
from synelo.store.rows import as_job, as_pool
from synelo.store.tables import jobs, pools, rounds

STALE_AFTER = timedelta(seconds=120)  # a job of another machine silent this long has died
_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class ProcessId:
    """A process, as a job's row names it: `machine` says where `pid` means something (the
    kernel's boot and the pid and time namespaces), `started` tells this process from a
    later one with the same pid (its start, in clock ticks since boot), `host` is for
    people."""

    host: str
    machine: str
    pid: int
    started: int

    def text(self) -> str:
        return f"{self.machine} {self.pid} {self.started} {self.host}"[:200]

    @classmethod
    def parse(cls, text: str | None) -> ProcessId | None:
        parts = (text or "").split(" ", 3)
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
            return None
        if int(parts[1]) <= 0:  # kill(0) would ask after this process's group
            return None
        return cls(parts[3], parts[0], int(parts[1]), int(parts[2]))

    def alive(self) -> bool | None:
        """Whether the process runs; None: it is not of this machine, no one here can tell."""
        if self.machine != _machine():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's: it exists
            pass
        stat = _stat(self.pid)
        if stat is None:  # hidden from us (/proc mounted hidepid): it exists
            return True
        state, started = stat
        return started == self.started and state not in ("Z", "X", "x")


def _stat(pid: int | str) -> tuple[str, int] | None:
    """A process's state and start time (proc(5): fields 3 and 22 of /proc/PID/stat)."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[19])


def _machine() -> str | None:
    """Where a pid means one process: the boot, and this process's pid and time namespaces
    (None without /proc)."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        spaces = [
            os.readlink(_PROC / "self/ns" / ns)
            for ns in ("pid", "time")
            if (_PROC / "self/ns" / ns).exists()
        ]
    except OSError:
        return None
    return ":".join([boot, *(s.split("[")[-1].rstrip("]") for s in spaces)])


def this_process() -> str | None:
    """This process as a job's row names it (`ProcessId.text`; None without /proc)."""
    machine, stat = _machine(), _stat("self")
    if machine is None or stat is None:
        return None
    return ProcessId(socket.gethostname(), machine, os.getpid(), stat[1]).text()


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
                process=this_process(),
            )
            .returning(jobs.c.id)
        ).scalar_one()
        row = conn.execute(select(jobs).where(jobs.c.id == job_id)).one()
    return pool, as_job(row, pool.name)


def read_job(core: Core, pool: Pool, job_id: int) -> Job | None:
    """The pool's job of this id (None: no such job of this pool). A running job that is
    dead (see the module) is marked failed first, as the next re-rate would: the reader
    sees its end at once, not `running` until someone starts another re-rate."""
    query = select(jobs).where(jobs.c.id == job_id, jobs.c.pool_id == pool.id)
    with core.engine.connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    now = core.clock()
    if row.status == "running" and dead_job(row.process, row.updated_at, now) is not None:
        with core.write_transaction() as conn:
            locked_pool(conn, pool.name)  # as a re-rate's start: a swap cannot race it
            still_running(conn, job_id, row.updated_at, row.process, now)
            row = conn.execute(query).one()
    return as_job(row, pool.name)


def running_job(core: Core, pool: Pool) -> int | None:
    """The id of the pool's newest job still marked running (None: none is): what a
    settings page names while a re-rate runs."""
    with core.engine.connect() as conn:
        return conn.execute(
            select(jobs.c.id)
            .where(jobs.c.pool_id == pool.id, jobs.c.status == "running")
            .order_by(jobs.c.id.desc())
            .limit(1)
        ).scalar()


def claim_job(core: Core, job_id: int) -> bool:
    """The job's own process takes it over from the worker that started it, if it still
    runs (False: it was taken for dead meanwhile, and must not run)."""
    with core.write_transaction() as conn:
        return (
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.status == "running")
                .values(process=this_process(), updated_at=core.clock())
            ).rowcount
            == 1
        )


def heartbeat(core: Core, job_id: int) -> None:
    """The job is alive (see STALE_AFTER)."""
    with core.write_transaction() as conn:
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(updated_at=core.clock()))


def progress(core: Core, job_id: int, phase: str, done: int) -> bool:
    """The job's phase and rounds rated, and its heartbeat, while it still runs; False once
    it does not (cancelled, or taken for dead): the job's cue to stop."""
    with core.write_transaction() as conn:
        return (
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.status == "running")
                .values(phase=phase, done=done, updated_at=core.clock())
            ).rowcount
            == 1
        )


CANCELLABLE = ("advise",)  # what a re-rate half swapped must not be: it only reads


def cancel_job(core: Core, pool: Pool, job_id: int, actor: str) -> tuple[Job, bool] | None:
    """Cancel the pool's running advise job: its row reads cancelled at once, which frees
    the pool's job slot, and the job, wherever it runs, stops at its next progress step
    (`progress` says so) without writing its advice. The job as it stands, and whether this
    call cancelled it (False: it is not an advise job, or it had ended); None: no such job
    of this pool. One conditional UPDATE, so a job that ends meanwhile keeps its end."""
    now = core.clock()
    query = select(jobs).where(jobs.c.id == job_id, jobs.c.pool_id == pool.id)
    with core.write_transaction() as conn:
        cancelled = conn.execute(
            update(jobs)
            .where(
                jobs.c.id == job_id,
                jobs.c.pool_id == pool.id,
                jobs.c.kind.in_(CANCELLABLE),
                jobs.c.status == "running",
            )
            .values(
                status="cancelled",
                phase="cancelled",
                error=f"cancelled by {actor}"[:2000],
                finished_at=now,
                updated_at=now,
            )
        ).rowcount
        row = conn.execute(query).first()
    return None if row is None else (as_job(row, pool.name), bool(cancelled))


def record_fit(core: Core, job: Job, value: Mapping[str, Any]) -> None:
    """An auto-tune that was not adopted: logged, and the job done (nothing swapped); not
    if the job was taken for dead meanwhile."""
    now = core.clock()
    with core.write_transaction() as conn:
        ended = conn.execute(
            update(jobs)
            .where(jobs.c.id == job.id, jobs.c.status == "running")
            .values(status="done", phase="done", finished_at=now, updated_at=now)
        ).rowcount
        if ended:
            row = conn.execute(select(pools).join(jobs).where(jobs.c.id == job.id)).one()
            log_change(conn, as_pool(row), "tune", job.actor, None, at=now, value=value)


def next_tune_at(setting: Mapping[str, Any], since: int) -> int:
    """The rounds rated at which an auto-tune is due (`rerate.autotune`'s A1), given the
    rounds its last one started at (`since`, 0: none yet): `first`, then twice the last
    start while that gap is below `every`; a setting without `first` (before auto-tuning
    was on by default), at `every`, then `every` apart."""
    every, first = int(setting["every"]), setting.get("first")
    if since <= 0:
        return int(first) if first is not None else every
    return since + (every if first is None else min(since, every))


def due_tunes(core: Core) -> list[Pool]:
    """The pools with auto-tuning whose rounds rated reach their next auto-tune
    (`next_tune_at`, from the rounds the last one started at, whatever became of it)."""
    due = []
    with core.engine.connect() as conn:
        for row in conn.execute(select(pools).where(pools.c.autotune.is_not(None))):
            pool = as_pool(row)
            since = last_started_at(conn, pool, "tune")
            if pool.autotune is not None and pool.rated >= next_tune_at(pool.autotune, since):
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
    """JobRunning if a live job re-rates the pool; a running job that is dead (see the
    module) is marked failed, unless it beat or ended meanwhile."""
    running = conn.execute(
        select(jobs.c.id, jobs.c.updated_at, jobs.c.process).where(
            jobs.c.pool_id == pool.id, jobs.c.status == "running"
        )
    ).all()
    for job_id, beat, process in running:
        if still_running(conn, job_id, beat, process, now):
            raise JobRunning(job_id)


def still_running(
    conn: Connection, job_id: int, beat: datetime, process: str | None, now: datetime
) -> bool:
    """Whether a job read running, with this heartbeat and process, still runs: if it is
    dead (see the module), it is marked failed, unless it beat or ended meanwhile."""
    error = dead_job(process, beat, now)
    if error is None:
        return True
    taken = conn.execute(
        update(jobs)
        .where(
            jobs.c.id == job_id,
            jobs.c.status == "running",
            jobs.c.updated_at == beat,
            jobs.c.process.is_(None) if process is None else jobs.c.process == process,
        )
        .values(status="failed", error=error, finished_at=now, updated_at=now)
    ).rowcount
    if taken:
        return False
    # it beat, was claimed or ended meanwhile: alive, unless it ended
    status = conn.execute(select(jobs.c.status).where(jobs.c.id == job_id)).scalar()
    return status == "running"


def dead_job(process: str | None, beat: datetime, now: datetime) -> str | None:
    """Why a running job, of this `process` (its row's) and last heartbeat, is dead; None
    while it may be alive (see the module)."""
    owner = ProcessId.parse(process)
    alive = None if owner is None else owner.alive()
    if alive:
        return None
    if alive is False and owner is not None:
        return f"abandoned: its process ({owner.pid} on {owner.host}) is gone"
    if now - beat < STALE_AFTER:
        return None
    return f"abandoned: no heartbeat for {int(STALE_AFTER.total_seconds())} s"


def last_started_at(conn: Connection, pool: Pool, kind: str) -> int:
    """The rounds rated when the pool's last job of `kind` started (0: none yet)."""
    last = conn.execute(
        select(jobs.c.spec)
        .where(jobs.c.pool_id == pool.id, jobs.c.kind == kind)
        .order_by(jobs.c.id.desc())
        .limit(1)
    ).scalar()
    return int(json.loads(last)["at_rounds"]) if last is not None else 0
