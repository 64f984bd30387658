"""Back-ups and restores of the whole database, while the service runs (back-up) or is
stopped (restore).

SQLite: the online back-up API copies a consistent snapshot page by page; writers go on
meanwhile (WAL), and the copy is a plain database file. PostgreSQL: `pg_dump` in its custom
format and `pg_restore`, the tools PostgreSQL documents for this; a search_path in the URL's
options (one schema of a shared database) limits both to that schema.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path
from urllib.parse import unquote

from sqlalchemy import inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

from synelo.store.engine import create_store_engine, no_database, owner_only_file

TABLES = ("pools", "players", "rounds", "journal", "changes", "api_tokens", "alembic_version")


class BackupError(RuntimeError):
    """The back-up or restore could not be made; the message says why."""


def backup(url: str, dest: Path) -> None:
    """Write a back-up of the database at `url` (a SQLAlchemy URL) to `dest`, a new file."""
    if dest.exists():
        raise BackupError(f"{dest} exists already: choose a new file")
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        _sqlite_copy(Path(_sqlite_path(u)), dest, must_exist=True)
    else:
        _run(["pg_dump", "--format=custom", "--no-owner", f"--file={dest}", *_pg_args(u)])


def restore(src: Path, url: str, *, replace: bool = False) -> None:
    """Put the back-up `src` in place of the database at `url`. The service must be stopped.
    An existing database with data is only replaced when `replace` says so."""
    if not src.is_file():
        raise BackupError(f"{src} is not a file")
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        target = Path(_sqlite_path(u))
        _check_sqlite_backup(src)
        if target.exists() and target.stat().st_size and not replace:
            raise BackupError(f"{target} exists: pass --replace to overwrite it")
        for stale in (
            target.with_name(target.name + "-wal"),
            target.with_name(target.name + "-shm"),
        ):
            stale.unlink(missing_ok=True)
        owner_only_file(target)  # and its folder, if it makes it
        target.chmod(0o600)  # a replaced database is made anew: its owner's only too
        _sqlite_copy(src, target, must_exist=False)
    else:
        if not replace:
            _refuse_pg_with_tables(url)
        clean = ["--clean", "--if-exists"] if replace else []
        # the dump holds only its schema, so no --schema here: that would leave out the
        # schema itself, which a restore into a fresh database needs
        _run(["pg_restore", "--no-owner", "--exit-on-error", *clean, _pg_args(u)[0], str(src)])


def _refuse_pg_with_tables(url: str) -> None:
    """A PostgreSQL database (or the schema its URL's search_path names) that has any of
    synelo's tables is only replaced with --replace: the same refusal as SQLite's, before
    pg_restore would stop on the first table that exists."""
    engine = create_store_engine(url, pool_size=1)
    try:
        with engine.connect() as conn:
            present = set(inspect(conn).get_table_names()) & set(TABLES)
    except DBAPIError as exc:
        raise BackupError(f"cannot reach {_shown(url)}: {str(exc.orig).strip()}") from None
    finally:
        engine.dispose()
    if present:
        raise BackupError(
            f"{_shown(url)} has synelo's tables already: pass --replace to overwrite it"
        )


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def _sqlite_path(u: URL) -> str:
    if not u.database or u.database == ":memory:":
        raise BackupError("an in-memory SQLite database has nothing to back up")
    return u.database


def _sqlite_copy(src: Path, dest: Path, *, must_exist: bool) -> None:
    """A consistent copy through SQLite's online back-up API."""
    if must_exist and not src.is_file():
        raise BackupError(no_database(src))
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        target = sqlite3.connect(dest)
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()


def _check_sqlite_backup(src: Path) -> None:
    """`src` is a SQLite file with synelo's tables (not some other file)."""
    try:
        conn = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{src} is not a SQLite database: {exc}") from None
    missing = [t for t in TABLES if t not in names]
    if missing:
        raise BackupError(f"{src} is not a synelo back-up (no {', '.join(missing)})")


def _pg_args(u: URL) -> list[str]:
    """pg_dump/pg_restore's connection (a libpq URI), and the schema of a search_path."""
    plain = u.set(
        drivername="postgresql", query={k: v for k, v in u.query.items() if k != "options"}
    )
    args = [f"--dbname={plain.render_as_string(hide_password=False)}"]
    options = u.query.get("options")
    for option in [options] if isinstance(options, str) else list(options or ()):
        text = unquote(option)
        if text.startswith("-csearch_path="):
            args.append(f"--schema={text.split('=', 1)[1].split(',')[0]}")
    return args


def _run(command: list[str]) -> None:
    if shutil.which(command[0]) is None:
        raise BackupError(f"{command[0]} is not installed (PostgreSQL's client tools)")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise BackupError(f"{command[0]} failed: {done.stderr.strip()}")
