"""Re-rating a pool from its stored rounds, over real HTTP on SQLite and PostgreSQL: voids and
unvoids, changes of model and parameters, admin sets and resets kept in order, rounds that
arrive while the job runs, one job per pool, and the export that replays all of it."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, select, text, update

from synelo.evaluation.adapters import HistoryInfo, RatingModel, create_replay
from synelo.evaluation.history import read_history, write_history
from synelo.evaluation.journal import import_journal
from synelo.evaluation.replay import replay
from synelo.models import MODELS, pool_models
from synelo.store.jobs import STALE_AFTER, ProcessId
from synelo.store.tables import jobs
from tests.conftest import LiveServer, steam
from tests.integration.test_api_models import PLAYERS, new_pool, random_rounds

Body = dict[str, Any]


def play(server: httpx.Client, pool: str, bodies: list[Body]) -> None:
    for body in bodies:
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text


def wait(admin: httpx.Client, pool: str, answer: httpx.Response, seconds: float = 60) -> Body:
    """The job an answer started, once it has finished (it must succeed, within `seconds`)."""
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["id"]
    assert answer.headers["location"] == f"/v1/pools/{pool}/jobs/{job_id}"
    deadline = time.monotonic() + seconds
    while True:
        job = admin.get(f"/v1/pools/{pool}/jobs/{job_id}").json()
        if job["status"] != "running":
            assert job["status"] == "done", job
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


def everyone(
    server: httpx.Client, pool: str, stamps: bool = True, players: list[str] = PLAYERS
) -> dict[str, Body]:
    """Every player's lookup (without last_played when comparing pools fed at other times)."""
    r = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": players})
    assert r.status_code == 200, r.text
    out = {}
    for p in r.json()["players"]:
        if not stamps:
            p.pop("last_played")
        out[p["steam_id"]] = p
    return out


def histories(admin: httpx.Client, pool: str) -> dict[str, list[Body]]:
    """Every player's journal, without row ids and times."""
    out = {}
    for player in PLAYERS:
        entries = admin.get(f"/v1/pools/{pool}/players/{player}/history").json()["entries"]
        out[player] = [{k: v for k, v in e.items() if k not in ("id", "at")} for e in entries]
    return out


def with_admin(
    server: httpx.Client,
    admin: httpx.Client,
    pool: str,
    bodies: list[Body],
    at: tuple[int, int] = (20, 35),
    rating: int = 1400,
) -> None:
    """The rounds, with a set (to `rating`) after the 20th and a reset after the 35th (or
    where `at` says)."""
    play(server, pool, bodies[: at[0]])
    assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[0]}", json={"rating": rating}).is_success
    play(server, pool, bodies[at[0] : at[1]])
    assert admin.delete(f"/v1/pools/{pool}/players/{PLAYERS[1]}?reason=smurf").is_success
    play(server, pool, bodies[at[1] :])


