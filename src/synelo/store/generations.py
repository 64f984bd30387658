"""Journal generations, the store's side of a re-rate: the pool's rounds and admin log as
they stand (the snapshot), a new generation of journal rows written beside the one in force,
the atomic swap, and the clean-up of the old generation. (A job's row is `store.jobs`'s;
running the job, above the store, is `synelo.rerate`'s.)

A re-rate writes its journal rows under its own generation (the job's id), which nothing
reads until the swap: players' chains start at `players.last_journal`, and every query by
round reads `pools.generation`'s rows only. The swap is one short write transaction: it
rates the rounds and applies the admin changes that arrived since the snapshot, then writes
the players, their windows, the rounds' P and sums, and the pool's model, parameters and
generation. The old generation's rows are deleted afterwards, a batch at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, delete, func, select, update

from synelo.domain import Change, Job, Pool, UnknownPool
from synelo.models.recompute import (
    AdminIn,
    JournalLine,
    PlayerState,
    Recompute,
    RoundEvent,
    RoundLine,
)
from synelo.models.rounds import report_facts
from synelo.store import driver_sql as sql
from synelo.store import window_codec
from synelo.store.admin_log import log_change
from synelo.store.bulk import bulk_insert, bulk_update
from synelo.store.core import locked_pool
from synelo.store.jobs import (
    cancel_job,
    claim_job,
    due_refits,
    due_tunes,
    fail_job,
    heartbeat,
    progress,
    read_job,
    record_fit,
    running_job,
    start_job,
)
from synelo.store.pools import delete_pool
from synelo.store.repository import Store
from synelo.store.rows import as_change, as_pool
from synelo.store.tables import (
    WINDOW_CHUNK,
    changes,
    jobs,
    journal,
    players,
    pool_context,
    pools,
    round_time,
    rounds,
    window_chunks,
)


class JobSuperseded(RuntimeError):
    """The job was taken for dead, or the pool was re-rated since its snapshot: its result
    must not be swapped in."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"job {job_id} no longer owns the pool's re-rate")


DELETE_BATCH = 2_000  # rounds whose old journal rows one clean-up transaction deletes


@dataclass(slots=True)
class StoredRound:
    pk: int
    seq: int
    report: dict[str, Any]
    created_at: datetime
    voided: bool
    played: datetime  # `round_time`: when it was played, else when it was received

    def event(self) -> RoundEvent:
        return RoundEvent(
            self.pk,
            self.seq,
            report_facts(self.report, self.created_at),
            self.created_at,
            self.played,
        )


@dataclass(slots=True)
class Snapshot:
    """The pool as a re-rate starts from: rounds up to `seq`, admin log up to `change`."""

    pool: Pool
    rounds: list[StoredRound]
    admin: list[Change]
    seq: int
    change: int


def in_order(
    engine: Recompute,
    stored: Sequence[StoredRound],
    admin: Sequence[Change],
    voided: set[int],
    outcomes: list[RoundLine],
) -> Iterator[tuple[list[JournalLine], bool]]:
    """Rate the rounds not `voided` (row ids) and apply the admin sets, resets and seasons,
    each after the round it followed, in that order; for each, its journal rows and whether
    it was a rated round (whose P and sums go to `outcomes`)."""
    at = 0
    for rnd in stored:
        while at < len(admin) and admin[at].seq < rnd.seq:
            yield _admin_lines(engine, admin[at]), False
            at += 1
        if rnd.pk not in voided:
            outcome, lines = engine.round(rnd.event())
            outcomes.append(outcome)
            yield lines, True
    for change in admin[at:]:
        yield _admin_lines(engine, change), False


def _admin_lines(engine: Recompute, change: Change) -> list[JournalLine]:
    return engine.change(admin_event(change))


def admin_event(change: Change) -> AdminIn:
    value = change.value or {}
    return AdminIn(
        change.kind,  # type: ignore[arg-type]  # set, reset or season
        change.player_key or "",
        value.get("rating"),
        change.created_at,
        value.get("fraction"),
    )


