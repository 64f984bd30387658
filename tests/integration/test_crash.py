"""kill -9 under load, then a restart and the clients' retries: nothing lost, nothing doubled;
and kill -9 in the middle of a re-rate (a void, an unvoid, an auto-tune, a WHR refit).

`synelo serve` runs as a real process group (SQLite with one worker; PostgreSQL with two).
Game servers, one thread each, report 2v2 rounds with unique round_ids as fast as they are
answered and keep every report not yet acknowledged, as the client library's ring buffer
does. The whole group is killed with SIGKILL mid-load, started again on the same database,
and every unacknowledged report is sent again, same round_id, until it is. Then each round
sent is stored exactly once, its journal rows are there, and each player's journal chain
runs unbroken from 1000 with rounds_played equal to the rounds they played.

During a re-rate, the job parks at the end of its phase's work (`synelo.rerate.hold`, named
by SYNELO_TEST_HOLD) or, for PostgreSQL's unvoid, inside its swap's transaction on a row the
test locks, and says so; only then is the service killed, so the kill lands in the phase
however fast the job is. Started again, the service reads the job failed at once, and the
same re-rate then gives the pool the ratings of a twin pool re-rated without a crash.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.pool import NullPool

from synelo.rerate.hold import HOLD_ENV
from synelo.store.engine import create_store_engine, migrate
from tests.conftest import ADMIN, SERVER, own_pg_schema, steam, synelo_serve
from tests.integration.test_api_models import PLAYERS as STEAM_PLAYERS
from tests.integration.test_api_models import new_pool, random_rounds
from tests.integration.test_api_whr import uneven_rounds
from tests.integration.test_autotune import PLAYERS as TEXT_PLAYERS
from tests.integration.test_autotune import elo_pool, skilled_rounds
from tests.integration.test_rerate import everyone, play, wait

Body = dict[str, Any]

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


def _init(folder: Path, env: dict[str, str]) -> None:
    """`synelo init` of the data folder and database, as an operator runs it."""
    init = subprocess.run(
        [sys.executable, "-m", "synelo", "init"],
        env={**os.environ, "SYNELO_DATA_DIR": str(folder), **env},
        capture_output=True,
        text=True,
    )
    assert init.returncode == 0, init.stderr


def _crash_and_recover(folder: Path, workers: int, database_url: str) -> None:
    env = {"SYNELO_DATABASE_URL": database_url}
    _init(folder, env)
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
        rows = conn.execute(text("SELECT player_key, rounds_played FROM players")).all()
        assert {r.player_key: r.rounds_played for r in rows} == played
        for key, chain in chains(conn, "default").items():  # back to the first round
            assert chain[0][1] == 1000 and len(chain) == played[key]
    engine.dispose()


def chains(conn: Connection, pool: str) -> dict[str, list[tuple[str, float, float]]]:
    """Each player's journal chain in force, first row first, as (kind, before, after);
    unbroken: it runs from the player's `last_journal` back by `prev_id`, each row taking
    up where the one before it left off, and holds as many round rows as the player's
    `rounds_played`."""
    pool_id, generation = conn.execute(
        text("SELECT id, generation FROM pools WHERE name = :n"), {"n": pool}
    ).one()
    rows = {
        r.id: r
        for r in conn.execute(
            text(
                'SELECT id, prev_id, kind, "before", "after", generation FROM journal'
                " WHERE pool_id = :p"
            ),
            {"p": pool_id},
        )
    }
    out = {}
    for player in conn.execute(
        text("SELECT player_key, rounds_played, last_journal FROM players WHERE pool_id = :p"),
        {"p": pool_id},
    ):
        chain, at = [], player.last_journal
        while at is not None:
            entry = rows[at]
            assert entry.generation == generation
            if chain:
                assert entry.after == chain[-1][1], player.player_key
            chain.append((entry.kind, entry.before, entry.after))
            at = entry.prev_id
        chain.reverse()
        assert sum(kind == "round" for kind, _, _ in chain) == player.rounds_played
        out[player.player_key] = chain
    return out


def test_sqlite_survives_kill_9_under_load(tmp_path: Path) -> None:
    _crash_and_recover(tmp_path, 1, f"sqlite:///{tmp_path / 'synelo.db'}")


@pytest.mark.postgres
def test_postgresql_with_two_workers_survives_kill_9_under_load(
    pg_schema_url: str, tmp_path: Path
) -> None:
    with own_pg_schema() as url:
        _crash_and_recover(tmp_path, 2, url)


# --- kill -9 during a re-rate: a void, an unvoid, an auto-tune, a WHR refit ------------------

NO_LIMITS = {
    f"SYNELO_RATE_{k}": "100000" for k in ("SERVER_ROUNDS", "SERVER_REQUESTS", "ADDRESS_REQUESTS")
}
NO_SCHEDULE = {"SYNELO_AUTOTUNE_CHECK_S": "0"}  # no auto-tune or refit but the test's own
HELD_S = 120.0  # the longest a job may take to reach its hold, or to end (under load)


@dataclass
class Rerate:
    """A re-rate to crash: the pool it needs, its rounds, what it needs done first, how it
    starts, its job's kind and the phase in which the kill finds it, parked at the end of
    the phase's work (`synelo.rerate.hold`); `mid_swap`: on PostgreSQL, parked inside its
    swap's transaction instead, on a row the test locks."""

    make_pool: Callable[[httpx.Client], str]
    rounds: Callable[[], list[Body]]
    players: list[str]
    start: Callable[[httpx.Client, str, list[Body]], httpx.Response]
    kind: str
    phase: str
    before: Callable[[httpx.Client, str, list[Body]], None] = lambda admin, pool, bodies: None
    mid_swap: bool = False


