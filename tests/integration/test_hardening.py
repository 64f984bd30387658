"""The defects an outside probe found (issue 16), each kept fixed, over real HTTP on both
databases: a pool broken for good, NUL bytes, out-of-range numbers, validation gaps."""

from __future__ import annotations

import json
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, func, select, update

from synelo.client import RoundReporter, SyneloClient
from synelo.config import Settings
from synelo.ratings.synelo import win_probability
from synelo.service.app import create_app
from synelo.store.repository import Store
from synelo.store.tables import changes, journal, players, pools, rounds
from synelo.store.writer import RoundWriter
from tests.conftest import ADMIN, SERVER, LiveServer, serving, steam
from tests.integration.test_api_players import play
from tests.integration.test_api_positional import finished

# The tests marked serial have wall-clock bounds: `make test` runs them alone, after the
# parallel part; the rest of the module runs in it.


def _pool(admin: httpx.Client, **extra: object) -> str:
    name = f"h{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 2, **extra})
    assert r.status_code == 201, r.text
    return name


def _counts(live: LiveServer, pool_id: int) -> tuple[int, int, int, int]:
    """Rows of the pool: players, rounds, journal, admin log."""
    with live.store.engine.connect() as conn:
        return (
            conn.execute(select(func.count()).where(players.c.pool_id == pool_id)).scalar_one(),
            conn.execute(select(func.count()).where(rounds.c.pool_id == pool_id)).scalar_one(),
            conn.execute(select(func.count()).where(journal.c.pool_id == pool_id)).scalar_one(),
            conn.execute(select(func.count()).where(changes.c.pool_id == pool_id)).scalar_one(),
        )


def _pool_id(live: LiveServer, name: str) -> int:
    with live.store.engine.connect() as conn:
        return conn.execute(select(pools.c.id).where(pools.c.name == name)).scalar_one()


@pytest.mark.parametrize("sigma", [1e-170, 5e-324, 1e-200, 0.5])
def test_a_sigma_that_would_break_the_pool_is_refused(admin: httpx.Client, sigma: float) -> None:
    """σ = 1e-170 made F4's 2σ² zero: the pool was created, then answered 500 for good."""
    for body in ({"params": {"sigma": sigma}}, {"model": "synelo", "params": {"sigma": sigma}}):
        name = f"h{uuid.uuid4().hex[:10]}"
        r = admin.post("/v1/pools", json={"name": name, **body})
        assert r.status_code == 422, r.text
        assert "sigma" in json.dumps(r.json()["detail"])
        assert admin.get(f"/v1/pools/{name}").status_code == 404
    name = _pool(admin)
    r = admin.patch(f"/v1/pools/{name}", json={"params": {"sigma": sigma}, "reason": "probe"})
    assert r.status_code == 422, r.text
    assert "sigma" in json.dumps(r.json()["detail"])


@pytest.mark.parametrize(
    "params",
    [{"theta": 1e-300}, {"k_max": 1e-300, "k_min": 0}, {"wre_scale": 1e-300}, {"w_vol": 1e300}],
)
def test_other_scales_out_of_bounds_are_refused(admin: httpx.Client, params: dict) -> None:
    r = admin.post("/v1/pools", json={"name": f"h{uuid.uuid4().hex[:10]}", "params": params})
    assert r.status_code == 422, r.text
    assert next(iter(params)) in json.dumps(r.json()["detail"])