class JournalChain:
    """Writes a re-rate's journal rows under its generation, linking each player's rows
    into a chain (prev_id) as the live path does; remembers each player's newest row."""

    def __init__(self, pool_id: int, generation: int, ids: dict[str, int]) -> None:
        self.pool_id, self.generation = pool_id, generation
        self.ids = ids  # player key → players.id
        self.last: dict[str, int] = {}  # player key → newest journal id of this generation

    def write(self, conn: Connection, lines: Sequence[JournalLine]) -> None:
        if not lines:
            return
        ids = _journal_ids(conn, len(lines))
        if conn.dialect.name != "sqlite":
            self._copy(conn, ids, lines)
            return
        rows = []
        stamps: dict[datetime, object] = {}  # a round's rows share its time: convert it once
        last, player_id = self.last, self.ids
        for jid, line in zip(ids, lines, strict=True):
            stamp = stamps.get(line.at)
            if stamp is None:
                stamp = stamps[line.at] = sql.timestamp(conn, line.at)
            rows.append(
                (
                    jid,
                    self.pool_id,
                    player_id[line.player],
                    line.round_pk,
                    line.kind,
                    line.team,
                    line.before,
                    line.after,
                    line.k,
                    line.p,
                    line.s,
                    stamp,
                    last.get(line.player),
                    self.generation,
                )
            )
            last[line.player] = jid
        bulk_insert(conn, "journal", _JOURNAL_COLUMNS, rows)

    def _copy(self, conn: Connection, ids: Sequence[int], lines: Sequence[JournalLine]) -> None:
        """PostgreSQL: the rows as COPY's text, formatted here in one pass (a float's repr
        reads back as the same float), sent in one piece: a third of the time of handing
        the driver one row at a time."""
        null = "\\N"
        head, tail = f"\t{self.pool_id}\t", f"\t{self.generation}\n"
        last, player_id = self.last, self.ids
        text: list[str] = []
        for jid, line in zip(ids, lines, strict=True):
            prev = last.get(line.player)
            before_after = f"{line.before}\t{line.after}"
            chain = f"{line.at.isoformat()}\t{null if prev is None else prev}"
            if line.round_pk is None:  # a set, reset or season: no round, team, K, P or S
                text.append(
                    f"{jid}{head}{player_id[line.player]}\t{null}\t{line.kind}\t{null}\t"
                    f"{before_after}\t{null}\t{null}\t{null}\t{chain}{tail}"
                )
            else:
                k = null if line.k is None else repr(line.k)
                text.append(
                    f"{jid}{head}{player_id[line.player]}\t{line.round_pk}\tround\t"
                    f"{line.team}\t{before_after}\t{k}\t{line.p!r}\t{line.s!r}\t{chain}{tail}"
                )
            last[line.player] = jid
        cur: Any = conn.connection.cursor()
        with cur.copy(f"COPY journal ({', '.join(_JOURNAL_COLUMNS)}) FROM STDIN") as copy:
            copy.write("".join(text))


_JOURNAL_COLUMNS = (
    "id",
    "pool_id",
    "player_id",
    "round_pk",
    "kind",
    "team",
    "before",
    "after",
    "k",
    "p",
    "s",
    "created_at",
    "prev_id",
    "generation",
)


def _journal_ids(conn: Connection, n: int) -> list[int]:
    """`n` fresh journal ids: PostgreSQL's sequence hands them out; SQLite's writer holds
    the database's write lock, so the ids after the largest are free until it commits."""
    if conn.dialect.name == "sqlite":
        top = conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM journal").scalar_one()
        return list(range(top + 1, top + 1 + n))
    cur: Any = conn.connection.cursor()  # the driver's own: 50,000 rows through
    cur.execute(  # SQLAlchemy's result machinery took longer than the query
        "SELECT nextval(pg_get_serial_sequence('journal', 'id')) FROM generate_series(1, %s)",
        (n,),
    )
    return [row[0] for row in cur.fetchall()]


