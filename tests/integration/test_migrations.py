"""The Alembic migrations build exactly the schema of synelo.store.tables, on both databases."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, Insert, func, inspect, select, text

from synelo.ratings import ConvergenceWindow
from synelo.store import window_codec as codec
from synelo.store.engine import alembic_config, create_store_engine, migrate
from synelo.store.jobs import ProcessId, cancel_job, start_job
from synelo.store.repository import Store, utcnow
from synelo.store.tables import (
    WINDOW_CHUNK,
    api_tokens,
    jobs,
    metadata,
    players,
    pools,
    window_chunks,
)
from synelo.store.tables import rounds as round_rows
from synelo.store.tokens import hash_token
from tests.conftest import own_pg_schema


def _old_pool() -> Insert:
    """A pool "p" with the columns every migration has."""
    return pools.insert().values(
        name="p",
        kmax=12,
        player_ids="steam",
        params="{}",
        rounds=0,
        brier_sum=0.0,
        created_at=utcnow(),
    )


def test_migrations_match_tables(backend: Engine) -> None:
    migrate(backend)  # a second run is a no-op
    with backend.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    names = set(inspect(backend).get_table_names())
    assert {"pools", "players", "rounds", "journal", "api_tokens", "alembic_version"} <= names


def test_0002_moves_windows_into_chunks_and_back(tmp_path: Path) -> None:
    """A database made at 0001, with whole-window blobs, upgrades to a header, full chunks and
    an unfilled newest chunk in the player's row that load the same windows, and downgrades
    back to the same blobs."""
    engine = create_store_engine(f"sqlite:///{tmp_path / 'old.db'}")
    migrate(engine, "0001")
    windows = {}
    for pid, (size, rounds) in enumerate([(500, 730), (500, 150), (6, 17), (500, 3)], start=1):
        win = ConvergenceWindow(size)
        for i in range(rounds):
            win.append(900 + (i * 37) % 400, (i % 10) / 10 + 0.05, (0.0, 0.5, 1.0)[i % 3])
        windows[pid] = win
    with engine.begin() as conn:
        conn.execute(_old_pool().values(id=1))
        for pid, win in windows.items():
            conn.execute(
                players.insert().values(
                    id=pid,
                    pool_id=1,
                    player_key=str(pid),
                    rating=1000,
                    rounds_played=0,
                    convergence=1.0,
                    window_state=codec.to_bytes(win),
                )
            )
    migrate(engine)
    with engine.connect() as conn:
        for pid, win in windows.items():
            header, tail = conn.execute(
                select(players.c.window_state, players.c.window_tail).where(players.c.id == pid)
            ).one()
            stored = dict(
                conn.execute(
                    select(window_chunks.c.chunk, window_chunks.c.data).where(
                        window_chunks.c.player_id == pid
                    )
                ).all()
            )
            assert len(stored) <= win.size // WINDOW_CHUNK + 1
            assert (tail is None) == (len(win) % WINDOW_CHUNK == 0)  # numbered from 0 anew
            if tail is not None:
                stored[codec.chunk_number(tail, WINDOW_CHUNK)] = tail
            loaded = codec.from_parts(header, stored, WINDOW_CHUNK, win.size)
            assert codec.to_bytes(loaded) == codec.to_bytes(win)
            # F3 (revised)'s sums, which no format stores, are rebuilt from the entries
            assert loaded.scale_sums() == win.scale_sums()
            assert loaded.largest_z() == win.largest_z()
    # parameters stored before F3 had versions ("{}" here) are the seed's
    assert Store(engine).get_pool("p").params.convergence == "seed"
    command.downgrade(alembic_config(engine), "0001")
    with engine.connect() as conn:
        blobs = dict(conn.execute(select(players.c.id, players.c.window_state)).all())
    assert blobs == {pid: codec.to_bytes(win) for pid, win in windows.items()}


@pytest.mark.parametrize("down_to", ["0002", "0001"])
def test_0003_windows_survive_a_downgrade_and_upgrade(tmp_path: Path, down_to: str) -> None:
    """Rows written at 0003 (window tail in the journal) go back to a header and tail at 0002,
    or a whole window at 0001, and up again; a store that then reads every window back from
    the database, old rows and new, rates exactly as one that never left 0003 (the journal,
    which now holds the windows' newest entries, survives the downgrades). Admin changes
    restart windows on the way."""
    from synelo.domain import RoundReport
    from synelo.ratings import SynEloParams
    from synelo.store.repository import Store

    def report(i: int) -> RoundReport:
        a = tuple(str(76561197960265729 + (i * k) % 9) for k in (1, 2))
        b = tuple(str(76561197960265729 + 9 + (i * k) % 7) for k in (1, 3))
        a, b = tuple(dict.fromkeys(a)), tuple(dict.fromkeys(b))
        return RoundReport(f"r{i}", "s", "m", "AB"[(i * 7) % 3 % 2], a, b, a, b)

    stores = []
    for name in ("steady", "round-trip"):
        engine = create_store_engine(f"sqlite:///{tmp_path / name}.db")
        migrate(engine)
        store = Store(engine)
        store.create_pool("p", 2, SynEloParams(theta=400, window=60))
        stores.append(store)
    steady, trip = stores
    for i in range(170):
        for store in stores:
            store.submit_round("p", report(i))
        if i == 90:
            for store in stores:
                store.set_rating("p", "76561197960265730", 1300, view=lambda *_: None)
                store.reset_player("p", "76561197960265731", view=lambda *_: None)
    engine = trip.engine
    with engine.connect() as conn:
        journal_rows = conn.exec_driver_sql("SELECT count(*) FROM journal").scalar()
    command.downgrade(alembic_config(engine), down_to)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM journal").scalar() == journal_rows
        rows = conn.execute(select(players.c.window_state).where(players.c.rounds_played > 0)).all()
        assert rows and all(header is not None for (header,) in rows)
    migrate(engine)
    cold = Store(engine, window_cache=0)
    for i in range(170, 300):
        steady.submit_round("p", report(i))
        cold.submit_round("p", report(i))
    keys = [str(76561197960265729 + k) for k in range(16)]
    a = steady.lookup(steady.get_pool("p"), keys)
    b = cold.lookup(cold.get_pool("p"), keys)
    assert len(a) == 16
    assert {k: (r.rating, r.rounds_played, r.convergence) for k, r in a.items()} == {
        k: (r.rating, r.rounds_played, r.convergence) for k, r in b.items()
    }


def test_0006_downgrades_to_the_journal_in_force_and_back(tmp_path: Path) -> None:
    """A re-rated pool's old generation is dropped on the way down (0005 reads every row of
    a round), the journal gets its foreign keys back, and the upgrade drops them again."""
    from synelo.domain import RoundReport
    from synelo.ratings import SynEloParams
    from synelo.rerate.job import run_job
    from synelo.store.generations import RerateStore

    engine = create_store_engine(f"sqlite:///{tmp_path / 'six.db'}")
    migrate(engine)
    store = Store(engine)
    store.create_pool("p", 2, SynEloParams(theta=400))
    for i in range(6):
        a, b = (f"{i % 3}", f"{3 + i % 2}"), (f"{5 + i % 2}", "7")
        store.submit_round("p", RoundReport(f"r{i}", "s", "m", "AB"[i % 2], a, b, a, b))
    rerate = RerateStore(store)
    pool, job = rerate.start("p", "void", {"round_id": "r2", "reason": "x"}, "test")
    with engine.begin() as conn:  # a second generation, the clean-up not done yet
        conn.exec_driver_sql("UPDATE journal SET generation = -1")
        conn.exec_driver_sql(
            "INSERT INTO journal (pool_id, player_id, round_pk, kind, team, before, after, "
            "created_at, generation) SELECT pool_id, player_id, round_pk, kind, team, before, "
            "after, created_at, 0 FROM journal"
        )
    assert run_job(rerate, pool, job) is not None
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO journal (pool_id, player_id, round_pk, kind, "
            "before, after, created_at, generation) "
            "SELECT pool_id, player_id, round_pk, kind, before, after, "
            "created_at, -5 FROM journal"
        )
        in_force = conn.exec_driver_sql(
            "SELECT count(*) FROM journal JOIN pools ON pools.id = journal.pool_id "
            "AND pools.generation = journal.generation"
        ).scalar()
    command.downgrade(alembic_config(engine), "0005")
    with engine.connect() as conn:
        assert (
            conn.exec_driver_sql("SELECT count(*) FROM journal").scalar() == in_force == 5 * 4
        )  # 5 rounds of 2v2
        assert len(inspect(conn).get_foreign_keys("journal")) == 3
    migrate(engine)
    with engine.connect() as conn:
        assert inspect(conn).get_foreign_keys("journal") == []
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []


def test_0008_keeps_every_existing_pool_private_and_player_shown(tmp_path: Path) -> None:
    """Pools and players from before 0008 get public = false and hidden = false; a
    downgrade drops both columns and the upgrade puts them back the same way."""
    from synelo.domain import RoundReport
    from synelo.ratings import SynEloParams

    engine = create_store_engine(f"sqlite:///{tmp_path / 'eight.db'}")
    command.upgrade(alembic_config(engine), "0007")
    with engine.begin() as conn:  # a pool and its players as 0007 wrote them
        conn.exec_driver_sql(
            "INSERT INTO pools (name, kmax, player_ids, model, params, rounds, brier_sum, "
            "created_at) VALUES ('old', 2, 'text', 'elo', '{}', 0, 0.0, '2026-01-01')"
        )
    migrate(engine)
    store = Store(engine)
    assert store.get_pool("old").public is False
    store.create_pool("new", 2, SynEloParams(theta=400), "text", public=True)
    store.submit_round("new", RoundReport("r1", "s", "m", "A", ("a",), ("b",), ("a",), ("b",)))
    with engine.connect() as conn:
        assert conn.execute(select(players.c.hidden)).scalars().all() == [False, False]
    command.downgrade(alembic_config(engine), "0007")
    with engine.connect() as conn:
        assert "public" not in {c["name"] for c in inspect(conn).get_columns("pools")}
        assert "hidden" not in {c["name"] for c in inspect(conn).get_columns("players")}
    migrate(engine)
    assert Store(engine).get_pool("new").public is False  # back as every pool came in
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_0010_keeps_every_existing_token_for_every_pool(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    """Tokens stored before 0010 have no scope: every pool, as before. A downgrade deletes
    the scoped tokens, which without their scope would be valid for every pool, and keeps
    the others; the upgrade gives the schema of the tables again. On both databases."""
    _on_an_empty_database(database, tmp_path, request, _check_0010)


def _on_an_empty_database(
    database: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    check: Callable[[Engine], None],
) -> None:
    """Run `check` on an empty database of that kind (a PostgreSQL schema of its own)."""
    if database == "sqlite":
        check(create_store_engine(f"sqlite:///{tmp_path / 'empty.db'}"))
        return
    request.getfixturevalue("pg_schema_url")  # skips when PostgreSQL is unreachable
    with own_pg_schema() as url:
        engine = create_store_engine(url)
        try:
            check(engine)
        finally:
            engine.dispose()


def _check_0010(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "0009")
    with engine.begin() as conn:  # a token as 0009 wrote it
        conn.execute(
            api_tokens.insert().values(
                role="server", token_hash=hash_token("old"), label="old", created_at=utcnow()
            )
        )
    migrate(engine)
    store = Store(engine)
    old = store.token_identity("old")
    assert old is not None and old.role == "server" and old.pools is None
    store.add_token("server", "scoped", "eu-1", ["a", "b"])
    assert store.token_identity("scoped") == ("server", "eu-1", frozenset({"a", "b"}))
    command.downgrade(alembic_config(engine), "0009")
    with engine.connect() as conn:
        assert "pools" not in {c["name"] for c in inspect(conn).get_columns("api_tokens")}
        labels = conn.execute(select(api_tokens.c.label)).scalars().all()
    assert labels == ["old"]
    migrate(engine)
    assert Store(engine).token_identity("old") == ("server", "old", None)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_0011_names_a_jobs_process_and_drops_it_back(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    """A job stored before 0011 names no process: the heartbeat alone judges it, as before.
    After the upgrade a new job names its process; the downgrade drops the column and keeps
    the jobs, and the upgrade gives the schema of the tables again. On both databases."""
    _on_an_empty_database(database, tmp_path, request, _check_0011)


def _check_0011(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "0010")
    _old_running_job(engine, "patch", "rating")  # as 0010 wrote it
    migrate(engine)
    store = Store(engine)
    with engine.connect() as conn:
        assert conn.execute(select(jobs.c.process, jobs.c.status)).one() == (None, "running")
    with engine.begin() as conn:
        conn.execute(jobs.update().values(status="done"))
    _, job = start_job(store, "p", "patch", {}, "admin")
    with engine.connect() as conn:
        process = conn.execute(select(jobs.c.process).where(jobs.c.id == job.id)).scalar_one()
    owner = ProcessId.parse(process)
    assert owner is not None and owner.pid == os.getpid() and owner.alive() is True
    _down_and_up(engine, "0010", "jobs", "process", 2)
    with engine.connect() as conn:
        assert conn.execute(select(jobs.c.process).where(jobs.c.id == job.id)).scalar() is None


def _old_running_job(engine: Engine, kind: str, phase: str) -> None:
    """A pool "p" and a running job of `kind` in `phase`, with the columns of 0010's jobs
    (no process)."""
    now = utcnow()
    with engine.begin() as conn:
        pool_id = conn.execute(_old_pool().returning(pools.c.id)).scalar_one()
        conn.execute(
            text(
                "INSERT INTO jobs (pool_id, kind, spec, status, phase, total, done, actor,"
                " created_at, updated_at) VALUES (:p, :kind, '{}', 'running', :phase, 0, 0,"
                " 'x', :now, :now)"
            ),
            {
                "p": pool_id,
                "kind": kind,
                "phase": phase,
                "now": now if engine.dialect.name != "sqlite" else now.replace(tzinfo=None),
            },
        )


def _down_and_up(engine: Engine, revision: str, table: str, column: str, rows: int) -> None:
    """Down to `revision`: `table` loses `column` and keeps its `rows`; then up again, to
    the schema of the tables."""
    command.downgrade(alembic_config(engine), revision)
    with engine.connect() as conn:
        assert column not in {c["name"] for c in inspect(conn).get_columns(table)}
        assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == rows
    migrate(engine)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_0012_dates_each_stored_round_by_its_report(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    """Rounds stored before 0012 get `played_at` from their report: its ended_at, else its
    started_at, never after it was received; none (NULL) when it gives neither, or when
    there is no report. The downgrade
    drops the column and keeps the rounds; the upgrade gives the tables' schema again."""
    _on_an_empty_database(database, tmp_path, request, _check_0012)


