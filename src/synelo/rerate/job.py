"""A background re-rate: recompute the pool beside the live service, then swap.

The job rates the snapshot's rounds in memory (`engine.Recompute`) and writes the new
journal generation a chunk at a time, in short transactions, so the live service keeps
rating rounds and answering lookups from the old ratings meanwhile. The swap then catches
up with the rounds and admin changes that arrived in between and puts everything in force
at once (`store.generations.RerateStore.swap`); the old generation is deleted last. An auto-tune
job (kind "tune") fits first, and goes on as such a re-rate only if it adopts the fit.
`JobRunner` starts each job in a process of its own (or on a thread, for tests).
"""

from __future__ import annotations

import gc
import json
import logging
import multiprocessing
import queue
import threading
import time
from dataclasses import replace
from multiprocessing.process import BaseProcess

from synelo.domain import Job, JobEnded, Pool
from synelo.models.recompute import JournalLine, Recompute, RoundLine
from synelo.rerate.autotune import AutoTune, fit_pool
from synelo.rerate.hold import hold_point
from synelo.rerate.targets import adopted_params, recompute_for, target_model
from synelo.store.generations import JournalChain, RerateStore, Snapshot, in_order

log = logging.getLogger("synelo.rerate")
CHUNK_LINES = 50_000  # journal rows per background transaction
SQLITE_GAP_S = 0.1  # after each, the live writer's turn at SQLite's write lock
HEARTBEAT_S = 10.0  # well inside store.jobs.STALE_AFTER (what other machines go by)


