"""The round writer (group commit) and the WAL checkpointer, on a real database."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine

from synelo.domain import RoundConflict, RoundReport, UnknownPool
from synelo.ratings import SynEloParams
from synelo.store.checkpoint import Checkpointer
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store
from synelo.store.writer import RoundWriter
from tests.conftest import steam


def report(n: int, a: int, b: int, winner: str = "A") -> RoundReport:
    return RoundReport(
        f"r{n}", "s", "m", winner, (steam(a),), (steam(b),), (steam(a),), (steam(b),)
    )


@pytest.fixture
def store(backend: Engine) -> Store:
    return Store(backend)


@pytest.fixture
def pool(store: Store) -> str:
    name = f"w{uuid.uuid4().hex[:12]}"
    store.create_pool(name, 1, SynEloParams(theta=400))
    return name


def test_batch_equals_one_transaction_per_round(store: Store, pool: str) -> None:
    other = f"w{uuid.uuid4().hex[:12]}"
    store.create_pool(other, 1, SynEloParams(theta=400))
    rounds = [report(i, 1 + i % 3, 4 + i % 2, "AB"[i % 2]) for i in range(12)]
    for r in rounds:
        store.submit_round(other, r)
    writer = RoundWriter(store)
    futures = [writer.submit(pool, r) for r in rounds]  # queued at once: batched
    rated = [f.result(30).round for f in futures]
    writer.close()
    expected = [store.submit_round(other, r).round for r in rounds]  # replays
    assert rated == expected


def test_expected_errors_fail_only_their_round(store: Store, pool: str) -> None:
    writer = RoundWriter(store)
    ok = writer.submit(pool, report(1, 1, 2))
    missing = writer.submit("no-such-pool", report(2, 1, 2))
    clash = writer.submit(pool, report(1, 1, 2, "B"))  # same round_id, other content
    after = writer.submit(pool, report(3, 1, 2))
    assert ok.result(30).created and after.result(30).created
    with pytest.raises(UnknownPool):
        missing.result(30)
    with pytest.raises(RoundConflict):
        clash.result(30)
    writer.close()
    assert store.get_pool(pool).rounds == 2


def test_a_failing_batch_is_retried_round_by_round(
    store: Store, pool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round that breaks its transaction half-way rolls the batch back; the writer then
    rates every round alone, so only the faulty one fails and nothing is counted twice."""
    real = store.submit_in

    def fault(conn, pool_name, rep):  # type: ignore[no-untyped-def]
        result = real(conn, pool_name, rep)
        if rep.round_id == "r2":
            raise RuntimeError("disk on fire")
        return result

    monkeypatch.setattr(store, "submit_in", fault)
    writer = RoundWriter(store)
    futures = [writer.submit(pool, report(i, 1, 2)) for i in range(1, 4)]
    outcomes = []
    for f in futures:
        try:
            outcomes.append(f.result(30).created)
        except RuntimeError:
            outcomes.append("failed")
    writer.close()
    assert outcomes == [True, "failed", True]
    assert store.get_pool(pool).rounds == 2
    assert store.lookup(store.get_pool(pool), [steam(1)])[steam(1)].rounds_played == 2


def test_the_writer_reopens_a_connection_that_broke(store: Store, pool: str) -> None:
    """The writer keeps one connection; when it breaks (a database restart, a dropped
    socket) the batch on it fails, its rounds are rated one by one on pooled connections,
    and the next batch opens a new connection: nothing is lost or counted twice."""
    writer = RoundWriter(store)
    assert writer.submit(pool, report(1, 1, 2)).result(30).created
    held = writer._conn
    assert held is not None
    held.connection.dbapi_connection.close()  # the writer is idle: its connection dies
    assert writer.submit(pool, report(2, 1, 2)).result(30).created  # rated alone
    assert writer.submit(pool, report(3, 2, 1)).result(30).created  # on a new connection
    assert writer._conn is not None and writer._conn is not held
    writer.close()
    assert store.get_pool(pool).rounds == 3
    assert store.lookup(store.get_pool(pool), [steam(1)])[steam(1)].rounds_played == 3


def test_the_writers_connection_skips_reference_checks_and_is_never_pooled(tmp_path: Path) -> None:
    """SQLite: the writer's own connection runs without foreign-key checks; when the writer
    stops, that connection is discarded, so every pooled connection still checks."""
    engine = create_store_engine(f"sqlite:///{tmp_path / 'fk.db'}", pool_size=1)
    migrate(engine)
    store = Store(engine)
    store.create_pool("p", 1, SynEloParams(theta=400))
    writer = RoundWriter(store)
    assert writer.submit("p", report(1, 1, 2)).result(30).created
    held = writer._conn
    assert held is not None
    raw = held.connection.driver_connection
    assert raw.execute("PRAGMA foreign_keys").fetchone() == (0,)
    writer.close()
    assert writer._conn is None
    for _ in range(3):  # whichever connection the pool hands out checks references
        with engine.connect() as conn:
            assert conn.connection.driver_connection is not raw
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            with pytest.raises(Exception, match="FOREIGN KEY"):
                conn.exec_driver_sql(
                    "INSERT INTO window_chunks (player_id, chunk, data) VALUES (999999, 0, x'00')"
                )
    engine.dispose()


def _rounds_in_database_file(path: Path) -> int:
    """Rounds in the main database file alone, not counting what is still in the WAL."""
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return con.execute("SELECT count(*) FROM rounds").fetchone()[0]
    finally:
        con.close()


