"""The models that need fields of their own in a round, over real HTTP on SQLite and PostgreSQL:
`positional` (positions and goals: P1–P6) and `sectors-edge` (scoreboard points: E1–E5).

Each is checked against the model's own arithmetic on the same rounds in memory: the P of
every answer, the players' before/after and the lookups' fields, the predicted distribution
of final scores, the strengths balancing sums. A round that lacks what the model rates by is
a 422 naming the field, and stores nothing; an admin set outside a place percentile is
refused; a change of model that the stored rounds cannot be rated by fails and keeps the
pool as it was."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import httpx
import pytest

from synelo.models import Model, RoundFacts, create_model
from tests.conftest import steam
from tests.integration.test_api_models import new_pool

Body = dict[str, Any]
FOOS = [steam(n) for n in range(1, 7)]  # six foosball players
SE = [steam(n) for n in range(11, 19)]  # eight Sector's Edge players
NEWCOMER = steam(90)  # in the refused rounds only: never stored


def facts(body: Body, winner: str | None = None) -> RoundFacts:
    """What the service hands a model of a round report or a prediction's body."""
    part = body.get("participants")
    keys = ("positions", "scores", "player_scores", "mode")
    return RoundFacts(
        tuple(body["teams"]["A"]),
        tuple(body["teams"]["B"]),
        winner or body["winner"],
        None if part is None else tuple(part["A"]),
        None if part is None else tuple(part["B"]),
        {key: body[key] for key in keys if key in body},
    )


def rate_all(
    model: Model[Any], bodies: list[Body], states: dict[str, Any], context: dict[str, Any]
) -> list[Any]:
    """Rate `bodies` in memory, updating `states` and `context`; each round's `Rated`."""
    out = []
    for body in bodies:
        rated = model.rate(states, facts(body), context)
        states.update(rated.states)
        context.update(rated.context)
        out.append(rated)
    return out


def fed_pool(
    admin: httpx.Client, server: httpx.Client, model: str, bodies: list[Body]
) -> tuple[str, Model[Any], dict[str, Any], dict[str, Any]]:
    """A new pool of `model` that rated `bodies`, and the reference model's states and
    context after the same rounds in memory."""
    pool = new_pool(admin, model)
    play(server, pool, bodies)
    reference = create_model(model)
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}
    rate_all(reference, bodies, states, context)
    return pool, reference, states, context


def foosball_rounds(count: int, seed: int = 11) -> list[Body]:
    """2v2 games to 10 among six players, each side an offense and a defense (players change
    position from game to game), with the final goals."""
    rng = random.Random(seed)
    bodies = []
    for i in range(count):
        a_off, a_def, b_off, b_def = rng.sample(FOOS, 4)
        winner = rng.choice("AB")
        lost = rng.randint(0, 9)
        bodies.append(
            {
                "round_id": f"f{i}-{uuid.uuid4().hex[:6]}",
                "server_id": "table1",
                "winner": winner,
                "teams": {"A": [a_off, a_def], "B": [b_off, b_def]},
                "positions": {
                    a_off: "offense",
                    a_def: "defense",
                    b_off: "offense",
                    b_def: "defense",
                },
                "scores": {"A": 10, "B": lost} if winner == "A" else {"A": lost, "B": 10},
            }
        )
    return bodies


def ctf_rounds(count: int, seed: int = 21) -> list[Body]:
    """3v3 CTF rounds among eight players, with every player's scoreboard points."""
    rng = random.Random(seed)
    bodies = []
    for i in range(count):
        picked = rng.sample(SE, 6)
        bodies.append(
            {
                "round_id": f"c{i}-{uuid.uuid4().hex[:6]}",
                "server_id": "se1",
                "winner": rng.choice("AB"),
                "mode": "CTF",
                "teams": {"A": picked[:3], "B": picked[3:]},
                "player_scores": {p: rng.randint(0, 40) for p in picked},
            }
        )
    return bodies


def play(server: httpx.Client, pool: str, bodies: list[Body]) -> list[Body]:
    answers = []
    for body in bodies:
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text
        answers.append(r.json())
    return answers


def lookups(server: httpx.Client, pool: str, players: list[str]) -> dict[str, Body]:
    r = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": players})
    assert r.status_code == 200, r.text
    return {p["steam_id"]: p for p in r.json()["players"]}


