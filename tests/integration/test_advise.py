"""`synelo advise` as the service runs it, over real HTTP on SQLite and PostgreSQL: an admin
starts an advise job on a pool, follows its progress like a re-rate's, and reads the advice
it left; the pool's ratings are untouched. Refusals: too few rounds, no such pool, a body
with an unknown field, a server token."""

from __future__ import annotations

import time
from contextlib import closing

import httpx

from synelo.evaluation.advise import MIN_ROUNDS, general_models
from tests.conftest import SERVER, LiveServer
from tests.integration.test_api_models import PLAYERS, new_pool, random_rounds
from tests.integration.test_pages_admin import form_token, log_in
from tests.integration.test_rerate import play


def _pool(admin: httpx.Client, rounds: int) -> str:
    """A new SynElo pool with `rounds` rounds of 1v1 to 4v4 among ten players."""
    name = new_pool(admin, "synelo")
    headers = {"Authorization": f"Bearer {SERVER}"}
    with httpx.Client(base_url=str(admin.base_url), headers=headers, timeout=30) as s:
        play(s, name, random_rounds(rounds, seed=11))
    return name


def _wait(admin: httpx.Client, name: str, job: int, phases: tuple[str, ...]) -> dict:
    """The job once it has ended, checking its progress on the way."""
    deadline = time.monotonic() + 120
    while True:
        now = admin.get(f"/v1/pools/{name}/jobs/{job}").json()
        assert now["phase"] in phases, now
        assert 0 <= now["done"] <= now["total"]
        if now["status"] != "running":
            return now
        assert time.monotonic() < deadline, now
        time.sleep(0.05)


def test_an_advise_job_reports_progress_and_leaves_the_advice(
    admin: httpx.Client, live: LiveServer
) -> None:
    """In a process of its own, as the service runs every job."""
    name = _pool(admin, MIN_ROUNDS + 20)
    before = admin.get(f"/v1/pools/{name}/players/{PLAYERS[0]}").json()
    assert admin.get(f"/v1/pools/{name}/advice").status_code == 404
    # refused while another job runs on the pool (one started here, never run), naming it
    _, held = live.app.state.rerate.start(name, "patch", {"model": "synelo", "params": {}}, "t")
    try:
        busy = admin.post(f"/v1/pools/{name}/advise")
        assert busy.status_code == 409 and busy.json()["job_id"] == held.id
    finally:
        live.app.state.rerate.fail_id(held.id, "ended by the test")
    started = admin.post(f"/v1/pools/{name}/advise")
    assert started.status_code == 202, started.text
    job = started.json()
    assert job["kind"] == "advise" and job["total"] == MIN_ROUNDS + 20
    assert started.headers["location"] == f"/v1/pools/{name}/jobs/{job['id']}"
    now = _wait(admin, name, job["id"], ("queued", "advising", "done"))
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
    assert advice["stale"] is None


def test_stale_advice_offers_no_switch_and_a_switch_to_it_is_refused(
    admin: httpx.Client, live: LiveServer
) -> None:
    """Advice made for the pool's setup of then: once the pool's parameters change, the API
    shows it stale with no switch, the pages offer none, and a switch sent anyway (an old
    page, a second click) is refused with nothing started; a failed advise job's page says
    why, escaped."""
    name = _pool(admin, MIN_ROUNDS + 5)
    job = admin.post(f"/v1/pools/{name}/advise").json()
    assert _wait(admin, name, job["id"], ("queued", "advising", "done"))["status"] == "done"
    advice = admin.get(f"/v1/pools/{name}/advice").json()
    assert advice["stale"] is None
    entry = next(
        c["id"]
        for c in admin.get(f"/v1/pools/{name}/changes").json()["changes"]
        if c["kind"] == "advise"
    )
    changed = admin.patch(f"/v1/pools/{name}", json={"params": {"k_max": 60}})
    assert changed.status_code == 202, changed.text
    deadline = time.monotonic() + 60
    while admin.get(f"/v1/pools/{name}/jobs/{changed.json()['id']}").json()["status"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert admin.get(f"/v1/pools/{name}").json()["params"]["k_max"] == 60
    later = admin.get(f"/v1/pools/{name}/advice").json()
    assert later["switch"] is None and "changed since" in later["stale"]
    with closing(log_in(live.url)) as browser:
        page = browser.get(f"/pools/{name}/advice").text
        assert 'id="advice-stale"' in page and 'id="switch-form"' not in page
        settings = browser.get(f"/pools/{name}/settings").text
        assert 'id="advice-stale"' in settings and 'id="switch-form"' not in settings
        sent = browser.post(
            f"/pools/{name}/advice/switch",
            data={"csrf": form_token(page), "advice": str(entry)},
            follow_redirects=False,
        )
        assert sent.status_code == 409 and "out of date" in sent.text
        assert live.app.state.rerate.running_job(live.app.state.store.get_pool(name)) is None
        assert admin.get(f"/v1/pools/{name}").json()["params"]["k_max"] == 60
        # an advise job's page is the advice page; a failed one says why, escaped
        _, failed = live.app.state.rerate.start(name, "advise", {}, "t")
        live.app.state.rerate.fail_id(failed.id, "<b>no</b> rounds")
        moved = browser.get(f"/pools/{name}/jobs/{failed.id}", follow_redirects=False)
        assert moved.status_code == 303
        assert moved.headers["location"] == f"/pools/{name}/advice?job={failed.id}"
        shown = browser.get(moved.headers["location"]).text
        assert 'data-status="failed"' in shown and "&lt;b&gt;no&lt;/b&gt; rounds" in shown
        assert "<b>no</b>" not in shown and "Re-rate" not in shown


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
