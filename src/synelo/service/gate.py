"""One heavy balance computation at a time in a worker, each within its request's budget.

The split solver is CPU-bound Python: threads of one process share the interpreter, so
twenty at once finish no sooner than one after another, and each slows every other route
(a probe drove /healthz's p99 to 1.3 s). Callers therefore take turns; one whose budget runs
out while it waits gets a 503 with Retry-After instead of an answer past its budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Busy(RuntimeError):
    """The budget ran out before this request's turn came."""


class BalanceGate:
    """At most `slots` balance computations at once in this process."""

    def __init__(self, slots: int = 1) -> None:
        self._slots = threading.BoundedSemaphore(slots)

    @contextmanager
    def turn(self, deadline: float) -> Iterator[float]:
        """Wait for a slot until `deadline` (time.perf_counter), then hold it; yields the
        seconds of budget left. Busy when the deadline passes first."""
        if not self._slots.acquire(timeout=max(0.0, deadline - time.perf_counter())):
            raise Busy
        try:
            yield max(0.0, deadline - time.perf_counter())
        finally:
            self._slots.release()
