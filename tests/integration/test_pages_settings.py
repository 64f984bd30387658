"""A pool's settings form over real HTTP on SQLite and PostgreSQL: every setting a PATCH takes,
the form token, changes made at once and changes that re-rate (with the job's page), and bad
input refused with the field named and nothing changed."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest
from markupsafe import escape

from synelo.models import MODELS, pool_models
from synelo.schemas import PoolPatchIn
from synelo.service.api import pool_settings
from tests.conftest import LiveServer, post_round
from tests.integration.test_pages_admin import form_token, log_in

pytestmark = pytest.mark.usefixtures("threaded_jobs")  # re-rates on a thread of the server


@pytest.fixture
def browser(live: LiveServer) -> Iterator[httpx.Client]:
    with closing(log_in(live.url)) as logged_in:  # an admin's browser: its session cookie
        yield logged_in


@pytest.fixture
def pool(admin: httpx.Client, server: httpx.Client) -> str:
    """A private SynElo pool of 2v2 with a few rounds, auto-tuning off."""
    name = f"st{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 2, "params": {"t_shadow": 1}, "autotune": None}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(6):
        post_round(server, name, [1, 2], [3, 4], "AB"[i % 3 == 0])
    return name


def fields(page: str) -> dict[str, str]:
    """The settings form as a browser would send it: each field's value as shown (the
    checked radio, the selected option, a checked checkbox)."""
    form = page.split('id="settings"', 1)[1].split("</form>", 1)[0]
    sent: dict[str, str] = {}
    for tag in re.findall(r"<input[^>]*>", form):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name is None:
            continue
        kind = re.search(r'type="([^"]+)"', tag)
        if kind and kind.group(1) in ("radio", "checkbox") and " checked" not in tag:
            continue
        sent[html.unescape(name.group(1))] = html.unescape(value.group(1) if value else "")
    for name, options in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', form, re.S):
        chosen = re.search(r'<option(?: value="([^"]*)")? selected>([^<]*)', options)
        if chosen is None:  # none selected: a browser sends the first
            chosen = re.search(r'<option(?: value="([^"]*)")?>([^<]*)', options)
        assert chosen, name
        sent[name] = html.unescape(chosen.group(1) or chosen.group(2))
    return sent


def save(browser: httpx.Client, pool: str, changed: dict[str, str]) -> httpx.Response:
    """The form sent back with `changed` over what it shows."""
    sent = fields(browser.get(f"/pools/{pool}/settings").text)
    return browser.post(f"/pools/{pool}/settings", data={**sent, **changed})


def state(admin: httpx.Client, pool: str) -> tuple[Any, Any]:
    """The pool as the API shows it, and its admin log."""
    shown = admin.get(f"/v1/pools/{pool}").json()
    return shown, admin.get(f"/v1/pools/{pool}/changes").json()["changes"]


def test_the_form_holds_every_setting_a_patch_takes(browser: httpx.Client, pool: str) -> None:
    page = browser.get(f"/pools/{pool}/settings")
    assert page.status_code == 200
    sent = fields(page.text)
    assert sent["public"] == "false" and sent["model"] == "synelo"
    assert float(sent["theta"]) == 200  # a 2v2 pool's Θ
    params = {k[len("params.") :] for k in sent if k.startswith("params.")}
    assert params == set(MODELS["synelo"].parameters) - {"theta"}
    assert "autotune" not in sent and {"autotune.every", "autotune.fit"} <= set(sent)
    # every field of the PATCH's body has its place in the form
    patchable = set(PoolPatchIn.model_fields)
    assert patchable == {"model", "params", "theta", "autotune", "public", "reason"}
    assert all(any(k.split(".")[0] == f for k in sent) for f in patchable)
    options = re.findall(r'<option value="([^"]+)"', page.text)
    assert options == pool_models()  # not the replay-only peers (epa)
    assert sent["csrf"] == form_token(page.text)


def test_only_an_admin_may_open_or_send_it(
    live: LiveServer, browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as anyone:
        assert anyone.get(f"/pools/{pool}/settings").status_code == 401
        assert anyone.post(f"/pools/{pool}/settings", data={"public": "true"}).status_code == 401
    before = state(admin, pool)
    sent = fields(browser.get(f"/pools/{pool}/settings").text)
    for token in (None, "not-the-token"):  # a form sent from another site
        forged = {**sent, "public": "true"}
        forged.pop("csrf")
        if token:
            forged["csrf"] = token
        r = browser.post(f"/pools/{pool}/settings", data=forged)
        assert r.status_code == 403 and "not sent from one of this site" in r.text
    assert state(admin, pool) == before


def test_a_new_pools_default_autotune_round_trips_through_the_form(
    browser: httpx.Client, admin: httpx.Client
) -> None:
    """A pool created without a word on auto-tuning has it on (its scale, first at 200
    rounds); the form shows it so, and sending it back untouched finds nothing to change."""
    name = f"sd{uuid.uuid4().hex[:10]}"
    assert admin.post("/v1/pools", json={"name": name, "team_size": 2}).status_code == 201
    shown, _ = state(admin, name)
    assert shown["autotune"]["fit"] == ["temperature"] and shown["autotune"]["first"] == 200
    sent = fields(browser.get(f"/pools/{name}/settings").text)
    assert sent["autotune"] == "on" and sent["autotune.first"] == "200"
    assert float(sent["autotune.noise"]) == shown["autotune"]["noise"] == 2.0
    r = browser.post(f"/pools/{name}/settings", data=sent)
    assert r.status_code == 422 and "nothing to change" in r.text  # no field differs
    assert state(admin, name) == (shown, [])


@pytest.mark.parametrize("model", ["synelo", "elo", "trueskill"])
def test_ticking_autotune_on_gives_a_new_pools_setting(
    browser: httpx.Client, admin: httpx.Client, model: str
) -> None:
    """A pool with auto-tuning off shows, and on a tick turns on, the setting a new pool of
    its model has (its scale to fit included): nothing else to fill in."""
    made = {}
    for off in (True, False):
        name = f"sm{uuid.uuid4().hex[:10]}"
        body = {"name": name, "model": model, "team_size": 2, "player_ids": "text"}
        r = admin.post("/v1/pools", json={**body, "autotune": None} if off else body)
        assert r.status_code == 201, r.text
        made[off] = name, r.json()["autotune"]
    (name, setting), (_, default) = made[True], made[False]
    assert setting is None and default is not None
    r = save(browser, name, {"autotune": "on"})
    assert r.status_code == 303, r.text
    assert state(admin, name)[0]["autotune"] == default


def test_visibility_and_autotune_change_at_once(
    browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    r = save(browser, pool, {"public": "true", "reason": "open to players"})
    assert r.status_code == 303 and r.headers["location"] == f"/pools/{pool}/settings?done=settings"
    shown, log = state(admin, pool)
    assert shown["public"] is True and shown["rounds"] == 6
    assert [(c["kind"], c["value"], c["reason"]) for c in log] == [
        ("patch", {"public": True}, "open to players")
    ]
    page = browser.get(r.headers["location"]).text
    assert "The pool&#39;s settings are saved." in page and fields(page)["public"] == "true"
    r = save(browser, pool, {"autotune": "on", "autotune.every": "500", "autotune.fit": "theta"})
    assert r.status_code == 303
    shown, _ = state(admin, pool)
    assert shown["autotune"] == {  # the rest as the form showed it: a new pool's
        "every": 500,
        "fit": ["theta"],
        "holdout": 0.4,
        "margin": 0.001,
        "first": 200,
        "noise": 2.0,
    }
    assert fields(browser.get(f"/pools/{pool}/settings").text)["autotune"] == "on"
    sent = fields(browser.get(f"/pools/{pool}/settings").text)
    sent.pop("autotune")  # unticked: off
    assert browser.post(f"/pools/{pool}/settings", data=sent).status_code == 303
    assert state(admin, pool)[0]["autotune"] is None


def test_a_parameter_change_re_rates_and_its_page_follows_the_job(
    live: LiveServer, browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    r = save(browser, pool, {"params.k_min": "20", "reason": "steadier"})
    assert r.status_code == 303
    job_page = r.headers["location"]
    job_id = int(re.fullmatch(rf"/pools/{pool}/jobs/(\d+)", job_page).group(1))  # type: ignore[union-attr]
    live.app.state.jobs.wait(timeout=60)
    done = browser.get(job_page).text
    assert 'data-status="done"' in done and 'http-equiv="refresh"' not in done
    assert "<th>what</th><td>patch: k_min 12 → 20</td>" in done  # was "patch: model synelo"
    assert re.search(r'<progress id="job-progress" max="6" value="6">', done)
    assert admin.get(f"/v1/pools/{pool}/jobs/{job_id}").json()["status"] == "done"
    shown, log = state(admin, pool)
    assert shown["params"]["k_min"] == 20 and shown["params"]["k_max"] == 72  # the rest kept
    assert log[-1]["kind"] == "patch" and log[-1]["reason"] == "steadier"
    assert float(fields(browser.get(f"/pools/{pool}/settings").text)["params.k_min"]) == 20
    with httpx.Client(base_url=live.url, timeout=30) as anyone:  # an admin's page only
        assert anyone.get(job_page).status_code == 401


def test_a_running_re_rate_shows_its_progress_and_refuses_another(
    live: LiveServer, browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    """A job that runs (started, not yet taken by the runner): its page reloads itself;
    the form says it runs, and a change that would re-rate is refused, nothing set."""
    rerate = live.app.state.rerate
    _, job = rerate.start(pool, "patch", {"model": "synelo", "params": {}}, "test")
    try:
        running = browser.get(f"/pools/{pool}/jobs/{job.id}").text
        assert 'data-status="running"' in running
        assert '<meta http-equiv="refresh" content="2">' in running
        form = browser.get(f"/pools/{pool}/settings").text
        assert f'href="/pools/{pool}/jobs/{job.id}"' in form.split('id="running"')[1]
        before = state(admin, pool)
        r = save(browser, pool, {"params.k_max": "80", "public": "true"})
        assert r.status_code == 409 and "A re-rate of this pool is running" in r.text
        assert state(admin, pool) == before  # not even the visibility
    finally:
        rerate.fail_id(job.id, "ended by the test")


def test_a_running_advise_job_is_named_as_one_not_as_a_re_rate(
    live: LiveServer, browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    """An advise job re-rates nothing: its page is the advice page, and the form and the
    refusal it causes name it for what it is."""
    rerate = live.app.state.rerate
    _, job = rerate.start(pool, "advise", {}, "test")
    try:
        moved = browser.get(f"/pools/{pool}/jobs/{job.id}", follow_redirects=False)
        assert moved.status_code == 303
        assert moved.headers["location"] == f"/pools/{pool}/advice?job={job.id}"
        followed = browser.get(moved.headers["location"]).text
        assert "Advising:" in followed and "Re-rate" not in followed
        form = browser.get(f"/pools/{pool}/settings").text
        notice = form.split('id="running"')[1].split("</p>")[0]
        assert "An advise job of this pool is running" in notice and "re-rate" not in notice
        before = state(admin, pool)
        r = save(browser, pool, {"params.k_max": "80"})
        assert (
            r.status_code == 409
            and f"An advise job of this pool is running (job {job.id})" in r.text
        )
        assert state(admin, pool) == before
    finally:
        rerate.fail_id(job.id, "ended by the test")


def test_a_failed_re_rate_says_the_visibility_given_with_it_stays(
    live: LiveServer, browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    """A change of Θ and visibility: the visibility is set when the job starts, so a job
    that fails leaves the pool public; its page says so, and what the job would change.
    It said the pool "kept its ratings and settings as they were"."""
    state_ = live.app.state
    current = state_.store.get_pool(pool)
    body = PoolPatchIn.model_validate({"theta": 300, "public": True})
    plan = pool_settings.plan_patch(state_.settings, state_.store, current, body)
    assert plan.rerate is not None
    _, job = state_.rerate.start(pool, "patch", plan.rerate, "test")  # not run: failed below
    pool_settings.apply_at_once(state_.store, current, plan, "test")
    state_.rerate.fail_id(job.id, "ended by the test")
    page = " ".join(html.unescape(browser.get(f"/pools/{pool}/jobs/{job.id}").text).split())
    assert "<th>what</th><td>patch: Θ 200 → 300; made public at once</td>" in page
    assert "Failed: ended by the test. The change of visibility asked with it was made" in page
    assert "the pool is public. Its ratings and its other settings are as they were." in page
    assert "kept its ratings and settings as they were" not in page
    assert admin.get(f"/v1/pools/{pool}").json()["public"] is True


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"params.k_min": "abc"}, "params.k_min: Input should be a valid number"),
        ({"params.k_min": "-5"}, "params.k_min: Input should be greater than or equal to 0"),
        ({"params.convergence": "fast"}, "params.convergence: Input should be 'seed' or"),
        ({"theta": "wide"}, "theta: Input should be a valid number"),
        ({"model": "nosuch"}, "model: unknown model"),
        ({"model": "epa"}, "model: epa is a replay-only peer"),
        ({"autotune": "on", "autotune.every": "5", "autotune.fit": "theta"}, "autotune.every"),
        ({"autotune": "on", "autotune.every": "500", "autotune.fit": "k_min, no"}, "autotune"),
        ({}, "nothing to change"),
    ],
)
def test_bad_input_names_the_field_and_changes_nothing(
    browser: httpx.Client, admin: httpx.Client, pool: str, changed: dict[str, str], named: str
) -> None:
    before = state(admin, pool)
    r = save(browser, pool, {"reason": "<i>why</i>", **changed})
    assert r.status_code == 422, r.text
    error = html.unescape(r.text.split('id="settings-error">', 1)[1].split("</p>", 1)[0])
    assert error.startswith("Nothing was changed: ") and named in error
    assert state(admin, pool) == before
    shown = fields(r.text)  # the form again, with what was sent (a list shows its choices)
    for field, value in changed.items():
        if f'<input name="{field}"' in r.text or f'name="{field}" value=' in r.text:
            assert shown.get(field) == value
    assert str(escape("<i>why</i>")) in r.text and "<i>why</i>" not in r.text


def test_the_form_sent_back_as_it_is_changes_nothing(
    browser: httpx.Client, admin: httpx.Client
) -> None:
    """Every value is written exactly (no rounding of a Θ of 1234.5678 to 1234.57), so the
    form sent back untouched asks for no change, and no re-rate starts."""
    name = f"sx{uuid.uuid4().hex[:10]}"
    body = {"name": name, "theta": 1234.5678, "params": {"k_min": 12.3456789012, "sigma": 400}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    sent = fields(browser.get(f"/pools/{name}/settings").text)
    assert sent["theta"] == "1234.5678" and sent["params.k_min"] == "12.3456789012"
    assert sent["params.sigma"] == "400"
    r = save(browser, name, {})
    assert r.status_code == 422 and "nothing to change" in r.text
    assert admin.get(f"/v1/pools/{name}/changes").json()["changes"] == []


def test_a_new_model_takes_its_defaults_and_keeps_the_pools_rules(
    live: LiveServer, browser: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    r = save(browser, pool, {"model": "elo"})
    assert r.status_code == 303 and "/jobs/" in r.headers["location"]
    live.app.state.jobs.wait(timeout=60)
    shown, _ = state(admin, pool)
    assert shown["model"] == "elo" and shown["params"]["t_shadow"] == 1  # the pool's own
    assert shown["params"]["k"] == MODELS["elo"].parameters["k"].default
    sent = fields(browser.get(f"/pools/{pool}/settings").text)
    assert "theta" not in sent and set(k for k in sent if k.startswith("params.")) == {
        f"params.{name}" for name in shown["params"]
    }
