"""Auto-tuning over real HTTP on SQLite and PostgreSQL: a new pool has it on unless its body
says null, the setting is checked, a fit that predicts the held-out rounds better beyond the
noise is adopted by re-rating the pool, one that does not is only logged, and the schedule
starts a fit when one is due."""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.integration.test_rerate import everyone, play, wait

Body = dict[str, Any]
# what an auto-tune does, not where it runs: the jobs on a thread (test_rerate spawns them)
pytestmark = pytest.mark.usefixtures("threaded_jobs")
PLAYERS = [f"p{n}" for n in range(12)]


def skilled_rounds(count: int, seed: int = 4) -> list[Body]:
    """2v2 rounds among players of fixed, well spread skills: a model with a sensible step
    learns them, one with a tiny step does not."""
    rng = random.Random(seed)
    skill = {p: 400.0 * i / len(PLAYERS) for i, p in enumerate(PLAYERS)}
    bodies = []
    for i in range(count):
        a1, a2, b1, b2 = rng.sample(PLAYERS, 4)
        gap = skill[a1] + skill[a2] - skill[b1] - skill[b2]
        p_a = 1 / (1 + math.exp(-gap / 150))
        bodies.append(
            {
                "round_id": f"t{i}",
                "server_id": "s",
                "winner": "A" if rng.random() < p_a else "B",
                "teams": {"A": [a1, a2], "B": [b1, b2]},
            }
        )
    return bodies


def elo_pool(admin: httpx.Client, k: float, autotune: Body | None) -> str:
    name = f"a{uuid.uuid4().hex[:12]}"
    body: Body = {
        "name": name,
        "team_size": 2,
        "player_ids": "text",
        "model": "elo",
        "params": {"k": k},
    }
    body["autotune"] = autotune  # None: off (left out, it would be on by default)
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 201, r.text
    return name


def lookups(server: httpx.Client, pool: str) -> dict[str, Body]:
    return everyone(server, pool, stamps=False, players=PLAYERS)


