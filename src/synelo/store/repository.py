"""All reads and writes of synelo's data. One transaction per operation.

Writers to a pool serialise on the pool: SQLite by ``BEGIN IMMEDIATE`` (the write lock is
held before anything is read), PostgreSQL by ``SELECT … FOR UPDATE`` on the pool row and then
on the player rows in player-key order, so locks are always taken in the same order and a
read-modify-write never interleaves with another.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypeVar

import orjson
from sqlalchemy import (
    Connection,
    Engine,
    delete,
    false,
    func,
    insert,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError

from synelo.domain import (
    Change,
    JournalEntry,
    JournalRound,
    PlayerRow,
    Pool,
    PoolExists,
    PoolQuality,
    RatedPlayer,
    RatedRound,
    RatingStep,
    RoundConflict,
    RoundReport,
    RoundView,
    SubmitResult,
    UnknownPool,
    VoidedRound,
    encode_params,
    parse_synelo_params,
    pool_model,
    pool_params,
    stored_model,
)
from synelo.models import RoundFacts, score_a
from synelo.models.rounds import column_int, rate_with_model, received_extras
from synelo.ratings import (
    PlayerRecord,
    SynEloParams,
    apply_change,
    is_visible,
    rate_round,
)
from synelo.ratings.brier import brier_score
from synelo.ratings.synelo import Side, new_window, round_score
from synelo.ratings.theta import MIN_ROUNDS as THETA_MIN_ROUNDS
from synelo.ratings.theta import fit_theta_interval
from synelo.store import driver_sql as sql
from synelo.store import window_codec
from synelo.store.board import Board, BoardCache
from synelo.store.engine import IMMEDIATE
from synelo.store.health import PoolHealth, read_health
from synelo.store.round_record import decode_record, encode_record
from synelo.store.tables import (
    WINDOW_CHUNK,
    api_tokens,
    changes,
    journal,
    players,
    pool_context,
    pools,
    rounds,
    window_chunks,
)
from synelo.store.window_cache import WindowCache

Clock = Callable[[], datetime]
T = TypeVar("T")
POOL_MEMORY_S = 1.0  # a worker notices a pool another deleted (or made anew) within this
THETA_FIT_ROUNDS = 100_000  # the quality endpoint fits Θ to at most this many recent rounds


def utcnow() -> datetime:
    return datetime.now(UTC)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _pool(row) -> Pool:  # type: ignore[no-untyped-def]
    params, model_params = pool_params(row.model, row.params)
    return Pool(
        row.id,
        row.name,
        row.kmax,  # the column keeps the team size's old name
        row.player_ids,
        params,
        row.rounds,
        row.brier_sum,
        row.created_at,
        row.model,
        model_params,
        row.generation,
        row.voided,
        None if row.autotune is None else json.loads(row.autotune),
        bool(row.public),
    )


def _insert_round(
    conn: Connection,
    pool_id: int,
    report: RoundReport,
    rated: RatedRound,
    digest: str,
    stamp: object,
) -> int:
    """Store a rated round: the outcome's record and the whole report; its row id."""
    return int(sql.INSERT_ROUND.scalar(conn, _round_row(pool_id, report, rated, digest, stamp)))


def _round_row(
    pool_id: int, report: RoundReport, rated: RatedRound, digest: str, stamp: object
) -> tuple[Any, ...]:
    """A rated round's row, in `INSERT_ROUND`'s order: the outcome's record and the whole
    report."""
    return (
        pool_id,
        rated.seq,
        report.round_id,
        report.server_id,
        report.map,
        report.winner,
        rated.sum_a,
        rated.sum_b,
        rated.p_a,
        digest,
        encode_record(rated),
        stamp,
        orjson.dumps(report.stored()).decode(),
    )


_PLAYER_VIEW = (
    players.c.player_key,
    players.c.rating,
    players.c.rounds_played,
    players.c.last_played,
    players.c.convergence,
    players.c.state,
    players.c.name,
    players.c.hidden,
)


# the public board's order
_BOARD_ORDER = (players.c.rating.desc(), players.c.rounds_played.desc(), players.c.player_key)


def _listed(pool: Pool, now: datetime) -> tuple[Any, ...]:
    """Who a pool's public board lists: past the shadow period, not stale, not hidden."""
    return (
        players.c.pool_id == pool.id,
        players.c.rounds_played >= pool.params.t_shadow,
        players.c.last_played >= now - timedelta(days=pool.params.t_stale_days),
        players.c.hidden == false(),
    )


class _Target(NamedTuple):
    """The player an admin change is made to, its row locked."""

    id: int
    rating: int
    last_journal: int | None
    state: str | None  # the model's state, outside SynElo pools


def _change(row) -> Change:  # type: ignore[no-untyped-def]
    return Change(
        row.id,
        row.seq,
        row.kind,
        row.player_key,
        row.round_id,
        None if row.value is None else json.loads(row.value),
        row.actor,
        row.reason,
        row.created_at,
    )