def test_checkpointer_moves_the_wal_into_the_database(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    engine = create_store_engine(f"sqlite:///{path}")
    migrate(engine)
    checkpointer = Checkpointer(engine, interval_s=3600)
    checkpointer.checkpoint()  # the schema, into the file
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 0
    store = Store(engine)
    store.create_pool("p", 1, SynEloParams(theta=400))
    for i in range(20):
        store.submit_round("p", report(i, 1, 2))
    assert _rounds_in_database_file(path) == 0  # committed, but only in the WAL
    checkpointer.checkpoint()
    assert _rounds_in_database_file(path) == 20
    checkpointer.stop()
    engine.dispose()


def test_two_processes_never_use_a_stale_window(backend: Engine, pool: str) -> None:
    """Two stores on one database stand for two workers: each caches windows, and each must
    notice the rounds the other rated (the journal stamp changed) and reload."""
    first, second, alone = Store(backend), Store(backend), Store(backend, window_cache=0)
    reference = f"w{uuid.uuid4().hex[:12]}"
    alone.create_pool(reference, 1, SynEloParams(theta=400))
    sequence = [report(i, 1, 2 + i % 3, "AB"[i % 2]) for i in range(8)]
    for i, r in enumerate(sequence):
        (first if i % 3 else second).submit_round(pool, r)
        alone.submit_round(reference, r)
    mine = first.lookup(first.get_pool(pool), [steam(1)])[steam(1)]
    ref = alone.lookup(alone.get_pool(reference), [steam(1)])[steam(1)]
    assert (mine.rating, mine.rounds_played, mine.convergence) == (
        ref.rating,
        ref.rounds_played,
        ref.convergence,
    )


def test_a_cancelled_request_does_not_stop_the_writer(store: Store, pool: str) -> None:
    """A round whose future was cancelled before it was rated is skipped; the writer goes on."""
    writer = RoundWriter(store)
    entered, gate = threading.Event(), threading.Event()
    real = store.submit_in

    def slow(conn, pool_name, rep):  # type: ignore[no-untyped-def]
        entered.set()
        gate.wait(10)  # hold the first batch until the second round is queued and cancelled
        return real(conn, pool_name, rep)

    store.submit_in = slow  # type: ignore[method-assign]
    first = writer.submit(pool, report(1, 1, 2))
    assert entered.wait(10)  # the writer is rating the first round, alone in its batch
    cancelled = writer.submit(pool, report(2, 1, 2))
    assert cancelled.cancel()
    gate.set()
    assert first.result(30).created
    store.submit_in = real  # type: ignore[method-assign]
    later = writer.submit(pool, report(3, 1, 2))
    assert later.result(30).created  # the writer is alive
    writer.close()
    assert store.get_pool(pool).rounds == 2  # the cancelled round was not rated


def test_batches_never_lock_two_pools(store: Store, pool: str) -> None:
    """Rounds of several pools queued together are rated one pool per transaction."""
    other = f"w{uuid.uuid4().hex[:12]}"
    store.create_pool(other, 1, SynEloParams(theta=400))
    seen: list[set[str]] = []
    real_tx = store.write_transaction
    real_submit = store.submit_in

    @contextmanager
    def tx():  # type: ignore[no-untyped-def]
        seen.append(set())
        with real_tx() as conn:
            yield conn

    def submit(conn, pool_name, rep):  # type: ignore[no-untyped-def]
        seen[-1].add(pool_name)
        return real_submit(conn, pool_name, rep)

    store.write_transaction = tx  # type: ignore[method-assign]
    store.submit_in = submit  # type: ignore[method-assign]
    writer = RoundWriter(store)
    futures = [writer.submit(pool if i % 2 else other, report(i, 1, 2)) for i in range(10)]
    assert all(f.result(30).created for f in futures)
    writer.close()
    assert all(len(pools) == 1 for pools in seen)


def test_windows_read_from_chunks_equal_cached_windows(backend: Engine) -> None:
    """With a small window (7) and small chunks of the store (50 entries), 130 rounds evict and
    drop chunks; a store without a cache, which reads every window back from its header and
    chunks each round, rates exactly as one that keeps them in memory."""
    cached, cold = Store(backend), Store(backend, window_cache=0)
    names = [f"c{uuid.uuid4().hex[:12]}" for _ in range(2)]
    for store, name in zip((cached, cold), names, strict=True):
        store.create_pool(name, 1, SynEloParams(theta=400, window=7))
    for i in range(130):
        r = report(i, 1, 2 + i % 4, "AB"[(i * 7) % 3 % 2])
        cached.submit_round(names[0], r)
        cold.submit_round(names[1], r)
    for key in (steam(1), steam(2), steam(5)):
        a = cached.lookup(cached.get_pool(names[0]), [key])[key]
        b = cold.lookup(cold.get_pool(names[1]), [key])[key]
        assert (a.rating, a.rounds_played, a.convergence) == (
            b.rating,
            b.rounds_played,
            b.convergence,
        )


def test_a_cached_window_is_not_read_again(
    backend: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's cache serves the next round of the same players: no window is read back
    from the database, until the cache is gone (a new store) and each is read once."""
    from synelo.store import rounds as repository

    reads: list[list[int]] = []
    real = repository.sql.windows
    monkeypatch.setattr(
        repository.sql,
        "windows",
        lambda conn, players, *rest: reads.append(list(players)) or real(conn, players, *rest),
    )
    store = Store(backend)
    name = f"h{uuid.uuid4().hex[:12]}"
    store.create_pool(name, 1, SynEloParams(theta=400))
    store.submit_round(name, report(1, 1, 2))  # new players: nothing stored to read
    store.submit_round(name, report(2, 1, 2))
    store.submit_round(name, report(3, 2, 1))
    assert reads == []
    Store(backend).submit_round(name, report(4, 1, 2))  # a cold cache reads both, once
    assert len(reads) == 1 and len(reads[0]) == 2
