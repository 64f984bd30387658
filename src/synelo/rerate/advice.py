"""An advise job: `synelo advise` on a pool's own rounds, in the background with its
progress, like a re-rate (`rerate.job` runs it). It reads the pool's journal export and
writes nothing but its progress and, at the end, the advice into the pool's admin log
(`store.advice`); it re-rates nothing. So it, alone of the jobs, can be cancelled: an admin
marks its row cancelled (`store.jobs.cancel_job`), and the job, in whichever process runs
it, sees that at its next progress write and stops (`JobEnded`)."""

from __future__ import annotations

import time

from synelo.domain import Job, JobEnded, Pool
from synelo.evaluation.advise import advise
from synelo.evaluation.journal import import_journal
from synelo.store.advice import record_advice, setup_of
from synelo.store.generations import RerateStore

PHASE = "advising"
EVERY_S = 1.0  # the job's row is written at most this often with its progress


def run_advice(rerate: RerateStore, pool: Pool, job: Job) -> Pool:
    """Advise on the pool's rounds (`evaluation.advise.advise`), the job's `done` out of
    its `total` following the fraction of the work done; the pool as it stands. JobEnded
    at the first progress write that finds the job no longer running (cancelled)."""
    _still_running(rerate, job, 0)
    exported = import_journal(rerate.store, pool.name)
    _still_running(rerate, job, 0)
    last = time.monotonic()

    def progress(fraction: float) -> None:
        nonlocal last
        if time.monotonic() - last >= EVERY_S:
            last = time.monotonic()
            _still_running(rerate, job, int(fraction * job.total))

    setup = setup_of(pool)
    advice = advise(
        exported.matches, exported.header, progress=progress, autotuned=bool(pool.autotune)
    )
    _still_running(rerate, job, job.total)  # a cancel since the last write: no advice
    record_advice(rerate.store, job, {**advice.to_json(), "job": job.id, "pool": setup})
    return rerate.store.get_pool(pool.name)


def _still_running(rerate: RerateStore, job: Job, done: int) -> None:
    """Write the job's progress; JobEnded if its row no longer reads running."""
    if not rerate.progress(job.id, PHASE, done):
        raise JobEnded(f"job {job.id} no longer runs (cancelled, or taken for dead)")
