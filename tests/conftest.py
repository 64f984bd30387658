"""Shared fixtures: databases (SQLite and PostgreSQL) and a real uvicorn server per database.

PostgreSQL is the server at SYNELO_TEST_PG_URL (default 127.0.0.1:5432, database `test`);
each test session works in a schema of its own and drops it at the end. When CI=true an
unreachable PostgreSQL fails the run instead of skipping its tests.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from sqlalchemy import Engine, create_engine, text

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store

PG_URL = os.environ.get("SYNELO_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
ADMIN = "admin-token-for-tests"
SERVER = "server-token-for-tests"


# A timeout for the Python client in tests that talk to a live server: the client's own 2 s
# default is for game servers, and a slow answer on a machine other tests load is not what
# these tests check.
LOADED = 30.0

# The slowest test files, slowest first (seconds, the sum of their tests' durations under
# `make test`'s covered pass, -n 4 on two cores, 2026-11-29; a test's duration there is
# about twice its time alone). The order matters here, not the figures; `pytest
# --durations=0` tells when this list needs an update. `make test` runs the suite with `-n 4
# --dist loadfile --no-loadscope-reorder`: the processes take whole files in collection
# order, each the next one when it is nearly done. With these first, the long files run
# while the short ones fill in around them, instead of one starting late and running alone
# at the end while the others wait.
SLOW_FILES = (
    "tests/integration/test_crash.py",  # 182
    "tests/docs/test_docs_commands.py",  # 179
    "tests/integration/test_rerate.py",  # 175
    "tests/integration/test_simulate.py",  # 125
    "tests/integration/test_seasons.py",  # 107
    "tests/plugin/test_emulator_scenarios.py",  # 97
    "tests/docs/test_wheel.py",  # 68
    "tests/plugin/test_game_scripts_smx.py",  # 64
    "tests/integration/test_autotune.py",  # 52
    "tests/integration/test_schemathesis.py",  # 48
    "tests/integration/test_bench_update.py",  # 46
    "tests/integration/test_api_models.py",  # 43
    "tests/browser/test_admin_pages.py",  # 37
    "tests/browser/test_advice_page.py",  # 36
    "tests/integration/test_cli_pool_set.py",  # 35
    "tests/integration/test_journal_replay.py",  # 34
    "tests/plugin/test_emulator_scores.py",  # 33
    "tests/browser/test_security_headers.py",  # 32
    "tests/integration/test_advise.py",  # 31
    "tests/integration/test_advise_cancel.py",  # 29
    "tests/browser/test_pages.py",  # 26
    "tests/integration/test_pool_import.py",  # 26
    "tests/integration/test_hardening2.py",  # 26
    "tests/integration/test_api_rounds.py",  # 26
    "tests/integration/test_health_page.py",  # 26
    "tests/plugin/test_emulator.py",  # 24
    "tests/integration/test_concurrency.py",  # 22
    "tests/plugin/test_emulator_review.py",  # 20
    "tests/integration/test_simulate_history.py",  # 20
    "tests/plugin/test_plugin_vm.py",  # 19
    "tests/integration/test_pages_admin.py",  # 18
    "tests/integration/test_temperature_shown.py",  # 18
    "tests/unit/test_whr_replay.py",  # 16
    "tests/integration/test_api_allplay.py",  # 16
    "tests/unit/test_sim_shapes.py",  # 16
    "tests/unit/test_tune.py",  # 16
    "tests/unit/test_param_bounds.py",  # 16
    "tests/integration/test_uneven_legacy_pool.py",  # 14
    "tests/plugin/test_emulator_faults.py",  # 14
    "tests/integration/test_cli_evaluation.py",  # 13
    "tests/integration/test_cli.py",  # 13
    "tests/integration/test_pages_settings.py",  # 13
    "tests/integration/test_bench_compare.py",  # 12
    "tests/integration/test_pg_plans.py",  # 12
    "tests/integration/test_api_public.py",  # 12
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of `SLOW_FILES` first, in its order; the rest as collected. (Last of the
    hooks: after pytest has grouped the tests by the session fixtures' parameters.)"""
    rank = {path: i for i, path in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(SLOW_FILES)))


@dataclass
class MovableClock:
    """A clock the tests can move forward; the server reads it for every timestamp."""

    offset: timedelta = field(default_factory=timedelta)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _pg_available() -> bool:
    try:
        with create_engine(PG_URL).connect() as conn:
            conn.execute(text("select 1"))
        return True
    except Exception:
        return False


def _sqlite_engine(folder: Path) -> Engine:
    return create_store_engine(f"sqlite:///{folder / 'synelo.db'}")


@pytest.fixture(scope="session")
def pg_schema_url() -> Iterator[str]:
    """A fresh schema in the PostgreSQL test database, dropped afterwards."""
    if not _pg_available():
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is unreachable at {PG_URL} (CI=true: this is a failure)")
        pytest.skip(f"PostgreSQL is unreachable at {PG_URL}")
    with own_pg_schema() as url:
        yield url


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """A migrated engine on each database synelo supports."""
    if request.param == "sqlite":
        engine = _sqlite_engine(tmp_path_factory.mktemp("sqlite"))
    else:
        engine = create_store_engine(request.getfixturevalue("pg_schema_url"))
    migrate(engine)
    yield engine
    engine.dispose()