def test_a_new_pool_auto_tunes_its_scale_unless_told_not_to(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """Left out of the body, auto-tuning is on: the model's scale, first at 200 rounds
    (A1); null turns it off; a model without a scale starts without it."""
    made = {}
    for model, extra in (
        ("synelo", {}),
        ("elo", {}),
        ("trueskill", {}),
        ("whr", {}),
        ("synelo", {"autotune": None}),
    ):
        name = f"d{uuid.uuid4().hex[:10]}"
        body = {"name": name, "model": model, "player_ids": "text", "team_size": 2, **extra}
        r = admin.post("/v1/pools", json=body)
        assert r.status_code == 201, r.text
        made[(model, bool(extra))] = name, r.json()["autotune"]
    for model, scale in (
        ("synelo", "temperature"),
        ("elo", "theta"),
        ("trueskill", "beta"),
    ):
        assert made[(model, False)][1] == {
            "every": 5000,
            "fit": [scale],
            "holdout": 0.4,
            "margin": 0.001,
            "first": 200,
            "noise": 2.0,
        }
    assert made[("whr", False)][1] is None and made[("synelo", True)][1] is None
    pool, off = made[("synelo", False)][0], made[("synelo", True)][0]
    bodies = skilled_rounds(200, seed=3)
    for name in (pool, off):
        play(server, name, bodies[:199])
    due = {p.name for p in live.app.state.rerate.due_tunes()}
    assert pool not in due and off not in due
    for name in (pool, off):
        play(server, name, bodies[199:])
    due = {p.name for p in live.app.state.rerate.due_tunes()}
    assert pool in due and off not in due  # the 200th round: the first fit is due


def test_a_scale_autotune_follows_a_model_switch(admin: httpx.Client) -> None:
    """A pool that fits its model's scale (a new pool's default) switches model without a
    word on auto-tuning: it then fits the new model's scale, or stops for a model with none;
    a setting that fits anything else is checked against the new model (the next test)."""
    name = f"f{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "player_ids": "text", "team_size": 2})
    default = r.json()["autotune"]
    assert default["fit"] == ["temperature"]
    r = admin.patch(f"/v1/pools/{name}", json={"model": "trueskill"})
    beta = {**default, "fit": ["beta"]}
    assert r.json()["spec"]["changed"]["autotune"] == [default, beta]  # said so
    wait(admin, name, r)
    shown = admin.get(f"/v1/pools/{name}").json()
    assert shown["model"] == "trueskill" and shown["autotune"] == beta
    r = admin.patch(f"/v1/pools/{name}", json={"model": "whr"})
    assert r.json()["spec"]["changed"]["autotune"] == [beta, None]
    wait(admin, name, r)
    shown = admin.get(f"/v1/pools/{name}").json()
    assert shown["model"] == "whr" and shown["autotune"] is None


def test_a_pool_fitting_theta_as_new_pools_did_before_f1t_follows_a_switch(
    admin: httpx.Client,
) -> None:
    """A SynElo pool made before F1t fits Θ, then a new pool's default: a switch still
    moves it to the new model's scale, as it moves today's default."""
    name = f"o{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "player_ids": "text", "team_size": 2})
    old = {**r.json()["autotune"], "fit": ["theta"]}
    r = admin.patch(f"/v1/pools/{name}", json={"autotune": old})
    assert r.status_code == 200, r.text
    assert admin.get(f"/v1/pools/{name}").json()["autotune"] == old
    r = admin.patch(f"/v1/pools/{name}", json={"model": "trueskill"})
    assert r.status_code == 202, r.text
    beta = {**old, "fit": ["beta"]}
    assert r.json()["spec"]["changed"]["autotune"] == [old, beta]
    wait(admin, name, r)
    assert admin.get(f"/v1/pools/{name}").json()["autotune"] == beta


def test_a_switch_back_to_a_model_with_a_scale_turns_the_default_on(
    admin: httpx.Client,
) -> None:
    """Off on a model without a scale (WHR), a switch to one with a scale turns a new
    pool's default on, and says so; `"autotune": null` beside the switch keeps it off, and
    a pool whose own model has a scale keeps its auto-tuning off through a switch."""
    name = f"w{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "player_ids": "text", "team_size": 2})
    default = r.json()["autotune"]
    wait(admin, name, admin.patch(f"/v1/pools/{name}", json={"model": "whr"}))
    assert admin.get(f"/v1/pools/{name}").json()["autotune"] is None
    r = admin.patch(f"/v1/pools/{name}", json={"model": "synelo"})
    assert r.status_code == 202, r.text
    assert r.json()["spec"]["changed"]["autotune"] == [None, default]
    wait(admin, name, r)
    assert admin.get(f"/v1/pools/{name}").json()["autotune"] == default
    wait(admin, name, admin.patch(f"/v1/pools/{name}", json={"model": "whr"}))
    r = admin.patch(f"/v1/pools/{name}", json={"model": "elo", "autotune": None})
    assert "autotune" not in r.json()["spec"]["changed"]
    wait(admin, name, r)
    assert admin.get(f"/v1/pools/{name}").json()["autotune"] is None  # asked to stay off
    r = admin.patch(f"/v1/pools/{name}", json={"model": "trueskill"})  # from elo: a scale
    assert "autotune" not in r.json()["spec"]["changed"]
    wait(admin, name, r)
    assert admin.get(f"/v1/pools/{name}").json()["autotune"] is None


def test_turning_autotune_back_on_gives_a_new_pools_setting(admin: httpx.Client) -> None:
    """Auto-tuning turned off and on again by naming what to fit (or the upgrade note's
    `every`, `fit` and `first`) has a new pool's setting, not older rules; a stored
    setting given whole keeps its own, and `every` below 200 brings the first fit with it."""
    for model in ("synelo", "elo", "trueskill"):
        name = f"o{uuid.uuid4().hex[:10]}"
        body = {"name": name, "model": model, "player_ids": "text", "team_size": 2}
        default = admin.post("/v1/pools", json=body).json()["autotune"]
        assert admin.patch(f"/v1/pools/{name}", json={"autotune": None}).json()["autotune"] is None
        for given in (
            {"fit": default["fit"]},
            {"every": 5000, "fit": default["fit"], "first": 200},
        ):
            r = admin.patch(f"/v1/pools/{name}", json={"autotune": given})
            assert r.status_code == 200, r.text
            assert r.json()["autotune"] == default, (model, given)
    old = {"every": 300, "fit": ["beta"], "holdout": 0.2, "margin": 0.002, "first": None}
    r = admin.patch(f"/v1/pools/{name}", json={"autotune": {**old, "noise": 0}})
    assert r.status_code == 200, r.text
    assert r.json()["autotune"] == {**old, "noise": 0}
    r = admin.patch(f"/v1/pools/{name}", json={"autotune": {"every": 150, "fit": ["beta"]}})
    assert r.json()["autotune"]["first"] == 150


def test_the_autotune_setting_is_checked(admin: httpx.Client) -> None:
    bad = [
        ({"every": 500, "fit": ["beta"]}, "elo", ["body", "autotune", "fit"]),
        ({"every": 50, "fit": ["k"]}, "elo", ["body", "autotune", "every"]),
        ({"every": 500, "fit": ["k"], "holdout": 0.9}, "elo", ["body", "autotune", "holdout"]),
        ({"every": 500, "fit": ["w_vel"]}, "synelo", ["body", "autotune", "fit"]),
        ({"every": 500, "fit": ["k"], "often": 1}, "elo", ["body", "autotune", "often"]),
    ]
    for autotune, model, loc in bad:
        body = {"name": f"b{uuid.uuid4().hex[:10]}", "model": model, "autotune": autotune}
        r = admin.post("/v1/pools", json=body)
        assert r.status_code == 422, (autotune, r.text)
        assert r.json()["detail"][0]["loc"] == loc, (autotune, r.text)
    pool = elo_pool(admin, 20, None)
    assert admin.get(f"/v1/pools/{pool}").json()["autotune"] is None
    r = admin.patch(f"/v1/pools/{pool}", json={"autotune": {"every": 200, "fit": ["k"]}})
    assert r.status_code == 200, r.text
    assert r.json()["autotune"] == {  # what it leaves out: a new pool's
        "every": 200,
        "fit": ["k"],
        "holdout": 0.4,
        "margin": 0.001,
        "first": 200,
        "noise": 2.0,
    }
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
    fit = admin.get(f"/v1/pools/{pool}/quality").json()["last_fit"]  # no rounds: nothing fitted
    assert fit["adopted"] is False and "too short" in fit["error"]
    assert admin.patch(f"/v1/pools/{pool}", json={"autotune": None}).json()["autotune"] is None
    assert admin.post(f"/v1/pools/{pool}/autotune").status_code == 409
    r = admin.patch(f"/v1/pools/{pool}", json={})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body"]


def test_a_better_fit_is_adopted_by_rerating_the_pool(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Elo with K = 1 barely learns: the fit of K predicts the held-out rounds better, so the
    pool re-rates with it and then equals a fresh pool created with the fitted K."""
    bodies = skilled_rounds(400)
    setting = {"every": 100, "fit": ["k"], "holdout": 0.3, "margin": 0.001, "noise": 2.0}
    pool = elo_pool(admin, 1, setting)
    play(server, pool, bodies)
    job = wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
    assert job["kind"] == "tune" and job["actor"] == "config:admin#1"
    fit = admin.get(f"/v1/pools/{pool}/quality").json()["last_fit"]
    assert fit["adopted"] is True and fit["job"] == job["id"]
    assert fit["heldout_log_loss_current"] - fit["heldout_log_loss_fitted"] >= 0.001
    # the paired gain is the same difference, and it is beyond two of its standard errors
    assert fit["gain"] == pytest.approx(
        fit["heldout_log_loss_current"] - fit["heldout_log_loss_fitted"]
    )
    assert fit["gain"] > 2 * fit["standard_error"] > 0 and fit["before"] == {"k": 1.0}
    assert (fit["train_rounds"], fit["heldout_rounds"]) == (280, 120)
    k = fit["fitted"]["k"]
    assert k > 5
    shown = admin.get(f"/v1/pools/{pool}").json()
    assert shown["params"]["k"] == k and shown["autotune"] == {**setting, "first": 100}
    fresh = elo_pool(admin, k, None)
    play(server, fresh, bodies)
    assert lookups(server, pool) == lookups(server, fresh)


def test_a_fit_short_of_the_margin_is_only_logged(
    admin: httpx.Client, server: httpx.Client
) -> None:
    bodies = skilled_rounds(300, seed=9)
    pool = elo_pool(admin, 24, {"every": 100, "fit": ["k"], "margin": 1.0})
    play(server, pool, bodies)
    before = lookups(server, pool)
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
    fit = admin.get(f"/v1/pools/{pool}/quality").json()["last_fit"]
    assert fit["adopted"] is False and fit["margin"] == 1.0
    assert fit["heldout_rounds"] == 120  # 0.4 of 300, a new pool's holdout
    assert fit["heldout_log_loss_current"] is not None
    assert admin.get(f"/v1/pools/{pool}").json()["params"]["k"] == 24
    assert lookups(server, pool) == before
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    assert [c["kind"] for c in log] == ["tune"] and log[0]["actor"] == "config:admin#1"


def test_the_schedule_starts_an_autotune_when_one_is_due(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    bodies = skilled_rounds(250, seed=2)
    pool = elo_pool(admin, 24, {"every": 100, "fit": ["k"], "margin": 1.0})
    schedule = live.app.state.autotune
    play(server, pool, bodies[:99])
    assert pool not in {p.name for p in live.app.state.rerate.due_tunes()}
    play(server, pool, bodies[99:150])
    started = schedule.check(only={pool})  # not other tests' pools, on by default
    mine = [j for j in started if admin.get(f"/v1/pools/{pool}/jobs/{j}").status_code == 200]
    assert len(mine) == 1
    job_url = f"/v1/pools/{pool}/jobs/{mine[0]}"
    wait(admin, pool, httpx.Response(202, json={"id": mine[0]}, headers={"location": job_url}))
    assert pool not in {p.name for p in live.app.state.rerate.due_tunes()}  # 150 − 150 < 100
    play(server, pool, bodies[150:])
    assert pool in {p.name for p in live.app.state.rerate.due_tunes()}  # 250 − 150 ≥ 100


def test_a_model_change_rechecks_the_pools_autotune(admin: httpx.Client) -> None:
    pool = elo_pool(admin, 20, {"every": 200, "fit": ["k"]})
    r = admin.patch(f"/v1/pools/{pool}", json={"model": "trueskill"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "autotune"]
    assert "cannot fit 'k'" in r.json()["detail"][0]["msg"]
    r = admin.patch(
        f"/v1/pools/{pool}",
        json={"model": "trueskill", "autotune": {"every": 200, "fit": ["beta"]}},
    )
    assert r.status_code == 202, r.text
    wait(admin, pool, r)
    shown = admin.get(f"/v1/pools/{pool}").json()
    assert shown["model"] == "trueskill" and shown["autotune"]["fit"] == ["beta"]
    assert admin.post(f"/v1/pools/{pool}/autotune", json={"now": True}).status_code == 422