def _check_0012(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "0011")
    received = "2026-12-01 12:00:00" if engine.dialect.name == "sqlite" else "2026-12-01 12:00Z"
    reports = {
        "ended": '{"started_at": "2026-11-01T20:00:00Z", "ended_at": "2026-11-01T20:30:00Z"}',
        "started": '{"started_at": "2026-11-10T08:00:00Z", "names": {"x": "ended_at"}}',
        "untimed": '{"names": {"x": "started_at"}}',
        "ahead": '{"ended_at": "2027-01-01T00:00:00Z"}',  # a clock ahead: when received
        "no report": None,
    }
    with engine.begin() as conn:  # rounds as 0011 wrote them
        pool_id = conn.execute(_old_pool().returning(pools.c.id)).scalar_one()
        for seq, (round_id, report) in enumerate(reports.items(), start=1):
            conn.execute(
                text(
                    "INSERT INTO rounds (pool_id, seq, round_id, server_id, map, winner, sum_a,"
                    " sum_b, p_a, content_hash, result, created_at, report) VALUES (:p, :seq,"
                    " :rid, 's', '', 'A', 0, 0, 0.5, 'x', '{}', :at, :report)"
                ),
                {"p": pool_id, "seq": seq, "rid": round_id, "at": received, "report": report},
            )
    migrate(engine)
    with engine.connect() as conn:
        found = dict(conn.execute(select(round_rows.c.round_id, round_rows.c.played_at)).all())
    assert found == {
        "ended": datetime(2026, 11, 1, 20, 30, tzinfo=UTC),
        "started": datetime(2026, 11, 10, 8, tzinfo=UTC),
        "untimed": None,
        "ahead": datetime(2026, 12, 1, 12, tzinfo=UTC),
        "no report": None,
    }
    _down_and_up(engine, "0011", "rounds", "played_at", 5)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_0013_notes_a_tokens_last_use_and_drops_it_back(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    """A token stored before 0013 has no last use (NULL) and keeps working; its next use is
    noted. The downgrade drops the column and keeps the token, and the upgrade gives the
    schema of the tables again. On both databases."""
    _on_an_empty_database(database, tmp_path, request, _check_0013)


def _check_0013(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "0012")
    Store(engine).add_token("admin", "old", "old")  # no last_used_at column yet
    migrate(engine)
    store = Store(engine)
    assert [t.last_used_at for t in store.list_tokens()] == [None]
    assert store.use_token(hash_token("old")) == ("admin", "old", None)
    assert store.list_tokens()[0].last_used_at is not None
    _down_and_up(engine, "0012", "api_tokens", "last_used_at", 1)
    assert Store(engine).token_identity("old") == ("admin", "old", None)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_0014_makes_room_for_a_cancelled_job_and_fails_it_back(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    """An advise job running when 0014 is applied can then be cancelled (a status of 9
    letters, more than the old column held on PostgreSQL); the downgrade turns it into a
    failed job that says it was cancelled, keeps the jobs and narrows the column, and the
    upgrade gives the schema of the tables again. On both databases."""
    _on_an_empty_database(database, tmp_path, request, _check_0014)


def _check_0014(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "0013")
    _old_running_job(engine, "advise", "advising")  # as 0013 wrote it
    migrate(engine)
    store = Store(engine)
    pool = store.get_pool("p")
    with engine.connect() as conn:
        job_id = conn.execute(select(jobs.c.id)).scalar_one()
    found = cancel_job(store, pool, job_id, "admin")
    assert found is not None and found[1] and found[0].status == "cancelled"
    assert cancel_job(store, pool, job_id, "admin") == (found[0], False)  # once only
    command.downgrade(alembic_config(engine), "0013")
    with engine.connect() as conn:
        assert conn.execute(select(jobs.c.status, jobs.c.error)).one() == (
            "failed",
            "cancelled by admin",
        )
        status = next(c for c in inspect(conn).get_columns("jobs") if c["name"] == "status")
        assert status["type"].length == 8
    migrate(engine)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert conn.execute(select(func.count()).select_from(jobs)).scalar_one() == 1