def run_job(rerate: RerateStore, pool: Pool, job: Job) -> Pool | None:
    """Run a started job to its end (done, failed, or stopped when cancelled); the pool as
    it stands after a swap.
    A heartbeat thread keeps the job's row fresh meanwhile, however long a step takes (an
    auto-tune's fit, a swap), so that no one takes it for dead."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            try:
                rerate.heartbeat(job.id)
            except Exception:  # the database hiccuped: the next beat tries again
                log.warning("heartbeat of job %d failed", job.id, exc_info=True)

    heart = threading.Thread(target=beat, name=f"synelo-heartbeat-{job.id}", daemon=True)
    heart.start()
    try:
        return _run(rerate, pool, job)
    except JobEnded as exc:  # cancelled: its row says so already
        log.info("job %d of pool %s stopped: %s", job.id, pool.name, exc)
        return None
    except Exception as exc:
        log.exception("re-rate job %d of pool %s failed", job.id, pool.name)
        rerate.fail(job, f"{type(exc).__name__}: {exc}")
        return None
    finally:
        stop.set()
        heart.join()


def _tune(rerate: RerateStore, pool: Pool, job: Job) -> Job | None:
    """Fit the pool's auto-tuned parameters (`autotune.fit_pool`); the job, now a re-rate
    with the fitted parameters, if they are adopted, else None (the fit is logged)."""
    from synelo.evaluation.journal import import_journal

    if pool.autotune is None:
        raise ValueError(f"pool {pool.name!r} has no auto-tuning")
    rerate.progress(job.id, "fitting", 0)
    exported = import_journal(rerate.store, pool.name)
    setting = AutoTune.from_json(pool.autotune)
    try:
        fit = fit_pool(pool.model, exported.matches, exported.header, setting)
    except ValueError as exc:  # too few rounds to split, say: logged as a fit that failed
        rerate.record_fit(job, {"error": str(exc), "adopted": False, "job": job.id})
        return None
    hold_point(job.kind, "fitting")
    value = {**fit.to_json(), "job": job.id}
    if not fit.adopted:
        rerate.record_fit(job, value)
        return None
    params = json.loads(adopted_params(pool, fit.fitted))
    spec = {**job.spec, "model": pool.model, "params": params}
    return replace(job, spec={**spec, "fit": value})


def _run(rerate: RerateStore, pool: Pool, job: Job) -> Pool:
    if job.kind == "advise":  # reads the rounds, re-rates nothing
        # imported here: every worker and every job's process imports this module, and
        # advise's replays of every model (scipy among them) cost half a second to import
        from synelo.rerate.advice import run_advice

        return run_advice(rerate, pool, job)
    if job.kind == "tune":
        adopted = _tune(rerate, pool, job)
        if adopted is None:
            return rerate.store.get_pool(pool.name)
        job = adopted
    snapshot = rerate.snapshot(pool.name)
    target = target_model(snapshot.pool, job.spec)
    engine = recompute_for(*target, refit=job.kind == "refit")
    voided = {r.pk for r in snapshot.rounds if r.voided}
    round_id = job.spec.get("round_id")
    if round_id is not None:
        pk = next(r.pk for r in snapshot.rounds if r.report["round_id"] == round_id)
        (voided.add if job.kind == "void" else voided.discard)(pk)
    chain = JournalChain(snapshot.pool.id, job.id, rerate.player_ids(snapshot.pool))
    outcomes: list[RoundLine] = []
    rerate.progress(job.id, "rating", 0)
    writer = ChunkWriter(rerate, chain)
    try:
        done = _rate_all(rerate, job, snapshot, engine, voided, outcomes, writer)
        if engine.refitting:
            rerate.progress(job.id, "solving", done)
            writer.put(engine.refit(rerate.store.clock()))
    finally:
        writer.close()
    hold_point(job.kind, "solving" if engine.refitting else "rating")
    rerate.progress(job.id, "swapping", done)
    hold_point(job.kind, "swapping")
    swapped = rerate.swap(job, snapshot, engine, chain, outcomes, target, voided, done)
    rerate.clean_up(swapped)
    return swapped


def _rate_all(
    rerate: RerateStore,
    job: Job,
    snapshot: Snapshot,
    engine: Recompute,
    voided: set[int],
    outcomes: list[RoundLine],
    writer: ChunkWriter,
) -> int:
    """Rate the snapshot's rounds with its admin changes in order, handing the journal rows
    to `writer` a chunk at a time; the number of rounds rated."""
    lines: list[JournalLine] = []
    done = 0
    for written, rated in in_order(engine, snapshot.rounds, snapshot.admin, voided, outcomes):
        lines.extend(written)
        done += rated
        if len(lines) >= CHUNK_LINES:
            writer.put(lines)
            lines = []
            rerate.progress(job.id, "rating", done)
    writer.put(lines)
    return done


class ChunkWriter:
    """Writes journal chunks on a thread of its own, in order, while the next chunk is
    being rated: the database's work on one (PostgreSQL's COPY, its indexes and checks)
    overlaps the rating of the next instead of adding to it."""

    def __init__(self, rerate: RerateStore, chain: JournalChain) -> None:
        self.rerate, self.chain = rerate, chain
        self._queue: queue.Queue[list[JournalLine] | None] = queue.Queue(maxsize=2)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="synelo-rerate-writer")
        self._thread.start()

    def put(self, lines: list[JournalLine]) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(lines)

    def close(self) -> None:
        """Wait for every chunk put to be written; raise the writer's error if it failed."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        # SQLite has one write lock, and a writer waiting for it polls (up to every 100 ms):
        # back-to-back chunks would starve the live round writer, so each chunk leaves it
        # a gap.
        gap = SQLITE_GAP_S if self.rerate.store.engine.dialect.name == "sqlite" else 0.0
        while (lines := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self.rerate.write_lines(self.chain, lines)
                except BaseException as exc:  # handed to the rating thread
                    self._error = exc
                time.sleep(gap)


def _run_in_child(url: str, pool_name: str, job_id: int) -> None:
    """A job in a process of its own: its own engine and store on the same database. The
    process lives for this one job, and the few cycles it makes die with it:
    the collector is off (its full passes over the millions of objects alive cost a sixth
    of the rating's time)."""
    from synelo.store.engine import create_store_engine
    from synelo.store.repository import Store

    gc.disable()

    engine = create_store_engine(url, pool_size=2)
    rerate = RerateStore(Store(engine))
    try:
        pool = rerate.store.get_pool(pool_name)
        job = rerate.job(pool, job_id)
        # this process owns the job from now on (store.jobs); unless it was taken for dead
        if job is not None and rerate.claim(job_id):
            run_job(rerate, pool, job)
    except Exception as exc:  # before the job could run: say so rather than go silent
        log.exception("re-rate job %d of pool %s could not start", job_id, pool_name)
        rerate.fail_id(job_id, f"{type(exc).__name__}: {exc}")
    finally:
        engine.dispose()


class JobRunner:
    """Runs each job in a process of its own (`separate_process`, the default), so that
    the job's CPU and its garbage collections of millions of objects never pause the
    worker that serves lookups and rounds; or on a thread (tests that hold a job)."""

    def __init__(self, rerate: RerateStore, separate_process: bool = True) -> None:
        self.rerate = rerate
        self.separate_process = separate_process
        self._running: list[threading.Thread | BaseProcess] = []

    def start(self, pool: Pool, job: Job) -> None:
        runner: threading.Thread | BaseProcess
        if self.separate_process:
            url = self.rerate.store.engine.url.render_as_string(hide_password=False)
            runner = multiprocessing.get_context("spawn").Process(
                target=_run_in_child,
                args=(url, pool.name, job.id),
                name=f"synelo-rerate-{job.id}",
                daemon=True,
            )
        else:
            runner = threading.Thread(
                target=run_job,
                args=(self.rerate, pool, job),
                name=f"synelo-rerate-{job.id}",
                daemon=True,
            )
        self._running = [r for r in self._running if r.is_alive()]
        self._running.append(runner)
        runner.start()
        if isinstance(runner, BaseProcess):
            threading.Thread(
                target=self._watch,
                args=(runner, job.id),
                name=f"synelo-watch-{job.id}",
                daemon=True,
            ).start()

    def _watch(self, process: BaseProcess, job_id: int) -> None:
        """Once the job's process has ended, the job has too: failed, if it still reads
        running (killed before it claimed its row, which still names this worker, alive)."""
        process.join()
        try:
            self.rerate.fail_id(
                job_id, f"abandoned: its process ended (exit code {process.exitcode})"
            )
        except Exception:  # the database is away: a row the process had claimed is seen
            # dead by the next check; one it had not, which names this worker, once it stops
            log.warning("could not mark job %d failed", job_id, exc_info=True)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for every job started (tests, shutdown)."""
        for runner in list(self._running):
            runner.join(timeout)
