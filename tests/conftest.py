"""Shared fixtures: databases (SQLite and PostgreSQL) and a real uvicorn server per database.

PostgreSQL is the server at SYNELO_TEST_PG_URL (default 127.0.0.1:5432, database `test`);
each test session works in a schema of its own and drops it at the end. When CI=true an
unreachable PostgreSQL fails the run instead of skipping its tests.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
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
    schema = f"synelo_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in PG_URL else "?"
    yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


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
    )
    port = _free_port()
    app = create_app(settings, store=store)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            access_log=False,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    yield LiveServer(f"http://127.0.0.1:{port}", store, clock, settings, app)
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


def steam(n: int) -> str:
    """The SteamID64 of account number n (n ≥ 1)."""
    return str(76561197960265728 + n)
