"""synelo.client against a real service on loopback: every endpoint typed, 4xx exceptions,
the retry ring buffer (lost responses, refused connections, timeouts, a full buffer) and the
split cache. Faults are real: a proxy that loses the answer after the service applied the
request, a service that is stopped and started again, a socket that never answers."""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from synelo.client import (
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    RoundReporter,
    ServiceUnavailable,
    SplitCache,
    SyneloClient,
    Unauthorized,
    round_body,
)
from synelo.sim.faults import FaultProxy
from synelo.sim.service import LocalService
from tests.conftest import ADMIN, LOADED, SERVER, LiveServer, steam

P = [steam(n) for n in range(1, 13)]


def _upstream(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _journal(admin: SyneloClient, players: list[str]) -> list[tuple[str, str]]:
    """(player, round_id) of every round row in the players' journals."""
    return [(p, e.round_id) for p in players for e in admin.full_history(p) if e.kind == "round"]


def test_every_endpoint_typed(live: LiveServer, pool: str) -> None:
    with (
        SyneloClient(live.url, SERVER, pool, timeout=LOADED) as c,
        SyneloClient(live.url, ADMIN, pool, timeout=LOADED) as a,
    ):
        assert c.health()["status"] == "ok"
        assert c.player(P[0]).rating == 1000 and c.player(P[0]).rounds_played == 0
        assert [p.steam_id for p in c.lookup(P[:3])] == P[:3]
        result = c.submit_round(round_body("r1", "srv", "A", (P[:2], P[2:4])))
        assert result.created and result.seq == 1 and result.p_a == 0.5
        assert {(x.steam_id, x.after) for x in result.players} == {
            (P[0], 1036),
            (P[1], 1036),
            (P[2], 964),
            (P[3], 964),
        }
        again = c.submit_round(round_body("r1", "srv", "A", (P[1::-1], P[2:4])))
        assert not again.created and again.players == result.players
        splits = c.splits(P[:6], current=(P[:2], P[2:4]))
        assert [s.k for s in splits] == [2, 3] and splits[1].players == set(P[:6])
        moves = c.autobalance(P[:4], P[4:5]).moves
        assert len(moves) == 1 and moves[0].from_ == "A" and moves[0].to == "B"
        # 1036 1036 964 964 v 1000: a 1036 is best (gap 928); a dead 964 (gap 1072) is within
        # the dead-first rule's 0.02 of P(A) at Θ 2400 (0.0955 and 0.1098 from ½)
        dead_first = c.autobalance(P[:4], P[4:5], alive=P[:2]).moves
        assert [m.steam_id for m in dead_first] == [P[2]]
        assert a.set_rating(P[5], 1500).rating == 1500
        assert [e.kind for e in a.history(P[5])] == ["set"]
        assert a.reset_player(P[5]).rating == 1000
        assert a.quality()["rounds"] == 1
        assert a.pool_info().rounds == 1 and pool in {x.name for x in a.pools()}
        assert a.leaderboard() == []  # nobody is visible after one round
        name = f"c{uuid.uuid4().hex[:12]}"
        assert a.create_pool(name, 3).theta == 300  # 100·3


def test_text_ids_with_url_characters(live: LiveServer) -> None:
    """The client encodes a player's id in paths: '/', '%', '?', '#' and ' ' are ids too."""
    name = f"t{uuid.uuid4().hex[:12]}"
    ids = ["a/b", "50%", "what?", "#1", "two words"]
    with SyneloClient(live.url, ADMIN, name, timeout=LOADED) as a:
        a.create_pool(name, 3, player_ids="text")
        result = a.submit_round(round_body("r1", "srv", "A", (ids[:2], ids[2:])))
        after = {x.steam_id: x.after for x in result.players}
        for key in ids:
            assert (a.player(key).steam_id, a.player(key).rating) == (key, after[key])
            assert [e.kind for e in a.history(key)] == ["round"]
        assert a.set_rating("a/b", 1500).rating == 1500
        assert a.reset_player("a/b").rating == 1000
        assert [e.kind for e in a.history("a/b")] == ["reset", "set", "round"]


def test_a_report_sends_every_optional_field(live: LiveServer, pool: str) -> None:
    """`report()` takes each optional field of a round report under its API name, typed,
    and the service stores them as sent: the names reach the boards."""
    start = datetime(2026, 11, 3, 20, 15, tzinfo=timezone(timedelta(hours=1)))
    with SyneloClient(live.url, SERVER, pool, timeout=LOADED) as c:
        reporter = RoundReporter(c, "srv1")
        [result] = reporter.report(
            "B",
            (P[:2], P[2:4]),
            participants=(P[:2], P[2:3]),
            map="pl_upward",
            mode="payload",
            started_at=start,
            ended_at=start + timedelta(minutes=20),
            duration=1200.0,
            sides=("RED", "BLU"),
            commanders=(P[0], (P[2], 0.0, 600.0)),
            scores=(2, 3),
            time_played={P[0]: 1.0, P[1]: (0.0, 900.0), P[2]: 0.5},
            positions={P[0]: "offense", P[2]: "defense"},
            player_scores={P[0]: 12.0, P[2]: 30.5},
            names={P[0]: "Ann", P[2]: "Bo"},
        )
        assert result.created and c.player(P[0]).name == "Ann" and c.player(P[2]).name == "Bo"
    _, rounds, _ = live.store.journal_rounds(pool)
    stored = rounds[0].report
    assert rounds[0].map == "pl_upward" and stored is not None
    assert {k: v for k, v in stored.items() if k not in ("round_id", "teams")} == {
        "server_id": "srv1",
        "map": "pl_upward",
        "winner": "B",
        "participants": {"A": P[:2], "B": P[2:3]},
        "mode": "payload",
        "started_at": "2026-11-03T19:15:00Z",
        "ended_at": "2026-11-03T19:35:00Z",
        "duration": 1200.0,
        "sides": {"A": "RED", "B": "BLU"},
        "commanders": {"A": P[0], "B": {"player": P[2], "from": 0.0, "to": 600.0}},
        "scores": {"A": 2, "B": 3},
        "time_played": {P[0]: 1.0, P[1]: {"from": 0.0, "to": 900.0}, P[2]: 0.5},
        "positions": {P[0]: "offense", P[2]: "defense"},
        "player_scores": {P[0]: 12.0, P[2]: 30.5},
        "names": {P[0]: "Ann", P[2]: "Bo"},
    }


def test_a_report_refuses_a_field_it_does_not_know(live: LiveServer, pool: str) -> None:
    """A misspelt field is a TypeError before anything is sent; None leaves a field out."""
    with SyneloClient(live.url, SERVER, pool, timeout=LOADED) as c:
        reporter = RoundReporter(c, "srv1")
        with pytest.raises(TypeError, match="not a field of a round report: name"):
            reporter.report("A", (P[:1], P[1:2]), name={P[0]: "Ann"})  # type: ignore[call-arg]
        assert reporter.stats.sent == 0 and not reporter.buffer
        body = round_body("r", "s", "A", (P[:1], P[1:2]), names=None, ended_at=None)
        assert set(body) == {"round_id", "server_id", "map", "winner", "teams"}
        naive = datetime(2026, 11, 3, 20, 15)  # no time zone: the service names the field
        with pytest.raises(Invalid) as refused:
            reporter.report("A", (P[:1], P[1:2]), ended_at=naive)
        assert refused.value.detail[0]["loc"] == ["body", "ended_at"]


def test_one_connection_is_reused(live: LiveServer, pool: str) -> None:
    proxy = FaultProxy(_upstream(live.url))
    try:
        with SyneloClient(proxy.url, SERVER, pool) as c:
            reporter, cache = RoundReporter(c, "srv"), SplitCache(c)
            for i in range(5):
                reporter.report("A" if i % 2 else "B", (P[:2], P[2:4]))
                assert cache.refresh(P[:6])
                c.lookup(P[:6])
        assert proxy.connections == 1 and proxy.counts["pass"] == 15
    finally:
        proxy.close()


def test_4xx_raise_and_are_never_retried(live: LiveServer, pool: str) -> None:
    with SyneloClient(live.url, SERVER, pool, timeout=LOADED) as c:
        with pytest.raises(Unauthorized):
            SyneloClient(live.url, "wrong", pool, timeout=LOADED).player(P[0])
        with pytest.raises(Forbidden):
            c.quality()
        with pytest.raises(NotFound):
            SyneloClient(live.url, SERVER, "no-such-pool", timeout=LOADED).player(P[0])
        with pytest.raises(Invalid) as err:
            c.player("123")
        assert err.value.status == 422 and err.value.detail[0]["loc"] == ["path", "steam_id"]
        c.submit_round(round_body("dup", "srv", "A", (P[:1], P[1:2])))
        with pytest.raises(Conflict):
            c.submit_round(round_body("dup", "srv", "B", (P[:1], P[1:2])))
        reporter = RoundReporter(c, "srv")
        with pytest.raises(Invalid):  # a player on both teams
            reporter.report("A", (P[:2], P[1:3]))
        assert not reporter.buffer and reporter.stats.rejected == 1


def test_lost_response_is_retried_and_changes_nothing(live: LiveServer, pool: str) -> None:
    """The service applies the round, the answer is lost on the way back; the retry at the
    next round end is answered from the store (200) and nothing is applied twice."""
    lose = {"next": True}

    def decide(method: str, path: str, body: bytes) -> str:
        if method == "POST" and path.endswith("/rounds") and lose["next"]:
            lose["next"] = False
            return "drop"
        return "pass"

    proxy = FaultProxy(_upstream(live.url), decide)
    try:
        with (
            SyneloClient(proxy.url, SERVER, pool) as c,
            SyneloClient(live.url, ADMIN, pool, timeout=LOADED) as a,
        ):
            now = [0.0]
            reporter = RoundReporter(c, "srv1", clock=lambda: now[0])
            assert reporter.report("A", (P[:2], P[2:4])) == []
            assert len(reporter.buffer) == 1 and proxy.counts["drop"] == 1
            now[0] += 300.0  # the next round end, minutes later
            lost_id = reporter.buffer[0]["round_id"]
            applied = {p: c.player(p).rating for p in P[:4]}  # the service did apply it
            assert applied == {P[0]: 1036, P[1]: 1036, P[2]: 964, P[3]: 964}
            assert a.pool_info().rounds == 1
            results = reporter.report("B", (P[:2], P[2:4]))
            assert [r.round_id for r in results][0] == lost_id
            assert [r.created for r in results] == [False, True]
            assert [r.seq for r in results] == [1, 2]
            assert {x.steam_id: x.after for x in results[0].players} == applied
            assert not reporter.buffer
            assert reporter.stats.already_applied == 1 and reporter.stats.retried == 1
            rows = _journal(a, P[:4])
            assert len(rows) == 8 and len(set(rows)) == 8  # 4 players × 2 rounds, once each
            assert a.pool_info().rounds == 2
    finally:
        proxy.close()


@pytest.fixture
def local(tmp_path: Path):
    service = LocalService(tmp_path / "svc", ADMIN, SERVER)
    service.start()
    with SyneloClient(service.url, ADMIN, "default", timeout=LOADED) as admin:
        admin.create_pool("default", 2)
    yield service
    service.stop()


def test_refused_reports_are_buffered_and_sent_oldest_first_before_the_new(
    local: LocalService, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    with SyneloClient(local.url, SERVER, timeout=1.0) as c:
        reporter = RoundReporter(c, "srv1", clock=lambda: now[0])
        assert len(reporter.report("A", (P[:2], P[2:4]))) == 1
        local.stop()  # connection refused from now on
        caplog.set_level(logging.ERROR, "synelo.client")
        for i in range(10):
            now[0] += 400.0  # round ends minutes apart: every retry is due
            teams = (P[4 + i % 4 : 5 + i % 4], P[0:1])
            assert reporter.report("A" if i % 2 else "B", teams) == []
        assert len(reporter.buffer) == 8 and reporter.stats.dropped == 2
        dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert len(dropped) == 2
        kept = [b["round_id"] for b in reporter.buffer]
        local.start()
        now[0] += 400.0
        results = reporter.report("draw", (P[8:9], P[9:10]))
        assert [r.round_id for r in results[:8]] == kept  # oldest first …
        assert results[8].winner == "draw"  # … and the new one last
        assert [r.seq for r in results] == list(range(2, 11))
        assert all(r.created for r in results) and not reporter.buffer
    with SyneloClient(local.url, ADMIN) as a:
        assert a.pool_info().rounds == 10


def test_a_5xx_and_a_timeout_are_buffered(local: LocalService) -> None:
    fail = {"on": True}
    proxy = FaultProxy(_upstream(local.url), lambda m, p, b: "fail" if fail["on"] else "pass")
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True).start()
    now = [0.0]
    try:
        with SyneloClient(proxy.url, SERVER) as c:
            reporter = RoundReporter(c, "srv1", clock=lambda: now[0])
            assert reporter.report("A", (P[:1], P[1:2])) == [] and proxy.counts["fail"] == 1
            fail["on"] = False
            now[0] = 5.0  # the first backoff has passed
            assert [r.seq for r in reporter.report("B", (P[:1], P[1:2]))] == [1, 2]
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with SyneloClient(url, SERVER, timeout=0.3) as c:
            reporter = RoundReporter(c, "srv2")
            assert reporter.report("A", (P[:1], P[1:2])) == []
            assert len(reporter.buffer) == 1
            with pytest.raises(ServiceUnavailable, match="Timeout"):
                c.player(P[0])
    finally:
        proxy.close()
        silent.close()


def test_split_cache(local: LocalService) -> None:
    proxy = FaultProxy(_upstream(local.url))
    try:
        with SyneloClient(proxy.url, SERVER) as c:
            cache = SplitCache(c)
            assert cache.refresh(P[:7])
            assert sorted(cache.by_k) == [2, 3]
            full = cache.scramble(P[:7])
            assert full is not None and full.k == 3 and len(full.bench) == 1
            # Someone seated in the 3v3 left: the largest split whose players are all still
            # eligible is the 2v2 if it does not seat them, else there is none.
            gone = sorted(full.players)[0]
            still = [p for p in P[:7] if p != gone]
            proxy.down = True  # fresh requests fail: only the cache can answer
            assert not cache.refresh(still) and sorted(cache.by_k) == [2, 3]
            expected = cache.by_k[2] if gone not in cache.by_k[2].players else None
            assert cache.scramble(still) == expected
            assert cache.pending == (expected is None)
            # Nothing cached and the service unreachable: the scramble stays pending …
            empty = SplitCache(c)
            assert empty.scramble(P[:6]) is None and empty.pending
            proxy.down = False  # … until the next try reaches the service.
            again = empty.scramble(P[:6])
            assert again is not None and again.k == 3 and not empty.pending
            assert not SplitCache(c).refresh(P[:3])  # fewer than 4 players: no split
    finally:
        proxy.close()


def test_a_retry_waits_for_retry_after_and_then_backs_off(local: LocalService) -> None:
    """A 503 with Retry-After: 30 holds the buffer (new reports join it unsent) until 30 s
    later, then everything goes oldest first. Without the header the waits double from 5 s
    (5, 10, 20), a success starts them over, and a forced flush sends at once."""
    fail = {"on": True}
    proxy = FaultProxy(_upstream(local.url), lambda m, p, b: "fail" if fail["on"] else "pass")
    proxy.retry_after = 30
    now = [100.0]
    try:
        with SyneloClient(proxy.url, SERVER) as c:
            reporter = RoundReporter(c, "srv1", clock=lambda: now[0])
            assert reporter.report("A", (P[:1], P[1:2])) == []
            assert reporter.retry_at == 130.0 and proxy.counts["fail"] == 1
            fail["on"] = False
            now[0] = 129.0  # not yet: the new report waits too, and nothing is sent
            assert reporter.report("B", (P[:1], P[1:2])) == []
            assert len(reporter.buffer) == 2 and proxy.counts["pass"] == 0
            now[0] = 130.0
            assert [r.seq for r in reporter.report("A", (P[:1], P[1:2]))] == [1, 2, 3]
            assert reporter.failures == 0 and not reporter.buffer

            proxy.retry_after = None
            fail["on"] = True
            waits = []
            for _ in range(3):
                reporter.report("A", (P[:1], P[1:2]))
                waits.append(reporter.retry_at - now[0])
                now[0] = reporter.retry_at  # due: the next round end tries, and fails again
            assert waits == [5.0, 10.0, 20.0] and len(reporter.buffer) == 3
            fail["on"] = False
            assert len(reporter.flush(force=True)) == 3 and reporter.failures == 0
    finally:
        proxy.close()