def _void(admin: httpx.Client, pool: str, bodies: list[Body]) -> httpx.Response:
    return admin.post(
        f"/v1/pools/{pool}/rounds/{bodies[60]['round_id']}/void", json={"reason": "x"}
    )


def _unvoid(admin: httpx.Client, pool: str, bodies: list[Body]) -> httpx.Response:
    return admin.post(f"/v1/pools/{pool}/rounds/{bodies[60]['round_id']}/unvoid", json={})


def _voided(job: Body) -> None:
    assert job["kind"] == "void"


RERATES = {
    "void": Rerate(
        lambda admin: new_pool(admin, "synelo"),
        lambda: random_rounds(200, seed=31),
        STEAM_PLAYERS,
        _void,
        "void",
        "rating",
    ),
    "unvoid": Rerate(
        lambda admin: new_pool(admin, "synelo"),
        lambda: random_rounds(200, seed=32),
        STEAM_PLAYERS,
        _unvoid,
        "unvoid",
        "swapping",
        before=lambda admin, pool, bodies: _voided(wait(admin, pool, _void(admin, pool, bodies))),
        mid_swap=True,
    ),
    "autotune": Rerate(
        lambda admin: elo_pool(
            admin, 1, {"every": 100, "fit": ["k"], "holdout": 0.3, "margin": 0.001}
        ),
        lambda: skilled_rounds(400, seed=33),
        TEXT_PLAYERS,
        lambda admin, pool, bodies: admin.post(f"/v1/pools/{pool}/autotune"),
        "tune",
        "fitting",
    ),
    "whr-refit": Rerate(
        lambda admin: new_pool(admin, "whr"),
        lambda: uneven_rounds(200, seed=34),
        STEAM_PLAYERS,
        lambda admin, pool, bodies: admin.post(f"/v1/pools/{pool}/refit", json={}),
        "refit",
        "solving",
    ),
}


class JobHold:
    """The test's end of `synelo.rerate.hold`: the SYNELO_TEST_HOLD setting for the
    service, and the FIFO through which the job says it has parked."""

    def __init__(self, folder: Path, kind: str, phase: str) -> None:
        fifo = folder / "hold.fifo"
        os.mkfifo(fifo)
        # open before the job's open for writing, which then does not wait for a reader
        self.fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.env = {HOLD_ENV: f"{kind} {phase} {fifo}"}

    def reached(self) -> str:
        """What the job wrote once parked ("KIND PHASE"); fails after HELD_S without it."""
        ready, _, _ = select.select([self.fd], [], [], HELD_S)
        assert ready, "the job never reached its hold"
        return os.read(self.fd, 200).decode().strip()

    def close(self) -> None:
        os.close(self.fd)


class SwapLock:
    """PostgreSQL: one of the pool's players locked by the test before the job starts, so
    that the job's swap, the pool locked inside its transaction, waits on it."""

    def __init__(self, database_url: str, pool: str) -> None:
        self.engine = create_engine(database_url, poolclass=NullPool)
        self.conn = self.engine.connect()
        self.conn.begin()
        self.conn.execute(
            text(
                "SELECT p.id FROM players p JOIN pools ON pools.id = p.pool_id"
                " WHERE pools.name = :n ORDER BY p.player_key LIMIT 1 FOR UPDATE OF p"
            ),
            {"n": pool},
        )

    def waited_on(self) -> None:
        """Until the job waits on the lock (PostgreSQL's pg_blocking_pids says so)."""
        me = self.conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        query = text("SELECT count(*) FROM pg_stat_activity WHERE :me = ANY(pg_blocking_pids(pid))")
        deadline = time.monotonic() + HELD_S
        with self.engine.connect() as watch:
            while not watch.execute(query, {"me": me}).scalar_one():
                assert time.monotonic() < deadline, "the job never waited on the test's lock"
                watch.rollback()  # pg_stat_activity keeps one snapshot for a transaction
                time.sleep(0.02)

    def release(self) -> None:
        self.conn.close()
        self.engine.dispose()


def _job_row(engine: Engine, job_id: int) -> Any:
    with engine.connect() as conn:
        return conn.execute(
            text("SELECT status, phase, error FROM jobs WHERE id = :j"), {"j": job_id}
        ).one()


