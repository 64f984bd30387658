"""One heavy balance computation at a time in a worker, each within its request's budget.

The split solver is CPU-bound Python: threads of one process share the interpreter, so
twenty at once finish no sooner than one after another, and each slows every other route
(a probe drove /healthz's p99 to 1.3 s). Callers therefore take turns; one whose budget runs
out while it waits gets a 503 with Retry-After instead of an answer past its budget.

The wait is on the event loop, not in a thread: a caller waiting for its turn holds none of
the thread pool's threads (40), which every synchronous route (a lookup, /healthz) needs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Busy(RuntimeError):
    """The budget ran out before this request's turn came."""


class BalanceGate:
    """At most `slots` balance computations at once in this process (one event loop)."""

    def __init__(self, slots: int = 1) -> None:
        self._slots = asyncio.Semaphore(slots)

    @asynccontextmanager
    async def turn(self, deadline: float) -> AsyncIterator[None]:
        """Wait for a slot until `deadline` (time.perf_counter), then hold it. Busy when the
        deadline passes first; a free slot is taken even past the deadline (the search then
        gives its greedy answer at once)."""
        if self._slots.locked():
            try:
                await asyncio.wait_for(
                    self._slots.acquire(), timeout=max(0.0, deadline - time.perf_counter())
                )
            except TimeoutError:
                raise Busy from None
        else:
            await self._slots.acquire()  # free: taken without suspending
        try:
            yield
        finally:
            self._slots.release()
