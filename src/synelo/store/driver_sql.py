"""The SQL of round submission, sent straight to the database driver.

A 12v12 round runs eight statements and touches 24 players; through SQLAlchemy's execution
machinery (statement contexts, result metadata) each statement costs more in Python than the
database spends on it. These statements are plain SQL that SQLite and PostgreSQL both
accept, written with ``?``, translated once to the driver's paramstyle and run on a cursor of
the connection SQLAlchemy manages, inside the transaction it began. Everything else in the
store uses Core.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy import Connection

from synelo.ratings.window import ConvergenceWindow
from synelo.store import window_codec
from synelo.store.tables import journal


class DriverSql:
    """One statement in both paramstyles (qmark for sqlite3, format for psycopg)."""

    __slots__ = ("_qmark", "_format")

    def __init__(self, sql: str) -> None:
        self._qmark = sql
        self._format = sql.replace("?", "%s")

    def sql(self, conn: Connection) -> str:
        return self._qmark if conn.dialect.paramstyle == "qmark" else self._format

    def rows(self, conn: Connection, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cur = _cursor(conn)
        cur.execute(self.sql(conn), tuple(params))
        return [tuple(r) for r in cur.fetchall()]

    def first(self, conn: Connection, params: Sequence[Any]) -> tuple[Any, ...] | None:
        cur = _cursor(conn)
        cur.execute(self.sql(conn), tuple(params))
        row = cur.fetchone()
        return None if row is None else tuple(row)

    def scalar(self, conn: Connection, params: Sequence[Any]) -> Any:
        """The first column of the first row (a statement that always returns one)."""
        cur = _cursor(conn)
        cur.execute(self.sql(conn), tuple(params))
        return cur.fetchone()[0]

    def many(self, conn: Connection, rows: Sequence[Sequence[Any]]) -> None:
        _cursor(conn).executemany(self.sql(conn), rows)


def _cursor(conn: Connection) -> Any:
    """A cursor of the connection's DBAPI connection, inside the transaction `conn` began."""
    return conn.connection.cursor()


def for_update(conn: Connection) -> str:
    """Row locks where the database has them; SQLite already holds its write lock."""
    return "" if conn.dialect.name == "sqlite" else " FOR UPDATE"


def timestamp(conn: Connection, when: datetime) -> object:
    """`when` as the driver takes it for a timestamp column (what SQLAlchemy would send)."""
    process = _timestamp_processor(conn.dialect)
    return process(when) if process else when


@lru_cache(maxsize=16)
def _timestamp_processor(dialect: Any) -> Any:
    """Built once per engine's dialect: building it cost more than a round's SQL."""
    return journal.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)


POOL = "SELECT id, params, rounds, model, generation FROM pools WHERE name = ?"
ROUND_SEEN = DriverSql("SELECT content_hash, result FROM rounds WHERE pool_id = ? AND round_id = ?")
INSERT_PLAYER = DriverSql(
    "INSERT INTO players (pool_id, player_key, rating, rounds_played, convergence) "
    "VALUES (?, ?, ?, 0, 1.0) RETURNING id"
)
UPDATE_PLAYER = DriverSql(
    "UPDATE players SET rating = ?, rounds_played = ?, last_played = ?, convergence = ?, "
    "window_state = NULL, window_tail = NULL, window_appended = ?, last_journal = ? "
    "WHERE id = ?"
)
INSERT_ROUND = DriverSql(
    "INSERT INTO rounds (pool_id, seq, round_id, server_id, map, winner, sum_a, sum_b, p_a, "
    "content_hash, result, created_at, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "RETURNING id"
)
_JOURNAL_COLUMNS = (
    "INSERT INTO journal (pool_id, player_id, round_pk, kind, team, before, "
    "after, k, p, s, created_at, prev_id, generation) VALUES "
)
_JOURNAL_ROW = "(?, ?, ?, 'round', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
COUNT_ROUND = DriverSql("UPDATE pools SET rounds = ?, brier_sum = brier_sum + ? WHERE id = ?")


class LockedPool(NamedTuple):
    """A pool as a round reads it, its row locked."""

    id: int
    params: str  # the parameters' JSON
    rounds: int  # rated so far: the last seq
    model: str  # the pool's rating model (synelo.models)
    generation: int  # the journal generation in force (a re-rate swaps in the next)


class LockedPlayer(NamedTuple):
    """A stored player as a round reads it, its row locked. (A NamedTuple: it is built
    from the driver's row tuple at the cost of the tuple itself.)"""

    id: int
    key: str
    rating: int
    rounds_played: int
    convergence: float  # F3's C for the next round
    last_journal: int | None  # the newest journal row: the cached window's version stamp
    # entries since the window (re)started; None while the window is still in the row's
    # header and tail columns (last written by a release before migration 0003)
    window_appended: int | None


def lock_pool(conn: Connection, name: str) -> LockedPool | None:
    """The pool, its row locked on PostgreSQL."""
    row = DriverSql(POOL + for_update(conn)).first(conn, (name,))
    return None if row is None else LockedPool._make(row)