@pytest.mark.parametrize("model", pool_models())
def test_void_and_unvoid_give_back_every_rating(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, model: str
) -> None:
    """Voiding a round re-rates the pool as if it had never been reported (a fresh pool fed
    the other rounds, and the admin changes at their places, agrees); undoing the void
    gives back every rating, journal entry and score exactly. (The void's job runs in a
    process of its own, as the service runs jobs; the unvoid's on a thread of the server,
    the same `run_job`: each model's job still crosses the process boundary once, and a
    second spawn, ~2 s under coverage, would check nothing more.)"""
    bodies = random_rounds(50, seed=21)
    pool = new_pool(admin, model)
    rating = 80 if model == "sectors-edge" else 1400  # a place percentile is 0–100
    with_admin(server, admin, pool, bodies, rating=rating)
    before = everyone(server, pool)
    journals = histories(admin, pool)
    quality = admin.get(f"/v1/pools/{pool}/quality").json()

    middle = bodies[25]["round_id"]
    r = admin.post(f"/v1/pools/{pool}/rounds/{middle}/void", json={"reason": "crashed"})
    job = wait(admin, pool, r)
    assert (job["kind"], job["reason"], job["actor"]) == ("void", "crashed", "config:admin#1")
    assert job["total"] == job["done"] == 49
    voided = everyone(server, pool, stamps=False)
    fresh = new_pool(admin, model)
    # the same rounds but the voided one, and the set and reset where they were made
    kept = [b for b in bodies if b["round_id"] != middle]
    with_admin(server, admin, fresh, kept, (20, 34), rating=rating)
    assert voided == everyone(server, fresh, stamps=False)
    assert voided != {k: {**v, "last_played": None} for k, v in before.items()}
    shown = admin.get(f"/v1/pools/{pool}").json()
    assert (shown["rounds"], shown["voided"]) == (50, 1)
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 49

    live.app.state.jobs.separate_process = False
    try:
        wait(admin, pool, admin.post(f"/v1/pools/{pool}/rounds/{middle}/unvoid", json={}))
    finally:
        live.app.state.jobs.separate_process = True
    assert everyone(server, pool) == before
    assert histories(admin, pool) == journals
    assert admin.get(f"/v1/pools/{pool}/quality").json() == quality
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    assert [(c["kind"], c["seq"]) for c in log] == [
        ("set", 20),
        ("reset", 35),
        ("void", 50),
        ("unvoid", 50),
    ]
    assert log[1]["reason"] == "smurf" and log[2]["round_id"] == middle


TRANSITIONS = [
    ("synelo", "elo", {"k": 24}),
    ("synelo", "synelo", {"k_max": 48, "window": 30}),
    ("trueskill", "synelo", {}),
    ("elo", "openskill-pl", {}),
    ("openskill-bt", "openskill-bt", {"beta": 300}),
]


@pytest.mark.usefixtures("threaded_jobs")
@pytest.mark.parametrize(("start", "model", "params"), TRANSITIONS)
def test_a_parameter_or_model_change_equals_a_fresh_pool(
    admin: httpx.Client, server: httpx.Client, start: str, model: str, params: Body
) -> None:
    bodies = random_rounds(40, seed=8)
    pool = new_pool(admin, start)
    with_admin(server, admin, pool, bodies)
    change: Body = {"params": params, "reason": "better fit"}
    if model != start:
        change["model"] = model
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json=change))
    fresh = new_pool(admin, model, **params)
    with_admin(server, admin, fresh, bodies)
    assert everyone(server, pool, stamps=False) == everyone(server, fresh, stamps=False)
    shown, expected = admin.get(f"/v1/pools/{pool}").json(), admin.get(f"/v1/pools/{fresh}").json()
    assert (shown["model"], shown["params"]) == (expected["model"], expected["params"])
    quality = admin.get(f"/v1/pools/{pool}/quality").json()
    assert quality["brier_all"] == admin.get(f"/v1/pools/{fresh}/quality").json()["brier_all"]
    patch = admin.get(f"/v1/pools/{pool}/changes").json()["changes"][-1]
    assert (patch["kind"], patch["reason"]) == ("patch", "better fit")
    assert patch["value"]["model"] == model
    # the next round is rated by the new model, as in the fresh pool
    extra = random_rounds(3, seed=99)
    play(server, pool, extra)
    play(server, fresh, extra)
    assert everyone(server, pool, stamps=False) == everyone(server, fresh, stamps=False)


@contextmanager
def held_after_snapshot(live: LiveServer, pool: str) -> Iterator[threading.Event]:
    """Jobs run on a thread of the server, where the test can hold them: the pool's job
    waits right after its snapshot until the block ends; the event says it got there."""
    rerate, runner = live.app.state.rerate, live.app.state.jobs
    snapshot_taken, release = threading.Event(), threading.Event()
    original = rerate.snapshot
    runner.separate_process = False

    def held(name: str) -> Any:
        snap = original(name)
        if name == pool:
            snapshot_taken.set()
            release.wait(30)
        return snap

    rerate.snapshot = held
    try:
        yield snapshot_taken
    finally:
        release.set()
        rerate.snapshot = original
        runner.separate_process = True


