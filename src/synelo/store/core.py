"""The store's shared machinery: the engine and its clock, the read and write transactions,
and what a store keeps in memory between them (decoded windows, public boards, pools read
lately). Every other store module works through a `Core`.

Writers to a pool serialise on the pool: SQLite by ``BEGIN IMMEDIATE`` (the write lock is
held before anything is read), PostgreSQL by ``SELECT … FOR UPDATE`` on the pool row and then
on the player rows in player-key order, so locks are always taken in the same order and a
read-modify-write never interleaves with another.
"""

from __future__ import annotations

import threading
import time
from collections import namedtuple
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, select

from synelo.domain import Pool, UnknownPool
from synelo.store import driver_sql
from synelo.store.board import BoardCache
from synelo.store.engine import IMMEDIATE
from synelo.store.rows import as_pool
from synelo.store.tables import pools
from synelo.store.window_cache import WindowCache

POOL_COLUMNS = tuple(c.name for c in pools.c)
PoolRow = namedtuple("PoolRow", POOL_COLUMNS)  # type: ignore[misc]  # a pools row by column

Clock = Callable[[], datetime]
POOL_MEMORY_S = 1.0  # a worker notices a pool another deleted (or made anew) within this


def utcnow() -> datetime:
    return datetime.now(UTC)


def locked_pool(conn: Connection, name: str) -> Pool:
    """The pool's row, locked for the rest of `conn`'s write transaction (UnknownPool)."""
    row = conn.execute(select(pools).where(pools.c.name == name).with_for_update()).first()
    if row is None:
        raise UnknownPool(name)
    return as_pool(row)


class Core:
    """An engine, its transactions, and the store's memory (see the module)."""

    def __init__(self, engine: Engine, clock: Clock = utcnow, window_cache: int = 5_000) -> None:
        self.engine = engine
        self.clock = clock
        self.windows = WindowCache(window_cache)  # the round path's decoded windows
        self.boards = BoardCache()  # each pool's public board (store/board.py)
        self._pools: dict[str, tuple[Pool, float]] = {}  # name: (pool, when read)
        self._writer = threading.Lock() if engine.dialect.name == "sqlite" else nullcontext()

    # --- transactions -----------------------------------------------------------------------
    @contextmanager
    def write_transaction(self, conn: Connection | None = None) -> Iterator[Connection]:
        """A write transaction (the round writer rates whole batches in one), on `conn` if
        given (from `write_connection`, kept by its one thread) or on a pooled connection.
        On SQLite the threads of this process queue on a lock first: SQLite's own busy
        handler would make them poll with sleeps of up to 100 ms. A failure forgets the
        cached windows, which the rolled-back transaction had advanced."""
        try:
            with self._writer:
                if conn is not None:
                    with conn.begin():
                        yield conn
                    return
                with self.write_connection() as own, own.begin():
                    yield own
        except BaseException:
            self.windows.clear()
            raise

    def write_connection(self, *, check_references: bool = True) -> Connection:
        """A connection whose transactions are write transactions (SQLite: BEGIN IMMEDIATE).
        The round writer keeps one for as long as it works, which spares every batch a pool
        checkout (and, on PostgreSQL, the pre-ping that comes with it).

        ``check_references=False`` (the round writer's): SQLite's foreign-key checks are off
        on this connection. Every row it inserts refers only to rows it read or wrote in
        the same transaction under the write lock, and it deletes nothing that others refer
        to, so no check could fail; they cost three index lookups per journal row (~5 % of a
        round). PostgreSQL keeps its checks, and plans this connection's statements on
        purpose (docs/storage.md, "Plans on PostgreSQL"):

        - no sequential scan (`enable_seqscan = off`): every statement of a round finds its
          rows by a key, and the planner, costing a read from disk at 4 times a read in
          order, took a scan of a never-analyzed players table of 1,000 rows for cheaper
          than a round's 24 lookups by primary key;
        - one plan per prepared statement, made once (`plan_cache_mode =
          force_generic_plan`): with scans ruled out, each statement's only plan is its
          index lookups, whatever the tables' size or statistics, and planning every run
          cost a quarter of a round.

        Such a connection must be discarded, not returned to the pool: see `discard`."""
        conn = self.engine.connect().execution_options(**{IMMEDIATE: True})
        if not check_references:
            try:
                driver: Any = conn.connection.driver_connection
                if self.engine.dialect.name == "sqlite":
                    driver.execute("PRAGMA foreign_keys=OFF")
                else:  # a psycopg.Connection, outside any transaction SQLAlchemy began
                    driver.execute("SET enable_seqscan = off")
                    driver.execute("SET plan_cache_mode = force_generic_plan")
                    driver.commit()
            except BaseException:
                self.discard(conn)
                raise
        return conn

    @staticmethod
    def discard(conn: Connection) -> None:
        """Close a connection from `write_connection` for good (its settings may differ from
        the pool's): the pool opens a fresh one in its place. If invalidating fails, the
        connection is left unclosed rather than returned to the pool."""
        conn.invalidate()
        conn.close()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction on a pooled connection (on PostgreSQL, each statement sees
        what was committed when it began: see `snapshot_read`)."""
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def snapshot_read(self) -> Iterator[Connection]:
        """A read transaction whose statements all see one snapshot: PostgreSQL's REPEATABLE
        READ (its default, READ COMMITTED, lets each statement see commits made between
        them, such as a re-rate's swap); a SQLite read transaction is one already."""
        with self.engine.connect() as conn:
            if conn.dialect.name != "sqlite":
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    def ping(self) -> bool:
        """Whether the database answers."""
        try:
            with self.read() as conn:
                conn.exec_driver_sql("SELECT 1")
            return True
        except Exception:
            return False

    # --- the pools read lately --------------------------------------------------------------
    def get_pool(self, name: str) -> Pool:
        """The pool as stored now (its counters included)."""
        with self.read() as conn:
            row = conn.execute(select(pools).where(pools.c.name == name)).first()
        if row is None:
            raise UnknownPool(name)
        pool = as_pool(row)
        self._pools[name] = (pool, time.monotonic())
        return pool

    def known_pool(self, name: str, within_s: float = POOL_MEMORY_S) -> Pool | None:
        """The pool as read in this process within the last `within_s` seconds, without
        touching the database. A pool's id, team size and id kind never change, but another
        worker may delete it and make a new one of the same name; a re-rate may change its
        model and parameters (the reads that use them re-read the pool by id)."""
        hit = self._pools.get(name)
        if hit is None or time.monotonic() - hit[1] >= within_s:
            return None
        return hit[0]

    def pool_by_id(self, conn: Connection, pool: Pool) -> Pool:
        """The pool's row now (its settings may have changed since `pool` was read)."""
        found = driver_sql.typed_rows(conn, "pools", POOL_COLUMNS, "id = ?", (pool.id,))
        row: Any = PoolRow._make(found[0]) if found else None
        # deleted, by another worker perhaps; its name may be a new pool's, and SQLite may
        # give its id to a new pool of another name
        if row is None or row.name != pool.name:
            self._pools.pop(pool.name, None)
            raise UnknownPool(pool.name)
        fresh = as_pool(row)
        self._pools[fresh.name] = (fresh, time.monotonic())
        return fresh

    def forget_pool(self, name: str) -> None:
        """Forget what was read of the pool (it was deleted)."""
        self._pools.pop(name, None)
