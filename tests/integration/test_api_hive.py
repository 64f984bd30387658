"""A Hive pool end to end over real HTTP, on SQLite and PostgreSQL: rounds with time played,
sides, commanders and maps rate exactly as the model does with its context; lookups show s, o,
χ and the display value; prediction reads the learned side rates; a re-rate with `solve` on
ends with the full-history solve (H8), journaled as "solve" lines."""

from __future__ import annotations

import random
import uuid
from typing import Any

import httpx
import pytest

from synelo.models import RoundFacts, create_model
from synelo.models.hive import Hive
from tests.conftest import steam
from tests.integration.test_rerate import wait

PLAYERS = [steam(n) for n in range(1, 13)]
SIDES = ({"A": "marines", "B": "aliens"}, {"A": "aliens", "B": "marines"})


def bodies(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """4v4 rounds on two maps, sides either way, a commander a team, and in every third
    round a player who left early and one who joined late."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        picked = rng.sample(PLAYERS, 9)
        a, b, late = picked[:4], picked[4:8], picked[8]
        body: dict[str, Any] = {
            "round_id": f"h{i}-{uuid.uuid4().hex[:6]}",
            "server_id": "ns2-1",
            "map": rng.choice(["ns2_veil", "ns2_tram"]),
            "winner": rng.choice("AB"),
            "teams": {"A": a, "B": b},
            "sides": SIDES[i % 2],
            "commanders": {"A": a[0], "B": b[0]},
            "duration": rng.uniform(400, 1200),
        }
        if i % 3 == 0:
            body["participants"] = {"A": [*a, late], "B": b}
            body["time_played"] = {a[1]: 0.4, late: {"from": 300.0, "to": body["duration"]}}
        out.append(body)
    return out


def facts(body: dict[str, Any]) -> RoundFacts:
    part = body.get("participants", body["teams"])
    extras = {
        k: body[k] for k in ("map", "sides", "commanders", "duration", "time_played") if k in body
    }
    return RoundFacts(
        tuple(body["teams"]["A"]),
        tuple(body["teams"]["B"]),
        body["winner"],
        tuple(part["A"]),
        tuple(part["B"]),
        extras,
    )


def test_a_hive_pool_rates_sides_commanders_and_time_played(
    admin: httpx.Client, server: httpx.Client
) -> None:
    name = f"h{uuid.uuid4().hex[:12]}"
    created = admin.post(
        "/v1/pools", json={"name": name, "team_size": 6, "model": "hive", "params": {"c": 1.0}}
    )
    assert created.status_code == 201, created.text
    reference = create_model("hive", {"c": 1.0})
    assert isinstance(reference, Hive)
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}
    for body in bodies(45):
        r = server.post(f"/v1/pools/{name}/rounds", json=body)
        assert r.status_code == 201, r.text
        f = facts(body)
        entries = {k: context[k] for k in reference.context_keys(f) if k in context}
        rated = reference.rate(states, f, entries)
        assert r.json()["p_a"] == rated.p_a
        states.update(rated.states)
        context.update(rated.context)
    assert context["reference"] == "marines"  # the first side the pool saw

    looked = server.post(f"/v1/pools/{name}/players/lookup", json={"steam_ids": PLAYERS}).json()
    commanders = 0
    for player in looked["players"]:
        state = states[player["steam_id"]]
        assert player["skill"] == reference.fields(state)
        assert set(player["skill"]) >= {"s", "o", "chi"}
        assert player["rating"] == round(reference.rating(state))
        commanders += state.commanded > 0
    assert commanders > 0 and any(states[p].o != 0 for p in PLAYERS)

    # a prediction with sides and a map reads the learned side rates
    ask = {"teams": {"A": PLAYERS[:4], "B": PLAYERS[4:8]}, "sides": SIDES[0], "map": "ns2_veil"}
    predicted = server.post(f"/v1/pools/{name}/predict", json=ask)
    assert predicted.status_code == 200, predicted.text
    f = RoundFacts(
        tuple(PLAYERS[:4]), tuple(PLAYERS[4:8]), "A", extras={"sides": SIDES[0], "map": "ns2_veil"}
    )
    entries = {k: context[k] for k in reference.context_keys(f) if k in context}
    assert "b:aliens|marines|ns2_veil" in entries
    assert predicted.json()["p_a"] == pytest.approx(reference.predict(states, f, entries))

    # splits and NS2's min-swap autobalance balance display_scale·s, side-blind
    strength = {p: round(reference.strength(reference.state_of(states, p))) for p in PLAYERS}
    split = server.post(f"/v1/pools/{name}/splits", json={"players": PLAYERS[:8]}).json()
    best = split["splits"][-1]
    assert best["sum_a"] == sum(strength[p] for p in best["A"])
    swaps = server.post(
        f"/v1/pools/{name}/autobalance",
        json={"teams": {"A": PLAYERS[:4], "B": PLAYERS[4:8]}, "method": "min_swaps"},
    )
    assert swaps.status_code == 200, swaps.text
    answer = swaps.json()
    assert answer["gap_before"] == abs(
        sum(strength[p] for p in PLAYERS[:4]) - sum(strength[p] for p in PLAYERS[4:8])
    )
    assert answer["gap_after"] <= answer["gap_before"]

    # a commander who left the chair: rated for both, and a span past the end is refused
    body = bodies(1, seed=3)[0]
    body["commanders"]["A"] = {"player": body["teams"]["A"][0], "from": 0.0, "to": 100.0}
    r = server.post(f"/v1/pools/{name}/rounds", json=body)
    assert r.status_code == 201, r.text
    f = facts(body)
    rated = reference.rate(
        states, f, {k: context[k] for k in reference.context_keys(f) if k in context}
    )
    assert r.json()["p_a"] == rated.p_a
    leader = rated.states[body["teams"]["A"][0]]
    looked = server.post(
        f"/v1/pools/{name}/players/lookup", json={"steam_ids": [body["teams"]["A"][0]]}
    ).json()["players"][0]
    assert looked["skill"] == reference.fields(leader)
    late = dict(body, round_id=body["round_id"] + "x")
    late["commanders"] = {
        "A": {"player": body["teams"]["A"][0], "from": 0.0, "to": 1e5},
        "B": body["teams"]["B"][0],
    }
    r = server.post(f"/v1/pools/{name}/rounds", json=late)
    assert r.status_code == 422, r.text
    stranger = dict(body, round_id=body["round_id"] + "y")
    stranger["commanders"] = {
        "A": {"player": body["teams"]["B"][1], "from": 0.0, "to": 10.0},
        "B": body["teams"]["B"][0],
    }
    r = server.post(f"/v1/pools/{name}/rounds", json=stranger)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == [
        "body",
        "commanders",
        "A",
        "player",
    ]

    # a bad side name is refused, naming the field
    bad = {"teams": {"A": PLAYERS[:1], "B": PLAYERS[1:2]}, "sides": {"A": "x", "B": "x"}}
    r = server.post(f"/v1/pools/{name}/predict", json=bad)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["body", "sides"]


@pytest.mark.usefixtures("threaded_jobs")
def test_a_re_rate_with_solve_on_ends_with_the_full_history_solve(
    admin: httpx.Client, server: httpx.Client
) -> None:
    name = f"h{uuid.uuid4().hex[:12]}"
    assert admin.post("/v1/pools", json={"name": name, "model": "hive"}).status_code == 201
    played = bodies(30, seed=11)
    # a roster player who is not a participant is never rated, and the solve leaves them new
    ghost = steam(99)
    played[0]["teams"]["A"].append(ghost)
    played[0]["participants"] = {
        "A": [p for p in played[0]["teams"]["A"] if p != ghost],
        "B": played[0]["teams"]["B"],
    }
    played[0].pop("time_played", None)
    for body in played:
        assert server.post(f"/v1/pools/{name}/rounds", json=body).status_code == 201
    before = {
        p["steam_id"]: p
        for p in server.post(
            f"/v1/pools/{name}/players/lookup", json={"steam_ids": PLAYERS}
        ).json()["players"]
    }
    wait(admin, name, admin.patch(f"/v1/pools/{name}", json={"params": {"solve": "on"}}))

    reference = create_model("hive", {"solve": "on"})
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}
    for body in played:
        f = facts(body)
        rated = reference.rate(
            states, f, {k: context[k] for k in reference.context_keys(f) if k in context}
        )
        states.update(rated.states)
        context.update(rated.context)
    solved = reference.refit(states, [facts(b) for b in played], context)
    assert solved is not None
    states.update(solved.states)
    after = server.post(f"/v1/pools/{name}/players/lookup", json={"steam_ids": PLAYERS}).json()
    moved = []
    for player in after["players"]:
        key = player["steam_id"]
        assert player["skill"]["s"] == pytest.approx(states[key].s, rel=1e-9)
        if player["rating"] != before[key]["rating"]:
            moved.append(key)
    assert moved
    ghost_view = server.post(
        f"/v1/pools/{name}/players/lookup", json={"steam_ids": [ghost]}
    ).json()["players"][0]
    assert ghost_view["rounds_played"] == 0 and ghost_view["rating"] == 1000
    for key in moved:  # newest first: the solve's line, from the re-rated rating to the solved
        entries = admin.get(f"/v1/pools/{name}/players/{key}/history").json()["entries"]
        assert entries[0]["kind"] == "solve" and entries[0]["round_id"] is None
        assert entries[0]["after"] == round(reference.rating(states[key]))