def test_rounds_that_arrive_during_a_rerate_are_rated_into_the_new_state(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """The job is held right after its snapshot: meanwhile the old ratings answer, a second
    re-rate is refused with the running job's id, and new rounds and a set are accepted.
    Once it swaps, the pool equals a fresh pool of the new model fed everything in order."""
    bodies = random_rounds(60, seed=3)
    pool = new_pool(admin, "synelo")
    play(server, pool, bodies[:40])
    with held_after_snapshot(live, pool) as snapshot_taken:
        old = everyone(server, pool)
        started = admin.patch(f"/v1/pools/{pool}", json={"model": "trueskill"})
        assert started.status_code == 202, started.text
        assert snapshot_taken.wait(10)
        job = admin.get(started.headers["location"]).json()
        assert job["status"] == "running"
        again = admin.patch(f"/v1/pools/{pool}", json={"theta": 800})
        assert again.status_code == 409 and again.json()["job_id"] == job["id"]
        # visibility sent with a refused re-rate is refused with it
        opened = admin.patch(f"/v1/pools/{pool}", json={"theta": 800, "public": True})
        assert opened.status_code == 409
        assert admin.get(f"/v1/pools/{pool}").json()["public"] is False
        void = admin.post(
            f"/v1/pools/{pool}/rounds/{bodies[0]['round_id']}/void", json={"reason": "x"}
        )
        assert void.status_code == 409
        assert everyone(server, pool) == old  # the old ratings answer until the swap
        play(server, pool, bodies[40:50])
        assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[2]}", json={"rating": 1600}).is_success
        play(server, pool, bodies[50:])
    wait(admin, pool, started)
    fresh = new_pool(admin, "trueskill")
    play(server, fresh, bodies[:50])
    assert admin.put(f"/v1/pools/{fresh}/players/{PLAYERS[2]}", json={"rating": 1600}).is_success
    play(server, fresh, bodies[50:])
    assert everyone(server, pool, stamps=False) == everyone(server, fresh, stamps=False)
    assert histories(admin, pool) == histories(admin, fresh)


def test_rerate_requests_are_checked(admin: httpx.Client, server: httpx.Client) -> None:
    pool = new_pool(admin, "elo")
    bodies = random_rounds(3)
    play(server, pool, bodies)
    bad = [
        ({"model": "nope"}, ["body", "model"]),
        ({"model": "epa"}, ["body", "model"]),  # a replay-only peer
        ({"params": {"k": -1}}, ["body", "params", "k"]),
        ({"theta": 500}, ["body", "theta"]),
        ({"modle": "elo"}, ["body", "modle"]),
        ({"model": "synelo", "params": {"k_max": "x"}}, ["body", "params", "k_max"]),
    ]
    for body, loc in bad:
        r = admin.patch(f"/v1/pools/{pool}", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["detail"][0]["loc"] == loc, (body, r.text)
    assert admin.get(f"/v1/pools/{pool}").json()["model"] == "elo"
    assert admin.post(f"/v1/pools/{pool}/rounds/none/void", json={"reason": "x"}).status_code == 404
    first = bodies[0]["round_id"]
    r = admin.post(f"/v1/pools/{pool}/rounds/{first}/void", json={})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "reason"]
    assert admin.post(f"/v1/pools/{pool}/rounds/{first}/unvoid", json={}).status_code == 409
    assert server.patch(f"/v1/pools/{pool}", json={}).status_code == 403
    assert admin.get(f"/v1/pools/{pool}/jobs/999999").status_code == 404
    huge = 2**63  # past a BIGINT: a 422, not a database error
    assert admin.get(f"/v1/pools/{pool}/jobs/{huge}").status_code == 422
    r = admin.get(f"/v1/pools/{pool}/players/{PLAYERS[0]}/history?before={huge}")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "before"]
    assert admin.get(f"/v1/pools/{pool}/changes").json()["changes"] == []
    r = admin.put(f"/v1/pools/{pool}/players/{steam(1)}", json={"rating": 1200, "why": "x"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "why"]


@pytest.mark.usefixtures("threaded_jobs")
@pytest.mark.parametrize("model", pool_models())
def test_an_export_with_admin_events_replays_to_every_stored_rating(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path, model: str
) -> None:
    """Sets, resets and a void are event lines of the export at their places; the replay
    applies them and gives back every stored rating."""
    bodies = random_rounds(45, seed=13)
    pool = new_pool(admin, model)
    places = model == "sectors-edge"  # a place percentile is 0–100
    with_admin(server, admin, pool, bodies, rating=80 if places else 1400)
    void = bodies[10]["round_id"]
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/rounds/{void}/void", json={"reason": "x"}))
    later = {"rating": 30 if places else 1100}
    assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[3]}", json=later).is_success

    exported = import_journal(live.store, pool)
    path = tmp_path / f"{uuid.uuid4().hex}.jsonl"
    write_history(path, exported.matches, exported.header, exported.trailing)
    history = read_history(path, strict=True)
    assert history.matches == exported.matches and history.trailing == exported.trailing
    assert [m.id for m in history.matches if m.voided] == [void]
    assert [e.kind for m in history.matches for e in m.events] == ["set", "reset"]
    assert [e.kind for e in history.trailing] == ["void", "set"]  # made after the last round
    replayed = create_replay(model, {}, HistoryInfo(4, history.header))
    result = replay(replayed, history.matches, trailing=history.trailing)
    assert not result.scored[10]
    replays_to(replayed, everyone(server, pool), exported.header)


