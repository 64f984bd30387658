"""The round writer: one thread rates every round of this process, with group commit.

Rounds are rated strictly one after another anyway (a pool's rounds serialise on its lock),
so one writer loses no parallelism. What it gains: the rounds that arrive while a
transaction is being written are rated, in arrival order, in the next transaction, which
then costs one BEGIN and one COMMIT for all of them. Each round still sees the ones before
it exactly as if each had its own transaction. The FastAPI route awaits its round's future,
so a request costs no thread-pool hop either.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future

from sqlalchemy import Connection

from synelo.domain import RoundConflict, RoundReport, SubmitResult, UnknownPool
from synelo.store.repository import Store

log = logging.getLogger("synelo.writer")

_EXPECTED = (RoundConflict, UnknownPool)  # raised before a round writes anything
_Job = tuple[str, RoundReport, Future[SubmitResult]]  # pool name, round, its answer
_STOP = None  # queued by `close`


class QueueFull(RuntimeError):
    """`max_queued` rounds wait already: the caller should send this one again later."""


class RoundWriter:
    """Rates submitted rounds on a thread of its own, up to `max_batch` per transaction.

    At most `max_queued` rounds wait for it: past that, `submit` refuses (QueueFull) rather
    than letting a flood grow the queue, and with it every round's wait, without bound.

    `pause_s`: seconds it waits after each transaction (a bulk import's, on SQLite). SQLite
    has no queue for its write lock: another process's writer polls for it, every 100 ms
    at the most, and a writer that begins its next transaction as soon as it commits would
    keep it out until its work is done."""

    def __init__(
        self, store: Store, max_batch: int = 32, max_queued: int = 1000, pause_s: float = 0.0
    ) -> None:
        self.store = store
        self.max_batch = max_batch
        self.pause_s = pause_s
        self._conn: Connection | None = None  # the writer thread's own; None: open on use
        self._max_queued = max_queued
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="synelo-round-writer", daemon=True)
        self._thread.start()

    def submit(self, pool_name: str, report: RoundReport) -> Future[SubmitResult]:
        """Queue a round for rating; QueueFull if `max_queued` wait already."""
        if self._queue.qsize() >= self._max_queued:
            raise QueueFull
        future: Future[SubmitResult] = Future()
        self._queue.put((pool_name, report, future))
        return future

    def close(self) -> None:
        """Finish what was submitted, then stop the thread."""
        self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = _STOP in batch
            # A request cancelled before its round is rated gets no rating (its game server
            # retries); the rest are marked running, so they can no longer be cancelled.
            work = [
                item
                for item in batch
                if item is not None and item[2].set_running_or_notify_cancel()
            ]
            # One pool per transaction: a transaction that locked two pools could deadlock
            # with another worker locking them the other way round (PostgreSQL).
            by_pool: dict[str, list[_Job]] = {}
            for item in work:
                by_pool.setdefault(item[0], []).append(item)
            for items in by_pool.values():
                self._rate_batch(items)
                if self.pause_s > 0:
                    time.sleep(self.pause_s)
            if stop:
                self._drop_connection()
                return

    def _rate_batch(self, batch: list[_Job]) -> None:
        """Rate one pool's rounds, in arrival order, in one transaction."""
        outcomes: list[SubmitResult | BaseException] = []
        try:
            if self._conn is None:
                self._conn = self.store.write_connection(check_references=False)
            with self.store.write_transaction(self._conn) as conn:
                for pool_name, report, _ in batch:
                    try:
                        outcomes.append(self.store.submit_in(conn, pool_name, report))
                    except _EXPECTED as exc:
                        outcomes.append(exc)
        except Exception:
            # Something failed half-way and the transaction rolled back: rate each round
            # in a transaction of its own, so that only the faulty one fails.
            log.exception("a batch of %d rounds failed; retrying them one by one", len(batch))
            self._drop_connection()  # it may be what failed (a lost PostgreSQL connection)
            for pool_name, report, future in batch:
                try:
                    result = self.store.submit_round(pool_name, report)
                except Exception as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            return
        for (_, _, future), outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self.store.discard(self._conn)
            except Exception:  # already broken: closing it is all that was left to do
                log.debug("closing the writer's connection failed", exc_info=True)
            self._conn = None

    def queued(self) -> int:
        """Rounds submitted and not yet taken by the writer thread (for the metrics)."""
        return self._queue.qsize()
