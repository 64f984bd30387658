"""The advice page in a real browser: an admin advises on a pool, follows the job as the page
reloads itself, reads the rows side by side with the recommendation and its noise verdict,
and switches the pool to it with the page's own button: every parameter the pick was scored
with is then the pool's, and the advice is out of date, with no switch left to click."""

from __future__ import annotations

import uuid

import httpx
from playwright.sync_api import Page

from synelo.evaluation.advise import MIN_ROUNDS, general_models
from tests.browser.test_admin_pages import log_in, refused
from tests.conftest import LiveServer
from tests.integration.test_api_models import random_rounds
from tests.integration.test_rerate import play, wait


def test_advice_is_followed_shown_and_switched_to(
    page: Page,
    live: LiveServer,
    admin: httpx.Client,
    server: httpx.Client,
    console_errors: list[str],
    threaded_jobs: None,
) -> None:
    name = f"ba{uuid.uuid4().hex[:10]}"
    assert admin.post("/v1/pools", json={"name": name, "team_size": 4, "model": "elo"}).is_success
    play(server, name, random_rounds(MIN_ROUNDS + 10, seed=3))
    advice = f"/pools/{name}/advice"
    answer = page.goto(live.url + advice)
    assert answer is not None and answer.status == 401
    refused(console_errors, "401")
    log_in(page, live, advice)
    assert page.locator("#no-advice").count() == 1
    page.click("#advise-form button")
    page.wait_for_url(f"{live.url}{advice}?job=*")
    page.wait_for_selector("#advice-job[data-status=done]", timeout=120_000)
    # the rows side by side: each general model at its defaults and tuned, Elo's, the pool's
    rows = page.locator("#advice tbody tr")
    assert rows.count() == 2 * len(general_models()) + 2 + 1
    stored = admin.get(f"/v1/pools/{name}/advice").json()
    best = stored["recommended"]
    assert best["model"] in general_models()
    marked = page.locator("#advice tr.best")
    assert marked.get_attribute("data-model") == best["model"]
    assert marked.get_attribute("data-setting") == best["setting"]
    assert page.inner_text("#verdict") == stored["verdict"]
    assert ("beyond the noise" in stored["verdict"]) == stored["runner_up"]["beyond_noise"]
    # the settings form names the advice and offers its switch
    page.goto(f"{live.url}/pools/{name}/settings")
    assert stored["verdict"] in page.inner_text("#advice-link")
    switch = stored["switch"]
    assert switch is not None, stored  # an Elo pool: a general model predicts better
    assert page.locator("#switch-form").count() == 1
    # the advice page's own button switches the pool to every parameter it scored
    page.goto(live.url + advice)
    page.click("#switch-form button")
    page.wait_for_url(f"{live.url}/pools/{name}/jobs/*")
    page.wait_for_selector("#job-status[data-status=done]", timeout=60_000)
    pool = admin.get(f"/v1/pools/{name}").json()
    assert pool["model"] == best["model"] == switch["model"]
    if best["model"] == "synelo":
        assert pool["theta"] == switch["theta"] == best["scored_params"]["theta"]
    scored = {k: v for k, v in best["scored_params"].items() if k != "theta"}
    assert switch.get("params", {}) == scored
    for key, value in scored.items():
        assert pool["params"][key] == value, key
    logged = admin.get(f"/v1/pools/{name}/changes").json()["changes"]
    assert [c["kind"] for c in logged][-2:] == ["advise", "patch"]
    assert logged[-1]["reason"].startswith("synelo advise")
    # the advice is now out of date: no switch on either page
    page.goto(live.url + advice)
    assert page.locator("#advice-stale").count() == 1
    assert page.locator("#switch-form").count() == 0
    page.goto(f"{live.url}/pools/{name}/settings")
    assert page.locator("#switch-form").count() == 0


def test_a_running_advise_job_is_cancelled_with_the_pages_button(
    page: Page, live: LiveServer, admin: httpx.Client, console_errors: list[str]
) -> None:
    """The advice page's Cancel button, clicked while an advise job runs (one started and
    never run, so it runs until cancelled): the page then reads cancelled, with no button,
    and the pool takes a re-rate at once."""
    name = f"bc{uuid.uuid4().hex[:10]}"
    assert admin.post("/v1/pools", json={"name": name, "team_size": 4}).is_success
    _, job = live.app.state.rerate.start(name, "advise", {}, "t")
    followed = f"/pools/{name}/advice?job={job.id}"
    log_in(page, live, followed)
    assert page.locator("#advice-job[data-status=running]").count() == 1
    page.click("#cancel-form button")
    page.wait_for_selector("#advice-job[data-status=cancelled]")
    assert page.url == live.url + followed
    assert page.locator("#cancel-form").count() == 0
    assert "Cancelled" in page.inner_text("#advice-job")
    wait(admin, name, admin.patch(f"/v1/pools/{name}", json={"params": {"k_max": 60}}))
    assert not console_errors