def replays_to(replayed: RatingModel, stored: dict[str, Body], header: Body) -> None:
    """The replay of a pool's export gives back every stored rating: SynElo's ratings of
    the players it met, or every player's model fields and rating (a player it never met is
    a new one, as the pool's)."""
    model = replayed.name
    if model == "synelo":
        assert replayed.ratings() == {
            k: p["rating"] for k, p in stored.items() if k in replayed.ratings()
        }
        return
    served = MODELS[model]({**header["params"]})
    for key, player in stored.items():
        state = replayed.rating_of(key)  # type: ignore[attr-defined]
        assert served.fields(state) == player["skill"], key
        assert round(served.rating(state)) == player["rating"], key


@pytest.mark.usefixtures("threaded_jobs")
def test_a_model_change_must_take_every_logged_set(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """A re-rate replays the admin sets through the new model: a set it could not take
    (an Elo rating far beyond SynElo's R_max, or more than 100·β from a new TrueSkill or
    openskill player) is a 422 that names it, before any job starts. Every logged set
    counts, not only a player's latest; a model that takes them all re-rates."""
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(5))
    assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[1]}", json={"rating": 20_000}).is_success
    r = admin.patch(f"/v1/pools/{pool}", json={"model": "synelo"})
    assert r.status_code == 422 and PLAYERS[1] in r.json()["detail"][0]["msg"], r.text
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"model": "openskill-pl"}))
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"model": "elo"}))
    assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[0]}", json={"rating": 90_000}).is_success
    assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[0]}", json={"rating": 1_500}).is_success
    for model in ("trueskill", "openskill-pl"):
        r = admin.patch(f"/v1/pools/{pool}", json={"model": model})
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["loc"] == ["body", "model"]
        assert PLAYERS[0] in r.json()["detail"][0]["msg"]
    assert admin.get(f"/v1/pools/{pool}").json()["model"] == "elo"


def _name_process(live: LiveServer, job_id: int, process: str | None) -> None:
    """Make the job's row name another process (`store.jobs.ProcessId.text`)."""
    with live.store.engine.begin() as conn:
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(process=process))


def _named_process(live: LiveServer, job_id: int) -> str | None:
    """The process the job's row names."""
    with live.store.engine.connect() as conn:
        return conn.execute(select(jobs.c.process).where(jobs.c.id == job_id)).scalar()


