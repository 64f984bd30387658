"""Engines for SQLite (embedded default) and PostgreSQL, and Alembic migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

MIGRATIONS = Path(__file__).parent / "migrations"
IMMEDIATE = "synelo_immediate"  # execution option: take SQLite's write lock at BEGIN
PREPARE_THRESHOLD = 5  # psycopg prepares a statement on the server at its 5th run

Synchronous = Literal["NORMAL", "FULL"]  # SQLite's synchronous setting (docs/storage.md)


def create_store_engine(
    url: str, *, pool_size: int = 8, synchronous: Synchronous = "FULL"
) -> Engine:
    """An engine with the settings synelo relies on.

    SQLite: WAL (readers never wait for the writer), `synchronous` (FULL: a COMMIT returns
    once the WAL is on disk; NORMAL: a power cut may lose the last commits, see
    docs/storage.md), foreign keys on, a 30 s busy timeout, and transactions begun by us so
    that a rating update can say ``BEGIN IMMEDIATE`` and hold the write lock before it reads
    what it will change.
    PostgreSQL (psycopg 3): a connection pool; updates lock rows in a fixed order instead.
    Every statement is planned for the tables as they are when it runs (`_pg_connect`), but
    the round writer's, which are lookups by key only (`Store.write_connection`).
    """
    if synchronous not in ("NORMAL", "FULL"):
        raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        if u.database and u.database != ":memory:":
            Path(u.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=pool_size,
            max_overflow=pool_size * 2,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA synchronous={synchronous}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            # Keep the hot pages (players, index leaves) in memory instead of re-reading them
            # through the OS on every round: 64 MiB of page cache, reads through mmap.
            cur.execute("PRAGMA cache_size=-65536")
            cur.execute("PRAGMA mmap_size=268435456")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn) -> None:  # type: ignore[no-untyped-def]
            immediate = conn.get_execution_options().get(IMMEDIATE)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    engine = create_engine(
        u,
        pool_size=pool_size,
        max_overflow=pool_size * 2,
        pool_pre_ping=True,
        # psycopg's default, said here on purpose: a statement run 5 times is prepared on
        # the server, which then parses it once per connection (plans: `_pg_connect`)
        connect_args={"prepare_threshold": PREPARE_THRESHOLD},
    )
    event.listen(engine, "connect", _pg_connect)
    return engine


def _pg_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    """Plan every statement anew each time it runs (``plan_cache_mode=force_custom_plan``).

    By default PostgreSQL plans a prepared statement once for any parameters (a generic
    plan) after its first five runs and keeps that plan until the statistics of a table it
    reads change. The round writer's connection lives as long as the worker and prepares its
    statements in the first rounds of a new database, while the tables are a few pages
    long: a plan that is right for a tiny table (a full scan of it) then served every round
    while the table grew to millions of rows, whenever no ANALYZE followed (autovacuum off,
    or an ANALYZE run while the table was tiny). That is issue 16's collapse of throughput.
    A custom plan is made for the table's size at each run, whatever its statistics say of
    its row density: a full scan only while the table is really that small. Planning each
    run costs less than the generic plans did (docs/storage.md, "Plans on PostgreSQL");
    prepared statements still spare the parsing. The round writer's own connection then
    rules scans out and plans once (`Store.write_connection`).
    """
    dbapi_conn.execute("SET plan_cache_mode = force_custom_plan")
    dbapi_conn.commit()


def alembic_config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def pending_migrations(engine: Engine) -> bool:
    """True when the database is not at the newest revision (never migrated, or older)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision() != head


def migrate(engine: Engine, revision: str = "head") -> None:
    """Apply the Alembic migrations up to `revision` (idempotent)."""
    command.upgrade(alembic_config(engine), revision)
