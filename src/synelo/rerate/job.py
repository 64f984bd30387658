"""A background re-rate: recompute the pool beside the live service, then swap.

The job rates the snapshot's rounds in memory (`engine.Recompute`) and writes the new
journal generation a chunk at a time, in short transactions, so the live service keeps
rating rounds and answering lookups from the old ratings meanwhile. The swap then catches
up with the rounds and admin changes that arrived in between and puts everything in force
at once (`store.rerate.RerateStore.swap`); the old generation is deleted last.
"""

from __future__ import annotations

import logging
import threading

from synelo.rerate.engine import JournalLine, RoundLine
from synelo.store.rerate import (
    JournalChain,
    RerateStore,
    admin_event,
    recompute_for,
    target_model,
)
from synelo.store.typedefs import Job, Pool

log = logging.getLogger("synelo.rerate")
CHUNK_LINES = 50_000  # journal rows per background transaction


def run_job(rerate: RerateStore, pool: Pool, job: Job) -> Pool | None:
    """Run a started job to its end (done or failed); the pool as it stands after a swap."""
    try:
        return _run(rerate, pool, job)
    except Exception as exc:
        log.exception("re-rate job %d of pool %s failed", job.id, pool.name)
        rerate.fail(job, f"{type(exc).__name__}: {exc}")
        return None


def _run(rerate: RerateStore, pool: Pool, job: Job) -> Pool:
    snapshot = rerate.snapshot(pool.name)
    target = target_model(snapshot.pool, job.spec)
    engine = recompute_for(*target)
    voided = {r.pk for r in snapshot.rounds if r.voided}
    round_id = job.spec.get("round_id")
    if round_id is not None:
        pk = next(r.pk for r in snapshot.rounds if r.report["round_id"] == round_id)
        (voided.add if job.kind == "void" else voided.discard)(pk)
    chain = JournalChain(snapshot.pool.id, job.id, rerate.player_ids(snapshot.pool))
    outcomes: list[RoundLine] = []
    lines: list[JournalLine] = []
    admin, at, done = snapshot.admin, 0, 0
    rerate.progress(job.id, "rating", 0)
    for rnd in snapshot.rounds:
        while at < len(admin) and admin[at].seq < rnd.seq:
            if (line := engine.admin(admin_event(admin[at]))) is not None:
                lines.append(line)
            at += 1
        if rnd.pk in voided:
            continue
        outcome, rated = engine.round(rnd.event())
        outcomes.append(outcome)
        lines.extend(rated)
        done += 1
        if len(lines) >= CHUNK_LINES:
            rerate.write_lines(chain, lines)
            lines = []
            rerate.progress(job.id, "rating", done)
    for change in admin[at:]:
        if (line := engine.admin(admin_event(change))) is not None:
            lines.append(line)
    rerate.write_lines(chain, lines)
    rerate.progress(job.id, "swapping", done)
    swapped = rerate.swap(job, snapshot, engine, chain, outcomes, target, voided, done)
    rerate.clean_up(swapped)
    return swapped


class JobRunner:
    """Runs jobs on threads of their own (one per job; one job per pool at a time)."""

    def __init__(self, rerate: RerateStore) -> None:
        self.rerate = rerate
        self._threads: dict[int, threading.Thread] = {}

    def start(self, pool: Pool, job: Job) -> None:
        thread = threading.Thread(
            target=run_job, args=(self.rerate, pool, job), name=f"synelo-rerate-{job.id}"
        )
        thread.daemon = True
        self._threads[job.id] = thread
        thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for every job started (tests, shutdown)."""
        for thread in list(self._threads.values()):
            thread.join(timeout)
