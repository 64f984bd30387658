"""Cancelling an advise job, over real HTTP on SQLite and PostgreSQL: the job reads
cancelled at once, the pool's job slot is free for a re-rate, the job (in its own process,
as the service runs it, or on a thread here) stops at its next progress step and leaves no
advice; the pages offer a Cancel button while it runs; bad ids and states are 4xx JSON."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import closing
from typing import Any

import httpx
import pytest

from synelo.evaluation.advise import MIN_ROUNDS
from synelo.rerate.job import run_job
from tests.conftest import LiveServer
from tests.integration.test_advise import _pool, _wait
from tests.integration.test_pages_admin import form_token, log_in
from tests.integration.test_rerate import wait


def _advising(admin: httpx.Client, name: str, job: int) -> dict[str, Any]:
    """The job once it reads `advising` (its first progress write), still running."""
    deadline = time.monotonic() + 60
    while True:
        now: dict[str, Any] = admin.get(f"/v1/pools/{name}/jobs/{job}").json()
        assert now["status"] == "running", f"the job ended before the test could cancel it: {now}"
        if now["phase"] == "advising":
            return now
        assert time.monotonic() < deadline, now
        time.sleep(0.02)


def _no_advice(admin: httpx.Client, name: str) -> None:
    assert admin.get(f"/v1/pools/{name}/advice").status_code == 404
    kinds = [c["kind"] for c in admin.get(f"/v1/pools/{name}/changes").json()["changes"]]
    assert "advise" not in kinds


def test_a_cancelled_advise_job_frees_the_slot_and_leaves_no_advice(
    admin: httpx.Client, live: LiveServer
) -> None:
    """In a process of its own, as the service runs every job: cancelled while advising,
    a re-rate starts at once and ends; the advise job reads cancelled and left nothing."""
    name = _pool(admin, MIN_ROUNDS + 20)
    job = admin.post(f"/v1/pools/{name}/advise").json()
    _advising(admin, name, job["id"])
    cancelled = admin.post(f"/v1/pools/{name}/jobs/{job['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    body = cancelled.json()
    assert (body["status"], body["phase"], body["kind"]) == ("cancelled", "cancelled", "advise")
    assert body["error"].startswith("cancelled by ") and body["finished_at"] is not None
    # the slot is free at once: a re-rate starts and runs to its end
    rerate = admin.patch(f"/v1/pools/{name}", json={"params": {"k_max": 60}})
    assert rerate.status_code == 202, rerate.text
    wait(admin, name, rerate)
    assert admin.get(f"/v1/pools/{name}").json()["params"]["k_max"] == 60
    live.app.state.jobs.wait(60)  # the advise job's process has ended too
    after = admin.get(f"/v1/pools/{name}/jobs/{job['id']}").json()
    assert after["status"] == "cancelled" and after["done"] < after["total"], after
    _no_advice(admin, name)
    # a new advise job runs as before
    again = admin.post(f"/v1/pools/{name}/advise")
    assert again.status_code == 202, again.text
    done = _wait(admin, name, again.json()["id"], ("queued", "advising", "done"))
    assert done["status"] == "done"
    assert admin.get(f"/v1/pools/{name}/advice").json()["job"] == again.json()["id"]


def test_a_cancelled_job_stops_at_its_next_progress_step(
    admin: httpx.Client, live: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The job on a thread of this process, its cancel from the API (another connection,
    as from another worker): it stops (the log says so) rather than run to its end, and
    one cancelled before it ran stops at its first step."""
    caplog.set_level(logging.INFO, logger="synelo.rerate")
    name = _pool(admin, MIN_ROUNDS + 20)
    rerate = live.app.state.rerate
    pool, job = rerate.start(name, "advise", {"at_rounds": MIN_ROUNDS + 20}, "t")
    runner = threading.Thread(target=run_job, args=(rerate, pool, job))
    runner.start()
    try:
        _advising(admin, name, job.id)
        cancelled = admin.post(f"/v1/pools/{name}/jobs/{job.id}/cancel")
        assert cancelled.status_code == 200, cancelled.text
    finally:
        runner.join(60)
    assert not runner.is_alive()
    stopped = [r.getMessage() for r in caplog.records if "stopped" in r.getMessage()]
    assert stopped == [
        f"job {job.id} of pool {name} stopped: job {job.id} no longer runs"
        " (cancelled, or taken for dead)"
    ]
    assert rerate.job(pool, job.id).status == "cancelled"
    _no_advice(admin, name)
    # cancelled before it ran: it writes no progress and stops at once
    pool, early = rerate.start(name, "advise", {"at_rounds": MIN_ROUNDS + 20}, "t")
    assert admin.post(f"/v1/pools/{name}/jobs/{early.id}/cancel").status_code == 200
    began = time.monotonic()
    assert run_job(rerate, pool, early) is None
    assert time.monotonic() - began < 1.0
    ended = rerate.job(pool, early.id)
    assert (ended.status, ended.phase, ended.done) == ("cancelled", "cancelled", 0)
    _no_advice(admin, name)