def gone_process() -> str:
    """A process of this machine that has ended, as a job's row names it."""
    done = subprocess.run(
        [sys.executable, "-c", "from synelo.store.jobs import this_process; print(this_process())"],
        capture_output=True,
        text=True,
        check=True,
    )
    named = ProcessId.parse(done.stdout.strip())
    assert named is not None and named.alive() is False
    return done.stdout.strip()


@pytest.mark.usefixtures("threaded_jobs")
def test_a_job_whose_process_is_gone_is_dead_at_once_and_cannot_swap(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """A job's row names its process: while it runs, the job blocks re-rates however old
    its heartbeat; once it is gone, the next request takes the job for dead at once and
    starts a new one, and the old job, should it still reach its swap, is refused."""
    from synelo.rerate.job import run_job

    bodies = random_rounds(30, seed=5)
    pool = new_pool(admin, "elo")
    play(server, pool, bodies)
    rerate = live.app.state.rerate
    stale_pool, stale = rerate.start(pool, "patch", {"model": "elo", "params": {"k": 40}}, "x")
    again = admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 50}})
    assert again.status_code == 409 and again.json()["job_id"] == stale.id  # this process
    _name_process(live, stale.id, gone_process())
    fresh = admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 50}})
    job = wait(admin, pool, fresh)
    old = admin.get(f"/v1/pools/{pool}/jobs/{stale.id}").json()
    assert old["status"] == "failed" and "is gone" in old["error"], old
    after = everyone(server, pool)
    assert run_job(rerate, stale_pool, stale) is None  # it runs to the swap, and is refused
    assert everyone(server, pool) == after
    assert admin.get(f"/v1/pools/{pool}").json()["params"]["k"] == 50
    assert job["status"] == "done"


def test_a_job_reads_failed_as_soon_as_its_process_is_gone(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, clock: Any
) -> None:
    """Reading a job applies the rule a re-rate's start does: a job whose process is gone
    (ended, or its pid now another process's) reads failed at once, before any re-rate
    asks; one whose process runs, or of another machine before STALE_AFTER, reads running."""
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(5, seed=10))
    rerate = live.app.state.rerate
    _, job = rerate.start(pool, "patch", {"model": "elo", "params": {}}, "x")  # never runs

    def read() -> Body:
        answer = admin.get(f"/v1/pools/{pool}/jobs/{job.id}")
        assert answer.status_code == 200, answer.text
        return answer.json()

    clock.offset = timedelta(minutes=10)  # its heartbeat long silent: only its process counts
    assert read()["status"] == "running"  # this process
    live_pid = ProcessId.parse(_named_process(live, job.id))
    assert live_pid is not None and live_pid.alive()
    elsewhere = ProcessId("elsewhere", "another-boot:1:2", os.getpid(), 1)
    _name_process(live, job.id, elsewhere.text())
    clock.offset = STALE_AFTER - timedelta(seconds=2)
    assert read()["status"] == "running"
    clock.offset = timedelta()
    reused = ProcessId(live_pid.host, live_pid.machine, live_pid.pid, live_pid.started + 1)
    assert reused.alive() is False  # the pid answers, but for a later process
    _name_process(live, job.id, reused.text())
    ended = read()
    assert ended["status"] == "failed" and "is gone" in ended["error"], ended
    assert ended["finished_at"] is not None


@pytest.mark.usefixtures("threaded_jobs")
def test_a_job_of_another_machine_is_dead_after_two_minutes_without_a_heartbeat(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, clock: Any
) -> None:
    """No one here can see another machine's processes: its job goes by its heartbeat."""
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(5, seed=6))
    _, stale = live.app.state.rerate.start(pool, "patch", {"model": "elo", "params": {}}, "x")
    elsewhere = ProcessId("elsewhere", "another-boot:1:2", os.getpid(), 1)
    assert elsewhere.alive() is None
    _name_process(live, stale.id, elsewhere.text())
    clock.offset = STALE_AFTER - timedelta(seconds=2)
    assert admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 50}}).status_code == 409
    clock.offset = STALE_AFTER + timedelta(seconds=2)
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 50}}))
    old = admin.get(f"/v1/pools/{pool}/jobs/{stale.id}").json()
    assert old["status"] == "failed" and old["error"] == "abandoned: no heartbeat for 120 s"