def lock_players(conn: Connection, pool_id: int, keys: Sequence[str]) -> list[LockedPlayer]:
    """The stored players among `keys`, locked in key order on PostgreSQL (the fixed order
    that keeps writers deadlock-free)."""
    marks = ", ".join("?" * len(keys))
    stmt = DriverSql(
        "SELECT id, player_key, rating, rounds_played, convergence, last_journal, "
        "CASE WHEN window_state IS NULL THEN window_appended END FROM players "
        f"WHERE pool_id = ? AND player_key IN ({marks}) ORDER BY player_key" + for_update(conn)
    )
    cur = _cursor(conn)
    cur.execute(stmt.sql(conn), (pool_id, *keys))
    return list(map(LockedPlayer._make, cur.fetchall()))


def windows(
    conn: Connection,
    players: Sequence[LockedPlayer],
    chunk: int,
    size: int,
    revised: bool = False,
) -> dict[int, ConvergenceWindow]:
    """The stored convergence windows of these players (rows already locked), by id: their
    full chunks, and the unfilled newest chunk's entries from the journal (≤ chunk − 1 rows
    along each player's chain) or, for a row last written before migration 0003, from its
    own columns. Each keeps the sums of the pool's F3 (`revised`), rebuilt exactly."""
    ids = [p.id for p in players]
    marks = ", ".join("?" * len(ids))
    stored: dict[int, dict[int, bytes]] = {pid: {} for pid in ids}
    parts = DriverSql(
        f"SELECT player_id, chunk, data FROM window_chunks WHERE player_id IN ({marks})"
    )
    for pid, number, data in parts.rows(conn, ids):
        stored[pid][number] = bytes(data)
    out: dict[int, ConvergenceWindow] = {}
    legacy = [p.id for p in players if p.window_appended is None]
    if legacy:
        marks = ", ".join("?" * len(legacy))
        heads = DriverSql(
            f"SELECT id, window_state, window_tail FROM players WHERE id IN ({marks})"
        )
        for pid, header, tail in heads.rows(conn, legacy):
            if tail:
                stored[pid][window_codec.chunk_number(tail, chunk)] = bytes(tail)
            out[pid] = window_codec.from_parts(header, stored[pid], chunk, size, revised)
    for p in players:
        appended = p.window_appended
        if appended is not None:
            tail = (
                JOURNAL_TAIL.rows(conn, (p.last_journal, appended % chunk))
                if appended % chunk
                else []
            )
            out[p.id] = window_codec.from_chunks_and_tail(
                stored[p.id], tail, appended, chunk, size, revised
            )
    return out


# A player's newest journal rows, oldest first: the entries of the window's unfilled chunk.
JOURNAL_TAIL = DriverSql(
    "WITH RECURSIVE chain (id, prev_id, depth) AS ("
    " SELECT id, prev_id, 1 FROM journal WHERE id = ?"
    " UNION ALL SELECT journal.id, journal.prev_id, chain.depth + 1"
    " FROM journal JOIN chain ON journal.id = chain.prev_id WHERE chain.depth < ?)"
    " SELECT journal.after, journal.p, journal.s FROM chain JOIN journal ON journal.id = chain.id"
    " ORDER BY chain.depth DESC"
)


SAVE_CHUNK = DriverSql(
    "INSERT INTO window_chunks (player_id, chunk, data) VALUES (?, ?, ?) "
    "ON CONFLICT (player_id, chunk) DO UPDATE SET data = excluded.data"
)
# The display name last reported, written only when it changes.
SET_NAME = DriverSql(
    "UPDATE players SET name = ? WHERE pool_id = ? AND player_key = ? "
    "AND (name IS NULL OR name <> ?)"
)


def save_names(conn: Connection, pool_id: int, names: dict[str, str]) -> None:
    """Record the display names of these players (those stored; others are skipped), in
    key order: the order rounds lock players in, so that PostgreSQL never deadlocks."""
    if names:
        SET_NAME.many(conn, [(names[key], pool_id, key, names[key]) for key in sorted(names)])


# A player of a pool whose model is not SynElo: the model's state (JSON) in place of a window.
UPDATE_STATE = DriverSql(
    "UPDATE players SET rating = ?, rounds_played = ?, last_played = ?, state = ?, "
    "last_journal = ? WHERE id = ?"
)


def lock_states(conn: Connection, pool_id: int, keys: Sequence[str]) -> list[tuple[Any, ...]]:
    """(id, key, rounds_played, last_journal, state) of the stored players among `keys`, locked
    in key order on PostgreSQL, as `lock_players`."""
    marks = ", ".join("?" * len(keys))
    stmt = DriverSql(
        "SELECT id, player_key, rounds_played, last_journal, state FROM players "
        f"WHERE pool_id = ? AND player_key IN ({marks}) ORDER BY player_key" + for_update(conn)
    )
    return stmt.rows(conn, (pool_id, *keys))


DROP_CHUNKS_BEFORE = DriverSql("DELETE FROM window_chunks WHERE player_id = ? AND chunk < ?")


def insert_journal(conn: Connection, rows: Sequence[Sequence[Any]]) -> dict[int, int]:
    """Insert a round's journal rows in one statement; {player id: new journal row id}."""
    stmt = DriverSql(
        _JOURNAL_COLUMNS + ", ".join([_JOURNAL_ROW] * len(rows)) + " RETURNING id, player_id"
    )
    flat = [value for row in rows for value in row]
    return {player: jid for jid, player in stmt.rows(conn, flat)}