def test_cancel_refusals(admin: httpx.Client, server: httpx.Client, live: LiveServer) -> None:
    """404 for no such job (or another pool's), 409 naming why for a re-rate job and for an
    advise job that has ended, 422 for an id out of range, 403 for a server token."""
    name = _pool(admin, 10)
    other = _pool(admin, 10)
    rerate = live.app.state.rerate
    _, held = rerate.start(name, "patch", {"model": "synelo", "params": {}}, "t")
    try:
        missing = admin.post(f"/v1/pools/{name}/jobs/{held.id + 1000}/cancel")
        assert missing.status_code == 404
        assert f"no job {held.id + 1000}" in missing.json()["detail"]
        assert admin.post(f"/v1/pools/{other}/jobs/{held.id}/cancel").status_code == 404
        assert admin.post(f"/v1/pools/no-such-pool/jobs/{held.id}/cancel").status_code == 404
        out_of_range = admin.post(f"/v1/pools/{name}/jobs/0/cancel")
        assert out_of_range.status_code == 422 and "job_id" in out_of_range.text
        assert server.post(f"/v1/pools/{name}/jobs/{held.id}/cancel").status_code == 403
        patch = admin.post(f"/v1/pools/{name}/jobs/{held.id}/cancel")
        assert patch.status_code == 409
        assert "only an advise job can be cancelled" in patch.json()["detail"]
        assert admin.get(f"/v1/pools/{name}/jobs/{held.id}").json()["status"] == "running"
    finally:
        rerate.fail_id(held.id, "ended by the test")
    _, ended = rerate.start(name, "advise", {}, "t")
    rerate.fail_id(ended.id, "ended by the test")
    late = admin.post(f"/v1/pools/{name}/jobs/{ended.id}/cancel")
    assert late.status_code == 409 and "has ended (failed)" in late.json()["detail"]
    _, twice = rerate.start(name, "advise", {}, "t")
    assert admin.post(f"/v1/pools/{name}/jobs/{twice.id}/cancel").status_code == 200
    again = admin.post(f"/v1/pools/{name}/jobs/{twice.id}/cancel")
    assert again.status_code == 409 and "has ended (cancelled)" in again.json()["detail"]


def test_the_pages_offer_a_cancel_button_while_an_advise_job_runs(
    admin: httpx.Client, live: LiveServer
) -> None:
    """The advice page and the settings page show a Cancel form (with the form token) while
    an advise job runs; it cancels, and the advice page then says so; a second click and a
    form without the token are refused."""
    name = _pool(admin, 10)
    rerate = live.app.state.rerate
    _, job = rerate.start(name, "advise", {}, "t")  # never run: it runs until cancelled
    with closing(log_in(live.url)) as browser:
        settings = browser.get(f"/pools/{name}/settings").text
        assert 'id="cancel-form"' in settings
        assert f'action="/pools/{name}/jobs/{job.id}/cancel"' in settings
        page = browser.get(f"/pools/{name}/advice?job={job.id}").text
        assert 'data-status="running"' in page and 'id="cancel-form"' in page
        token = form_token(page)
        refused = browser.post(f"/pools/{name}/jobs/{job.id}/cancel", follow_redirects=False)
        assert refused.status_code == 403
        assert admin.get(f"/v1/pools/{name}/jobs/{job.id}").json()["status"] == "running"
        sent = browser.post(
            f"/pools/{name}/jobs/{job.id}/cancel", data={"csrf": token}, follow_redirects=False
        )
        assert sent.status_code == 303
        assert sent.headers["location"] == f"/pools/{name}/advice?job={job.id}"
        shown = browser.get(sent.headers["location"]).text
        assert 'data-status="cancelled"' in shown and 'id="cancel-form"' not in shown
        assert "Cancelled" in shown
        assert 'id="cancel-form"' not in browser.get(f"/pools/{name}/settings").text
        twice = browser.post(f"/pools/{name}/jobs/{job.id}/cancel", data={"csrf": token})
        assert twice.status_code == 409 and "has ended (cancelled)" in twice.text
    assert admin.get(f"/v1/pools/{name}/jobs/{job.id}").json()["status"] == "cancelled"


def test_a_cancel_and_the_jobs_end_race_to_one_outcome(
    admin: httpx.Client, live: LiveServer
) -> None:
    """The two writes that end an advise job, each conditional on its row reading running:
    a cancel just before the advice is written leaves no advice and the job cancelled; the
    advice written just before a cancel leaves the job done and the cancel a 409."""
    from synelo.store.advice import record_advice

    name = _pool(admin, MIN_ROUNDS + 20)
    rerate = live.app.state.rerate
    pool, job = rerate.start(name, "advise", {"at_rounds": MIN_ROUNDS + 20}, "t")
    assert admin.post(f"/v1/pools/{name}/jobs/{job.id}/cancel").status_code == 200
    assert record_advice(rerate.store, job, {"verdict": "late", "job": job.id}) is False
    assert rerate.job(pool, job.id).status == "cancelled"
    _no_advice(admin, name)
    pool, job = rerate.start(name, "advise", {"at_rounds": MIN_ROUNDS + 20}, "t")
    assert record_advice(rerate.store, job, {"verdict": "first", "job": job.id}) is True
    late = admin.post(f"/v1/pools/{name}/jobs/{job.id}/cancel")
    assert late.status_code == 409 and "has ended (done)" in late.json()["detail"]
    assert rerate.job(pool, job.id).status == "done"
    assert admin.get(f"/v1/pools/{name}/advice").json()["verdict"] == "first"
