"""kill -9 under load, then a restart and the clients' retries: nothing lost, nothing doubled.

`synelo serve` runs as a real process group (SQLite with one worker; PostgreSQL with two).
Game servers, one thread each, report 2v2 rounds with unique round_ids as fast as they are
answered and keep every report not yet acknowledged, as the client library's ring buffer
does. The whole group is killed with SIGKILL mid-load, started again on the same database,
and every unacknowledged report is sent again, same round_id, until it is. Then each round
sent is stored exactly once, its journal rows are there, and each player's journal chain
runs unbroken from 1000 with rounds_played equal to the rounds they played.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.conftest import ADMIN, SERVER, own_pg_schema, steam, synelo_serve

SERVERS = 6  # game servers sending at once
PLAYERS = 40


class GameServer(threading.Thread):
    """Reports rounds until stopped; keeps those not acknowledged (sent again later)."""

    def __init__(self, n: int, url: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.n, self.url, self.stop = n, url, stop
        self.sent: dict[str, dict] = {}
        self.acked: set[str] = set()

    def body(self, i: int) -> dict:
        players = [steam(1 + (self.n * 7 + i * 3 + k * 11) % PLAYERS) for k in range(4)]
        return {
            "round_id": f"g{self.n}-{i}-{uuid.uuid4().hex[:6]}",
            "server_id": f"g{self.n}",
            "winner": "AB"[(i + self.n) % 2],
            "teams": {"A": players[:2], "B": players[2:]},
        }

    def run(self) -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {SERVER}"}, timeout=5) as c:
            i = 0
            while not self.stop.is_set():
                body = self.body(i)
                i += 1
                self.sent[body["round_id"]] = body
                if self.post(c, body):
                    self.acked.add(body["round_id"])
                else:
                    time.sleep(0.05)

    def post(self, c: httpx.Client, body: dict) -> bool:
        try:
            r = c.post(f"{self.url}/v1/pools/default/rounds", json=body)
        except httpx.TransportError:
            return False
        assert r.status_code in (200, 201, 429, 503), r.text  # 429 and 503: later
        return r.status_code in (200, 201)

    def deliver_the_rest(self, url: str) -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {SERVER}"}, timeout=10) as c:
            for round_id, body in self.sent.items():
                if round_id not in self.acked:
                    self.url = url
                    deadline = time.monotonic() + 30
                    while not self.post(c, body):
                        assert time.monotonic() < deadline
                        time.sleep(0.1)
                    self.acked.add(round_id)


def _crash_and_recover(folder: Path, workers: int, database_url: str) -> None:
    env = {"SYNELO_DATABASE_URL": database_url}
    init = subprocess.run(
        [sys.executable, "-m", "synelo", "init"],
        env={**os.environ, "SYNELO_DATA_DIR": str(folder), **env},
        capture_output=True,
        text=True,
    )
    assert init.returncode == 0, init.stderr
    stop = threading.Event()
    with synelo_serve(folder, workers, **env) as served:
        servers = [GameServer(n, served.url, stop) for n in range(SERVERS)]
        for s in servers:
            s.start()
        while sum(len(s.acked) for s in servers) < 150:  # under load, then the crash
            time.sleep(0.02)
        served.kill()
        time.sleep(0.3)  # the game servers see the failures and keep their reports
        stop.set()
        for s in servers:
            s.join(10)
    acked_before = sum(len(s.acked) for s in servers)
    sent = {rid: body for s in servers for rid, body in s.sent.items()}
    assert len(sent) > acked_before  # some reports were in flight or refused at the crash
    with synelo_serve(folder, workers, **env) as served:
        for s in servers:
            s.deliver_the_rest(served.url)
        with httpx.Client(headers={"Authorization": f"Bearer {ADMIN}"}) as c:
            assert c.get(f"{served.url}/v1/pools/default").json()["rounds"] == len(sent)

    engine = create_engine(database_url)
    with engine.connect() as conn:
        stored = dict(conn.execute(text("SELECT round_id, id FROM rounds")).all())
        assert set(stored) == set(sent)  # every round sent, each once (round_id is unique)
        per_round = dict(
            conn.execute(text("SELECT round_pk, count(*) FROM journal GROUP BY round_pk")).all()
        )
        assert all(per_round.get(pk) == 4 for pk in stored.values())
        played: dict[str, int] = {}
        for body in sent.values():
            for p in (*body["teams"]["A"], *body["teams"]["B"]):
                played[p] = played.get(p, 0) + 1
        rows = conn.execute(
            text("SELECT id, player_key, rounds_played, last_journal FROM players")
        ).all()
        assert {r.player_key: r.rounds_played for r in rows} == played
        chain = {
            r.id: r
            for r in conn.execute(text('SELECT id, prev_id, "before", "after" FROM journal'))
        }
        for player in rows:  # newest first, back to the first round: unbroken
            entry, length = chain[player.last_journal], 1
            while entry.prev_id is not None:
                previous = chain[entry.prev_id]
                assert previous.after == entry.before
                entry, length = previous, length + 1
            assert entry.before == 1000 and length == player.rounds_played
    engine.dispose()


def test_sqlite_survives_kill_9_under_load(tmp_path: Path) -> None:
    _crash_and_recover(tmp_path, 1, f"sqlite:///{tmp_path / 'synelo.db'}")


@pytest.mark.postgres
def test_postgresql_with_two_workers_survives_kill_9_under_load(
    pg_schema_url: str, tmp_path: Path
) -> None:
    with own_pg_schema() as url:
        _crash_and_recover(tmp_path, 2, url)
