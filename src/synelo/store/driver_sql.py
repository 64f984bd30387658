"""The SQL of round submission, sent straight to the database driver.

A 12v12 round touches 24 players in a handful of statements (on PostgreSQL five, each a
round trip made while the pool's lock is held: docs/storage.md, "Rating a round"); through
SQLAlchemy's execution machinery (statement contexts, result metadata) each statement costs
more in Python than the database spends on it. These statements are plain SQL, written with
``?``, translated once to the driver's paramstyle and run on a cursor of the connection
SQLAlchemy manages, inside the transaction it began; where the two databases differ, each
gets its own text. Everything else in the store uses Core, bar the reads of a pool and of
its players by key (`typed_rows`), which every balance request, lookup and player page makes:
through Core they took 1.2 ms of a 32-player split request's 2 ms outside the solver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

import orjson
from sqlalchemy import Connection

from synelo.ratings.window import ConvergenceWindow
from synelo.store import window_codec
from synelo.store.tables import journal, metadata


class DriverSql:
    """One statement in both paramstyles (``?`` for sqlite3, ``$1, $2 …`` for psycopg's raw
    cursor), or two (`postgresql`: PostgreSQL's own text of it, written with ``?`` too).

    `planned_each_run`: never prepared on PostgreSQL, so planned anew at each run for the
    tables as they are (on the round writer's connection, which plans generically, without
    its parameters' values). For a statement with more than one index to choose from: a
    prepared statement's one plan, made while the tables were tiny, may keep the wrong one
    until the tables' statistics change, which without ANALYZE is never."""

    __slots__ = ("_qmark", "_format", "_prepare")

    def __init__(
        self, sql: str, postgresql: str | None = None, *, planned_each_run: bool = False
    ) -> None:
        self._qmark = sql
        self._format = _numbered(postgresql or sql)
        self._prepare = False if planned_each_run else None  # None: psycopg's threshold

    def sql(self, conn: Connection) -> str:
        return self._qmark if conn.dialect.paramstyle == "qmark" else self._format

    def cursor(self, conn: Connection, params: Sequence[Any]) -> Any:
        """A cursor that ran the statement once with `params`."""
        cur = _cursor(conn)
        if conn.dialect.paramstyle == "qmark":
            cur.execute(self._qmark, tuple(params))
        else:
            cur.execute(self._format, tuple(params), prepare=self._prepare)
        return cur

    def rows(self, conn: Connection, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.cursor(conn, params).fetchall()]

    def first(self, conn: Connection, params: Sequence[Any]) -> tuple[Any, ...] | None:
        row = self.cursor(conn, params).fetchone()
        return None if row is None else tuple(row)

    def scalar(self, conn: Connection, params: Sequence[Any]) -> Any:
        """The first column of the first row (a statement that always returns one)."""
        return self.cursor(conn, params).fetchone()[0]

    def many(self, conn: Connection, rows: Sequence[Sequence[Any]]) -> None:
        _cursor(conn).executemany(self.sql(conn), rows)

    def run(self, conn: Connection, params: Sequence[Any]) -> None:
        """Execute once, for no result."""
        self.cursor(conn, params)


def typed_rows(
    conn: Connection, table: str, columns: tuple[str, ...], where: str, params: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """`columns` of `table`'s rows WHERE `where` (written with ``?``), each value as Core
    gives it: through its column type's result processor (SQLite's text of a timestamp as an
    aware datetime, its 0 or 1 of a flag as a bool)."""
    cur = _typed_select(table, columns, where).cursor(conn, params)
    codes = tuple(d[1] for d in cur.description)  # the driver's type of each column
    processors = _processors(conn.dialect, table, columns, codes)
    rows = cur.fetchall()
    if not any(processors):
        return [tuple(r) for r in rows]
    return [
        tuple(v if f is None else f(v) for f, v in zip(processors, r, strict=True)) for r in rows
    ]


@lru_cache(maxsize=64)
def _typed_select(table: str, columns: tuple[str, ...], where: str) -> DriverSql:
    return DriverSql(f"SELECT {', '.join(columns)} FROM {table} WHERE {where}")


@lru_cache(maxsize=64)
def _processors(
    dialect: Any, table: str, columns: tuple[str, ...], codes: tuple[Any, ...]
) -> tuple[Any, ...]:
    """Each column's result processor for the driver's type of it, as Core picks it (None:
    the driver's value as it is), built once: building them costs more than the read."""
    found = metadata.tables[table].c
    return tuple(
        found[name].type.dialect_impl(dialect).result_processor(dialect, code)
        for name, code in zip(columns, codes, strict=True)
    )


def _array(values: Sequence[int | float | str | None]) -> str:
    """PostgreSQL's text of an array of these numbers (or one-letter strings, or NULLs),
    which the statement casts: a Python list goes through psycopg's list dumper, written in
    Python, which took ~10 % of a worker's CPU for a round's arrays. A float's repr is the
    shortest text that reads back as the same double, so the values arrive exact."""
    return "{" + ",".join("NULL" if v is None else str(v) for v in values) + "}"


def _numbered(sql: str) -> str:
    """`sql` with its ``?`` placeholders numbered: ``$1``, ``$2`` …"""
    parts = sql.split("?")
    return "".join(f"{part}${i}" for i, part in enumerate(parts[:-1], 1)) + parts[-1]


def _cursor(conn: Connection) -> Any:
    """A cursor of the connection's DBAPI connection, inside the transaction `conn` began.
    On PostgreSQL a raw cursor: psycopg's own cursor parses every statement for its ``%s``
    placeholders, and keeps the result only for statements of up to 50 parameters, which a
    round's journal insert (12 a player) is not; the parsing cost ~15 % of a worker's CPU."""
    if conn.dialect.paramstyle == "qmark":
        return conn.connection.cursor()
    from psycopg import RawCursor  # imported once; psycopg is there whenever PostgreSQL is

    driver: Any = conn.connection.driver_connection  # a psycopg.Connection
    return RawCursor(driver)


def timestamp(conn: Connection, when: datetime) -> object:
    """`when` as the driver takes it for a timestamp column (what SQLAlchemy would send)."""
    process = _timestamp_processor(conn.dialect)
    return process(when) if process else when


@lru_cache(maxsize=16)
def _timestamp_processor(dialect: Any) -> Any:
    """Built once per engine's dialect: building it cost more than a round's SQL."""
    return journal.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)


def insert_players(
    conn: Connection, pool_id: int, keys: Sequence[str], rating: int
) -> dict[str, int]:
    """New players of the pool, with `rating` and no rounds, in `keys`' order; {key: id}. One
    statement on PostgreSQL (a new pool's first rounds add 24 players each)."""
    if not keys:
        return {}
    if conn.dialect.paramstyle == "qmark":
        return {key: INSERT_PLAYER.scalar(conn, (pool_id, key, rating)) for key in keys}
    found = _INSERT_PLAYERS_PG.rows(conn, (pool_id, rating, _text_array(keys)))
    return dict(found)


_INSERT_PLAYERS_PG = DriverSql(
    "INSERT INTO players (pool_id, player_key, rating, rounds_played, convergence) "
    "SELECT ?, k.key, ?, 0, 1.0 FROM unnest(?::text[]) WITH ORDINALITY AS k (key, n) "
    "ORDER BY k.n RETURNING player_key, id"
)
INSERT_PLAYER = DriverSql(
    "INSERT INTO players (pool_id, player_key, rating, rounds_played, convergence) "
    "VALUES (?, ?, ?, 0, 1.0) RETURNING id"
)
UPDATE_PLAYER = DriverSql(
    "UPDATE players SET rating = ?, rounds_played = ?, last_played = ?, convergence = ?, "
    "window_state = NULL, window_tail = NULL, window_appended = ?, last_journal = ? "
    "WHERE id = ?"
)


class PlayerWrite(NamedTuple):
    """What a rated round writes of one player: the journal row's fields, then the
    player's new row (rating, rounds played, F3's C for the next round, window entries)."""

    player_id: int
    team: str
    before: int
    after: int
    k: float | None
    p: float
    s: float
    prev_id: int | None  # the player's newest journal row before this round
    rating: int
    rounds_played: int
    convergence: float
    window_appended: int


def write_round(
    conn: Connection,
    round_row: Sequence[Any],
    generation: int,
    written: Sequence[PlayerWrite],
    brier_term: float,
) -> tuple[int, dict[int, int]]:
    """Store a rated SynElo round: its row (`INSERT_ROUND`'s values), a journal row per
    player, the players' new rows, and the pool's count of rounds and Brier sum. Returns
    the round's row id and {player id: new journal row id}.

    On PostgreSQL one statement, whose parts pass ids along in RETURNING: the four parts
    were as many round trips while the pool's lock was held, and that lock is what bounds the
    rounds a second of every worker together (docs/benchmarks.md)."""
    pool_id, seq, stamp = round_row[0], round_row[1], round_row[11]
    played = stamp if round_row[13] is None else round_row[13]  # the players' last_played
    if conn.dialect.paramstyle == "qmark":
        round_pk = int(INSERT_ROUND.scalar(conn, round_row))
        journal_ids = insert_journal(
            conn,
            [
                (pool_id, w.player_id, round_pk, w.team, w.before, w.after, w.k, w.p, w.s)
                + (stamp, w.prev_id, generation)
                for w in written
            ],
        )
        UPDATE_PLAYER.many(
            conn,
            [
                (w.rating, w.rounds_played, played, w.convergence, w.window_appended)
                + (journal_ids[w.player_id], w.player_id)
                for w in written
            ],
        )
        COUNT_ROUND.run(conn, (seq, brier_term, pool_id))
        return round_pk, journal_ids
    columns = list(zip(*written, strict=True))
    arrays = [_array(column) for column in columns]
    found = _WRITE_ROUND_PG.rows(conn, (*round_row, generation, *arrays, brier_term))
    return found[0][2], {player: jid for jid, player, _ in found}


_INSERT_ROUND = (
    "INSERT INTO rounds (pool_id, seq, round_id, server_id, map, winner, sum_a, sum_b, p_a, "
    "content_hash, result, created_at, report, played_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"
)
INSERT_ROUND = DriverSql(_INSERT_ROUND)
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


# SQLite: the pool and the round of that id if it was rated already, in one statement (the
# write lock is held since BEGIN IMMEDIATE, so it reads the last commit).
_POOL_AND_ROUND_SQLITE = DriverSql(
    "SELECT p.id, p.params, p.rounds, p.model, p.generation, r.content_hash, r.result "
    "FROM pools AS p LEFT JOIN rounds AS r ON r.pool_id = p.id AND r.round_id = ? "
    "WHERE p.name = ?"
)
# PostgreSQL: two statements. In READ COMMITTED a statement reads the data as they were when
# it began: one that waited for the pool's lock would miss the round another worker committed
# meanwhile (a game server's retry sent to both), and the round's insert would then fail the
# whole batch on the unique (pool, round_id). The lookup runs after the lock is held.
_LOCK_POOL_PG = DriverSql(
    "SELECT id, params, rounds, model, generation FROM pools WHERE name = ? FOR UPDATE"
)
# Planned at each run: three indexes of `rounds` begin with pool_id, and a plan made once,
# while the table was a page long, took ix_rounds_figures and filtered the pool's rounds by
# round_id, every round, as long as the connection lived (79,800 rows read for 400 rounds).
_ROUND_SEEN_PG = DriverSql(
    "SELECT content_hash, result FROM rounds WHERE pool_id = ? AND round_id = ?",
    planned_each_run=True,
)


def lock_pool(
    conn: Connection, name: str, round_id: str
) -> tuple[LockedPool | None, tuple[str, str] | None]:
    """The pool, its row locked on PostgreSQL, and (content hash, stored record) of its
    round `round_id` if that was rated already, as committed when the lock was taken;
    (None, None) for an unknown pool."""
    if conn.dialect.paramstyle == "qmark":
        row = _POOL_AND_ROUND_SQLITE.first(conn, (round_id, name))
        if row is None:
            return None, None
        return LockedPool._make(row[:5]), None if row[5] is None else (row[5], row[6])
    locked = _LOCK_POOL_PG.first(conn, (name,))
    if locked is None:
        return None, None
    pool = LockedPool._make(locked)
    seen = _ROUND_SEEN_PG.first(conn, (pool.id, round_id))
    return pool, None if seen is None else (seen[0], seen[1])


def lock_players(conn: Connection, pool_id: int, keys: Sequence[str]) -> list[LockedPlayer]:
    """The stored players among `keys`, locked in key order on PostgreSQL (the fixed order
    that keeps writers deadlock-free)."""
    return list(map(LockedPlayer._make, _players_by_key(conn, _LOCKED_PLAYER, pool_id, keys)))


_LOCKED_PLAYER = (
    "id, player_key, rating, rounds_played, convergence, last_journal, "
    "CASE WHEN window_state IS NULL THEN window_appended END"
)


def _players_by_key(
    conn: Connection, columns: str, pool_id: int, keys: Sequence[str]
) -> list[tuple[Any, ...]]:
    """`columns` of the pool's stored players among `keys`, locked one by one in key order on
    PostgreSQL.

    There each key is looked up on its own (a LATERAL subquery with LIMIT 1): both columns of
    the (pool, key) index are then equalities, and the planner has no other plan than that
    index's, bar a scan of a table a few pages long. `player_key IN (…)`, which SQLite takes
    as 24 index lookups, PostgreSQL planned, while the players table had no statistics, as a
    scan of every player of the pool filtered by key: 2,000 rows read for a 12v12 round, and
    more as the pool grows."""
    keys = sorted(keys)
    if conn.dialect.paramstyle == "qmark":
        marks = ", ".join("?" * len(keys))
        return DriverSql(
            f"SELECT {columns} FROM players WHERE pool_id = ? AND player_key IN ({marks})"
        ).rows(conn, (pool_id, *keys))
    return DriverSql(
        "SELECT p.* FROM unnest(?::text[]) AS wanted (key) CROSS JOIN LATERAL ("
        f"SELECT {columns} FROM players WHERE pool_id = ? AND player_key = wanted.key"
        " LIMIT 1 FOR UPDATE) AS p"
    ).rows(conn, (_text_array(keys), pool_id))


def _text_array(values: Sequence[str]) -> str:
    """PostgreSQL's text of an array of these strings, each quoted (a text pool's ids are any
    printable ASCII: commas, braces, quotes, backslashes, the word NULL)."""
    quoted = (v.replace("\\", "\\\\").replace('"', '\\"') for v in values)
    return "{" + ",".join(f'"{v}"' for v in quoted) + "}"


def windows(
    conn: Connection,
    players: Sequence[LockedPlayer],
    chunk: int,
    size: int,
    revised: bool = False,
    cached: Mapping[int, tuple[int, ConvergenceWindow]] | None = None,
) -> dict[int, ConvergenceWindow]:
    """The stored convergence windows of these players (rows already locked), by id, each
    keeping the sums of the pool's F3 (`revised`), exact.

    A player in `cached` ({player id: (stamp, window)}: the window as it was when the
    player's newest journal row was `stamp`, kept by this process) that has had at most
    `chunk` rounds rated since, by another worker, gets those rounds' journal rows appended
    to that window (in place), if the player's chain leads back to `stamp` through rated
    rounds only. Any other player's window is read back: its full chunks, and the unfilled
    newest chunk's entries from the journal (≤ chunk − 1 rows along its chain) or, for a
    row last written before migration 0003, from its own columns."""
    cached = cached or {}
    behind: list[tuple[LockedPlayer, int, ConvergenceWindow, int]] = []
    full: list[LockedPlayer] = []
    for p in players:
        entry = cached.get(p.id)
        if entry is not None and p.window_appended is not None:
            stamp, win = entry
            missed = p.window_appended - win.appended
            if 0 < missed <= chunk and (win.size, win.revised) == (size, revised):
                behind.append((p, stamp, win, missed))
                continue
        full.append(p)
    walks = [(p.id, p.last_journal, missed) for p, _, _, missed in behind]
    walks += [
        (p.id, p.last_journal, p.window_appended % chunk)
        for p in full
        if p.window_appended is not None and p.window_appended % chunk
    ]
    rows = journal_chains(conn, walks)
    out: dict[int, ConvergenceWindow] = {}
    lost: list[LockedPlayer] = []
    for p, stamp, win, missed in behind:
        newer = rows.get(p.id, [])
        if len(newer) == missed and newer[0][0] == stamp and all(r[1] == "round" for r in newer):
            for _, _, after, pr, sc in newer:
                win.append(after, pr, sc)
            out[p.id] = win
        else:  # an admin change, a re-rate's swap: read it back
            lost.append(p)
    out.update(_read_back(conn, full, chunk, size, revised, rows))
    if lost:
        out.update(_read_back(conn, lost, chunk, size, revised, None))
    return out


def _read_back(
    conn: Connection,
    players: Sequence[LockedPlayer],
    chunk: int,
    size: int,
    revised: bool,
    tails: Mapping[int, list[tuple[Any, ...]]] | None,
) -> dict[int, ConvergenceWindow]:
    """The stored windows of these players (see `windows`); `tails`: their unfilled chunks'
    journal rows if already read (`journal_chains`), None to read them here."""
    if not players:
        return {}
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
    current = [(p, p.window_appended) for p in players if p.window_appended is not None]
    if tails is None:
        tails = journal_chains(
            conn, [(p.id, p.last_journal, n % chunk) for p, n in current if n % chunk]
        )
    for p, appended in current:
        entries = [(after, pr, sc) for _, _, after, pr, sc in tails.get(p.id, [])]
        out[p.id] = window_codec.from_chunks_and_tail(
            stored[p.id], entries, appended, chunk, size, revised
        )
    return out


def journal_chains(
    conn: Connection, wanted: Sequence[tuple[int, int | None, int]]
) -> dict[int, list[tuple[Any, ...]]]:
    """{player id: its newest `n` journal rows, oldest first, as (prev_id, kind, after, P,
    S)} for each (player id, newest journal row, n ≥ 1) in `wanted`, all in one statement
    (`CHAINS`)."""
    if not wanted:
        return {}
    values = ", ".join(["(?, ?, ?)"] * len(wanted))
    stmt = DriverSql(
        CHAINS.format(
            values=values,
            first=_JOURNAL_BY_ID_SQLITE.format(id="wanted.head"),
            next=_JOURNAL_BY_ID_SQLITE.format(id="chain.prev_id"),
        ),
        CHAINS.format(
            values=values,
            first=_JOURNAL_BY_ID_PG.format(id="wanted.head"),
            next=_JOURNAL_BY_ID_PG.format(id="chain.prev_id"),
        ),
    )
    out: dict[int, list[tuple[Any, ...]]] = {}
    for pid, *found in stmt.rows(conn, [v for want in wanted for v in want]):
        out.setdefault(pid, []).append(tuple(found))
    return out


# The newest journal rows of players: each player's chain walked from its newest row (`head`),
# `n` rows, one primary-key lookup a row. Issue 16: the query this replaces walked a chain's
# ids and then joined the journal to them. For a journal of a few thousand rows PostgreSQL
# planned that join as a hash join over a full scan of the journal, and as a prepared
# statement's generic plan it kept that plan while the journal grew to millions of rows
# (174,094 scans reading 1.62 billion rows; 15 rounds/s instead of 300). Here there is no
# join to plan: each step reads one row by its id, on PostgreSQL in a LATERAL subquery with
# LIMIT 1, which the planner cannot turn into a join (SQLite always looks a rowid up). The
# only other plan for that lookup is a scan of the journal, cheaper only while the journal
# is a few pages long, and every statement is planned for the tables as they are at each
# run (engine.py's `_pg_connect`), so such a plan never outlives the tiny journal.
CHAINS = (
    "WITH RECURSIVE wanted (player, head, n) AS (VALUES {values}),"
    " chain (player, prev_id, kind, after, p, s, depth, n) AS ("
    " SELECT wanted.player, j.prev_id, j.kind, j.after, j.p, j.s, 1, wanted.n"
    " FROM wanted {first}"
    " UNION ALL"
    " SELECT chain.player, j.prev_id, j.kind, j.after, j.p, j.s, chain.depth + 1, chain.n"
    " FROM chain {next} WHERE chain.depth < chain.n)"
    " SELECT player, prev_id, kind, after, p, s FROM chain ORDER BY player, depth DESC"
)
_JOURNAL_BY_ID_SQLITE = "CROSS JOIN journal AS j ON j.id = {id}"  # CROSS: this order
_JOURNAL_BY_ID_PG = (
    "CROSS JOIN LATERAL (SELECT prev_id, kind, after, p, s FROM journal WHERE journal.id = {id}"
    " LIMIT 1) AS j"
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
    return _players_by_key(
        conn, "id, player_key, rounds_played, last_journal, state", pool_id, keys
    )


def read_context(conn: Connection, pool_id: int, entries: Sequence[str]) -> dict[str, Any]:
    """The pool's stored context entries among `entries` (JSON values by name)."""
    if not entries:
        return {}
    marks = ", ".join("?" * len(entries))
    stmt = DriverSql(
        f"SELECT entry, value FROM pool_context WHERE pool_id = ? AND entry IN ({marks})"
    )
    return {entry: orjson.loads(value) for entry, value in stmt.rows(conn, (pool_id, *entries))}


SAVE_CONTEXT = DriverSql(
    "INSERT INTO pool_context (pool_id, entry, value) VALUES (?, ?, ?) "
    "ON CONFLICT (pool_id, entry) DO UPDATE SET value = excluded.value"
)


def save_context(conn: Connection, pool_id: int, changed: Mapping[str, Any]) -> None:
    """Store the context entries a round changed, in name order."""
    if changed:
        SAVE_CONTEXT.many(
            conn, [(pool_id, k, orjson.dumps(changed[k]).decode()) for k in sorted(changed)]
        )


DROP_CHUNKS_BEFORE = DriverSql("DELETE FROM window_chunks WHERE player_id = ? AND chunk < ?")


def insert_journal(conn: Connection, rows: Sequence[Sequence[Any]]) -> dict[int, int]:
    """Insert a round's journal rows in one statement; {player id: new journal row id}. Each
    row: (pool, player, round, team, before, after, K, P, S, created at, previous row,
    generation), the pool, round, time and generation the same in every row."""
    if conn.dialect.paramstyle != "qmark":
        pool, _, round_pk, *_, created_at, _, generation = rows[0]
        columns = list(zip(*rows, strict=True))
        if any(len(set(columns[i])) != 1 for i in (0, 2, 11)) or any(
            value != created_at for value in columns[9]
        ):
            raise ValueError("the journal rows of one insert are one round's")
        per_row = [_array(columns[i]) for i in (1, 3, 4, 5, 6, 7, 8, 10)]
        found = _INSERT_JOURNAL_PG.rows(conn, (pool, round_pk, created_at, generation, *per_row))
        return {player: jid for jid, player in found}
    stmt = DriverSql(
        _JOURNAL_COLUMNS + ", ".join([_JOURNAL_ROW] * len(rows)) + " RETURNING id, player_id"
    )
    flat = [value for row in rows for value in row]
    return {player: jid for jid, player in stmt.rows(conn, flat)}


def _journal_from_arrays(
    pool: str, round_pk: str, created_at: str, generation: str, first: int, source: str = "FROM"
) -> str:
    """The journal insert of a round's rows on PostgreSQL: `pool`, `round_pk`, `created_at`
    and `generation` the same in every row (SQL expressions), the eight varying columns
    (player, team, before, after, K, P, S, previous row) arrays in parameters `first`… on."""
    n = [f"${first + i}" for i in range(8)]
    return (
        _JOURNAL_COLUMNS.removesuffix(" VALUES ")
        + f" SELECT {pool}, u.player_id, {round_pk}, 'round', u.team, u.before, u.after, u.k,"
        f" u.p, u.s, {created_at}, u.prev_id, {generation} {source} unnest({n[0]}::bigint[],"
        f" {n[1]}::text[], {n[2]}::integer[], {n[3]}::integer[], {n[4]}::float8[],"
        f" {n[5]}::float8[], {n[6]}::float8[], {n[7]}::bigint[])"
        " AS u (player_id, team, before, after, k, p, s, prev_id)"
    )


# A round's journal rows on PostgreSQL: one statement of 12 parameters, each varying column
# an array, rather than 12 parameters a row (psycopg binds and PostgreSQL plans 288 for 24).
_INSERT_JOURNAL_PG = DriverSql(
    _journal_from_arrays("$1", "$2", "$3", "$4", 5) + " RETURNING id, player_id"
)

# `write_round` on PostgreSQL. $1–$14: the round's row; $15: the generation; $16–$27: one
# array per PlayerWrite field, in its order; $28: the round's Brier term. Players are found
# by primary key (id = ANY), each one's new journal row by its player id among the 24 the
# insert returned: nothing here is joined to a table.
_WRITE_ROUND_PG = DriverSql(
    "WITH r AS (" + _numbered(_INSERT_ROUND) + "),"
    " j AS ("
    + _journal_from_arrays("$1", "r.id", "$12", "$15", 16, "FROM r CROSS JOIN")
    + " RETURNING id, player_id, round_pk),"
    " pl AS (UPDATE players SET rating = ($24::integer[])[array_position($16::bigint[], id)],"
    " rounds_played = ($25::integer[])[array_position($16::bigint[], id)],"
    " last_played = COALESCE($14, $12),"
    " convergence = ($26::float8[])[array_position($16::bigint[], id)],"
    " window_state = NULL, window_tail = NULL,"
    " window_appended = ($27::bigint[])[array_position($16::bigint[], id)],"
    " last_journal = (SELECT j.id FROM j WHERE j.player_id = players.id)"
    " WHERE id = ANY($16::bigint[])),"
    " c AS (UPDATE pools SET rounds = $2, brier_sum = brier_sum + $28 WHERE id = $1)"
    " SELECT id, player_id, round_pk FROM j"
)