def test_a_slow_live_job_is_never_taken_for_dead(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, clock: Any
) -> None:
    """A job held after its snapshot, its heartbeat ten minutes old by the server's clock,
    still blocks a second re-rate while its process runs; released, it swaps."""
    bodies = random_rounds(30, seed=7)
    pool = new_pool(admin, "synelo")
    play(server, pool, bodies)
    with held_after_snapshot(live, pool) as snapshot_taken:
        started = admin.patch(f"/v1/pools/{pool}", json={"model": "elo"})
        assert started.status_code == 202, started.text
        assert snapshot_taken.wait(10)
        clock.offset = timedelta(minutes=10)
        again = admin.patch(f"/v1/pools/{pool}", json={"theta": 800})
        assert again.status_code == 409 and again.json()["job_id"] == started.json()["id"]
        first = bodies[0]["round_id"]
        assert (
            admin.post(f"/v1/pools/{pool}/rounds/{first}/void", json={"reason": "x"}).status_code
            == 409
        )
    assert wait(admin, pool, started)["status"] == "done"
    assert admin.get(f"/v1/pools/{pool}").json()["model"] == "elo"


def test_a_job_process_killed_before_it_claims_the_job_fails_at_once(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """The worker names itself in a new job's row; the job's process takes the row over
    once it runs. Killed before that (it is still starting), it leaves a row that names a
    live worker: the worker, seeing its process end, marks the job failed."""
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(10, seed=8))
    started = admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 30}})
    assert started.status_code == 202, started.text
    job_id = started.json()["id"]
    (child,) = [p for p in multiprocessing.active_children() if p.name == f"synelo-rerate-{job_id}"]
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while (job := admin.get(f"/v1/pools/{pool}/jobs/{job_id}").json())["status"] == "running":
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
    assert job["status"] == "failed" and "exit code -9" in job["error"], job
    named = ProcessId.parse(_named_process(live, job_id))
    assert named is not None and named.pid == os.getpid()  # killed before it claimed the row
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 30}}))


@pytest.mark.usefixtures("threaded_jobs")
def test_taking_a_job_for_dead_does_not_overwrite_the_end_it_wrote(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """PostgreSQL: a job's last write (an auto-tune's record of a fit not adopted) takes no
    pool lock, so a request that read the job as running and dead can wait on the job's row
    lock; once the job commits its `done`, that request re-reads the row and must leave it
    done, and start its own job."""
    if live.store.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time: no row lock to wait on")
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(5, seed=9))
    _, ending = live.app.state.rerate.start(pool, "patch", {"model": "elo", "params": {}}, "x")
    _name_process(live, ending.id, gone_process())  # dead by its row, but ending now
    own = create_engine(live.store.engine.url.render_as_string(hide_password=False))
    with own.connect() as conn, conn.begin():  # not the server's pool: it must not wait on us
        conn.execute(update(jobs).where(jobs.c.id == ending.id).values(status="done", phase="done"))
        mine = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        answers: list[httpx.Response] = []
        request = threading.Thread(
            target=lambda: answers.append(
                admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 50}})
            )
        )
        request.start()
        deadline = time.monotonic() + 20
        with own.connect() as watch:
            while not watch.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE :me = ANY(pg_blocking_pids(pid))"
                ),
                {"me": mine},
            ).scalar_one():
                assert time.monotonic() < deadline and request.is_alive()
                time.sleep(0.02)
    own.dispose()
    request.join(20)
    wait(admin, pool, answers[0])
    assert admin.get(f"/v1/pools/{pool}/jobs/{ending.id}").json()["status"] == "done"