def assert_refused(
    admin: httpx.Client,
    server: httpx.Client,
    pool: str,
    body: Body,
    loc: list[Any],
    known: list[str],
) -> None:
    """`body` is a 422 at `loc`, and the pool is as it was: its rounds, players and their
    lookups; the newcomer in it is still unknown."""
    before = admin.get(f"/v1/pools/{pool}").json()["rounds"]
    players = admin.get(f"/v1/pools/{pool}/quality").json()["players"]
    shown = lookups(server, pool, known)
    r = server.post(f"/v1/pools/{pool}/rounds", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == loc, r.text
    assert admin.get(f"/v1/pools/{pool}").json()["rounds"] == before
    assert admin.get(f"/v1/pools/{pool}/quality").json()["players"] == players
    assert lookups(server, pool, known) == shown
    newcomer = server.get(f"/v1/pools/{pool}/players/{NEWCOMER}").json()
    assert (newcomer["rounds_played"], newcomer["last_played"]) == (0, None)


# --- positional ---------------------------------------------------------------------------
def test_a_positional_pool_rates_positions_and_goals_as_the_model_does(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Every answer's P and every player's before/after are P1–P6 on the states so far
    (the spread of P6 learnt round by round, as the pool's context); the lookups show each
    position's rating and games."""
    pool = new_pool(admin, "positional")
    shown = admin.get(f"/v1/pools/{pool}").json()["params"]
    assert (shown["positions"], shown["facing"], shown["goals"]) == (
        "offense,defense",
        "offense:defense",
        10,
    )
    reference = create_model("positional")
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}
    bodies = foosball_rounds(16)
    for body, answer in zip(bodies, play(server, pool, bodies), strict=True):
        old = dict(states)
        (rated,) = rate_all(reference, [body], states, context)
        assert answer["p_a"] == rated.p_a
        assert {c["steam_id"] for c in answer["players"]} == set(body["positions"])
        for change in answer["players"]:
            key = change["steam_id"]
            assert change["before"] == round(reference.rating(reference.state_of(old, key)))
            assert change["after"] == round(reference.rating(rated.states[key]))
            assert change["k"] is None
    assert context["spread"]["rounds"] == 16
    looked = lookups(server, pool, FOOS)
    for key, player in looked.items():
        state = states[key]
        assert player["skill"] == reference.fields(state)
        assert player["rating"] == round(reference.rating(state))
        assert player["rounds_played"] == sum(state.games.values())
    # players who played both positions show both
    both = [p for p in looked.values() if "offense.rating" in p["skill"]]
    both = [p for p in both if "defense.rating" in p["skill"]]
    assert both
    for player in both:
        state = states[player["steam_id"]]
        assert player["skill"]["offense.rating"] == state.ratings["offense"]
        assert player["skill"]["defense.games"] == state.games["defense"]
        assert (
            player["skill"]["offense.games"] + player["skill"]["defense.games"]
            == (player["rounds_played"])
        )


def test_a_positional_round_without_what_it_rates_by_is_refused(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """No positions, a position the pool does not have, a player without one, goals that
    contradict the winner: each a 422 at its field, nothing stored. The same round_id, put
    right, is then rated as a new round."""
    pool = new_pool(admin, "positional")
    play(server, pool, foosball_rounds(3))
    a_off, a_def, b_off = FOOS[:3]
    good: Body = {
        "round_id": "refused-then-right",
        "server_id": "table1",
        "winner": "A",
        "teams": {"A": [a_off, a_def], "B": [b_off, NEWCOMER]},
        "positions": {a_off: "offense", a_def: "defense", b_off: "offense", NEWCOMER: "defense"},
        "scores": {"A": 10, "B": 3},
    }
    no_positions = {k: v for k, v in good.items() if k != "positions"}
    goalie = {**good, "positions": {**good["positions"], NEWCOMER: "goalie"}}
    one_missing = {**good, "positions": {a_off: "offense", a_def: "defense", b_off: "offense"}}
    contradicted = {**good, "scores": {"A": 3, "B": 10}}
    unequal_draw = {**good, "winner": "draw", "scores": {"A": 5, "B": 4}}
    cases = [
        (no_positions, ["body", "positions"]),
        (goalie, ["body", "positions", NEWCOMER]),
        (one_missing, ["body", "positions"]),
        (contradicted, ["body", "scores"]),
        (unequal_draw, ["body", "scores"]),
    ]
    for body, loc in cases:
        assert_refused(admin, server, pool, body, loc, FOOS)
    assert admin.get(f"/v1/pools/{pool}").json()["rounds"] == 3
    r = server.post(f"/v1/pools/{pool}/rounds", json=good)
    assert r.status_code == 201, r.text  # not a retry (200) nor a conflict (409)
    assert admin.get(f"/v1/pools/{pool}").json()["rounds"] == 4
    assert server.get(f"/v1/pools/{pool}/players/{NEWCOMER}").json()["rounds_played"] == 1


def test_a_positional_prediction_gives_every_final_score(
    admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    """/predict answers P5's distribution: the 20 results of a game to 10, from A's 0:10 to
    A's 10:0, summing to 1, whose A-wins part is p_a; without positions the players play at
    their display ratings. A SynElo pool predicts no scores."""
    positional, reference, states, context = fed_pool(
        admin, server, "positional", foosball_rounds(12, seed=5)
    )

    teams = {"A": FOOS[:2], "B": FOOS[2:4]}
    positions = {FOOS[0]: "defense", FOOS[1]: "offense", FOOS[2]: "offense", FOOS[3]: "defense"}
    r = server.post(
        f"/v1/pools/{positional}/predict", json={"teams": teams, "positions": positions}
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    results = answer["results"]
    assert len(results) == 20
    assert (results[0]["A"], results[0]["B"]) == (0, 10)
    assert (results[9]["A"], results[9]["B"]) == (9, 10)
    assert (results[10]["A"], results[10]["B"]) == (10, 9)
    assert (results[-1]["A"], results[-1]["B"]) == (10, 0)
    assert sum(x["p"] for x in results) == pytest.approx(1.0, abs=1e-12)
    assert all(x["p"] > 0 for x in results)
    wins = sum(x["p"] for x in results if x["A"] > x["B"])
    assert answer["p_a"] == pytest.approx(wins, abs=1e-12)
    predicted = facts({"teams": teams, "positions": positions}, winner="A")
    assert answer["p_a"] == reference.predict(states, predicted, context)
    expected = reference.results(states, predicted, context)
    assert results == [{"A": a, "B": b, "p": p} for a, b, p in expected]
    each = reference.strengths([reference.state_of(states, p) for p in FOOS[:4]])
    assert (answer["strength_a"], answer["strength_b"]) == (sum(each[:2]), sum(each[2:]))

    # without positions: every player at their display rating
    bare = server.post(f"/v1/pools/{positional}/predict", json={"teams": teams})
    assert bare.status_code == 200, bare.text
    unplaced = facts({"teams": teams}, winner="A")
    assert bare.json()["p_a"] == reference.predict(states, unplaced, context)
    assert bare.json()["p_a"] != answer["p_a"]  # the positions were read
    expected = reference.results(states, unplaced, context)
    assert bare.json()["results"] == [{"A": a, "B": b, "p": p} for a, b, p in expected]
    # a prediction may leave positions out, not name one the pool does not have
    goalie = {**positions, FOOS[3]: "goalie"}
    r = server.post(f"/v1/pools/{positional}/predict", json={"teams": teams, "positions": goalie})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "positions", FOOS[3]]

    synelo = server.post(f"/v1/pools/{pool}/predict", json={"teams": teams})
    assert synelo.status_code == 200, synelo.text
    assert "results" in synelo.json() and synelo.json()["results"] is None


# --- sectors-edge -------------------------------------------------------------------------
def test_a_sectors_edge_pool_rates_from_the_scoreboard(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Each answer's P is E4 with the scale learnt per mode so far; the lookups show
    pubPower per mode; a leaver needs no points, a rated player does."""
    pool = new_pool(admin, "sectors-edge")
    reference = create_model("sectors-edge")
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}
    bodies = ctf_rounds(14)
    # a leaver: A's last player is not rated and has no points
    leaver = {**ctf_rounds(1, seed=77)[0]}
    team_a = leaver["teams"]["A"]
    leaver["participants"] = {"A": team_a[:-1], "B": leaver["teams"]["B"]}
    leaver["player_scores"] = {p: x for p, x in leaver["player_scores"].items() if p != team_a[-1]}
    bodies.append(leaver)
    for body, answer in zip(bodies, play(server, pool, bodies), strict=True):
        old = dict(states)
        (rated,) = rate_all(reference, [body], states, context)
        assert answer["p_a"] == rated.p_a
        for change in answer["players"]:
            key = change["steam_id"]
            assert change["before"] == round(reference.rating(reference.state_of(old, key)))
            assert change["after"] == round(reference.rating(rated.states[key]))
    assert team_a[-1] not in {c["steam_id"] for c in answer["players"]}
    assert context["scale:CTF"]["beta"] != reference.params["scale_prior"]  # learnt
    looked = lookups(server, pool, SE)
    for key, player in looked.items():
        state = states[key]
        assert player["skill"] == reference.fields(state)
        assert player["rating"] == round(reference.rating(state))
        assert player["skill"]["CTF.matches"] == len(state.recent["CTF"])
        assert player["skill"]["CTF.pub_power"] == pytest.approx(
            24 * sum(state.recent["CTF"]) / len(state.recent["CTF"]), rel=1e-12
        )

    refused = {
        "round_id": "no-points",
        "server_id": "se1",
        "winner": "A",
        "mode": "CTF",
        "teams": {"A": SE[:3], "B": [*SE[3:5], NEWCOMER]},
    }
    assert_refused(admin, server, pool, refused, ["body", "player_scores"], SE)
    partial = {**refused, "player_scores": {p: 10 for p in SE[:5]}}  # the newcomer has none
    assert_refused(admin, server, pool, partial, ["body", "player_scores"], SE)
    assert admin.get(f"/v1/pools/{pool}").json()["rounds"] == 15


def test_a_sectors_edge_prediction_and_splits_sum_sorted_power(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Balancing and prediction need no points: a team's strength is Σ sortedPower, each
    player's rank among the players balanced together + 5 (E3)."""
    pool, reference, states, context = fed_pool(
        admin, server, "sectors-edge", ctf_rounds(12, seed=4)
    )
    six = SE[:6]
    strength = dict(
        zip(six, reference.strengths([reference.state_of(states, p) for p in six]), strict=True)
    )
    assert sorted(strength.values()) == [5, 6, 7, 8, 9, 10]
    # ranked by the display rating (every mode's places): the best is 10, the worst 5
    rating = {p: reference.rating(states[p]) for p in six}
    assert len(set(rating.values())) == 6
    assert sorted(six, key=strength.__getitem__) == sorted(six, key=rating.__getitem__)

    teams = {"A": six[:3], "B": six[3:]}
    r = server.post(f"/v1/pools/{pool}/predict", json={"teams": teams, "mode": "CTF"})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["strength_a"] == sum(strength[p] for p in teams["A"])
    assert answer["strength_b"] == sum(strength[p] for p in teams["B"])
    predicted = facts({"teams": teams, "mode": "CTF"}, winner="A")
    assert answer["p_a"] == reference.predict(states, predicted, context)
    assert answer["results"] is None

    splits = server.post(f"/v1/pools/{pool}/splits", json={"players": six})
    assert splits.status_code == 200, splits.text
    assert [s["k"] for s in splits.json()["splits"]] == [2, 3]
    for split in splits.json()["splits"]:
        assert split["sum_a"] == sum(strength[p] for p in split["A"])
        assert split["sum_b"] == sum(strength[p] for p in split["B"])
    best = splits.json()["splits"][-1]
    assert best["sum_a"] + best["sum_b"] == 45 and best["gap"] <= 1


def test_an_admin_sets_a_place_percentile(admin: httpx.Client, server: httpx.Client) -> None:
    """A sectors-edge rating is a place percentile: 80 is set, 150 is refused."""
    bodies = ctf_rounds(3, seed=9)
    pool, reference, states, _ = fed_pool(admin, server, "sectors-edge", bodies)
    target = bodies[0]["teams"]["A"][0]
    r = admin.put(f"/v1/pools/{pool}/players/{target}", json={"rating": 80})
    assert r.status_code == 200, r.text
    assert r.json()["rating"] == 80
    assert r.json()["skill"] == reference.fields(reference.with_rating(states[target], 80))
    assert r.json()["skill"]["CTF.pub_power"] == pytest.approx(0.8 * 24, rel=1e-12)
    for rating in (150, 101, -1):
        refused = admin.put(f"/v1/pools/{pool}/players/{target}", json={"rating": rating})
        assert refused.status_code == 422, refused.text
        assert refused.json()["detail"][0]["loc"] == ["body", "rating"]
    assert server.get(f"/v1/pools/{pool}/players/{target}").json()["rating"] == 80


# --- a change of model the stored rounds do not fit ---------------------------------------
def finished(admin: httpx.Client, pool: str, answer: httpx.Response) -> Body:
    """The job an answer started, once it has ended (done or failed)."""
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["id"]
    deadline = time.monotonic() + 60
    while True:
        job = admin.get(f"/v1/pools/{pool}/jobs/{job_id}").json()
        if job["status"] != "running":
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


@pytest.mark.usefixtures("threaded_jobs")
def test_a_change_to_positional_without_positions_fails_and_keeps_the_pool(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """An elo pool's rounds carry no positions: re-rating them as positional fails on the
    first, naming positions, and the pool keeps its model, parameters and ratings."""
    pool = new_pool(admin, "elo")
    # foosball games with their goals (which elo ignores) but without positions
    bodies = [{k: v for k, v in b.items() if k != "positions"} for b in foosball_rounds(6)]
    play(server, pool, bodies)
    pool_before = admin.get(f"/v1/pools/{pool}").json()
    before = lookups(server, pool, FOOS)
    job = finished(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"model": "positional"}))
    assert job["status"] == "failed", job
    assert "positions" in job["error"], job
    pool_after = admin.get(f"/v1/pools/{pool}").json()
    assert pool_after["model"] == "elo"
    assert (pool_after["params"], pool_after["rounds"]) == (pool_before["params"], 6)
    assert lookups(server, pool, FOOS) == before
    assert "patch" not in [
        c["kind"] for c in admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    ]
    # the pool still rates as elo, and a change it can take succeeds
    play(server, pool, foosball_rounds(1, seed=3))
    done = finished(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"params": {"k": 16.0}}))
    assert done["status"] == "done", done
