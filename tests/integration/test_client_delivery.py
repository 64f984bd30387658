"""`RoundReporter` against a real `synelo serve` on loopback: the report delivery policy of
docs/client.md ("Report delivery policy"), which the plugin's delivery.inc follows too
(tests/plugin/test_backpressure.py runs one table of statuses through both).

- A server being set up (a wrong token: 401; a pool not created yet: 404) keeps its reports
  and delivers them all, in order, once it is fixed.
- A report the service answers 500 for (its content) is set aside, logged with its whole
  body and kept in `reporter.set_aside`, once the report behind it is accepted; the reports
  behind it are not held back. A service that answers 500 to every report loses nothing.
- The service down for 12 rounds: 8 reports kept, the 4 oldest dropped and logged with their
  bodies, the rest delivered in order when it returns.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable

import httpx
import pytest

from synelo.client import RoundReporter, SyneloClient
from synelo.client.delivery import SUSPECT_AFTER
from synelo.sim.faults import FaultProxy
from tests.conftest import ADMIN, SERVER, LiveServer, steam

P = [steam(n) for n in range(1, 9)]
TEAMS = (P[:2], P[2:4])


class Answering500(httpx.BaseTransport):
    """The real service behind it, except that a POST of a round that `poison` picks is
    answered 500 without reaching it (what issue 36 item 3's bad times did)."""

    def __init__(self, poison: Callable[[dict[str, object]], bool]) -> None:
        self.inner = httpx.HTTPTransport()
        self.poison = poison
        self.posts: list[tuple[str, int]] = []  # (round_id, status) of every POST /rounds

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/rounds"):
            body = json.loads(request.read())
            if self.poison(body):
                self.posts.append((body["round_id"], 500))
                return httpx.Response(500, json={"detail": "Internal Server Error"})
            response = self.inner.handle_request(request)
            self.posts.append((body["round_id"], response.status_code))
            return response
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def _ids(n: int) -> Callable[[str], str]:
    """Round ids srv-1, srv-2, ... (the report's number, for reading the tests)."""
    count = iter(range(1, n + 1))
    return lambda server: f"{server}-{uuid.uuid4().hex[:8]}-{next(count)}"


def _number(round_id: str) -> int:
    return int(round_id.rsplit("-", 1)[1])


def test_a_server_being_set_up_keeps_its_reports(
    live: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    """401 (a wrong token), then 404 (the pool is not created yet): kept and retried with the
    backoff, never rejected; once both are fixed everything is delivered in order."""
    name = f"t{uuid.uuid4().hex[:16]}"
    now = [0.0]
    caplog.set_level(logging.WARNING, "synelo.client")
    with SyneloClient(live.url, "not-the-token", name) as c:
        reporter = RoundReporter(c, "srv", make_id=_ids(20), clock=lambda: now[0])
        for _ in range(3):
            assert reporter.report("A", TEAMS) == []
            now[0] += 60.0
        assert reporter.stats.rejected == 0 and len(reporter.buffer) == 3
        assert sum("401" in r.getMessage() for r in caplog.records) == 3
        c.http.headers["Authorization"] = f"Bearer {SERVER}"  # the token fixed
        for _ in range(2):
            assert reporter.report("B", TEAMS) == []  # 404: no such pool yet
            now[0] += 60.0
        assert reporter.stats.rejected == 0 and len(reporter.buffer) == 5
        assert any("404" in r.getMessage() for r in caplog.records)
        with SyneloClient(live.url, ADMIN, name) as admin:
            admin.create_pool(name, 2)  # the pool created
        now[0] = max(now[0], reporter.retry_at)
        results = reporter.report("A", TEAMS)
        assert [_number(r.round_id) for r in results] == [1, 2, 3, 4, 5, 6]
        assert [r.seq for r in results] == [1, 2, 3, 4, 5, 6] and not reporter.buffer
        assert (reporter.stats.dropped, reporter.stats.set_aside) == (0, 0)
        assert (reporter.stats.retried, reporter.stats.sent) == (5, 1)


def test_a_poison_report_is_set_aside_and_the_others_go(
    live: LiveServer, pool: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Report 2 is answered 500 for its content. After SUSPECT_AFTER of them in a row the
    next attempt tries report 3: it is accepted, so report 2 is set aside (logged with its
    body, kept in `set_aside`) and nothing behind it waits any longer."""
    transport = Answering500(lambda body: _number(str(body["round_id"])) == 2)
    now = [0.0]
    caplog.set_level(logging.ERROR, "synelo.client")
    with SyneloClient(live.url, SERVER, pool, transport=transport) as c:
        reporter = RoundReporter(c, "srv", make_id=_ids(20), clock=lambda: now[0])
        assert len(reporter.report("A", TEAMS)) == 1
        now[0] += 60.0
        assert reporter.report("B", TEAMS) == []  # report 2: 500
        for _ in range(SUSPECT_AFTER - 1):
            now[0] = reporter.retry_at  # the host polls when the retry is due
            assert reporter.flush() == []
        assert [s for _, s in transport.posts] == [201] + [500] * SUSPECT_AFTER
        poison = reporter.buffer[0]
        now[0] = reporter.retry_at - 1.0
        results = reporter.report("A", TEAMS)  # report 3: not due yet, it waits
        assert results == [] and len(reporter.buffer) == 2
        now[0] = reporter.retry_at
        results = reporter.flush()
        assert [_number(r.round_id) for r in results] == [3]  # the probe went through
        assert reporter.set_aside == [poison] and not reporter.buffer
        assert reporter.stats.set_aside == 1 and reporter.stats.dropped == 0
        logged = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
        assert len(logged) == 1 and json.dumps(poison, separators=(",", ":")) in logged[0]
        now[0] += 60.0
        assert [_number(r.round_id) for r in reporter.report("B", TEAMS)] == [4]  # at once
        assert [_number(i) for i, s in transport.posts if s in (200, 201)] == [1, 3, 4]
        # once the service is fixed, the report set aside can be sent again by hand
        transport.poison = lambda body: False
        assert c.submit_round(reporter.set_aside[0]).created


def test_a_service_answering_500_to_everything_loses_nothing(live: LiveServer, pool: str) -> None:
    """Every report is answered 500 for 10 minutes: the probes fail too, so the fault is the
    service's; nothing is set aside and everything goes, in order, once it is fixed."""
    transport = Answering500(lambda body: True)
    now = [0.0]
    with SyneloClient(live.url, SERVER, pool, transport=transport) as c:
        reporter = RoundReporter(c, "srv", make_id=_ids(20), clock=lambda: now[0])
        for _ in range(6):
            assert reporter.report("A", TEAMS) == []
            for _ in range(3):  # the host polls in between
                now[0] = max(now[0] + 20.0, reporter.retry_at)
                assert reporter.flush() == []
        assert len(transport.posts) > 2 * SUSPECT_AFTER  # probes were tried, and failed
        assert {_number(i) for i, _ in transport.posts} > {1}
        assert reporter.set_aside == [] and reporter.stats.dropped == 0
        assert [_number(b["round_id"]) for b in reporter.buffer] == [1, 2, 3, 4, 5, 6]
        transport.poison = lambda body: False
        now[0] = reporter.retry_at
        results = reporter.flush()
        assert [_number(r.round_id) for r in results] == [1, 2, 3, 4, 5, 6]
        assert [r.seq for r in results] == [1, 2, 3, 4, 5, 6]


def test_the_service_down_for_12_rounds(
    live: LiveServer, pool: str, caplog: pytest.LogCaptureFixture
) -> None:
    """12 round ends a minute apart with the service unreachable: the buffer keeps 8, the 4
    oldest are dropped and logged with their bodies, and when it returns the 8 go in order."""
    host, port = live.url.removeprefix("http://").split(":")
    proxy = FaultProxy((host, int(port)))
    now = [0.0]
    caplog.set_level(logging.ERROR, "synelo.client")
    try:
        with SyneloClient(proxy.url, SERVER, pool, timeout=1.0) as c:
            reporter = RoundReporter(c, "srv", make_id=_ids(20), clock=lambda: now[0])
            proxy.down = True
            for _ in range(12):
                assert reporter.report("A", TEAMS) == []
                now[0] += 60.0
                if now[0] >= reporter.retry_at:
                    reporter.flush()  # the host's poll: due, it fails again
            assert [_number(b["round_id"]) for b in reporter.buffer] == list(range(5, 13))
            assert reporter.stats.dropped == 4 and reporter.set_aside == []
            dropped = [r.getMessage() for r in caplog.records if "dropped round" in r.getMessage()]
            assert [_number(m.split()[6].rstrip(":")) for m in dropped] == [1, 2, 3, 4]
            assert all('"winner":"A"' in m for m in dropped)  # the whole body
            proxy.down = False
            now[0] = max(now[0], reporter.retry_at)
            results = reporter.flush()
            assert [_number(r.round_id) for r in results] == list(range(5, 13))
            assert [r.seq for r in results] == list(range(1, 9)) and not reporter.buffer
    finally:
        proxy.close()
