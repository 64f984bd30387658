"""The game server's delivery semantics (SynElo's session flow and protocol): round reports
with a retry ring buffer, and the split cache behind scrambles.

- Every report gets a unique round_id when it is made, so a retry is the same round: the
  service is idempotent on round_id and a report that had in fact arrived changes nothing.
- A report that fails transiently (timeout, connection refused or reset, 5xx, 408, 429)
  goes into an 8-slot ring buffer. The buffered reports are retried oldest first, **before**
  the new one, at the first round end once a retry is due: after the service's Retry-After
  seconds (1–300) when it sent one, else after a backoff of 5 s doubling with each failure
  in a row up to 300 s (the plugin's rule, include/synelo/delivery.inc). Until then a new
  report joins the buffer unsent, so a struggling service is not hammered. The first that
  fails again stops the retries and the new report joins the buffer behind them. When the
  buffer is full its oldest report is dropped (logged).
- A 4xx is never retried: for the new report it raises; a buffered report that gets one
  (which only a changed service can cause) is dropped and logged.
- Split cache: after every round end the splits for every team size are requested and cached.
  A scramble uses the largest cached split whose players are all still eligible (the others
  wait to play); with no usable split it asks the service once more, and if that fails too
  the scramble stays pending until the next try.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synelo.client.api import SyneloClient, Teams, round_body
from synelo.client.typedefs import RequestRejected, RoundResult, ServiceUnavailable, Split

log = logging.getLogger("synelo.client")

BUFFER_SLOTS = 8
RETRY_AFTER_MIN, RETRY_AFTER_MAX = 1.0, 300.0  # seconds a Retry-After is clamped to
BACKOFF_FIRST, BACKOFF_MAX = 5.0, 300.0  # seconds: after the first failure, and the cap


def retry_delay(failures: int, retry_after: float | None) -> float:
    """Seconds before the buffered reports are tried again after `failures` failures in a
    row: the service's Retry-After, clamped, or else the doubling backoff."""
    if retry_after is not None:
        return min(max(retry_after, RETRY_AFTER_MIN), RETRY_AFTER_MAX)
    return min(BACKOFF_FIRST * 2.0 ** (max(failures, 1) - 1), BACKOFF_MAX)


def new_round_id(server_id: str) -> str:
    """A round_id no other report will have: the server id and a random UUID."""
    return f"{server_id}-{uuid.uuid4().hex}"


@dataclass
class DeliveryStats:
    sent: int = 0  # reports applied on their first attempt
    buffered: int = 0  # reports that failed and went into the buffer
    retried: int = 0  # reports applied by a retry from the buffer
    dropped: int = 0  # reports pushed out of a full buffer
    rejected: int = 0  # reports the service answered with a 4xx
    already_applied: int = 0  # retries the service had applied already (answered 200)


@dataclass
class RoundReporter:
    """Round reports for one game server, with the retry ring buffer."""

    client: SyneloClient
    server_id: str
    slots: int = BUFFER_SLOTS
    make_id: Callable[[str], str] = new_round_id
    buffer: deque[dict[str, Any]] = field(default_factory=deque)
    stats: DeliveryStats = field(default_factory=DeliveryStats)
    last_round_id: str | None = None  # the round_id of the latest report
    clock: Callable[[], float] = time.monotonic  # seconds (a simulator passes its own)
    retry_at: float = 0.0  # when the buffered reports may be tried again
    failures: int = 0  # failed attempts in a row

    def report(
        self, winner: str, teams: Teams, participants: Teams | None = None, map_name: str = ""
    ) -> list[RoundResult]:
        """Send the buffered reports, then this one. The results of every report applied
        now (retries first); the new one's result is last unless it was buffered."""
        body = round_body(
            self.make_id(self.server_id), self.server_id, winner, teams, participants, map_name
        )
        return self.deliver(body)

    def deliver(self, body: dict[str, Any]) -> list[RoundResult]:
        self.last_round_id = body["round_id"]
        results = self.flush()
        if self.buffer:  # failing still, or not due yet: the new one waits behind them
            self._keep(body)
            return results
        try:
            results.append(self.client.submit_round(body))
            self.stats.sent += 1
            self.failures = 0
        except ServiceUnavailable as exc:
            log.warning("round %s not delivered (%s); buffered", body["round_id"], exc)
            self._failed(exc)
            self._keep(body)
        except RequestRejected:
            self.stats.rejected += 1
            raise
        return results

    def flush(self, force: bool = False) -> list[RoundResult]:
        """Retry the buffered reports oldest first, once due (`force`: now); stop at the first
        that fails again."""
        results: list[RoundResult] = []
        if self.buffer and not force and self.clock() < self.retry_at:
            return results
        while self.buffer:
            body = self.buffer[0]
            try:
                result = self.client.submit_round(body)
            except ServiceUnavailable as exc:
                self._failed(exc)
                break
            except RequestRejected as exc:
                self.stats.rejected += 1
                log.error("buffered round %s rejected, dropped: %s", body["round_id"], exc)
            else:
                results.append(result)
                self.stats.retried += 1
                self.stats.already_applied += not result.created
                self.failures = 0
            self.buffer.popleft()
        return results

    def _failed(self, exc: ServiceUnavailable) -> None:
        """One more failure in a row: the next try waits as the service asked, or backs off."""
        self.failures += 1
        self.retry_at = self.clock() + retry_delay(self.failures, exc.retry_after)

    def _keep(self, body: dict[str, Any]) -> None:
        if len(self.buffer) >= self.slots:
            lost = self.buffer.popleft()
            self.stats.dropped += 1
            log.error("retry buffer full (%d): dropped round %s", self.slots, lost["round_id"])
        self.buffer.append(body)
        self.stats.buffered += 1


@dataclass
class SplitCache:
    """The splits of the last successful request, by team size, and a pending scramble."""

    client: SyneloClient
    max_k: int | None = None  # the server's largest team size (None: N/2)
    by_k: dict[int, Split] = field(default_factory=dict)
    pending: bool = False
    failures: int = 0

    def refresh(self, players: Sequence[str], current: Teams | None = None) -> bool:
        """Ask for every team size's split (k = 2 … N/2); False when the service failed (the
        cache keeps the splits it had). Fewer than 4 players have no split to ask for."""
        if len(players) < 4:
            return False
        try:
            max_k = None if self.max_k is None else min(self.max_k, len(players) // 2)
            answer = self.client.splits(players, current=current, max_k=max_k)
        except ServiceUnavailable as exc:
            self.failures += 1
            log.warning("splits not refreshed (%s); keeping %d cached", exc, len(self.by_k))
            return False
        self.by_k = {s.k: s for s in answer}
        return True

    def usable(self, eligible: Sequence[str]) -> Split | None:
        """The largest cached split whose players are all still eligible."""
        present = set(eligible)
        for k in sorted(self.by_k, reverse=True):
            if self.by_k[k].players <= present:
                return self.by_k[k]
        return None

    def scramble(self, eligible: Sequence[str], current: Teams | None = None) -> Split | None:
        """The split to scramble to (eligible players outside it wait to play), or None:
        then the scramble is pending (`pending`) and should be tried again later."""
        split = self.usable(eligible)
        if split is None and self.refresh(eligible, current):
            split = self.usable(eligible)
        self.pending = split is None
        if split is None:
            log.warning("scramble pending: no usable split cached and the service failed")
        return split
