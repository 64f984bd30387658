"""A SynElo pool stored before `uneven` existed, end to end over real HTTP on SQLite and
PostgreSQL: its parameters' JSON has no `uneven`, so they load as the seed's sums
(`SynEloParams`' default), and it rates rosters of unequal size by them; full re-rates
(a void and unvoid, from the stored JSON; a PATCH of its own Θ) give back every rating and
P it stored, and leave the pool on sums (a swap writes it out), with no silent switch to
the headcount F1u that new pools get. A new pool rates the same shape by F1u."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from synelo.ratings import roster_probability
from synelo.store.tables import pools, rounds
from tests.conftest import LiveServer
from tests.integration.test_api_models import PLAYERS, new_pool
from tests.integration.test_rerate import wait

# (team A, team B, winner): 3v2 and 2v3 among others, so that sums and headcount differ
SHAPES = [
    (PLAYERS[0:3], PLAYERS[3:5], "A"),
    (PLAYERS[5:7], PLAYERS[7:10], "B"),
    (PLAYERS[0:2], PLAYERS[2:5], "A"),
    (PLAYERS[4:8], PLAYERS[8:10], "B"),
    (PLAYERS[1:4], PLAYERS[6:8], "draw"),
    (PLAYERS[0:2], PLAYERS[8:10], "A"),
    (PLAYERS[2:5], PLAYERS[5:7], "B"),
]


def _report(
    server: httpx.Client, name: str, team_a: list[str], team_b: list[str], winner: str
) -> dict[str, Any]:
    body = {
        "round_id": f"u{uuid.uuid4().hex[:10]}",
        "server_id": "s1",
        "winner": winner,
        "teams": {"A": team_a, "B": team_b},
    }
    answer = server.post(f"/v1/pools/{name}/rounds", json=body)
    assert answer.status_code == 201, answer.text
    rated: dict[str, Any] = answer.json()
    return rated


def _rate_shapes(server: httpx.Client, name: str, theta: float, *, headcount: bool) -> None:
    """Report SHAPES; each round's P(A) must be F1's with or without `headcount`, and for
    rosters of unequal size the other reading must differ (so the check can fail)."""
    for team_a, team_b, winner in SHAPES:
        rated = _report(server, name, team_a, team_b, winner)
        sums = (rated["sum_a"], len(team_a), rated["sum_b"], len(team_b), theta)
        expected = roster_probability(*sums, headcount=headcount)
        assert rated["p_a"] == pytest.approx(expected, abs=1e-12), rated
        if len(team_a) != len(team_b):
            assert abs(roster_probability(*sums, headcount=not headcount) - expected) > 1e-3


def _stored_params(live: LiveServer, name: str) -> dict[str, Any]:
    with live.store.engine.connect() as conn:
        text = conn.execute(select(pools.c.params).where(pools.c.name == name)).scalar_one()
    params: dict[str, Any] = json.loads(text)
    return params


def _stored_p(live: LiveServer, name: str) -> dict[str, float]:
    """Each round's P(A) as the pool stores it, by round id."""
    with live.store.engine.connect() as conn:
        pool_id = conn.execute(select(pools.c.id).where(pools.c.name == name)).scalar_one()
        found = conn.execute(
            select(rounds.c.round_id, rounds.c.p_a).where(rounds.c.pool_id == pool_id)
        )
        return {round_id: p_a for round_id, p_a in found}


def _ratings(admin: httpx.Client, name: str) -> dict[str, tuple[int, int]]:
    """Every player's rating and rounds played."""
    found = {}
    for player in PLAYERS:
        answer = admin.get(f"/v1/pools/{name}/players/{player}")
        assert answer.status_code == 200, answer.text
        found[player] = (answer.json()["rating"], answer.json()["rounds_played"])
    return found


def _same(
    live: LiveServer,
    admin: httpx.Client,
    name: str,
    ratings: dict[str, tuple[int, int]],
    stored_p: dict[str, float],
) -> None:
    """Every rating and every round's P as they were stored before the re-rate."""
    assert _ratings(admin, name) == ratings
    again = _stored_p(live, name)
    assert again.keys() == stored_p.keys()
    for round_id, p in stored_p.items():
        assert again[round_id] == pytest.approx(p, abs=1e-12), round_id


def test_a_pool_from_before_uneven_keeps_the_seeds_sums_through_a_rerate(
    admin: httpx.Client, server: httpx.Client, live: LiveServer
) -> None:
    name = new_pool(admin, "synelo")
    assert _stored_params(live, name)["uneven"] == "headcount"  # a new pool's, for now
    # its parameters as a pool stored before the field: no `uneven` key at all
    legacy = {k: v for k, v in _stored_params(live, name).items() if k != "uneven"}
    with live.store.engine.begin() as conn:
        conn.execute(update(pools).where(pools.c.name == name).values(params=json.dumps(legacy)))
    shown = admin.get(f"/v1/pools/{name}").json()
    assert shown["params"]["uneven"] == "sums", shown
    theta = shown["theta"]
    _rate_shapes(server, name, theta, headcount=False)
    stored_p, ratings = _stored_p(live, name), _ratings(admin, name)
    assert len(stored_p) == len(SHAPES)
    # two full re-rates from the stored JSON as it is (void a round, put it back), then one
    # with the pool's own parameters sent back (Θ as it is): each gives back what it stored
    first = next(iter(stored_p))
    wait(admin, name, admin.post(f"/v1/pools/{name}/rounds/{first}/void", json={"reason": "t"}))
    assert _ratings(admin, name) != ratings  # the void did re-rate
    wait(admin, name, admin.post(f"/v1/pools/{name}/rounds/{first}/unvoid"))
    _same(live, admin, name, ratings, stored_p)
    assert _stored_params(live, name).get("uneven", "sums") == "sums"  # a swap writes it out
    wait(admin, name, admin.patch(f"/v1/pools/{name}", json={"theta": theta}))
    _same(live, admin, name, ratings, stored_p)
    # still sums: absent, as before, or written out as sums; never headcount
    assert _stored_params(live, name).get("uneven", "sums") == "sums"
    assert admin.get(f"/v1/pools/{name}").json()["params"]["uneven"] == "sums"
    # and the next round is rated by sums too
    team_a, team_b = PLAYERS[0:3], PLAYERS[3:5]
    rated = _report(server, name, team_a, team_b, "B")
    assert rated["p_a"] == pytest.approx(
        roster_probability(rated["sum_a"], 3, rated["sum_b"], 2, theta, headcount=False),
        abs=1e-12,
    )


def test_a_new_pool_rates_uneven_rosters_by_headcount(
    admin: httpx.Client, server: httpx.Client, live: LiveServer
) -> None:
    name = new_pool(admin, "synelo")
    shown = admin.get(f"/v1/pools/{name}").json()
    assert shown["params"]["uneven"] == "headcount"
    assert _stored_params(live, name)["uneven"] == "headcount"
    _rate_shapes(server, name, shown["theta"], headcount=True)
