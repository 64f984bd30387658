"""A `whr` pool over HTTP: rounds dated by their days, lookups with rating and uncertainty,
the epad learned from uneven rounds, and the full refit (W10) on demand and on schedule,
each checked against the model's own arithmetic."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from synelo.models import RoundFacts
from synelo.models.whr import CLOCK, EPAD, Whr
from synelo.ratings.whr import NATURAL, PlayerDays
from tests.conftest import LiveServer
from tests.integration.test_api_models import PLAYERS, new_pool
from tests.integration.test_rerate import play, wait

Body = dict[str, Any]
START = datetime(2026, 3, 1, 18, 0, tzinfo=UTC)


def uneven_rounds(count: int, seed: int = 3, per_day: int = 6) -> list[Body]:
    """Rounds of 2v2 to 4v5 among the ten players over days, the larger team stronger
    by an extra player; each with its `started_at`."""
    rng = random.Random(seed)
    skill = {p: rng.gauss(0.0, 1.0) for p in PLAYERS}
    bodies = []
    for i in range(count):
        small = rng.randint(2, 4)
        big = small + (i % 2)
        picked = rng.sample(PLAYERS, small + big)
        team_a, team_b = picked[:big], picked[big:]
        z = sum(skill[p] for p in team_a) / big - sum(skill[p] for p in team_b) / small
        z += 0.8 if big > small else 0.0
        winner = "A" if rng.random() < 1.0 / (1.0 + 2.718281828 ** (-z)) else "B"
        started = START + timedelta(days=i // per_day, minutes=i % per_day)
        bodies.append(
            {
                "round_id": f"w{i}-{uuid.uuid4().hex[:6]}",
                "server_id": "s1",
                "winner": winner,
                "teams": {"A": team_a, "B": team_b},
                "started_at": started.isoformat(),
            }
        )
    return bodies


def facts(body: Body) -> RoundFacts:
    return RoundFacts(
        tuple(body["teams"]["A"]),
        tuple(body["teams"]["B"]),
        body["winner"],
        extras={"started_at": body["started_at"]},
    )


def online(
    model: Whr,
    bodies: list[Body],
    states: dict[str, PlayerDays] | None = None,
    context: dict[str, Any] | None = None,
) -> tuple[dict[str, PlayerDays], dict[str, Any]]:
    """What the pool should hold: each round rated in turn (after `states` and `context`,
    if given), its context entries kept."""
    states = {} if states is None else states
    context = {} if context is None else context
    for body in bodies:
        f = facts(body)
        rated = model.rate(
            states, f, {k: context[k] for k in model.context_keys(f) if k in context}
        )
        states.update(rated.states)
        context.update(rated.context)
    return states, context


def lookups(server: httpx.Client, pool: str) -> dict[str, Body]:
    r = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": PLAYERS})
    assert r.status_code == 200, r.text
    return {p["steam_id"]: p for p in r.json()["players"]}


def test_a_whr_pool_rates_dates_and_shows_uncertainty(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Each answer is W1's P with the epad learned so far; lookups give the last day's Elo
    and its uncertainty (W9), which narrows as a player plays on."""
    bodies = uneven_rounds(60)
    pool = new_pool(admin, "whr", window_days=4)
    model = Whr({"window_days": 4})
    first = lookups(server, pool)
    assert all(p["rating"] == 1500 for p in first.values())
    states: dict[str, PlayerDays] = {}
    context: dict[str, Any] = {}
    widths: dict[str, list[float]] = {p: [] for p in PLAYERS}
    for body in bodies:
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text
        f = facts(body)
        rated = model.rate(
            states, f, {k: context[k] for k in model.context_keys(f) if k in context}
        )
        assert r.json()["p_a"] == rated.p_a
        states.update(rated.states)
        context.update(rated.context)
        for p, s in rated.states.items():
            widths[p].append(model.fields(s)["uncertainty"])
    shown = lookups(server, pool)
    for key, player in shown.items():
        assert player["skill"] == model.fields(states[key])
        assert player["rating"] == round(model.rating(states[key]))
        assert player["skill"]["days"] <= 4  # the window folds older days (W8)
        assert 0 < player["skill"]["uncertainty"] < widths[key][0]
    # the larger team won more than its means said: the 2v3, 3v4 and 4v5 epads learned it
    learned = [context[EPAD + k]["mean"] for k in ("2", "3", "4")]
    # beside them, W11's clock keeps the latest real day
    assert sum(learned) > 0 and sorted(context) == [*(EPAD + k for k in ("2", "3", "4")), CLOCK]
    # a late report counts on the player's latest day, never before it
    late = {**bodies[0], "round_id": f"late-{uuid.uuid4().hex[:6]}"}
    assert server.post(f"/v1/pools/{pool}/rounds", json=late).status_code == 201
    after = lookups(server, pool)
    assert all(after[p]["skill"]["days"] <= 4 for p in late["teams"]["A"])


