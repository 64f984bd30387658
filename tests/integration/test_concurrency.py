"""Several game servers feeding one pool at once never lose or interleave an update."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, select

from synelo.domain import RoundReport, SubmitResult
from synelo.ratings import (
    ConvergenceWindow,
    PlayerRecord,
    SynEloParams,
    apply_change,
    default_k_min,
    rate_round,
)
from synelo.store.repository import Store
from synelo.store.tables import journal, players, pools, rounds
from tests.conftest import ADMIN, SERVER, LiveServer, steam, synelo_serve

# the parameters of the `pool` fixture's pool: the settings' defaults (F3 revised), Θ 2400
POOL_PARAMS = SynEloParams(convergence="revised", k_min=default_k_min("revised"))

THREADS = 4
ROUNDS_PER_THREAD = 15


def random_round(rng: random.Random) -> dict:
    """A 3v3 round among 10 players, so that concurrent rounds share players."""
    players = rng.sample([steam(i) for i in range(1, 11)], 6)
    return {
        "round_id": uuid.uuid4().hex,
        "server_id": f"srv{rng.randrange(4)}",
        "map": "m",
        "winner": rng.choice(["A", "B", "draw"]),
        "teams": {"A": players[:3], "B": players[3:]},
    }


def replay(rounds: list[dict], params: SynEloParams) -> dict[str, PlayerRecord]:
    """The same rounds rated one after another by the pure math, without any database."""
    return replay_events(
        [("round", r["round_id"]) for r in rounds], {r["round_id"]: r for r in rounds}, params
    )


def test_parallel_submissions_equal_sequential_replay(
    live: LiveServer, pool: str, admin: httpx.Client
) -> None:
    rng = random.Random(7)
    batches = [[random_round(rng) for _ in range(ROUNDS_PER_THREAD)] for _ in range(THREADS)]

    def feed(batch: list[dict]) -> list[tuple[int, dict]]:
        out = []
        with live.client(SERVER) as c:
            for r in batch:
                resp = c.post(f"/v1/pools/{pool}/rounds", json=r)
                assert resp.status_code == 201, resp.text
                out.append((resp.json()["seq"], r))
        return out

    with ThreadPoolExecutor(THREADS) as ex:
        done = [item for part in ex.map(feed, batches) for item in part]
    seqs = sorted(seq for seq, _ in done)
    assert seqs == list(range(1, THREADS * ROUNDS_PER_THREAD + 1))  # no gap, no double

    expected = replay([r for _, r in sorted(done, key=lambda x: x[0])], POOL_PARAMS)
    with live.client(SERVER) as c:
        stored = c.post(
            f"/v1/pools/{pool}/players/lookup", json={"steam_ids": list(expected)}
        ).json()["players"]
    assert {p["steam_id"]: (p["rating"], p["rounds_played"]) for p in stored} == {
        k: (rec.rating, rec.rounds_played) for k, rec in expected.items()
    }
    # The journal of every player chains: each entry starts where the previous ended.
    for key in expected:
        entries = admin.get(f"/v1/pools/{pool}/players/{key}/history").json()["entries"]
        assert len(entries) == expected[key].rounds_played
        assert all(x["before"] == y["after"] for x, y in zip(entries, entries[1:], strict=False))
        assert [e["seq"] for e in entries] == sorted((e["seq"] for e in entries), reverse=True)


def test_concurrent_retries_rate_once(live: LiveServer, pool: str, admin: httpx.Client) -> None:
    payload = {
        "round_id": "same",
        "server_id": "s",
        "map": "m",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }

    def send(_: int) -> tuple[int, dict]:
        with live.client(SERVER) as c:
            r = c.post(f"/v1/pools/{pool}/rounds", json=payload)
            return r.status_code, r.json()

    with ThreadPoolExecutor(6) as ex:
        results = list(ex.map(send, range(6)))
    assert sorted(code for code, _ in results) == [200] * 5 + [201]
    assert all(body == results[0][1] for _, body in results)
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 1


def test_a_retry_waiting_for_the_pool_sees_the_round_rated_meanwhile(backend: Engine) -> None:
    """Two workers' round writers, each on its own connection, get the same round (a game
    server's retry): the second waits for the pool's lock while the first rates it. Once the
    first commits, the second answers the stored outcome (not rated again, no error). On
    PostgreSQL a lookup made in the statement that waited would read the rounds as they
    were before the wait, and the round's insert would then fail the second's whole batch."""
    first_store, second_store = Store(backend), Store(backend)
    name = f"retry{uuid.uuid4().hex[:10]}"
    first_store.create_pool(name, 1, SynEloParams())
    report = RoundReport("once", "s", "m", "A", (steam(1),), (steam(2),), (steam(1),), (steam(2),))
    answers: list[SubmitResult | BaseException] = []

    def second() -> None:
        conn = second_store.write_connection(check_references=False)
        try:
            with second_store.write_transaction(conn) as tx:
                answers.append(second_store.submit_in(tx, name, report))
        except Exception as exc:  # the test asserts on it
            answers.append(exc)
        finally:
            second_store.discard(conn)

    conn = first_store.write_connection(check_references=False)
    try:
        with first_store.write_transaction(conn) as tx:
            rated = first_store.submit_in(tx, name, report)
            waiting = threading.Thread(target=second)
            waiting.start()
            time.sleep(0.5)  # the second is waiting for the pool (PostgreSQL) or the database
            assert waiting.is_alive() and not answers
    finally:
        first_store.discard(conn)
    waiting.join(30)
    assert rated.created
    assert len(answers) == 1 and isinstance(answers[0], SubmitResult), answers
    assert not answers[0].created and answers[0].round == rated.round
    assert first_store.get_pool(name).rounds == 1


@contextmanager
def serve_workers(database_url: str, folder: Path, workers: int) -> Iterator[str]:
    """`synelo serve --workers N` on the test database, as an operator runs it, but without
    rate limits: six threads post rounds as fast as they are answered, through one server
    token, well past its 50 rounds/s (as conftest's `live` server, which serves them too)."""
    no_limits = dict.fromkeys(
        (
            "SYNELO_RATE_SERVER_ROUNDS",
            "SYNELO_RATE_SERVER_REQUESTS",
            "SYNELO_RATE_ADDRESS_REQUESTS",
            "SYNELO_FAIR_SHARE",
        ),
        "",
    )
    with synelo_serve(folder, workers, SYNELO_DATABASE_URL=database_url, **no_limits) as served:
        yield served.url


@pytest.fixture(scope="module")
def workers_url(live: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`serve_workers` with two workers on the database of `live`, for the module's tests on
    that database: each test rates a pool of its own, and three processes to start cost
    several seconds a test."""
    url = live.store.engine.url.render_as_string(hide_password=False)
    with serve_workers(url, tmp_path_factory.mktemp("workers"), workers=2) as served:
        yield served


def journal_events(live: LiveServer, pool: str) -> list[tuple]:
    """The pool's history as the journal recorded it, in journal order: ("round", round_id,
    seq, rows) once per round, ("set", key, rating) and ("reset", key) per admin change."""
    with live.store.engine.connect() as conn:
        rows = conn.execute(
            select(
                journal.c.kind,
                rounds.c.round_id,
                rounds.c.seq,
                players.c.player_key,
                journal.c.after,
            )
            .join(players, players.c.id == journal.c.player_id)
            .outerjoin(rounds, rounds.c.id == journal.c.round_pk)
            .join(pools, pools.c.id == journal.c.pool_id)
            .where(pools.c.name == pool)
            .order_by(journal.c.id)
        ).all()
    events: list[tuple] = []
    per_round: dict[str, int] = {}
    for kind, round_id, seq, key, after in rows:
        if kind == "round":
            if round_id not in per_round:
                events.append(("round", round_id, seq))
            per_round[round_id] = per_round.get(round_id, 0) + 1
        else:
            events.append((kind, key, after))
    return [(*e, per_round[e[1]]) if e[0] == "round" else e for e in events]


def replay_events(
    events: list[tuple], sent: dict[str, dict], params: SynEloParams
) -> dict[str, PlayerRecord]:
    """The pure math over the journal's events; an admin change restarts the window (C = 1)
    as the service does: a set keeps the rounds played, a reset goes back to R_0 and 0."""
    records: dict[str, PlayerRecord] = {}

    def record(key: str) -> PlayerRecord:
        return records.setdefault(key, PlayerRecord(params.r0, 0, ConvergenceWindow(500)))

    for event in events:
        if event[0] == "round":
            r = sent[event[1]]
            a, b = r["teams"]["A"], r["teams"]["B"]
            sides = [(k, "A", record(k)) for k in a] + [(k, "B", record(k)) for k in b]
            rated = rate_round(
                [record(k).rating for k in a],
                [record(k).rating for k in b],
                sides,
                r["winner"],
                params,
            )
            for change in rated.changes:
                apply_change(records[change.player], change)
        elif event[0] == "set":
            rounds_played = record(event[1]).rounds_played
            records[event[1]] = PlayerRecord(event[2], rounds_played, ConvergenceWindow(500))
        else:
            records[event[1]] = PlayerRecord(params.r0, 0, ConvergenceWindow(500))
    return records


def assert_stored_as_replayed(
    live: LiveServer, pool: str, events: list[tuple], sent: dict[str, dict]
) -> None:
    """Every player's stored rating, rounds and C equal the pure math replaying `events`."""
    expected = replay_events(events, sent, POOL_PARAMS)
    with live.client(SERVER) as c:
        stored = c.post(
            f"/v1/pools/{pool}/players/lookup", json={"steam_ids": list(expected)}
        ).json()["players"]
    assert {p["steam_id"]: (p["rating"], p["rounds_played"], p["convergence"]) for p in stored} == {
        k: (rec.rating, rec.rounds_played, rec.current_convergence(POOL_PARAMS))
        for k, rec in expected.items()
    }


@pytest.mark.parametrize("admin_changes", [False, True], ids=["rounds", "rounds+admin"])
def test_several_processes_on_one_database_equal_journal_replay(
    live: LiveServer, workers_url: str, pool: str, admin_changes: bool
) -> None:
    """Two worker processes and the test's own server, each with its own writer and window
    cache, rate one pool's rounds at once through the database's locks alone (and, in the
    second case, admins set and reset players meanwhile through both). The stored ratings
    must equal the pure math replaying the journal's events in its order, and every round
    must be rated exactly once."""
    rng = random.Random(11)
    batches = [[random_round(rng) for _ in range(ROUNDS_PER_THREAD)] for _ in range(6)]
    # Threads 0-3 post to the two worker processes, 4-5 to the in-process server.
    targets = [workers_url] * 4 + [live.url] * 2

    def feed(i: int) -> list[dict]:
        with httpx.Client(
            base_url=targets[i], timeout=60, headers={"Authorization": f"Bearer {SERVER}"}
        ) as c:
            for r in batches[i]:
                resp = c.post(f"/v1/pools/{pool}/rounds", json=r)
                assert resp.status_code == 201, resp.text
        return batches[i]

    def meddle(i: int) -> list[dict]:
        admin_rng = random.Random(100 + i)
        with httpx.Client(
            base_url=[workers_url, live.url][i],
            timeout=60,
            headers={"Authorization": f"Bearer {ADMIN}"},
        ) as c:
            for _ in range(12):
                path = f"/v1/pools/{pool}/players/{steam(admin_rng.randint(1, 10))}"
                if admin_rng.random() < 0.25:
                    assert c.delete(path).status_code == 200
                else:
                    rating = admin_rng.randint(500, 2000)
                    assert c.put(path, json={"rating": rating}).status_code == 200
        return []

    jobs = [(feed, i) for i in range(len(batches))]
    jobs += [(meddle, i) for i in range(2)] if admin_changes else []
    with ThreadPoolExecutor(len(jobs)) as ex:
        sent = {r["round_id"]: r for part in ex.map(lambda job: job[0](job[1]), jobs) for r in part}

    events = journal_events(live, pool)
    played = [e for e in events if e[0] == "round"]
    assert sorted(e[1] for e in played) == sorted(sent)
    assert [e[2] for e in played] == list(range(1, len(sent) + 1))  # seq in journal order
    assert all(e[3] == 6 for e in played)  # 3v3: six rows, none twice
    # the admin changes were journaled (all but resets of players not stored yet)
    assert (len(events) > len(played)) == admin_changes

    assert_stored_as_replayed(live, pool, events, sent)