class Store:
    """The repository: every operation the service needs, each in its own transaction."""

    def __init__(self, engine: Engine, clock: Clock = utcnow, window_cache: int = 5_000) -> None:
        self.engine = engine
        self.clock = clock
        self._windows = WindowCache(window_cache)
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
            self._windows.clear()
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
    def _read(self) -> Iterator[Connection]:
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

    def _locked_pool(self, conn: Connection, name: str) -> Pool:
        row = conn.execute(select(pools).where(pools.c.name == name).with_for_update()).first()
        if row is None:
            raise UnknownPool(name)
        return _pool(row)

    def ping(self) -> bool:
        """Whether the database answers."""
        try:
            with self._read() as conn:
                conn.exec_driver_sql("SELECT 1")
            return True
        except Exception:
            return False

    # --- pools ------------------------------------------------------------------------------
    def create_pool(
        self,
        name: str,
        team_size: int,
        params: SynEloParams,
        player_ids: str = "steam",
        model: str = "synelo",
        model_params: Mapping[str, Any] | None = None,
        autotune: Mapping[str, Any] | None = None,
        public: bool = False,
    ) -> Pool:
        """A new pool. `params` are SynElo's; a pool of another `model` keeps only their
        shadow and stale rules, and `model_params` (already checked) for its model."""
        try:
            with self.write_transaction() as conn:
                conn.execute(
                    insert(pools).values(
                        name=name,
                        kmax=team_size,
                        player_ids=player_ids,
                        model=model,
                        params=encode_params(model, params, model_params or {}),
                        rounds=0,
                        brier_sum=0.0,
                        created_at=self.clock(),
                        autotune=None if autotune is None else json.dumps(dict(autotune)),
                        public=public,
                    )
                )
        except IntegrityError as exc:
            raise PoolExists(name) from exc
        return self.get_pool(name)

    def get_pool(self, name: str) -> Pool:
        """The pool as stored now (its counters included)."""
        with self._read() as conn:
            row = conn.execute(select(pools).where(pools.c.name == name)).first()
        if row is None:
            raise UnknownPool(name)
        pool = _pool(row)
        self._pools[name] = (pool, time.monotonic())
        return pool

    def known_pool(self, name: str) -> Pool | None:
        """The pool as read in this process within the last `POOL_MEMORY_S`, without
        touching the database. A pool's id, team size and id kind never change, but another
        worker may delete it and make a new one of the same name; a re-rate may change its
        model and parameters (the reads that use them re-read the pool by id)."""
        hit = self._pools.get(name)
        if hit is None or time.monotonic() - hit[1] >= POOL_MEMORY_S:
            return None
        return hit[0]

    def set_public(self, pool_name: str, public: bool, actor: str, reason: str | None) -> Pool:
        """Open the pool's public endpoints to anyone, or close them again, logged."""
        with self.write_transaction() as conn:
            pool = self._locked_pool(conn, pool_name)
            conn.execute(update(pools).where(pools.c.id == pool.id).values(public=public))
            self._log_change(conn, pool, "patch", actor, reason, value={"public": public})
        return self.get_pool(pool_name)

    def set_hidden(
        self,
        pool_name: str,
        key: str,
        hidden: bool,
        actor: str,
        reason: str | None,
        *,
        view: Callable[[Pool, PlayerRow | None], T],
    ) -> T:
        """Hide a player from the pool's public lists, or show them again, logged as
        "hide"; their rating and rounds are untouched. A player the pool does not know has
        nothing to hide: `view` of None, nothing written."""
        with self.write_transaction() as conn:
            pool = self._locked_pool(conn, pool_name)
            row = self._locked_player(conn, pool, key)
            if row is None:
                return view(pool, None)
            conn.execute(update(players).where(players.c.id == row.id).values(hidden=hidden))
            self._log_change(
                conn, pool, "hide", actor, reason, player_key=key, value={"hidden": hidden}
            )
            return view(pool, self._player_view(conn, row.id))

    def pools_with_activity(self, only_public: bool) -> list[tuple[Pool, int]]:
        """Every pool (or the public ones) by name, with how many of its players played in
        the last 7 days."""
        since = self.clock() - timedelta(days=7)
        active = (
            select(func.count())
            .where(players.c.pool_id == pools.c.id, players.c.last_played >= since)
            .scalar_subquery()
        )
        stmt = select(pools, active.label("active_week")).order_by(pools.c.name)
        if only_public:
            stmt = stmt.where(pools.c.public == true())
        with self._read() as conn:
            return [(_pool(row), int(row.active_week)) for row in conn.execute(stmt)]

    def public_board(
        self, pool: Pool, offset: int, limit: int, search: str | None
    ) -> tuple[Pool, int, list[tuple[int, PlayerRow]]]:
        """The pool as it stands, how many players its public board lists, and one page of
        them with their places (1 = the best): players past the shadow period, not stale,
        not hidden, by rating (ties: more rounds first, then id). `search` keeps those whose
        id or name contains it (case-blind); their places stay the board's. Read from the
        pool's board as kept in memory (`board`)."""
        pool, board = self.board(pool)
        if not search:
            page = board.rows[offset : offset + limit]
            return pool, len(board.rows), [(offset + i + 1, row) for i, row in enumerate(page)]
        found = board.search(search)
        return pool, len(found), found[offset : offset + limit]

    def board(self, pool: Pool) -> tuple[Pool, Board]:
        """The pool as it stands and its public board (store.board: kept in memory, made
        anew when the pool changed or the clock reached another minute)."""
        now = self.clock()
        newest = select(func.max(changes.c.id)).where(changes.c.pool_id == pools.c.id)
        with self._read() as conn:
            row = conn.execute(
                select(pools, newest.scalar_subquery().label("newest")).where(pools.c.id == pool.id)
            ).first()
        if row is None:
            raise UnknownPool(pool.name)
        current = _pool(row)
        version = (
            current.id,
            current.generation,
            current.rounds,
            current.voided,
            row.newest,
            int(now.timestamp() // 60),
        )

        def read() -> list[PlayerRow]:
            listed = select(*_PLAYER_VIEW).where(*_listed(current, now)).order_by(*_BOARD_ORDER)
            with self._read() as conn:
                return [PlayerRow(*r) for r in conn.execute(listed)]

        return current, self.boards.get(current.id, version, read)

    def board_ratings(self, pool: Pool) -> list[int]:
        """The ratings of the pool's public board, best first (its rating distribution)."""
        _, board = self.board(pool)
        return [row.rating for row in board.rows]

    def hidden_players(self, pool: Pool) -> list[PlayerRow]:
        """The players an admin hid from the pool's public pages, by id (for the admin's
        leaderboard, where they can be shown again)."""
        with self._read() as conn:
            stmt = (
                select(*_PLAYER_VIEW)
                .where(players.c.pool_id == pool.id, players.c.hidden == true())
                .order_by(players.c.player_key)
            )
            return [PlayerRow(*r) for r in conn.execute(stmt)]

    def round_view(self, pool: Pool, round_id: str) -> RoundView | None:
        """A round of the pool by its round_id, with its players' changes (None: unknown)."""
        with self.snapshot_read() as conn:
            pool = self._pool_by_id(conn, pool)
            row = conn.execute(
                select(
                    rounds.c.id,
                    rounds.c.seq,
                    rounds.c.winner,
                    rounds.c.p_a,
                    rounds.c.voided,
                    rounds.c.created_at,
                    rounds.c.map,
                    rounds.c.report,
                ).where(rounds.c.pool_id == pool.id, rounds.c.round_id == round_id)
            ).first()
            if row is None:
                return None
            changed = conn.execute(
                select(
                    players.c.player_key,
                    journal.c.team,
                    journal.c.before,
                    journal.c.after,
                    players.c.hidden,
                    players.c.name,
                    players.c.rounds_played,
                )
                .join(players, players.c.id == journal.c.player_id)
                .where(journal.c.round_pk == row.id, journal.c.generation == pool.generation)
                .order_by(journal.c.team, journal.c.id)
            ).all()
            report = orjson.loads(row.report) if row.report else {}
            teams = report.get("teams") or report.get("participants") or {"A": [], "B": []}
            named = {
                str(p)
                for group in (teams, report.get("participants") or {})
                for side in ("A", "B")
                for p in group.get(side, ())
            } | {r.player_key for r in changed}
            now_known = conn.execute(
                select(players.c.player_key, players.c.hidden, players.c.rounds_played).where(
                    players.c.pool_id == pool.id, players.c.player_key.in_(sorted(named))
                )
            ).all()
        names = {r.player_key: r.name for r in changed if r.name}
        names.update(report.get("names") or {})
        return RoundView(
            round_id,
            int(row.seq),
            row.winner,
            float(row.p_a),
            bool(row.voided),
            row.created_at,
            row.map,
            tuple(str(p) for p in teams["A"]),
            tuple(str(p) for p in teams["B"]),
            names,
            tuple((r.player_key, r.team, int(r.before), int(r.after)) for r in changed),
            frozenset(r.player_key for r in now_known if r.hidden),
            frozenset(r.player_key for r in now_known if r.rounds_played < pool.params.t_shadow)
            | (named - {r.player_key for r in now_known}),  # never rated: nothing to show
        )

    def recent_rosters(
        self, pool: Pool, limit: int
    ) -> list[tuple[str, datetime, str, tuple[str, ...], tuple[str, ...]]]:
        """The pool's newest rounds, newest first, as (round_id, when, map, team A, team B)
        from their reports: the players a scramble viewer can pick from."""
        with self._read() as conn:
            found = conn.execute(
                select(rounds.c.round_id, rounds.c.created_at, rounds.c.map, rounds.c.report)
                .where(rounds.c.pool_id == pool.id)
                .order_by(rounds.c.seq.desc())
                .limit(limit)
            ).all()
        out = []
        for round_id, at, map_name, report in found:
            stored = orjson.loads(report) if report else {}
            teams = stored.get("teams") or stored.get("participants") or {}
            a, b = (tuple(str(p) for p in teams.get(side, ())) for side in ("A", "B"))
            out.append((str(round_id), at, str(map_name), a, b))
        return out

    def voided_rounds_of(self, pool: Pool, key: str) -> list[VoidedRound]:
        """The pool's voided rounds that the player was in, in rating order: a void leaves
        no journal row, so a player's chart marks them from here."""
        with self._read() as conn:
            found = conn.execute(
                select(rounds.c.id, rounds.c.round_id, rounds.c.report)
                .where(rounds.c.pool_id == pool.id, rounds.c.voided == true())
                .order_by(rounds.c.seq)
            ).all()
        out = []
        for pk, round_id, report in found:
            stored = orjson.loads(report) if report else {}
            groups = (stored.get("teams") or {}, stored.get("participants") or {})
            if any(key in map(str, g.get(side, ())) for g in groups for side in ("A", "B")):
                out.append(VoidedRound(int(pk), str(round_id)))
        return out

    def round_ids(self, pool: Pool, pks: Sequence[int]) -> dict[int, str]:
        """The round_id of each of the pool's round rows `pks`."""
        if not pks:
            return {}
        with self._read() as conn:
            rows = conn.execute(
                select(rounds.c.id, rounds.c.round_id).where(
                    rounds.c.pool_id == pool.id, rounds.c.id.in_(list(pks))
                )
            )
            return {int(pk): str(rid) for pk, rid in rows}

    def trends(self, pool: Pool, keys: Sequence[str], depth: int) -> dict[str, int]:
        """Each player's rating change over their last `depth` rated rounds: the sum of
        those rounds' changes (an admin's set or reset in between is not a trend). Walks
        their journal chains by primary key, `2·depth` entries at most."""
        if not keys:
            return {}
        with self._read() as conn:
            chain = (
                select(
                    journal.c.id,
                    journal.c.prev_id,
                    players.c.player_key.label("key"),
                    literal(1).label("depth"),
                )
                .join(players, players.c.last_journal == journal.c.id)
                .where(players.c.pool_id == pool.id, players.c.player_key.in_(list(keys)))
                .cte("trend", recursive=True)
            )
            chain = chain.union_all(
                select(journal.c.id, journal.c.prev_id, chain.c.key, chain.c.depth + 1)
                .join(chain, journal.c.id == chain.c.prev_id)
                .where(chain.c.depth < 2 * depth)
            )
            rows = conn.execute(
                select(chain.c.key, journal.c.kind, journal.c.before, journal.c.after)
                .join(journal, journal.c.id == chain.c.id)
                .order_by(chain.c.key, chain.c.depth)
            ).all()
        change: dict[str, int] = {}
        counted: dict[str, int] = {}
        for key, kind, before, after in rows:
            if kind == "round" and counted.get(key, 0) < depth:
                change[key] = change.get(key, 0) + after - before
                counted[key] = counted.get(key, 0) + 1
        return change

    def public_place(self, pool: Pool, row: PlayerRow) -> int | None:
        """The player's place on the pool's public board (None: not listed there)."""
        _, board = self.board(pool)
        return board.places.get(row.player_key)

    def public_places(self, pool: Pool, keys: Sequence[str]) -> dict[str, int]:
        """The places on the pool's public board of those of `keys` it lists: one read of
        the board for a whole lookup, not one a player."""
        _, board = self.board(pool)
        return {key: board.places[key] for key in keys if key in board.places}

    def set_autotune(
        self, pool_name: str, setting: Mapping[str, Any] | None, actor: str, reason: str | None
    ) -> Pool:
        """Turn the pool's auto-tuning on (with this setting) or off (None), logged."""
        with self.write_transaction() as conn:
            pool = self._locked_pool(conn, pool_name)
            value = None if setting is None else dict(setting)
            conn.execute(
                update(pools)
                .where(pools.c.id == pool.id)
                .values(autotune=None if value is None else json.dumps(value))
            )
            self._log_change(conn, pool, "patch", actor, reason, value={"autotune": value})
        return self.get_pool(pool_name)

    def list_pools(self) -> list[Pool]:
        with self._read() as conn:
            return [_pool(r) for r in conn.execute(select(pools).order_by(pools.c.name))]

    # --- players ---------------------------------------------------------------------------
    def lookup(self, pool: Pool, keys: Sequence[str]) -> dict[str, PlayerRow]:
        """Stored players among `keys`; unknown players are simply absent (nothing stored)."""
        return self.read_players(pool, keys)[1]

    def read_players(self, pool: Pool, keys: Sequence[str]) -> tuple[Pool, dict[str, PlayerRow]]:
        """The pool as it stands and its stored players among `keys`, read in one snapshot
        (a re-rate may change the pool's model: the states are read with the pool they
        belong to); unknown players are simply absent."""
        with self.snapshot_read() as conn:
            pool = self._pool_by_id(conn, pool)
            rows = conn.execute(
                select(*_PLAYER_VIEW).where(
                    players.c.pool_id == pool.id, players.c.player_key.in_(list(set(keys)))
                )
            )
            return pool, {r.player_key: PlayerRow(*r) for r in rows}

    def read_context(self, pool: Pool, entries: Sequence[str]) -> dict[str, Any]:
        """The pool's context entries among `entries` (`Model.context_keys`), as stored."""
        if not entries:
            return {}
        with self.snapshot_read() as conn:
            rows = conn.execute(
                select(pool_context.c.entry, pool_context.c.value).where(
                    pool_context.c.pool_id == pool.id, pool_context.c.entry.in_(list(entries))
                )
            )
            return {entry: orjson.loads(value) for entry, value in rows}

    def _pool_by_id(self, conn: Connection, pool: Pool) -> Pool:
        """The pool's row now (its settings may have changed since `pool` was read)."""
        row = conn.execute(select(pools).where(pools.c.id == pool.id)).first()
        # deleted, by another worker perhaps; its name may be a new pool's, and SQLite may
        # give its id to a new pool of another name
        if row is None or row.name != pool.name:
            self._pools.pop(pool.name, None)
            raise UnknownPool(pool.name)
        fresh = _pool(row)
        self._pools[fresh.name] = (fresh, time.monotonic())
        return fresh

    def save_names(self, pool: Pool, names: dict[str, str]) -> None:
        """Record display names reported outside a round (a lookup's), for stored players."""
        if names:
            with self.write_transaction() as conn:
                sql.save_names(conn, pool.id, names)

    def name_of(self, pool: Pool, key: str) -> str | None:
        with self._read() as conn:
            return conn.execute(
                select(players.c.name).where(
                    players.c.pool_id == pool.id, players.c.player_key == key
                )
            ).scalar()

    def set_rating(
        self,
        pool_name: str,
        key: str,
        rating: int,
        actor: str = "admin",
        reason: str | None = None,
        *,
        view: Callable[[Pool, PlayerRow | None], T],
    ) -> T:
        """Admin override, journaled as "set" and logged with who and why. SynElo's
        convergence window restarts: the old ratings no longer describe this player, so
        C = 1 until two rounds are rated. In another model's pool the model's `with_rating`
        says what the set keeps. The answer is `view` of the pool and the player's new row,
        computed inside the transaction, so that a failing answer writes nothing."""
        with self.write_transaction() as conn:
            pool = self._locked_pool(conn, pool_name)
            row = self._locked_player(conn, pool, key)
            values: dict[str, Any] = {"rating": rating}
            if not pool.is_synelo:
                model = pool_model(pool)
                state = model.decode(orjson.loads(row.state) if row and row.state else {})
                state = model.with_rating(state, rating)
                values["state"] = orjson.dumps(model.encode(state)).decode()
                values["rating"] = column_int(model.rating(state))
            if row is None:
                pid = conn.execute(
                    insert(players)
                    .values(
                        pool_id=pool.id,
                        player_key=key,
                        rating=values["rating"],
                        rounds_played=0,
                        convergence=1.0,
                    )
                    .returning(players.c.id)
                ).scalar_one()
                row = _Target(pid, self._new_rating(pool), None, None)
            self._journal_admin(conn, pool, row, "set", values["rating"], **values)
            self._log_change(
                conn, pool, "set", actor, reason, player_key=key, value={"rating": rating}
            )
            return view(pool, self._player_view(conn, row.id))

    @staticmethod
    def _new_rating(pool: Pool) -> int:
        """The display rating of a player the pool has not seen."""
        if pool.is_synelo:
            return pool.params.r0
        model = pool_model(pool)
        return column_int(model.rating(model.new_state()))

    def reset_player(
        self,
        pool_name: str,
        key: str,
        actor: str = "admin",
        reason: str | None = None,
        *,
        view: Callable[[Pool, PlayerRow | None], T],
    ) -> T:
        """Back to R_0 with 0 rounds (shadow again), journaled as "reset" and logged; no row
        (and no change) for a player the pool does not know. The answer is `view`, inside
        the transaction, as for `set_rating`."""
        with self.write_transaction() as conn:
            pool = self._locked_pool(conn, pool_name)
            row = self._locked_player(conn, pool, key)
            if row is None:
                return view(pool, None)
            r0 = self._new_rating(pool)
            self._journal_admin(
                conn,
                pool,
                row,
                "reset",
                r0,
                rating=r0,
                rounds_played=0,
                last_played=None,
                state=None,
            )
            self._log_change(conn, pool, "reset", actor, reason, player_key=key)
            return view(pool, self._player_view(conn, row.id))

    def _log_change(
        self,
        conn: Connection,
        pool: Pool,
        kind: str,
        actor: str,
        reason: str | None,
        *,
        player_key: str | None = None,
        round_id: str | None = None,
        value: Mapping[str, Any] | None = None,
    ) -> None:
        """Append to the pool's admin log, after the rounds rated so far."""
        conn.execute(
            insert(changes).values(
                pool_id=pool.id,
                seq=pool.rounds,
                kind=kind,
                player_key=player_key,
                round_id=round_id,
                value=None if value is None else json.dumps(value),
                actor=actor[:64],
                reason=reason,
                created_at=self.clock(),
            )
        )

    def changes(self, pool: Pool, kinds: Sequence[str] | None = None) -> list[Change]:
        """The pool's admin log in order (only `kinds` if given)."""
        stmt = select(changes).where(changes.c.pool_id == pool.id)
        if kinds is not None:
            stmt = stmt.where(changes.c.kind.in_(list(kinds)))
        with self._read() as conn:
            return [_change(r) for r in conn.execute(stmt.order_by(changes.c.seq, changes.c.id))]

    @staticmethod
    def _locked_player(conn: Connection, pool: Pool, key: str) -> _Target | None:
        """A stored player, its row locked."""
        row = conn.execute(
            select(players.c.id, players.c.rating, players.c.last_journal, players.c.state)
            .where(players.c.pool_id == pool.id, players.c.player_key == key)
            .with_for_update()
        ).first()
        return None if row is None else _Target._make(row)

    def _journal_admin(
        self, conn: Connection, pool: Pool, row: _Target, kind: str, after: int, **changes: object
    ) -> None:
        """Journal an admin change at the head of the player's chain and apply `changes`;
        the convergence window restarts (C = 1)."""
        pid, before, last_journal, _ = row
        jid = conn.execute(
            insert(journal)
            .values(
                pool_id=pool.id,
                player_id=pid,
                round_pk=None,
                generation=pool.generation,
                kind=kind,
                team=None,
                before=before,
                after=after,
                k=None,
                p=None,
                s=None,
                created_at=self.clock(),
                prev_id=last_journal,
            )
            .returning(journal.c.id)
        ).scalar_one()
        conn.execute(
            update(players)
            .where(players.c.id == pid)
            .values(
                convergence=1.0,
                window_state=None,
                window_tail=None,
                window_appended=0,
                last_journal=jid,
                **changes,
            )
        )
        conn.execute(delete(window_chunks).where(window_chunks.c.player_id == pid))

    @staticmethod
    def _player_view(conn: Connection, pid: int) -> PlayerRow:
        return PlayerRow(*conn.execute(select(*_PLAYER_VIEW).where(players.c.id == pid)).one())

    def history(
        self, pool: Pool, key: str, limit: int, before: int | None = None
    ) -> list[JournalEntry]:
        """The journal of one player, newest first: from its newest entry, or from the entry
        preceding journal id `before`. Walks the player's chain by primary key."""
        with self._read() as conn:
            head = conn.execute(
                select(players.c.id, players.c.last_journal).where(
                    players.c.pool_id == pool.id, players.c.player_key == key
                )
            ).first()
            if head is None:
                return []
            start = head.last_journal
            if before is not None:
                start = conn.execute(
                    select(journal.c.prev_id).where(
                        journal.c.id == before,
                        journal.c.player_id == head.id,
                        journal.c.generation
                        == select(pools.c.generation)
                        .where(pools.c.id == pool.id)
                        .scalar_subquery(),
                    )
                ).scalar()
            if start is None:
                return []
            chain = (
                select(journal.c.id, journal.c.prev_id, literal(1).label("depth"))
                .where(journal.c.id == start)
                .cte("chain", recursive=True)
            )
            chain = chain.union_all(
                select(journal.c.id, journal.c.prev_id, (chain.c.depth + 1).label("depth"))
                .join(chain, journal.c.id == chain.c.prev_id)
                .where(chain.c.depth < limit)
            )
            stmt = (
                select(
                    journal.c.id,
                    journal.c.kind,
                    rounds.c.round_id,
                    rounds.c.seq,
                    journal.c.team,
                    journal.c.before,
                    journal.c.after,
                    journal.c.k,
                    journal.c.p,
                    journal.c.s,
                    journal.c.created_at,
                )
                .select_from(
                    chain.join(journal, journal.c.id == chain.c.id).outerjoin(
                        rounds, journal.c.round_pk == rounds.c.id
                    )
                )
                .order_by(chain.c.depth)
            )
            return [JournalEntry(*r) for r in conn.execute(stmt)]

    def rating_series(self, pool: Pool, key: str, limit: int) -> list[RatingStep]:
        """A player's newest `limit` journal entries, newest first, narrowed to what a chart
        draws: a walk of the chain by primary key that joins nothing (a player page's chart
        of 2,000 rounds and more reads only this)."""
        with self._read() as conn:
            start = conn.execute(
                select(players.c.last_journal).where(
                    players.c.pool_id == pool.id, players.c.player_key == key
                )
            ).scalar()
            if start is None:
                return []
            step = (journal.c.id, journal.c.prev_id, journal.c.kind, journal.c.round_pk)
            chain = (
                select(*step, journal.c.after, literal(1).label("depth"))
                .where(journal.c.id == start)
                .cte("series", recursive=True)
            )
            chain = chain.union_all(
                select(*step, journal.c.after, (chain.c.depth + 1).label("depth"))
                .join(chain, journal.c.id == chain.c.prev_id)
                .where(chain.c.depth < limit)
            )
            rows = conn.execute(
                select(chain.c.kind, chain.c.round_pk, chain.c.after).order_by(chain.c.depth)
            )
            return [RatingStep(*r) for r in rows]

    def leaderboard(self, pool: Pool, limit: int) -> tuple[Pool, list[PlayerRow]]:
        """The pool as it stands and its visible players by rating (ties: more rounds
        first, then id)."""
        with self.snapshot_read() as conn:
            pool = self._pool_by_id(conn, pool)
            stmt = (
                select(*_PLAYER_VIEW)
                .where(
                    players.c.pool_id == pool.id, players.c.rounds_played >= pool.params.t_shadow
                )
                .order_by(
                    players.c.rating.desc(), players.c.rounds_played.desc(), players.c.player_key
                )
                .limit(limit)
            )
            return pool, [PlayerRow(*r) for r in conn.execute(stmt)]

    def quality(self, pool_name: str, recent: int) -> tuple[Pool, PoolQuality]:
        """F6 and the pool's health counts, read in one snapshot."""
        now = self.clock()
        with self.snapshot_read() as conn:
            row = conn.execute(select(pools).where(pools.c.name == pool_name)).first()
            if row is None:
                raise UnknownPool(pool_name)
            pool = _pool(row)
            stale_before = now - timedelta(days=pool.params.t_stale_days)
            counts = conn.execute(
                select(
                    func.count().label("players"),
                    func.count()
                    .filter(players.c.rounds_played < pool.params.t_shadow)
                    .label("shadow"),
                    func.count().filter(players.c.last_played < stale_before).label("stale"),
                    func.avg(players.c.convergence).label("mean_c"),
                ).where(players.c.pool_id == pool.id)
            ).one()
            last = conn.execute(
                select(rounds.c.p_a, rounds.c.winner)
                .where(rounds.c.pool_id == pool.id, rounds.c.voided == false())
                .order_by(rounds.c.seq.desc())
                .limit(recent)
            ).all()
            fit_rows = (
                []
                if pool.rounds < THETA_MIN_ROUNDS or not pool.is_synelo
                else conn.execute(
                    select(rounds.c.sum_a - rounds.c.sum_b, rounds.c.winner)
                    .where(rounds.c.pool_id == pool.id, rounds.c.voided == false())
                    .order_by(rounds.c.seq.desc())
                    .limit(THETA_FIT_ROUNDS)
                ).all()
            )
            last_fit = conn.execute(
                select(changes)
                .where(changes.c.pool_id == pool.id, changes.c.kind == "tune")
                .order_by(changes.c.id.desc())
                .limit(1)
            ).first()
        recent_brier = brier_score((p - round_score(w, "A")) ** 2 for p, w in last)
        theta = fit_theta_interval(
            [gap for gap, _ in fit_rows],
            [round_score(w, "A") for _, w in fit_rows],
            pool.params.theta,
        )
        mean_c = None if counts.mean_c is None or not pool.is_synelo else float(counts.mean_c)
        return pool, PoolQuality(
            rounds=pool.rated,
            players=counts.players,
            shadow=counts.shadow,
            stale=counts.stale,
            mean_convergence=mean_c,
            brier_all=pool.brier_sum / pool.rated if pool.rated else None,
            brier_recent=recent_brier,
            recent_rounds=len(last),
            theta_fit=theta,
            last_fit=None if last_fit is None else _change(last_fit),
        )

    def health(self, pool: Pool) -> PoolHealth:
        """The pool health page's figures (`synelo.store.health`), read in one snapshot."""
        return read_health(self, pool, self.clock())

    def journal_rounds(self, pool_name: str) -> tuple[Pool, list[JournalRound], list[Change]]:
        """Every stored round of a pool in `seq` order (voided ones too), each with its
        participants as the journal in force recorded them, and the pool's admin log."""
        with self.snapshot_read() as conn:
            row = conn.execute(select(pools).where(pools.c.name == pool_name)).first()
            if row is None:
                raise UnknownPool(pool_name)
            pool = _pool(row)
            log = [
                _change(r)
                for r in conn.execute(
                    select(changes)
                    .where(changes.c.pool_id == pool.id)
                    .order_by(changes.c.seq, changes.c.id)
                )
            ]
            out = [
                JournalRound(
                    r.seq,
                    r.round_id,
                    r.server_id,
                    r.map,
                    r.winner,
                    r.sum_a,
                    r.sum_b,
                    r.p_a,
                    r.created_at,
                    [],
                    None if r.report is None else orjson.loads(r.report),
                    r.voided,
                )
                for r in conn.execute(
                    select(
                        rounds.c.id,
                        rounds.c.seq,
                        rounds.c.round_id,
                        rounds.c.server_id,
                        rounds.c.map,
                        rounds.c.winner,
                        rounds.c.sum_a,
                        rounds.c.sum_b,
                        rounds.c.p_a,
                        rounds.c.created_at,
                        rounds.c.report,
                        rounds.c.voided,
                    )
                    .where(rounds.c.pool_id == pool.id)
                    .order_by(rounds.c.seq)
                )
            ]
            by_seq = {rnd.seq: rnd for rnd in out}
            stmt = (
                select(
                    rounds.c.seq,
                    players.c.player_key,
                    journal.c.team,
                    journal.c.before,
                    journal.c.after,
                )
                .select_from(
                    rounds.join(journal, journal.c.round_pk == rounds.c.id).join(
                        players, players.c.id == journal.c.player_id
                    )
                )
                .where(rounds.c.pool_id == pool.id, journal.c.generation == pool.generation)
                .order_by(journal.c.id)
            )
            for r in conn.execute(stmt):
                by_seq[r.seq].participants.append((r.player_key, r.team, r.before, r.after))
        return pool, out, log

    # --- rounds -----------------------------------------------------------------------------
    def submit_round(self, pool_name: str, report: RoundReport) -> SubmitResult:
        """Rate a round once, in a transaction of its own (see `submit_in`)."""
        with self.write_transaction() as conn:
            return self.submit_in(conn, pool_name, report)

    def submit_in(self, conn: Connection, pool_name: str, report: RoundReport) -> SubmitResult:
        """Rate a round within `conn`'s write transaction. A retry with the same content
        gets the outcome recorded when the round was rated; the same round_id with other
        content raises RoundConflict, and an unknown pool UnknownPool, both before anything
        is written."""
        digest = report.content_hash()
        pool, seen = sql.lock_pool(conn, pool_name, report.round_id)
        if pool is None:
            raise UnknownPool(pool_name)
        if seen is not None:
            content_hash, record = seen
            if content_hash != digest:
                raise RoundConflict(report.round_id)
            return SubmitResult(False, decode_record(record))
        if pool.model != "synelo":
            rated = self._rate_served(conn, pool, report, digest, self.clock())
            return SubmitResult(True, rated)
        rated = self._rate(
            conn, pool, parse_synelo_params(pool.params), report, digest, self.clock()
        )
        return SubmitResult(True, rated)

    def _rate_served(
        self,
        conn: Connection,
        pool: sql.LockedPool,
        report: RoundReport,
        digest: str,
        now: datetime,
    ) -> RatedRound:
        """Rate a round of a pool whose model is not SynElo: its players' states in, the
        model's `rate`, their new states, the round and the journal out."""
        model = stored_model(pool.model, pool.params)
        t_shadow = pool_params(pool.model, pool.params)[0].t_shadow
        seq = pool.rounds + 1
        keys = sorted(
            {*report.team_a, *report.team_b, *report.participants_a, *report.participants_b}
        )
        stored = {row[1]: row for row in sql.lock_states(conn, pool.id, keys)}
        states = {
            key: model.decode(orjson.loads(row[4]) if row[4] else {}) for key, row in stored.items()
        }
        facts = RoundFacts(
            report.team_a,
            report.team_b,
            report.winner,
            report.participants_a,
            report.participants_b,
            received_extras(report.extras, report.map, now),
        )
        entries = sql.read_context(conn, pool.id, model.context_keys(facts))
        outcome = rate_with_model(model, states, facts, entries)
        p_a, s_a = outcome.p_a, score_a(report.winner)
        new_display = column_int(model.rating(model.new_state()))

        stamp = sql.timestamp(conn, now)
        ids = {key: row[0] for key, row in stored.items()}
        new = list(dict.fromkeys(key for key, _ in facts.rated() if key not in ids))
        ids.update(sql.insert_players(conn, pool.id, new, new_display))
        changes = [
            (key, side, before, after, (stored[key][2] if key in stored else 0) + 1)
            for key, side, before, after in outcome.changes
        ]
        rated = RatedRound(
            report.round_id,
            seq,
            report.winner,
            p_a,
            outcome.sum_a,
            outcome.sum_b,
            tuple(
                RatedPlayer(
                    key, side, before, after, after - before, None, rounds >= t_shadow, rounds
                )
                for key, side, before, after, rounds in changes
            ),
        )
        round_pk = _insert_round(conn, pool.id, report, rated, digest, stamp)
        journal_ids = sql.insert_journal(
            conn,
            [
                (
                    pool.id,
                    ids[key],
                    round_pk,
                    side,
                    before,
                    after,
                    None,
                    p_a if side == "A" else 1.0 - p_a,
                    s_a if side == "A" else 1.0 - s_a,
                    stamp,
                    stored[key][3] if key in stored else None,
                    pool.generation,
                )
                for key, side, before, after, _ in changes
            ],
        )
        sql.UPDATE_STATE.many(
            conn,
            [
                (
                    after,
                    rounds,
                    stamp,
                    orjson.dumps(model.encode(outcome.states[key])).decode(),
                    journal_ids[ids[key]],
                    ids[key],
                )
                for key, _, _, after, rounds in changes
            ],
        )
        sql.save_context(conn, pool.id, outcome.context)
        sql.COUNT_ROUND.run(conn, (seq, (p_a - s_a) ** 2, pool.id))
        sql.save_names(conn, pool.id, report.extras.get("names", {}))
        return rated

    def _rate(
        self,
        conn: Connection,
        pool: sql.LockedPool,
        params: SynEloParams,
        report: RoundReport,
        digest: str,
        now: datetime,
    ) -> RatedRound:
        """Read the players, rate with the pure math, write players, round and journal."""
        pool_id, seq = pool.id, pool.rounds + 1
        keys = sorted(
            {*report.team_a, *report.team_b, *report.participants_a, *report.participants_b}
        )
        stored = {row.key: row for row in sql.lock_players(conn, pool_id, keys)}

        def rating(key: str) -> int:
            row = stored.get(key)
            return row.rating if row is not None else params.r0

        sides: tuple[tuple[Side, tuple[str, ...]], ...] = (
            ("A", report.participants_a),
            ("B", report.participants_b),
        )
        participants = [(key, side) for side, on_side in sides for key in on_side]
        known = [stored[key] for key, _ in participants if key in stored]
        # a window cached at an older stamp (another worker rated the player since) is
        # brought up to date from the rows written since, not read back whole
        hits, stale = self._windows.get_or_stale({row.id: row.last_journal for row in known})
        missing = [row for row in known if row.id not in hits]
        revised = params.convergence == "revised"  # the F3 whose sums the windows keep
        loaded = (
            sql.windows(conn, missing, WINDOW_CHUNK, params.window, revised, stale)
            if missing
            else {}
        )

        records: dict[str, PlayerRecord] = {}
        for key, _ in participants:
            row = stored.get(key)
            if row is None:
                records[key] = PlayerRecord(params.r0, 0, new_window(params))
            elif row.id in hits:
                records[key] = PlayerRecord(row.rating, row.rounds_played, *hits[row.id])
            else:
                records[key] = PlayerRecord(
                    row.rating, row.rounds_played, loaded[row.id], row.convergence
                )
        outcome = rate_round(
            map(rating, report.team_a),
            map(rating, report.team_b),
            [(key, side, records[key]) for key, side in participants],
            report.winner,
            params,
        )

        stamp = sql.timestamp(conn, now)
        ids = {key: row.id for key, row in stored.items()}
        last = {row.id: row.last_journal for row in stored.values()}
        new = list(dict.fromkeys(c.player for c in outcome.changes if c.player not in ids))
        ids.update(sql.insert_players(conn, pool_id, new, params.r0))
        rated = RatedRound(
            report.round_id,
            seq,
            report.winner,
            outcome.p_a,
            outcome.sum_a,
            outcome.sum_b,
            tuple(
                [
                    RatedPlayer(
                        c.player,
                        c.side,
                        c.before,
                        c.after,
                        c.delta,
                        c.k,
                        is_visible(c.rounds_played, params),
                        c.rounds_played,
                    )
                    for c in outcome.changes
                ]
            ),
        )
        written, chunks, dropped = [], [], []
        for change in outcome.changes:
            rec = records[change.player]
            apply_change(rec, change)
            pid = ids[change.player]
            win = rec.window
            written.append(
                sql.PlayerWrite(
                    pid,
                    change.side,
                    change.before,
                    change.after,
                    change.k,
                    change.p,
                    change.s,
                    last.get(pid),
                    rec.rating,
                    rec.rounds_played,
                    rec.current_convergence(params),
                    win.appended,
                )
            )
            if win.appended % WINDOW_CHUNK == 0:  # the newest chunk is complete: store it
                newest = window_codec.chunk_of_newest(win, WINDOW_CHUNK)
                chunks.append((pid, newest, window_codec.chunk_bytes(win, newest, WINDOW_CHUNK)))
                oldest = window_codec.oldest_chunk(win, WINDOW_CHUNK)
                if oldest:
                    dropped.append((pid, oldest))
        _, journal_ids = sql.write_round(
            conn,
            _round_row(pool_id, report, rated, digest, stamp),
            pool.generation,
            written,
            outcome.brier_term(report.winner),
        )
        self._windows.put_many(
            [
                (w.player_id, journal_ids[w.player_id], records[key].window, w.convergence)
                for key, w in zip((c.player for c in outcome.changes), written, strict=True)
            ]
        )
        if chunks:
            sql.SAVE_CHUNK.many(conn, chunks)
        if dropped:
            sql.DROP_CHUNKS_BEFORE.many(conn, dropped)
        sql.save_names(conn, pool_id, report.extras.get("names", {}))
        return rated

    # --- tokens -----------------------------------------------------------------------------
    def add_token(self, role: str, token: str, label: str) -> None:
        with self.write_transaction() as conn:
            conn.execute(
                insert(api_tokens).values(
                    role=role, token_hash=hash_token(token), label=label, created_at=self.clock()
                )
            )

    def token_identity(self, token: str) -> tuple[str, str] | None:
        """(role, label) of a stored token; None for an unknown one."""
        return self.token_holder(hash_token(token))

    def token_holder(self, token_hash: str) -> tuple[str, str] | None:
        """(role, label) of the stored token with this SHA-256; None for an unknown one."""
        with self._read() as conn:
            row = conn.execute(
                select(api_tokens.c.role, api_tokens.c.label).where(
                    api_tokens.c.token_hash == token_hash
                )
            ).first()
        return None if row is None else (row.role, row.label)

    def list_tokens(self) -> list[StoredToken]:
        """The stored tokens (never the tokens themselves: only their hashes are kept)."""
        with self._read() as conn:
            rows = conn.execute(
                select(
                    api_tokens.c.id, api_tokens.c.role, api_tokens.c.label, api_tokens.c.created_at
                ).order_by(api_tokens.c.id)
            ).all()
        return [StoredToken(*row) for row in rows]

    def revoke_token(self, token_id: int) -> StoredToken | None:
        """Delete a stored token; every worker refuses it within a second (their memory of a
        token lasts that long). None when there is no such token."""
        with self.write_transaction() as conn:
            row = conn.execute(
                select(
                    api_tokens.c.id, api_tokens.c.role, api_tokens.c.label, api_tokens.c.created_at
                ).where(api_tokens.c.id == token_id)
            ).first()
            if row is None:
                return None
            conn.execute(delete(api_tokens).where(api_tokens.c.id == token_id))
        return StoredToken(*row)


class StoredToken(NamedTuple):
    """A stored token as `synelo token list` shows it."""

    id: int
    role: str
    label: str
    created_at: datetime