@pytest.mark.usefixtures("threaded_jobs")
def test_a_refit_gives_the_map_and_keeps_admin_changes(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """POST /refit re-rates online and ends with W10's MAP: the stored states are the
    model's refit of the same rounds, with the epads it fitted; a player set by an admin
    keeps the set as their prior, and a reset player's earlier rounds no longer count."""
    bodies = uneven_rounds(48, seed=8)
    pool = new_pool(admin, "whr")
    model = Whr()
    play(server, pool, bodies[:30])
    set_to = 1900
    assert admin.put(f"/v1/pools/{pool}/players/{PLAYERS[0]}", json={"rating": set_to}).is_success
    assert admin.delete(f"/v1/pools/{pool}/players/{PLAYERS[1]}?reason=smurf").is_success
    play(server, pool, bodies[30:])
    job = wait(admin, pool, admin.post(f"/v1/pools/{pool}/refit", json={}))
    assert job["kind"] == "refit" and job["total"] == 48

    states, context = online(model, bodies[:30])
    set_state = model.with_rating(states[PLAYERS[0]], set_to)
    states[PLAYERS[0]], states[PLAYERS[1]] = set_state, model.new_state()
    later, context = online(model, bodies[30:], states, context)
    # the refit under generations: after the set and the reset, those players are new
    # identities, and their early rounds belong to the old ones
    renamed = [_renamed(facts(b), {PLAYERS[0], PLAYERS[1]}) for b in bodies[30:]]
    starts = {f"{PLAYERS[0]}\x1f1": set_state, f"{PLAYERS[1]}\x1f1": PlayerDays()}
    current = {**{k: v for k, v in later.items() if k not in (PLAYERS[0], PLAYERS[1])}}
    current[f"{PLAYERS[0]}\x1f1"] = later[PLAYERS[0]]
    current[f"{PLAYERS[1]}\x1f1"] = later[PLAYERS[1]]
    refitted = model.refit(current, [*(facts(b) for b in bodies[:30]), *renamed], context, starts)
    assert refitted is not None
    shown = lookups(server, pool)
    for key in PLAYERS:
        name = f"{key}\x1f1" if key in (PLAYERS[0], PLAYERS[1]) else key
        expected = model.fields(refitted.states[name])
        assert shown[key]["skill"] == pytest.approx(expected, rel=1e-9, abs=1e-9), key
        assert shown[key]["skill"] != pytest.approx(model.fields(later[key])), key  # not online
    # the set player's prior is centred where the admin put them
    assert abs(shown[PLAYERS[0]]["rating"] - set_to) < 300
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    assert [c["kind"] for c in log] == ["set", "reset", "refit"]
    assert admin.post(f"/v1/pools/{new_pool(admin, 'elo')}/refit", json={}).status_code == 409


def _renamed(f: RoundFacts, restarted: set[str]) -> RoundFacts:
    def name(p: str) -> str:
        return f"{p}\x1f1" if p in restarted else p

    return RoundFacts(
        tuple(map(name, f.team_a)), tuple(map(name, f.team_b)), f.winner, extras=f.extras
    )


@pytest.mark.usefixtures("threaded_jobs")
def test_the_schedule_refits_every_refit_every_rounds(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    bodies = uneven_rounds(30, seed=4)
    pool = new_pool(admin, "whr", refit_every=20)
    rerate = live.app.state.rerate
    play(server, pool, bodies[:19])
    assert pool not in {p.name for p in rerate.due_refits()}
    play(server, pool, bodies[19:25])
    started = live.app.state.autotune.check(only={pool})  # not other tests' pools
    mine = [j for j in started if admin.get(f"/v1/pools/{pool}/jobs/{j}").status_code == 200]
    assert len(mine) == 1
    url = f"/v1/pools/{pool}/jobs/{mine[0]}"
    job = wait(admin, pool, httpx.Response(202, json={"id": mine[0]}, headers={"location": url}))
    assert job["kind"] == "refit" and job["actor"] == "schedule"
    assert pool not in {p.name for p in rerate.due_refits()}  # 25 − 25 < 20
    uncertainty = lookups(server, pool)[PLAYERS[2]]["skill"]["uncertainty"]
    assert 0 < uncertainty < 2.0**0.5 * NATURAL  # narrower than a newcomer's