class RerateStore:
    """Every read and write of a re-rate (see the module)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # --- jobs (store.jobs) ------------------------------------------------------------------
    def start(
        self, pool_name: str, kind: str, spec: Mapping[str, Any], actor: str
    ) -> tuple[Pool, Job]:
        """A new running job (`store.jobs`)."""
        return start_job(self.store, pool_name, kind, spec, actor)

    def job(self, pool: Pool, job_id: int) -> Job | None:
        """The pool's job of this id, if any."""
        return read_job(self.store, pool, job_id)

    def running_job(self, pool: Pool) -> int | None:
        """The pool's running job's id, if one runs (`store.jobs`)."""
        return running_job(self.store, pool)

    def claim(self, job_id: int) -> bool:
        """This process runs the job from now on, if it still runs (`store.jobs`)."""
        return claim_job(self.store, job_id)

    def heartbeat(self, job_id: int) -> None:
        """The job is alive (see `store.jobs.STALE_AFTER`)."""
        heartbeat(self.store, job_id)

    def progress(self, job_id: int, phase: str, done: int) -> bool:
        """The job's phase and rounds rated, and its heartbeat; False once it no longer
        runs (cancelled, or taken for dead: `store.jobs.progress`)."""
        return progress(self.store, job_id, phase, done)

    def cancel(self, pool: Pool, job_id: int, actor: str) -> tuple[Job, bool] | None:
        """Cancel the pool's running advise job (`store.jobs.cancel_job`)."""
        return cancel_job(self.store, pool, job_id, actor)

    def record_fit(self, job: Job, value: Mapping[str, Any]) -> None:
        """An auto-tune that was not adopted: logged, and the job done (nothing swapped)."""
        record_fit(self.store, job, value)

    def due_tunes(self) -> list[Pool]:
        """The pools due an auto-tune (`store.jobs`)."""
        return due_tunes(self.store)

    def due_refits(self) -> list[Pool]:
        """The pools due a scheduled refit (`store.jobs`)."""
        return due_refits(self.store)

    def fail(self, job: Job, error: str) -> None:
        """Mark the job failed; its journal rows are left for the next clean-up."""
        fail_job(self.store, job.id, error)

    def fail_id(self, job_id: int, error: str) -> None:
        """Mark the job of this id failed, if it still runs."""
        fail_job(self.store, job_id, error)

    def delete_pool(self, pool_name: str) -> Pool:
        """Delete the pool and all it holds, unless a re-rate runs on it (`store.pools`)."""
        return delete_pool(self.store, pool_name)

    # --- reading ----------------------------------------------------------------------------
    def snapshot(self, pool_name: str) -> Snapshot:
        """Every stored round and admin set, reset and season of the pool, read in one
        snapshot."""
        with self.store.snapshot_read() as conn:
            row = conn.execute(select(pools).where(pools.c.name == pool_name)).first()
            if row is None:
                raise UnknownPool(pool_name)
            pool = as_pool(row)
            stored = self._rounds(conn, pool.id, 0)
            log = self._admin(conn, pool.id, 0)
            last_change = conn.execute(
                select(func.coalesce(func.max(changes.c.id), 0)).where(changes.c.pool_id == pool.id)
            ).scalar_one()
        return Snapshot(pool, stored, log, pool.rounds, last_change)

    @staticmethod
    def _rounds(conn: Connection, pool_id: int, after_seq: int) -> list[StoredRound]:
        rows = conn.execute(
            select(
                rounds.c.id,
                rounds.c.seq,
                rounds.c.report,
                rounds.c.created_at,
                rounds.c.voided,
                round_time(),
            )
            .where(rounds.c.pool_id == pool_id, rounds.c.seq > after_seq)
            .order_by(rounds.c.seq)
        )
        out = []
        for pk, seq, report, created_at, voided, played in rows:
            if report is None:  # pragma: no cover - migration 0006 gave every round one
                raise ValueError(f"round {seq} has no stored report")
            stored = orjson.loads(report)
            out.append(StoredRound(pk, seq, stored, created_at, bool(voided), played))
        return out

    @staticmethod
    def _admin(conn: Connection, pool_id: int, after_id: int) -> list[Change]:
        return [
            as_change(r)
            for r in conn.execute(
                select(changes)
                .where(
                    changes.c.pool_id == pool_id,
                    changes.c.id > after_id,
                    changes.c.kind.in_(("set", "reset", "season")),
                )
                .order_by(changes.c.seq, changes.c.id)
            )
        ]

    def player_ids(self, pool: Pool) -> dict[str, int]:
        with self.store.engine.connect() as conn:
            return self._player_ids(conn, pool.id)

    @staticmethod
    def _player_ids(conn: Connection, pool_id: int) -> dict[str, int]:
        rows = conn.execute(
            select(players.c.player_key, players.c.id).where(players.c.pool_id == pool_id)
        )
        return dict(rows.tuples().all())

    # --- writing ----------------------------------------------------------------------------
    def write_lines(self, chain: JournalChain, lines: Sequence[JournalLine]) -> None:
        """Journal rows of the new generation, in a short transaction of their own."""
        with self.store.write_transaction() as conn:
            chain.write(conn, lines)

    def swap(
        self,
        job: Job,
        snapshot: Snapshot,
        engine: Recompute,
        chain: JournalChain,
        outcomes: list[RoundLine],
        target: tuple[str, str],
        voided: set[int],
        done: int,
    ) -> Pool:
        """Catch up on what arrived since the snapshot, then put the new ratings in force,
        all in one transaction (see the module). `target`: the model and its parameters'
        JSON; `voided`: the row ids of the rounds voided from now on."""
        model_name, params_text = target
        with self.store.write_transaction() as conn:
            pool = locked_pool(conn, snapshot.pool.name)
            status = conn.execute(select(jobs.c.status).where(jobs.c.id == job.id)).scalar()
            if status != "running" or pool.generation != snapshot.pool.generation:
                raise JobSuperseded(job.id)
            # the players in key order, as the live writer and name updates lock them
            conn.execute(
                select(players.c.id)
                .where(players.c.pool_id == pool.id)
                .order_by(players.c.player_key)
                .with_for_update()
            ).all()
            chain.ids = self._player_ids(conn, pool.id)
            late_rounds = self._rounds(conn, pool.id, snapshot.seq)
            late_admin = self._admin(conn, pool.id, snapshot.change)
            lines: list[JournalLine] = []
            for written, rated in in_order(engine, late_rounds, late_admin, voided, outcomes):
                lines.extend(written)
                done += rated
            chain.write(conn, lines)
            self._write_players(conn, pool, engine, chain, model_name)
            conn.execute(delete(pool_context).where(pool_context.c.pool_id == pool.id))
            sql.save_context(conn, pool.id, engine.context)
            bulk_update(
                conn,
                "rounds",
                ("p_a", "sum_a", "sum_b"),
                [(o.p_a, o.sum_a, o.sum_b, o.pk) for o in outcomes],
            )
            flagged = set(
                conn.execute(
                    select(rounds.c.id).where(rounds.c.pool_id == pool.id, rounds.c.voided)
                ).scalars()
            )
            for pks, flag in ((voided - flagged, True), (flagged - voided, False)):
                if pks:
                    conn.execute(update(rounds).where(rounds.c.id.in_(pks)).values(voided=flag))
            now = self.store.clock()
            conn.execute(
                update(pools)
                .where(pools.c.id == pool.id)
                .values(
                    model=model_name,
                    params=params_text,
                    generation=job.id,
                    brier_sum=engine.brier_sum,
                    voided=len(voided),
                )
            )
            spec = job.spec
            value: dict[str, Any] | None = None
            if job.kind in ("patch", "tune"):
                value = {"model": model_name, "params": spec["params"]}
                if "changed" in spec:  # {name: [was, becomes]}, for the health page
                    value["changed"] = spec["changed"]
                value.update(spec.get("fit", {}))
                if "autotune" in spec:
                    value["autotune"] = spec["autotune"]
                    conn.execute(
                        update(pools)
                        .where(pools.c.id == pool.id)
                        .values(
                            autotune=None
                            if spec["autotune"] is None
                            else json.dumps(spec["autotune"])
                        )
                    )
            log_change(
                conn,
                pool,
                job.kind,
                job.actor,
                spec.get("reason"),
                at=self.store.clock(),
                round_id=spec.get("round_id"),
                value=value,
            )
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job.id)
                .values(
                    status="done",
                    phase="done",
                    done=done,
                    finished_at=now,
                    updated_at=now,
                )
            )
        return self.store.get_pool(pool.name)

    def _write_players(
        self, conn: Connection, pool: Pool, engine: Recompute, chain: JournalChain, model: str
    ) -> None:
        """Every player of the pool as the re-rate left them; one it never met is new."""
        synelo = engine.synelo
        fresh = engine.new_player()
        rows, chunks = [], []
        for key, pid in chain.ids.items():
            player: PlayerState = engine.players.get(key, fresh)
            if synelo is not None:
                rec = player.state if key in engine.players else engine.new_record()
                win = rec.window
                c, state, appended = rec.current_convergence(synelo), None, win.appended
                if len(win):
                    first = window_codec.oldest_chunk(win, WINDOW_CHUNK)
                    for number in range(first, win.appended // WINDOW_CHUNK):
                        data = window_codec.chunk_bytes(win, number, WINDOW_CHUNK)
                        chunks.append((pid, number, data))
            else:
                c, appended = 1.0, 0
                state = (
                    orjson.dumps(engine.model.encode(player.state)).decode()
                    if key in engine.players
                    else None
                )
            rows.append(
                (
                    player.rating,
                    player.rounds_played,
                    None if player.last_played is None else sql.timestamp(conn, player.last_played),
                    c,
                    appended,
                    chain.last.get(key),
                    state,
                    pid,
                )
            )
        bulk_update(
            conn,
            "players",
            (
                "rating",
                "rounds_played",
                "last_played",
                "convergence",
                "window_appended",
                "last_journal",
                "state",
            ),
            rows,
        )
        conn.execute(
            update(players)
            .where(players.c.pool_id == pool.id)
            .values(window_state=None, window_tail=None)
        )
        conn.execute(
            delete(window_chunks).where(
                window_chunks.c.player_id.in_(
                    select(players.c.id).where(players.c.pool_id == pool.id)
                )
            )
        )
        if chunks:
            bulk_insert(conn, "window_chunks", ("player_id", "chunk", "data"), chunks)
        self.store.windows.clear()

    def clean_up(self, pool: Pool) -> int:
        """Delete the journal rows of the generations before the one in force, a batch of
        rounds per transaction; the number of rows deleted. (Generations are job ids: a
        later job, which may start as soon as this one has swapped, writes a higher one.)"""
        with self.store.engine.connect() as conn:
            pks = list(
                conn.execute(
                    select(rounds.c.id).where(rounds.c.pool_id == pool.id).order_by(rounds.c.id)
                ).scalars()
            )
        deleted = 0
        for at in range(0, len(pks), DELETE_BATCH):
            with self.store.write_transaction() as conn:
                deleted += conn.execute(
                    delete(journal).where(
                        journal.c.round_pk.in_(pks[at : at + DELETE_BATCH]),
                        journal.c.generation < pool.generation,
                    )
                ).rowcount
        with self.store.write_transaction() as conn:
            deleted += conn.execute(
                delete(journal).where(
                    journal.c.round_pk.is_(None),
                    journal.c.pool_id == pool.id,
                    journal.c.generation < pool.generation,
                )
            ).rowcount
        return deleted