def test_a_failing_admin_write_changes_nothing(live: LiveServer, admin: httpx.Client) -> None:
    """A pool whose stored parameters cannot rate (as one made before the bounds could be):
    PUT and DELETE of a player fail, and they store nothing; the pool can then be deleted."""
    name = _pool(admin)
    key = steam(1)
    play(admin, name, [steam(1), steam(2)], [steam(3), steam(4)], "A")
    pool_id = _pool_id(live, name)
    with live.store.engine.begin() as conn:
        stored = json.loads(
            conn.execute(select(pools.c.params).where(pools.c.id == pool_id)).scalar_one()
        )
        conn.execute(
            update(pools)
            .where(pools.c.id == pool_id)
            .values(params=json.dumps({**stored, "sigma": 1e-170}))
        )
    before = _counts(live, pool_id)
    rating = admin.get(f"/v1/pools/{name}/players/{key}")
    assert rating.status_code == 500  # the pool is broken: the answer cannot be computed
    assert admin.put(f"/v1/pools/{name}/players/{key}", json={"rating": 1500}).status_code == 500
    assert admin.delete(f"/v1/pools/{name}/players/{key}").status_code == 500
    assert _counts(live, pool_id) == before
    with live.store.engine.connect() as conn:
        row = conn.execute(
            select(players.c.rating, players.c.rounds_played).where(
                players.c.pool_id == pool_id, players.c.player_key == key
            )
        ).one()
    assert row.rounds_played == 1 and row.rating != 1500

    r = admin.delete(f"/v1/pools/{name}", params={"reason": "broken by a bad sigma"})
    assert r.status_code == 200, r.text
    assert r.json()["name"] == name and r.json()["rounds"] == 1
    assert _counts(live, pool_id) == (0, 0, 0, 0)
    assert admin.get(f"/v1/pools/{name}").status_code == 404
    assert admin.delete(f"/v1/pools/{name}").status_code == 404
    # the name is free again, and the new pool starts empty
    assert admin.post("/v1/pools", json={"name": name, "team_size": 2}).status_code == 201
    assert admin.get(f"/v1/pools/{name}/players/{key}").json()["rounds_played"] == 0


def test_deleting_a_pool_needs_an_admin_and_leaves_others_alone(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    keep, drop = _pool(admin), _pool(admin)
    for name in (keep, drop):
        play(admin, name, [steam(1), steam(2)], [steam(3), steam(4)], "B")
        assert (
            admin.put(f"/v1/pools/{name}/players/{steam(5)}", json={"rating": 1200}).status_code
            == 200
        )
    kept = _counts(live, _pool_id(live, keep))
    assert server.delete(f"/v1/pools/{drop}").status_code == 403
    assert admin.delete(f"/v1/pools/{drop}").status_code == 200
    assert _counts(live, _pool_id(live, keep)) == kept
    assert admin.get(f"/v1/pools/{keep}/players/{steam(5)}").json()["rating"] == 1200


@pytest.mark.serial  # within a second
def test_another_worker_sees_a_deleted_pool_and_its_successor(
    live: LiveServer, admin: httpx.Client, backend: Engine
) -> None:
    """Each worker keeps the pools it has read. After another worker deletes a pool and makes
    a new one of that name (text ids, another team size), this worker must answer for the
    new pool within a second: not for the old one's id, and not 404 for good."""
    name = _pool(admin)
    play(admin, name, [steam(1), steam(2)], [steam(3), steam(4)], "A")
    settings = Settings(admin_tokens=[ADMIN], server_tokens=[SERVER], autotune_check_s=0)
    worker = create_app(settings, store=Store(backend))
    with (
        serving(worker) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}) as other,
    ):
        assert other.get(f"/v1/pools/{name}/players/{steam(1)}").json()["rating"] > 1000
        assert admin.delete(f"/v1/pools/{name}").status_code == 200
        # still in this worker's memory: a 404 from the database's answer, never a 500
        assert other.get(f"/v1/pools/{name}/players/{steam(1)}").status_code == 404
        assert other.get(f"/v1/pools/{name}/players/{steam(1)}").status_code == 404
        gone = _round(teams={"A": [steam(1), steam(2)], "B": [steam(3), steam(4)]})
        assert other.post(f"/v1/pools/{name}/rounds", json=gone).status_code == 404
        r = admin.post("/v1/pools", json={"name": name, "team_size": 3, "player_ids": "text"})
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 1.5
        while True:
            answer = other.get(f"/v1/pools/{name}/players/alice")
            if answer.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert answer.status_code == 200, answer.text  # "alice" is no SteamID64: the new pool
        assert other.get(f"/v1/pools/{name}").json()["team_size"] == 3
        assert other.get(f"/v1/pools/{name}/players/bob").json()["rounds_played"] == 0


