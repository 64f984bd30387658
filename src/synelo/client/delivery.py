"""The game server's delivery semantics (SynElo's session flow and protocol): round reports
with a retry ring buffer, and the split cache behind scrambles.

- Every report gets a unique round_id when it is made, so a retry is the same round: the
  service is idempotent on round_id and a report that had in fact arrived changes nothing.
- The report buffer follows ONE policy, the plugin's (include/synelo/delivery.inc), written
  once in docs/client.md, "Report delivery policy": `ReportQueue` is delivery.inc decision
  for decision (tests/plugin/test_backpressure.py runs one table of statuses through both),
  and `RoundReporter` drives it with the HTTP client. In short: 2xx delivered; 0 (no
  answer), 408, 429, 502, 503, 504 and 401, 403, 404 (a server being set up) kept and
  retried oldest first with the backoff (the service's Retry-After, else 5 s doubling to
  300 s), never set aside; 500 and the other 5xx kept too, but a report that fails
  `SUSPECT_AFTER` times in a row with the same one is set aside (logged with its body,
  `RoundReporter.set_aside`) when the report behind it is then accepted; any other 4xx
  rejected. The buffer keeps 8; the 9th slot only holds the new report while it is sent.
- Split cache: after every round end the splits for every team size are requested and cached.
  A scramble uses the largest cached split whose players are all still eligible (the others
  wait to play); with no usable split it asks the service once more, and if that fails too
  the scramble stays pending until the next try.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Generic, TypeVar, Unpack

from synelo.client.api import RoundFields, SyneloClient, Teams, round_body
from synelo.client.typedefs import RequestRejected, RoundResult, ServiceUnavailable, Split

log = logging.getLogger("synelo.client")

BUFFER_SLOTS = 8  # delivery.inc's SD_BUFFER
SUSPECT_AFTER = 3  # SD_SUSPECT_AFTER: the same 5xx in a row before the report behind is tried
RETRY_AFTER_MIN, RETRY_AFTER_MAX = 1.0, 300.0  # seconds a Retry-After is clamped to
BACKOFF_FIRST, BACKOFF_MAX = 5.0, 300.0  # seconds: after the first failure, and the cap
SET_UP = frozenset({401, 403, 404})  # a wrong token, a token for another pool, no such pool
BUSY = frozenset({408, 429})  # 4xx that say "later", not "never"
DOWN_5XX = frozenset({502, 503, 504})  # a proxy without its service, a full queue, a timeout

Body = TypeVar("Body")


class Outcome(IntEnum):
    """What became of the report in flight (delivery.inc's SDOutcome)."""

    NONE = 0  # none was in flight
    DELIVERED = 1
    REJECTED = 2
    FAILED = 3


class Kind(IntEnum):
    """What a status means for a report (delivery.inc's SDClass)."""

    DELIVERED = 0  # 2xx
    REJECTED = 1  # a 4xx about the report itself: never retried
    DOWN = 2  # hits every report alike (down, busy, unreachable, set-up): kept
    SUSPECT = 3  # 500 and other 5xx: kept; may be the report's own fault


class Lost(IntEnum):
    """Why a report left the buffer undelivered (delivery.inc's SDLost)."""

    NONE = 0
    DROPPED = 1  # the buffer was full
    SET_ASIDE = 2  # it kept failing while the report behind it was accepted
    REJECTED = 3  # the service refused it


def classify(status: int) -> Kind:
    """The policy's table (docs/client.md, "Report delivery policy"); 0: no answer."""
    if 200 <= status < 300:
        return Kind.DELIVERED
    if 400 <= status < 500:
        return Kind.DOWN if status in SET_UP or status in BUSY else Kind.REJECTED
    if 500 <= status < 600 and status not in DOWN_5XX:
        return Kind.SUSPECT
    return Kind.DOWN


def retry_delay(failures: int, retry_after: float | None) -> float:
    """Seconds before the buffered reports are tried again after `failures` failures in a
    row: the service's Retry-After, clamped, or else the doubling backoff."""
    if retry_after is not None:
        return min(max(retry_after, RETRY_AFTER_MIN), RETRY_AFTER_MAX)
    return min(BACKOFF_FIRST * 2.0 ** (max(failures, 1) - 1), BACKOFF_MAX)


def new_round_id(server_id: str) -> str:
    """A round_id no other report will have: the server id and a random UUID."""
    return f"{server_id}-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class LostReport(Generic[Body]):
    """A report that left the buffer undelivered, and the status that decided it (0: none)."""

    kind: Lost
    body: Body
    status: int


class ReportQueue(Generic[Body]):
    """The report buffer of docs/client.md's "Report delivery policy", the same decisions as
    the plugin's include/synelo/delivery.inc (whose comments explain them), without I/O: the
    caller sends what `next_due` (or `next`) hands out and tells `result` the status. Times
    are the caller's seconds."""

    def __init__(self, buffer: int = BUFFER_SLOTS) -> None:
        self.buffer = buffer  # SD_BUFFER; one more slot holds the new report while it is sent
        self.waiting: list[Body] = []  # oldest first; the one in flight at 0
        self.in_flight = False
        self.probing = False  # the one in flight is a probe: the suspect waits at 1
        self.streak = 0  # the oldest report's failures in a row with streak_status (a 5xx)
        self.streak_status = 0
        self.dropped = self.rejected = self.set_aside = 0
        self.failures = 0  # failed attempts in a row
        self.failed_at = 0.0
        self.delay = 0.0  # seconds after failed_at the next attempt is due (0: at once)
        self.lost: list[LostReport[Body]] = []  # since the last take_lost

    def __len__(self) -> int:
        return len(self.waiting)

    # -- the buffer ----------------------------------------------------------------------------

    def add(self, body: Body) -> bool:
        """SD_Add: queue the new report; True when a report was dropped to make room."""
        full = len(self.waiting) == self.buffer + 1
        if full:
            self._drop_oldest()
        self.waiting.append(body)
        return full

    def trim(self) -> None:
        """SD_Trim: at most `buffer` reports besides the one in flight."""
        while len(self.waiting) - self.in_flight > self.buffer:
            self._drop_oldest()

    def next(self) -> Body | None:
        """SD_Next: the report to send now (marked in flight), ignoring the schedule: the
        oldest, or the one behind a suspect (a probe)."""
        if self.in_flight or not self.waiting:
            return None
        self.probing = self.streak >= SUSPECT_AFTER and len(self.waiting) >= 2
        if self.probing:
            self.waiting[0], self.waiting[1] = self.waiting[1], self.waiting[0]
        self.in_flight = True
        return self.waiting[0]

    def next_due(self, now: float) -> Body | None:
        """SD_NextDue: `next` when the retry is due; otherwise trims and gives None."""
        if not self.due(now):
            self.trim()
            return None
        return self.next()

    def result(
        self, status: int, retry_after: float | None = None, now: float | None = None
    ) -> Outcome:
        """SD_ResultAt (SD_Result when `now` is None: no retry time is set)."""
        if not self.in_flight:
            return Outcome.NONE
        self.in_flight = False
        probe, self.probing = self.probing, False
        kind = classify(status)
        if kind is Kind.DELIVERED:
            self.waiting.pop(0)
            if probe:  # the report behind went through: the oldest one is the problem
                self._lose(0, Lost.SET_ASIDE, self.streak_status)
            self.streak = 0
            self._clear_schedule()
            return Outcome.DELIVERED
        if kind is Kind.REJECTED:
            self._lose(0, Lost.REJECTED, status)
            if not probe:
                self.streak = 0
            self._clear_schedule()
            return Outcome.REJECTED
        if probe:  # the report behind failed too: the service's fault; keep the order
            self.waiting[0], self.waiting[1] = self.waiting[1], self.waiting[0]
            self.streak = 0
        elif kind is Kind.SUSPECT:
            if self.streak > 0 and status == self.streak_status:
                self.streak = min(self.streak + 1, SUSPECT_AFTER)
            else:
                self.streak, self.streak_status = 1, status
        else:
            self.streak = 0
        self.trim()
        if now is not None:
            self.failures = min(self.failures + 1, 31)
            self.failed_at = now
            self.delay = retry_delay(self.failures, retry_after)
        return Outcome.FAILED

    def take_lost(self) -> list[LostReport[Body]]:
        """The reports lost since the last call (SD_TakeLost)."""
        lost, self.lost = self.lost, []
        return lost

    # -- the schedule --------------------------------------------------------------------------

    def due(self, now: float) -> bool:
        """SD_Due: a report waits, none is in flight and the retry is due."""
        return not self.in_flight and bool(self.waiting) and self.schedule_due(now)

    def schedule_due(self, now: float) -> bool:
        elapsed = now - self.failed_at
        return self.delay <= 0 or elapsed < 0 or elapsed >= self.delay

    @property
    def retry_at(self) -> float | None:
        """When the next attempt is due, None when none is scheduled (SD_RetryAt)."""
        return self.failed_at + self.delay if self.delay > 0 else None

    # -- inside --------------------------------------------------------------------------------

    def _clear_schedule(self) -> None:
        self.failures, self.failed_at, self.delay = 0, 0.0, 0.0

    def _drop_oldest(self) -> None:
        pos = 1 if self.in_flight else 0
        if pos == 0 or self.probing:  # the suspect itself goes
            self.probing = False
            self.streak = 0
        self._lose(pos, Lost.DROPPED, 0)

    def _lose(self, pos: int, kind: Lost, status: int) -> None:
        self.lost.append(LostReport(kind, self.waiting.pop(pos), status))
        if kind is Lost.DROPPED:
            self.dropped += 1
        elif kind is Lost.SET_ASIDE:
            self.set_aside += 1
        else:
            self.rejected += 1


@dataclass
class DeliveryStats:
    sent: int = 0  # reports applied on their first attempt
    buffered: int = 0  # reports that failed or waited, and went into the buffer
    retried: int = 0  # reports applied by a retry from the buffer
    dropped: int = 0  # reports pushed out of a full buffer
    rejected: int = 0  # reports the service answered with a 4xx that is not kept
    already_applied: int = 0  # retries the service had applied already (answered 200)
    set_aside: int = 0  # reports set aside: they kept failing, the one behind went through


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"))


@dataclass
class RoundReporter:
    """Round reports for one game server, with the report buffer (`ReportQueue`, the policy
    of docs/client.md, "Report delivery policy"). Reports set aside are kept, whole, in
    `set_aside` (oldest first) to be sent again by hand (`client.submit_round(body)`)."""

    client: SyneloClient
    server_id: str
    slots: int = BUFFER_SLOTS
    make_id: Callable[[str], str] = new_round_id
    stats: DeliveryStats = field(default_factory=DeliveryStats)
    last_round_id: str | None = None  # the round_id of the latest report
    clock: Callable[[], float] = time.monotonic  # seconds (a simulator passes its own)
    set_aside: list[dict[str, Any]] = field(default_factory=list)
    queue: ReportQueue[dict[str, Any]] = field(init=False, repr=False)
    _waited: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self.queue = ReportQueue(self.slots)

    @property
    def buffer(self) -> list[dict[str, Any]]:
        """The reports waiting, oldest first."""
        return list(self.queue.waiting)

    @property
    def retry_at(self) -> float:
        """When the buffered reports may be tried again (0: at once)."""
        return self.queue.retry_at or 0.0

    @property
    def failures(self) -> int:
        """Failed attempts in a row."""
        return self.queue.failures

    def report(
        self,
        winner: str,
        teams: Teams,
        participants: Teams | None = None,
        **fields: Unpack[RoundFields],
    ) -> list[RoundResult]:
        """Send the buffered reports, then this one, with the report's optional `fields`
        (`names=`, `scores=`, `started_at=`…: `RoundFields`). The results of every report
        applied now (retries first); the new one's result is last unless it was buffered."""
        body = round_body(
            self.make_id(self.server_id), self.server_id, winner, teams, participants, **fields
        )
        return self.deliver(body)

    def deliver(self, body: dict[str, Any]) -> list[RoundResult]:
        """Queue `body` behind the buffered reports and send what is due, oldest first. A
        rejection of `body` itself raises its `RequestRejected`."""
        self.last_round_id = body["round_id"]
        self.queue.add(body)
        self._note_lost(body)
        return self._send(body, force=False)

    def flush(self, force: bool = False) -> list[RoundResult]:
        """Retry the buffered reports oldest first, once due (`force`: now); stop at the first
        that fails again."""
        return self._send(None, force)

    def _send(self, new: dict[str, Any] | None, force: bool) -> list[RoundResult]:
        results: list[RoundResult] = []
        refused: RequestRejected | None = None
        while True:
            now = self.clock()
            body = self.queue.next() if force else self.queue.next_due(now)
            if body is None:
                break
            answer, error, status, retry_after = self._post(body)
            outcome = self.queue.result(status, retry_after, now)
            rid = body["round_id"]
            if outcome is Outcome.DELIVERED and answer is not None:
                results.append(answer)
                if rid in self._waited:
                    self.stats.retried += 1
                    self.stats.already_applied += not answer.created
                else:
                    self.stats.sent += 1
                self._waited.discard(rid)
            elif outcome is Outcome.REJECTED:
                self.stats.rejected += 1
                if body is new and isinstance(error, RequestRejected):
                    refused = error
            elif outcome is Outcome.FAILED:
                log.warning("round %s not delivered (%s); kept", rid, error)
                self._note_lost(new)
                self._note_waiting()
                break
            self._note_lost(new)
        self._note_lost(new)
        self._note_waiting()
        if refused is not None:
            raise refused
        return results

    def _post(
        self, body: dict[str, Any]
    ) -> tuple[RoundResult | None, Exception | None, int, float | None]:
        """(answer, error, status, Retry-After seconds) of one POST; status 0: no answer."""
        try:
            answer = self.client.submit_round(body)
        except ServiceUnavailable as exc:
            return None, exc, exc.status, exc.retry_after
        except RequestRejected as exc:
            return None, exc, exc.status, None
        return answer, None, 201 if answer.created else 200, None

    def _note_waiting(self) -> None:
        for body in self.queue.waiting:
            if body["round_id"] not in self._waited:
                self._waited.add(body["round_id"])
                self.stats.buffered += 1

    def _note_lost(self, new: dict[str, Any] | None) -> None:
        """Logs the reports the buffer lost, each with its whole body."""
        for lost in self.queue.take_lost():
            rid = lost.body["round_id"]
            self._waited.discard(rid)
            if lost.kind is Lost.DROPPED:
                self.stats.dropped += 1
                log.error(
                    "retry buffer full (%d): dropped round %s: %s",
                    self.slots,
                    rid,
                    _text(lost.body),
                )
            elif lost.kind is Lost.SET_ASIDE:
                self.stats.set_aside += 1
                self.set_aside.append(lost.body)
                log.error(
                    "round %s set aside (HTTP %d %d times in a row, the report behind it was "
                    "accepted; in reporter.set_aside): %s",
                    rid,
                    lost.status,
                    SUSPECT_AFTER,
                    _text(lost.body),
                )
            elif lost.body is not new:
                log.error(
                    "buffered round %s rejected (HTTP %d), dropped: %s",
                    rid,
                    lost.status,
                    _text(lost.body),
                )


@dataclass
class SplitCache:
    """The splits of the last successful request, by team size, and a pending scramble.

    With `all_play` (a game where everyone plays, i.e. not an arena queue) it asks for the one
    all-play split of every eligible player, and a scramble takes it even when players have
    left or joined since: the game server applies it to the players of the moment with
    `synelo.game.splits.plan`, which benches nobody (and, with nothing cached and the service
    down, plans a local split from cached ratings)."""

    client: SyneloClient
    max_k: int | None = None  # the server's largest team size (None: N/2)
    by_k: dict[int, Split] = field(default_factory=dict)
    pending: bool = False
    failures: int = 0
    all_play: bool = False

    def refresh(self, players: Sequence[str], current: Teams | None = None) -> bool:
        """Ask for every team size's split (k = 2 … N/2), or the all-play split; False when
        the service failed (the cache keeps the splits it had). Fewer than 4 players have no
        split to ask for."""
        if len(players) < 4:
            return False
        try:
            if self.all_play:
                answer = self.client.splits(players, current=current, mode="all-play")
            else:
                max_k = None if self.max_k is None else min(self.max_k, len(players) // 2)
                answer = self.client.splits(players, current=current, max_k=max_k)
        except ServiceUnavailable as exc:
            self.failures += 1
            log.warning("splits not refreshed (%s); keeping %d cached", exc, len(self.by_k))
            return False
        self.by_k = {s.k: s for s in answer}
        return True

    def usable(self, eligible: Sequence[str]) -> Split | None:
        """The largest cached split whose players are all still eligible; all-play: the
        cached split whoever has left or joined (plan it onto `eligible`)."""
        if self.all_play:
            return next(iter(self.by_k.values()), None)
        present = set(eligible)
        for k in sorted(self.by_k, reverse=True):
            if self.by_k[k].players <= present:
                return self.by_k[k]
        return None

    def scramble(self, eligible: Sequence[str], current: Teams | None = None) -> Split | None:
        """The split to scramble to, or None: then the scramble is pending (`pending`) and
        should be tried again later. Even splits: eligible players outside it wait to play.
        All-play: a fresh split of `eligible` when the service answers, else the cached one."""
        split = None if self.all_play else self.usable(eligible)
        if split is None and self.refresh(eligible, current):
            split = self.usable(eligible)
        if split is None and self.all_play:
            split = self.usable(eligible)
        self.pending = split is None
        if split is None:
            log.warning("scramble pending: no usable split cached and the service failed")
        return split
