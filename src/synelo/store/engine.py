"""Engines for SQLite (embedded default) and PostgreSQL, and Alembic migrations."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

MIGRATIONS = Path(__file__).parent / "migrations"
IMMEDIATE = "synelo_immediate"  # execution option: take SQLite's write lock at BEGIN


def create_store_engine(url: str, *, pool_size: int = 8) -> Engine:
    """An engine with the settings synelo relies on.

    SQLite: WAL (readers never wait for the writer), synchronous=NORMAL, foreign keys on, a
    30 s busy timeout, and transactions begun by us so that a rating update can say
    ``BEGIN IMMEDIATE`` and hold the write lock before it reads what it will change.
    PostgreSQL (psycopg 3): a connection pool; updates lock rows in a fixed order instead.
    """
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
            cur.execute("PRAGMA synchronous=NORMAL")
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
    return create_engine(u, pool_size=pool_size, max_overflow=pool_size * 2, pool_pre_ping=True)


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
