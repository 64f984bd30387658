"""The auto-tune and refit schedule: each worker looks, every so often, for the pools due an
auto-tune or a full-history refit (WHR's `refit_every`) and starts their jobs (the
one-job-per-pool rule keeps several workers from doubling one)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection

from synelo.domain import JobRunning
from synelo.rerate.job import JobRunner

log = logging.getLogger("synelo.autotune")


class AutoTuneSchedule:
    """Checks every `every_s` seconds (0: never) on a thread of its own."""

    def __init__(self, runner: JobRunner, every_s: float) -> None:
        self.runner, self.every_s = runner, every_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.every_s > 0:
            self._thread = threading.Thread(target=self._loop, name="synelo-autotune", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.check()
            except Exception:  # a database hiccup: try again next time
                log.exception("looking for pools due an auto-tune failed")

    def check(self, only: Collection[str] | None = None) -> list[int]:
        """Start the auto-tunes and refits that are due (of the pools named in `only`, if
        given: a test's own, among the other tests' pools); the ids of the jobs started."""
        rerate, started = self.runner.rerate, []
        due = [(pool, "tune") for pool in rerate.due_tunes()]
        due += [(pool, "refit") for pool in rerate.due_refits()]
        if only is not None:
            due = [(pool, kind) for pool, kind in due if pool.name in only]
        for pool, kind in due:
            try:
                actor = "autotune" if kind == "tune" else "schedule"
                fresh, job = rerate.start(pool.name, kind, {"at_rounds": pool.rated}, actor)
            except JobRunning:
                continue
            self.runner.start(fresh, job)
            started.append(job.id)
        return started