def _kill_during(name: str, folder: Path, workers: int, database_url: str) -> None:
    """Start the re-rate, kill -9 the whole service once its job is parked in its phase,
    start the service again: the job reads failed at once, the same re-rate starts and
    ends, and the pool then equals its twin, fed the same rounds and re-rated without a
    crash: the same rounds, once each, the same ratings, journals and counts."""
    rerate = RERATES[name]
    env = {"SYNELO_DATABASE_URL": database_url, **NO_LIMITS, **NO_SCHEDULE}
    migrated = create_store_engine(database_url, pool_size=1)
    migrate(migrated)  # in this process: `synelo init` would cost a process start
    migrated.dispose()
    engine = create_engine(database_url, poolclass=NullPool)
    in_swap = rerate.mid_swap and engine.dialect.name == "postgresql"
    bodies = rerate.rounds()
    hold = JobHold(folder, rerate.kind, rerate.phase)
    try:
        with synelo_serve(folder, workers, **env, **({} if in_swap else hold.env)) as served:
            admin, server = _clients(served.url)
            pool, twin = rerate.make_pool(admin), rerate.make_pool(admin)
            feeds = [threading.Thread(target=play, args=(server, p, bodies)) for p in (pool, twin)]
            for feed in feeds:
                feed.start()
            for feed in feeds:
                feed.join(120)
            for p in (pool, twin):
                rerate.before(admin, p, bodies)
            lock = SwapLock(database_url, pool) if in_swap else None
            try:
                started = rerate.start(admin, pool, bodies)
                assert started.status_code == 202, started.text
                crashed = started.json()["id"]
                if lock is not None:
                    lock.waited_on()
                else:
                    assert hold.reached() == f"{rerate.kind} {rerate.phase}"
                assert tuple(_job_row(engine, crashed))[:2] == ("running", rerate.phase)
                served.kill()
            finally:
                if lock is not None:
                    lock.release()
    finally:
        hold.close()
    assert _job_row(engine, crashed).status == "running"  # killed mid-way
    with synelo_serve(folder, workers, **env) as served:
        admin, server = _clients(served.url)
        read = admin.get(f"/v1/pools/{pool}/jobs/{crashed}").json()  # at once: its process
        assert read["status"] == "failed" and "is gone" in read["error"], read  # is gone
        again = [(p, rerate.start(admin, p, bodies)) for p in (pool, twin)]  # side by side
        for p, answer in again:
            wait(admin, p, answer, HELD_S)
        assert everyone(server, pool, stamps=False, players=rerate.players) == everyone(
            server, twin, stamps=False, players=rerate.players
        )
        shown, expected = (
            admin.get(f"/v1/pools/{pool}").json(),
            admin.get(f"/v1/pools/{twin}").json(),
        )
        for key in ("model", "params", "rounds", "voided", "autotune"):
            assert shown[key] == expected[key], key
    _same_rounds_and_journals(engine, pool, twin, bodies)
    engine.dispose()


def _same_rounds_and_journals(engine: Engine, pool: str, twin: str, bodies: list[Body]) -> None:
    """Every round sent stored once in each pool; the journal in force of each round the
    twin's, and every player's chain too, once the old generations are swept."""
    sent = sorted(b["round_id"] for b in bodies)
    per_round = text(
        "SELECT r.round_id, count(j.id) FROM rounds r JOIN pools ON pools.id = r.pool_id"
        " LEFT JOIN journal j ON j.round_pk = r.id AND j.generation = pools.generation"
        " WHERE pools.name = :n GROUP BY r.round_id"
    )
    stale = text(
        "SELECT count(*) FROM journal j JOIN pools ON pools.id = j.pool_id"
        " WHERE pools.name = :n AND j.generation <> pools.generation"
    )
    deadline = time.monotonic() + 30
    with engine.connect() as conn:
        for name in (pool, twin):
            ids = conn.execute(
                text(
                    "SELECT round_id FROM rounds r JOIN pools ON pools.id = r.pool_id"
                    " WHERE pools.name = :n"
                ),
                {"n": name},
            ).scalars()
            assert sorted(ids) == sent
            while conn.execute(stale, {"n": name}).scalar_one():  # the clean-up runs on
                assert time.monotonic() < deadline
                time.sleep(0.1)
                conn.rollback()
        assert dict(conn.execute(per_round, {"n": pool}).all()) == dict(
            conn.execute(per_round, {"n": twin}).all()
        )
        assert chains(conn, pool) == chains(conn, twin)


def _clients(url: str) -> tuple[httpx.Client, httpx.Client]:
    return (
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30),
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {SERVER}"}, timeout=30),
    )


@pytest.mark.parametrize("name", list(RERATES))
def test_sqlite_survives_kill_9_during_a_rerate(tmp_path: Path, name: str) -> None:
    _kill_during(name, tmp_path, 1, f"sqlite:///{tmp_path / 'synelo.db'}")


@pytest.mark.postgres
@pytest.mark.parametrize("name", list(RERATES))
def test_postgresql_survives_kill_9_during_a_rerate(
    pg_schema_url: str, tmp_path: Path, name: str
) -> None:
    with own_pg_schema() as url:
        _kill_during(name, tmp_path, 2, url)