@dataclass
class LiveServer:
    url: str
    store: Store
    clock: MovableClock
    settings: Settings  # the app's own: a test may change a setting and put it back
    app: Any = None  # the FastAPI app (its state: the writer, the re-rate jobs)

    def client(self, token: str | None = ADMIN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The tests send as fast as they can (400 rounds in a row with one server token): a load no
# game server makes, so no rate limits for them, nor a bound on one token's requests in
# progress (the fair share); test_rate_limits.py and test_fair_share.py run servers of their
# own with them.
NO_RATE_LIMITS: dict[str, Any] = {
    "rate_server_rounds": None,
    "rate_server_requests": None,
    "rate_address_requests": None,
    "rate_public_requests": None,
    "fair_share": None,
}


@pytest.fixture(scope="session")
def live(backend: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """`synelo`'s app under a real uvicorn on loopback, one per database."""
    clock = MovableClock()
    store = Store(backend, clock)
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("data"),
        admin_tokens=[ADMIN],
        server_tokens=[SERVER],
        autotune_check_s=0,  # the tests start auto-tunes themselves
        **NO_RATE_LIMITS,
    )
    app = create_app(settings, store=store)
    with serving(app) as url:
        yield LiveServer(url, store, clock, settings, app)


@contextmanager
def serving(app: Any, **options: Any) -> Iterator[str]:
    """`app` under a real uvicorn on a free loopback port, on a thread; yields its URL."""
    port = _free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **options
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def admin(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client(ADMIN) as c:
        yield c


@pytest.fixture
def server(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client(SERVER) as c:
        yield c


@pytest.fixture
def pool(admin: httpx.Client) -> str:
    """A new pool (team size 12, Θ 2400, the design's value: the hand-worked values of the
    tests use it) for one test, so tests never see each other's players."""
    name = f"t{uuid.uuid4().hex[:16]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 12, "theta": 2400})
    assert r.status_code == 201, r.text
    return name


@pytest.fixture
def clock(live: LiveServer) -> Iterator[MovableClock]:
    yield live.clock
    live.clock.offset = timedelta()


@pytest.fixture
def threaded_jobs(live: LiveServer) -> Iterator[None]:
    """Re-rate jobs on a thread of the server rather than in a spawned process (the same
    `run_job`; a spawn costs a second or two), for tests about what a job does, not where."""
    live.app.state.jobs.separate_process = False
    yield
    live.app.state.jobs.separate_process = True


@dataclass
class Served:
    """A `synelo serve` process group: its URL and process (see `synelo_serve`)."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL to every process of the group: the master and its workers."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def workers(self) -> list[int]:
        """The pids of uvicorn's workers (`--workers` above 1): the master's children, but
        multiprocessing's resource tracker."""
        tasks = Path(f"/proc/{self.proc.pid}/task").iterdir()
        children = [int(pid) for task in tasks for pid in (task / "children").read_text().split()]
        return sorted(
            pid
            for pid in children
            if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        )


def rss_kib(pid: int) -> int:
    """A process's resident memory, KiB (VmRSS in /proc/PID/status)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status)[1])  # type: ignore[index]


@contextmanager
def synelo_serve(folder: Path, workers: int = 1, **env: str) -> Iterator[Served]:
    """`synelo serve --workers N` as an operator runs it, with the test tokens, the data
    folder `folder` and `env` (SYNELO_* variables) on top of a clean environment; in a
    process group of its own, so that `kill` reaches the workers too. Stopped afterwards."""
    port = _free_port()
    full = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    full.update(SYNELO_DATA_DIR=str(folder), SYNELO_ADMIN_TOKENS=ADMIN, SYNELO_SERVER_TOKENS=SERVER)
    full.update(env)
    log = folder / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("synelo")),
                "serve",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--log-level",
                "warning",
            ],
            env=full,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = Served(f"http://127.0.0.1:{port}", proc, log)
    try:
        # a hang guard: two workers on a 2-core machine loaded to 12 took over 60 s to start
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{served.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield served
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                served.kill()


@contextmanager
def own_pg_schema() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a new schema of its own, dropped afterwards
    (for a test that needs an empty database, or drops and restores one)."""
    schema = f"synelo_own_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def steam(n: int) -> str:
    """The SteamID64 of account number n (n ≥ 1)."""
    return str(76561197960265728 + n)


def post_round(server: httpx.Client, pool: str, a: list[int], b: list[int], winner: str) -> str:
    """Post a round of accounts `a` against `b`, named "Player n"; its round_id."""
    round_id = uuid.uuid4().hex
    body: dict[str, Any] = {
        "round_id": round_id,
        "server_id": "s",
        "winner": winner,
        "teams": {"A": [steam(i) for i in a], "B": [steam(i) for i in b]},
        "names": {steam(i): f"Player {i}" for i in (*a, *b)},
    }
    r = server.post(f"/v1/pools/{pool}/rounds", json=body)
    assert r.status_code == 201, r.text
    return round_id
