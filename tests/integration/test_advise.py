"""`synelo advise` as the service runs it, over real HTTP on SQLite and PostgreSQL: an admin
starts an advise job on a pool, follows its progress like a re-rate's, and reads the advice
it left; the pool's ratings are untouched. Refusals: too few rounds, no such pool, a body
with an unknown field, a server token."""

from __future__ import annotations

import time

import httpx

from synelo.evaluation.advise import MIN_ROUNDS, general_models
from tests.conftest import SERVER
from tests.integration.test_api_models import PLAYERS, new_pool, random_rounds
from tests.integration.test_rerate import play


def _pool(admin: httpx.Client, rounds: int) -> str:
    """A new SynElo pool with `rounds` rounds of 1v1 to 4v4 among ten players."""
    name = new_pool(admin, "synelo")
    headers = {"Authorization": f"Bearer {SERVER}"}
    with httpx.Client(base_url=str(admin.base_url), headers=headers, timeout=30) as s:
        play(s, name, random_rounds(rounds, seed=11))
    return name


def test_an_advise_job_reports_progress_and_leaves_the_advice(admin: httpx.Client) -> None:
    """In a process of its own, as the service runs every job."""
    name = _pool(admin, MIN_ROUNDS + 20)
    before = admin.get(f"/v1/pools/{name}/players/{PLAYERS[0]}").json()
    assert admin.get(f"/v1/pools/{name}/advice").status_code == 404
    started = admin.post(f"/v1/pools/{name}/advise")
    assert started.status_code == 202, started.text
    job = started.json()
    assert job["kind"] == "advise" and job["total"] == MIN_ROUNDS + 20
    assert started.headers["location"] == f"/v1/pools/{name}/jobs/{job['id']}"
    # a second job is refused while it runs, naming the running one
    again = admin.post(f"/v1/pools/{name}/advise")
    if again.status_code == 409:
        assert again.json()["job_id"] == job["id"]
    deadline = time.monotonic() + 120
    while True:
        now = admin.get(f"/v1/pools/{name}/jobs/{job['id']}").json()
        assert now["phase"] in ("queued", "advising", "done")
        assert 0 <= now["done"] <= now["total"]
        if now["status"] != "running":
            break
        assert time.monotonic() < deadline, now
        time.sleep(0.05)
    assert now["status"] == "done", now
    assert now["done"] == now["total"]
    advice = admin.get(f"/v1/pools/{name}/advice").json()
    assert advice["job"] == job["id"] and advice["actor"]
    rows = {(r["model"], r["setting"]) for r in advice["rows"]}
    for model in general_models():
        assert (model, "defaults") in rows and (model, "tuned") in rows
    assert ("elo", "defaults") in rows and ("synelo", "current") in rows
    best = advice["recommended"]
    assert best["model"] in general_models()
    assert best["log_loss"] == min(
        r["log_loss"] for r in advice["rows"] if r["general"] and r["setting"] != "current"
    )
    assert advice["runner_up"]["se"] > 0
    assert advice["runner_up"]["beyond_noise"] == (
        advice["runner_up"]["difference"] > 2 * advice["runner_up"]["se"]
    )
    assert best["model"] in advice["verdict"]
    # in the admin log, and nothing re-rated
    kinds = [c["kind"] for c in admin.get(f"/v1/pools/{name}/changes").json()["changes"]]
    assert kinds.count("advise") == 1
    assert admin.get(f"/v1/pools/{name}/players/{PLAYERS[0]}").json() == before


def test_advise_refusals(admin: httpx.Client, server: httpx.Client) -> None:
    name = _pool(admin, 30)
    few = admin.post(f"/v1/pools/{name}/advise")
    assert few.status_code == 409
    assert f"at least {MIN_ROUNDS}" in few.json()["detail"]
    assert admin.post("/v1/pools/no-such-pool/advise").status_code == 404
    assert admin.get("/v1/pools/no-such-pool/advice").status_code == 404
    bad = admin.post(f"/v1/pools/{name}/advise", json={"models": ["hive"]})
    assert bad.status_code == 422
    assert "models" in bad.text
    assert server.post(f"/v1/pools/{name}/advise").status_code == 403
    assert server.get(f"/v1/pools/{name}/advice").status_code == 403