@pytest.mark.serial  # within a second
def test_a_split_answers_for_the_successor_of_a_pool_it_remembers(
    admin: httpx.Client, backend: Engine
) -> None:
    """A splits request starts from the pool as its worker last read it, however long ago,
    and reads it again with the ratings. Another worker deletes the pool and makes a new one
    of that name: a whr pool, whose splits are all-play, and the next split is all-play
    (not the old pool's even splits, nor a 404 for its id). Then a pool of text ids: within
    a second, as any other route, the split answers for it (not a 422 for the old pool's id
    kind, for good). When the name is gone, a 404."""
    name = _pool(admin)
    settings = Settings(admin_tokens=[ADMIN], server_tokens=[SERVER], autotune_check_s=0)
    worker = create_app(settings, store=Store(backend))
    with (
        serving(worker) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {SERVER}"}) as other,
    ):

        def split(players: list[str]) -> httpx.Response:
            return other.post(f"/v1/pools/{name}/splits", json={"players": players})

        def successor(**fields: object) -> None:
            assert admin.delete(f"/v1/pools/{name}").status_code == 200
            assert admin.post("/v1/pools", json={"name": name, **fields}).status_code == 201

        steam_ids = [steam(n) for n in range(1, 6)]
        assert split(steam_ids).json()["mode"] == "even"
        successor(team_size=3, model="whr")
        r = split(steam_ids)
        assert r.status_code == 200, r.text
        assert r.json()["mode"] == "all-play" and len(r.json()["splits"]) == 1

        successor(team_size=3, model="whr", player_ids="text")
        text_ids = ["alice", "bob", "carol", "dave", "erin"]
        deadline = time.monotonic() + 1.5
        while (r := split(text_ids)).status_code == 422 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert r.status_code == 200, r.text
        (answer,) = r.json()["splits"]
        assert sorted([*answer["A"], *answer["B"]]) == text_ids

        assert admin.delete(f"/v1/pools/{name}").status_code == 200
        assert split(text_ids).status_code == 404


@pytest.mark.usefixtures("threaded_jobs")
def test_a_split_sees_a_change_made_through_another_worker(
    live: LiveServer, admin: httpx.Client, backend: Engine
) -> None:
    """A second worker (its own app and store, so its own memory of the pool) answers
    splits from the pool as it last read it, however long ago. A PATCH through the first
    worker, of Θ and then of the model, must show in the second's very next split, with no
    wait: the thread reads the pool again by id in the snapshot of the ratings."""
    name = _pool(admin, team_size=3, theta=400)
    strengths = [700, 900, 1000, 1100, 1300, 1651]
    ratings = {steam(n): r for n, r in enumerate(strengths, start=1)}
    for key, rating in ratings.items():
        r = admin.put(f"/v1/pools/{name}/players/{key}", json={"rating": rating})
        assert r.status_code == 200, r.text
    settings = Settings(admin_tokens=[ADMIN], server_tokens=[SERVER], autotune_check_s=0)
    worker = create_app(settings, store=Store(backend))
    with (
        serving(worker) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {SERVER}"}) as other,
    ):

        def split() -> dict:
            r = other.post(f"/v1/pools/{name}/splits", json={"players": list(ratings), "min_k": 3})
            assert r.status_code == 200, r.text
            return r.json()

        def patched(body: dict) -> None:
            job = finished(admin, name, admin.patch(f"/v1/pools/{name}", json=body))
            assert job["status"] == "done", job

        for theta in (400, 150):  # the first split puts the pool in the worker's memory
            if theta != 400:
                patched({"theta": theta})
            answer = split()
            assert answer["mode"] == "even"
            (s,) = answer["splits"]
            assert s["p_a"] == win_probability(s["sum_a"], s["sum_b"], theta)
            assert s["sum_a"] != s["sum_b"]  # an odd total: the two Θ give two probabilities

        patched({"model": "whr"})
        answer = split()
        assert answer["mode"] == "all-play" and len(answer["splits"]) == 1


def test_a_pool_being_re_rated_cannot_be_deleted(live: LiveServer, admin: httpx.Client) -> None:
    """A re-rate job would go on writing the pool's rows: DELETE is a 409 naming the job, and
    the pool stays whole."""
    name = _pool(admin)
    play(admin, name, [steam(1), steam(2)], [steam(3), steam(4)], "A")
    before = _counts(live, _pool_id(live, name))
    _, job = live.app.state.rerate.start(name, "patch", {"params": {"k_max": 50}}, "test")
    r = admin.delete(f"/v1/pools/{name}")
    assert r.status_code == 409, r.text
    assert r.json()["job_id"] == job.id
    assert _counts(live, _pool_id(live, name)) == before


