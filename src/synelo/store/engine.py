"""Engines for SQLite (embedded default) and PostgreSQL, and Alembic migrations."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

# Alembic is imported where it migrates: the commands that only read and write rows (synelo
# pool, token, backup) start without it.
if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
IMMEDIATE = "synelo_immediate"  # execution option: take SQLite's write lock at BEGIN
PREPARE_THRESHOLD = 5  # psycopg prepares a statement on the server at its 5th run

Synchronous = Literal["NORMAL", "FULL"]  # SQLite's synchronous setting (docs/storage.md)


def owner_only_file(path: Path) -> None:
    """Create the SQLite database file as its owner's only (0600), if it does not exist, so
    that SQLite opens it rather than making it with the umask's mode (0644 as a rule); its
    -wal and -shm files take the same mode. The file holds the token digests, the sessions
    and every rating, so it is private, and so is its folder when this makes it (0700, as
    `init` makes the data folder; `migrate` and `restore` made it 0755). An existing file
    or folder keeps the mode its operator gave it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


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
            owner_only_file(Path(u.database))
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
    from alembic.config import Config

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
    from alembic import command

    command.upgrade(alembic_config(engine), revision)


class DatabaseNotReady(RuntimeError):
    """The configured database cannot serve a command as it is: it does not exist, does not
    answer, or needs its migrations. The message says which, and what to run."""


def no_database(path: Path) -> str:
    """What a command that needs the SQLite database at `path` says when it is not there:
    where it looked, and what to run."""
    return (
        f"no database at {path.resolve()}: run `synelo init` first, or run this "
        "where it ran (SYNELO_DATA_DIR or SYNELO_DATABASE_URL say where)"
    )


def ready_engine(url: str, *, pool_size: int = 1) -> Engine:
    """An engine on a database that exists and is migrated, for the commands that read or
    change one (DatabaseNotReady otherwise). Unlike `create_store_engine`, it never
    creates a SQLite file: only `init`, `migrate` and `restore` make a database."""
    u = make_url(url)
    if u.get_backend_name() == "sqlite" and u.database and u.database != ":memory:":
        path = Path(u.database)
        if not path.is_file():
            raise DatabaseNotReady(no_database(path))
    engine = create_store_engine(url, pool_size=pool_size)
    try:
        pending = pending_migrations(engine)
    except DBAPIError as exc:
        engine.dispose()
        raise DatabaseNotReady(f"cannot use the database at {_shown(u)}: {_reason(exc)}") from None
    if pending:
        engine.dispose()
        raise DatabaseNotReady(
            f"the database at {_shown(u)} needs its migrations: "
            "run `synelo migrate` (or `synelo init`) first"
        )
    return engine


def migrated_engine(url: str, *, pool_size: int = 1) -> Engine:
    """An engine on the database at `url`, made (SQLite) and migrated to the newest
    revision; DatabaseNotReady when it does not answer."""
    engine = create_store_engine(url, pool_size=pool_size)
    try:
        migrate(engine)
    except DBAPIError as exc:
        engine.dispose()
        raise DatabaseNotReady(
            f"cannot use the database at {_shown(make_url(url))}: {_reason(exc)}"
        ) from None
    return engine


def _shown(u: URL) -> str:
    return u.render_as_string(hide_password=True)


def _reason(exc: DBAPIError) -> str:
    """The driver's own words, first line (SQLAlchemy's wrapping adds the statement)."""
    lines = str(exc.orig).strip().splitlines() or [type(exc.orig).__name__]
    return lines[0]