def _round(**fields: object) -> dict:
    body = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "map": "m",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }
    body.update(fields)
    return body


@pytest.mark.parametrize("field", ["round_id", "server_id", "map", "mode"])
@pytest.mark.parametrize("bad", ["a\x00b", "\udc00"])
def test_text_neither_database_can_store_is_a_422_on_both(
    live: LiveServer, admin: httpx.Client, field: str, bad: str
) -> None:
    """PostgreSQL answered 500 to a NUL that SQLite stored; an unpaired surrogate is not
    UTF-8 for either. Both now answer the same 422 naming the field, and store nothing."""
    name = _pool(admin)
    raw = json.dumps(_round(**{field: bad}))  # json.dumps spells both as \\u escapes
    r = admin.post(
        f"/v1/pools/{name}/rounds", content=raw, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", field]
    assert _counts(live, _pool_id(live, name))[1] == 0


def test_a_nul_in_a_path_or_a_reason_is_a_422(admin: httpx.Client) -> None:
    name = _pool(admin)
    assert admin.get("/v1/pools/a%00b").status_code == 422
    assert admin.get("/v1/pools/a%00b/quality").status_code == 422
    assert admin.get(f"/v1/pools/a%00b/players/{steam(1)}").status_code == 422
    r = admin.post(f"/v1/pools/{name}/rounds/a%00b/void", json={"reason": "x"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["path", "round_id"]
    r = admin.delete(f"/v1/pools/{name}/players/{steam(1)}", params={"reason": "a\x00b"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "reason"]
    r = admin.put(
        f"/v1/pools/{name}/players/{steam(1)}",
        content='{"rating": 1200, "reason": "a\\u0000b"}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "reason"]


def test_history_before_past_64_bits_is_a_422(admin: httpx.Client) -> None:
    name = _pool(admin)
    r = admin.get(f"/v1/pools/{name}/players/{steam(1)}/history?before=9223372036854775808")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "before"]


@pytest.mark.parametrize("joiner", [0, ""])
def test_autobalance_refuses_a_joiner_that_is_no_id(admin: httpx.Client, joiner: object) -> None:
    name = _pool(admin)
    body = {"teams": {"A": [steam(1), steam(2), steam(3)], "B": [steam(4)]}, "joiner": joiner}
    r = admin.post(f"/v1/pools/{name}/autobalance", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][:2] == ["body", "joiner"]


@pytest.mark.parametrize("parties", [[[]], [[steam(1)]]])
def test_a_party_has_two_players_or_more(admin: httpx.Client, parties: list) -> None:
    name = _pool(admin)
    players = [steam(n) for n in range(1, 7)]
    for path, body in (
        ("splits", {"players": players, "parties": parties}),
        ("autobalance", {"teams": {"A": players[:3], "B": players[3:]}, "parties": parties}),
    ):
        r = admin.post(f"/v1/pools/{name}/{path}", json=body)
        assert r.status_code == 422, (path, r.text)
        assert r.json()["detail"][0]["loc"][:3] == ["body", "parties", 0]


@pytest.mark.parametrize("value", [False, True])
def test_a_boolean_is_not_a_number(admin: httpx.Client, value: bool) -> None:
    r = admin.post(
        "/v1/pools", json={"name": f"h{uuid.uuid4().hex[:10]}", "params": {"w_vol": value}}
    )
    assert r.status_code == 422 and "w_vol" in json.dumps(r.json()["detail"])
    r = admin.post("/v1/pools", json={"name": f"h{uuid.uuid4().hex[:10]}", "theta": value})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "theta"]
    name = _pool(admin)
    r = admin.patch(f"/v1/pools/{name}", json={"params": {"w_vol": value}, "reason": "x"})
    assert r.status_code == 422 and "w_vol" in json.dumps(r.json()["detail"])


@pytest.mark.serial
def test_the_split_budget_bounds_the_whole_request_under_load(
    live: LiveServer, admin: httpx.Client
) -> None:
    """128 players in 32 parties of 4 with the present teams: the probe's heaviest request.
    Twenty at once drove elapsed_ms to 6.5 s against a 1 s budget. Now each answer comes
    within the budget plus one solve, or is a 503 with Retry-After, and /healthz answers."""
    name = _pool(admin)
    players = [steam(n) for n in range(1, 129)]
    body = {
        "players": players,
        "parties": [players[i : i + 4] for i in range(0, 128, 4)],
        "current": {"A": players[:64], "B": players[64:]},
    }
    budget_ms = 300
    answers: list[httpx.Response] = []
    health: list[int] = []
    try:
        # the floor: no search at all, only the greedy answer for each team size, alone
        live.settings.balance_budget_ms = 0
        floor_ms = admin.post(f"/v1/pools/{name}/splits", json=body).json()["elapsed_ms"]
        live.settings.balance_budget_ms = budget_ms

        def call() -> None:
            with live.client() as c:
                answers.append(c.post(f"/v1/pools/{name}/splits", json=body))

        threads = [threading.Thread(target=call) for _ in range(20)]
        for t in threads:
            t.start()
        with live.client(None) as c:
            while any(t.is_alive() for t in threads):
                health.append(c.get("/healthz").status_code)
                time.sleep(0.005)  # a monitor polls; it does not spin
        for t in threads:
            t.join()
    finally:
        live.settings.balance_budget_ms = 1000
    assert len(answers) == 20 and health and set(health) == {200}
    done = [r for r in answers if r.status_code == 200]
    busy = [r for r in answers if r.status_code == 503]
    assert len(done) + len(busy) == 20 and done and busy
    assert all(r.headers["Retry-After"] == "1" for r in busy)
    assert all(len(r.json()["splits"]) == 63 for r in done)
    slowest = max(r.json()["elapsed_ms"] for r in done)
    # The budget, then at most the greedy answers for the team sizes left: the floor, here
    # slowed by sharing this process's interpreter with the test's own client threads and
    # the tracer (the floor is ~30 ms idle; 650 ms past the budget was seen under coverage
    # on a busy CI machine). Without the gate the answers queued: the probe saw 6.5 s.
    assert slowest <= budget_ms + max(10 * floor_ms, 700), (slowest, floor_ms)
    assert slowest < 2000, (slowest, floor_ms)


@pytest.mark.serial
def test_callers_waiting_for_the_solver_leave_the_thread_pool_to_other_routes(
    live: LiveServer, admin: httpx.Client
) -> None:
    """Sixty heavy splits requests at once, more than the thread pool's 40 threads: those
    waiting for the solver wait on the event loop, so a lookup (a synchronous route, which
    needs a thread) is answered meanwhile, sharing the interpreter with one solver only.
    Had they waited in threads, each lookup would queue until a turn ended (~0.5 s): at most
    four in the 1.7 s window, and a median of about a turn. Judged by the count and the
    median, not the maximum: one lookup may meet a pause of a loaded machine."""
    name = _pool(admin)
    players = [steam(n) for n in range(1, 129)]
    body = {
        "players": players,
        "parties": [players[i : i + 4] for i in range(0, 128, 4)],
        "current": {"A": players[:64], "B": players[64:]},  # ~0.5 s a turn
    }
    budget_ms = 3000
    live.settings.balance_budget_ms = budget_ms
    answers: list[int] = []
    lookups: list[float] = []
    try:

        def call() -> None:
            with live.client() as c:
                answers.append(c.post(f"/v1/pools/{name}/splits", json=body).status_code)

        threads = [threading.Thread(target=call) for _ in range(60)]
        for t in threads:
            t.start()
        time.sleep(0.3)  # every request sent: one solving, the rest waiting their turn
        with live.client() as c:
            window_ends = time.perf_counter() + 1.7  # well before the waiters' deadlines
            while time.perf_counter() < window_ends:
                start = time.perf_counter()
                assert c.get(f"/v1/pools/{name}/players/{steam(1)}").status_code == 200
                lookups.append(time.perf_counter() - start)
        for t in threads:
            t.join()
    finally:
        live.settings.balance_budget_ms = 1000
    assert len(answers) == 60 and set(answers) <= {200, 503}
    assert len(lookups) >= 8, lookups  # not one per turn
    assert statistics.median(lookups) < 0.25, lookups  # well under a turn


def test_a_full_round_queue_answers_503_and_the_client_delivers_later(
    backend: Engine, tmp_path: Path
) -> None:
    """Back-pressure: with the writer held and SYNELO_QUEUE_MAX rounds waiting, the next
    round is a 503 with Retry-After that stores nothing; the client keeps it and delivers it
    later with the same round_id, once and only once."""
    settings = Settings(
        data_dir=tmp_path,
        admin_tokens=[ADMIN],
        server_tokens=[SERVER],
        queue_max=2,
        fair_share=None,  # one token's rounds at once, to fill the queue
    )
    store = Store(backend)
    app = create_app(settings, store=store)
    with serving(app) as url, SyneloClient(url, ADMIN, f"q{uuid.uuid4().hex[:8]}") as client:
        client.create_pool(client.pool, 2)
        writer = app.state.writer
        answers: list[httpx.Response] = []
        bodies = [
            _round(teams={"A": [steam(2 * n + 1)], "B": [steam(2 * n + 2)]}) for n in range(4)
        ]

        def post(body: dict) -> None:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {SERVER}"}) as c:
                answers.append(c.post(f"/v1/pools/{client.pool}/rounds", json=body))

        # hold the writer: its thread takes one round and waits, two more fill the queue
        threads = [threading.Thread(target=post, args=(b,)) for b in bodies[:3]]
        with _writer_held(writer) as taken:
            threads[0].start()
            assert taken.wait(10)
            for t in threads[1:]:
                t.start()
            _wait(lambda: writer.queued() == 2)
            post(bodies[3])
            full = answers[-1]
        for t in threads:
            t.join()
        assert full.status_code == 503 and full.headers["Retry-After"] == "1", full.text
        assert sorted(r.status_code for r in answers) == [201, 201, 201, 503]
        assert client.pool_info().rounds == 3

        reporter = RoundReporter(client, "s")
        assert reporter.deliver(bodies[3])[-1].created  # sent again: rated now, once
        assert reporter.deliver(bodies[3])[-1].created is False  # a retry changes nothing
        assert client.pool_info().rounds == 4


@contextmanager
def _writer_held(writer: RoundWriter) -> Iterator[threading.Event]:
    """The writer's next transaction waits until this is left; the event yielded is set
    once the writer thread has taken a batch and is waiting."""
    release, taken = threading.Event(), threading.Event()
    original = writer.store.write_transaction

    @contextmanager
    def slow(conn: object = None) -> Iterator[object]:
        taken.set()
        release.wait(30)
        with original(conn) as c:  # type: ignore[arg-type]
            yield c

    writer.store.write_transaction = slow  # type: ignore[method-assign]
    try:
        yield taken
    finally:
        release.set()
        writer.store.write_transaction = original  # type: ignore[method-assign]


def _wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_openapi_document_states_the_errors_and_the_id_rules(admin: httpx.Client) -> None:
    """Every /v1 operation lists the errors it may answer, and a player id's rules are in
    the schema, so a generated client (or schemathesis) knows them."""
    doc = admin.get("/openapi.json").json()
    for path, item in doc["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, op in item.items():
            codes = set(op["responses"])
            assert {"401", "403", "404", "413", "429"} <= codes, (method, path, codes)
            if op.get("parameters") or op.get("requestBody"):
                assert "422" in codes, (method, path)
            assert op["responses"]["429"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorOut"
            }
    rounds = doc["paths"]["/v1/pools/{pool}/rounds"]["post"]["responses"]
    assert {"409", "503"} <= set(rounds)
    assert "503" in doc["paths"]["/v1/pools/{pool}/splits"]["post"]["responses"]
    sides = doc["components"]["schemas"]["Sides"]["properties"]["A"]["items"]["anyOf"]
    as_int = next(s for s in sides if s["type"] == "integer")
    assert "76561197960265729…76561202255233023" in as_int["description"]
    as_text = next(s for s in sides if s["type"] == "string")
    assert as_text["pattern"] == "^[ -~]{1,64}$"
