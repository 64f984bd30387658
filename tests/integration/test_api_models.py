"""Pools of every rating model, end to end over real HTTP on SQLite and PostgreSQL: the model
list, creating a pool with a model and checked parameters, rounds (joiners, leavers, draws),
lookups with the model's own fields, admin set and reset, history, leaderboard, quality,
splits, autobalance, prediction, and the export that replays to the stored states."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import Match
from synelo.evaluation.journal import import_journal
from synelo.evaluation.replay import replay
from synelo.models import MODELS, RoundFacts, pool_models
from synelo.models import create_model as service_model
from tests.conftest import LiveServer, steam
from tests.model_rounds import round_fields

OTHER_MODELS = [name for name in pool_models() if name != "synelo"]
PLAYERS = [steam(n) for n in range(1, 11)]


def new_pool(admin: httpx.Client, model: str, **params: Any) -> str:
    name = f"m{uuid.uuid4().hex[:12]}"
    body = {"name": name, "team_size": 4, "model": model, "params": params}
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["model"] == model
    return name


def random_rounds(count: int, seed: int = 5) -> list[dict[str, Any]]:
    """Rounds of 1v1 to 4v4 among 10 players; every fifth has a joiner and a leaver."""
    rng = random.Random(seed)
    bodies = []
    for i in range(count):
        size = rng.randint(1, 4)
        picked = rng.sample(PLAYERS, 2 * size + 1)
        team_a, team_b, joiner = picked[:size], picked[size : 2 * size], picked[-1]
        body: dict[str, Any] = {
            "round_id": f"r{i}-{uuid.uuid4().hex[:6]}",
            "server_id": "s1",
            "winner": rng.choice(["A", "B", "A", "B", "draw"]),
            "teams": {"A": team_a, "B": team_b},
        }
        if i % 5 == 4 and size > 1:  # A's last player left, a joiner came in for B
            body["participants"] = {"A": team_a[:-1], "B": [*team_b, joiner]}
            body.update(round_fields([team_a, [*team_b, joiner]]))
        else:
            body.update(round_fields([team_a, team_b]))
        bodies.append(body)
    return bodies


def facts(body: dict[str, Any]) -> RoundFacts:
    part = body.get("participants")
    return RoundFacts(
        tuple(body["teams"]["A"]),
        tuple(body["teams"]["B"]),
        body["winner"],
        None if part is None else tuple(part["A"]),
        None if part is None else tuple(part["B"]),
        # the service dates these rounds by their arrival: all on one day (whr's W11), as here
        {"day": 0, **{key: body[key] for key in ("positions", "player_scores")}},
    )


def test_the_model_list_names_every_model_with_its_parameters(server: httpx.Client) -> None:
    r = server.get("/v1/models")
    assert r.status_code == 200
    listed = {m["name"]: m for m in r.json()["models"]}
    assert list(listed) == pool_models() == [n for n in MODELS if n != "epa"]
    for name in pool_models():
        model = MODELS[name]
        params = {p["name"]: p for p in listed[name]["parameters"]}
        assert list(params) == list(model.parameters)
        for pname, spec in model.parameters.items():
            assert params[pname]["default"] == spec.default
            assert (params[pname]["low"], params[pname]["high"]) == (spec.low, spec.high)
    assert listed["trueskill"]["rating"] == "μ − 3σ"
    assert [p["name"] for p in r.json()["pool_rules"]] == ["t_shadow", "t_stale_days"]


def test_a_pool_of_an_unknown_model_or_with_a_bad_parameter_is_refused(
    admin: httpx.Client,
) -> None:
    name = f"m{uuid.uuid4().hex[:12]}"
    cases = [
        ({"model": "glicko"}, ["body", "model"]),
        ({"model": "elo", "params": {"k": -1}}, ["body", "params", "k"]),
        ({"model": "elo", "params": {"kk": 1}}, ["body", "params", "kk"]),
        ({"model": "trueskill", "params": {"sigma": 0}}, ["body", "params", "sigma"]),
        ({"model": "trueskill", "params": {"beta": "big"}}, ["body", "params", "beta"]),
        ({"model": "openskill-pl", "params": {"t_shadow": -3}}, ["body", "params", "t_shadow"]),
        ({"model": "elo", "theta": 400}, ["body", "theta"]),
        ({"model": "synelo", "params": {"k_max": -1}}, ["body", "params", "k_max"]),
        ({"model": "synelo", "params": {"mu": 3}}, ["body", "params", "mu"]),
    ]
    for extra, loc in cases:
        r = admin.post("/v1/pools", json={"name": name, **extra})
        assert r.status_code == 422, (extra, r.text)
        assert r.json()["detail"][0]["loc"] == loc, (extra, r.text)
    assert admin.get(f"/v1/pools/{name}").status_code == 404  # nothing was created


def test_no_pool_may_choose_a_replay_only_peer(admin: httpx.Client, server: httpx.Client) -> None:
    """`epa` is for replays only: creating a pool of it, or changing a pool to it, is a 422
    naming `model` that says why and which models a pool can choose; nothing changes."""
    name = f"m{uuid.uuid4().hex[:12]}"
    r = admin.post("/v1/pools", json={"name": name, "model": "epa"})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert detail["loc"] == ["body", "model"]
    assert detail["msg"].startswith("epa is a replay-only peer"), detail
    known = detail["msg"].split("known: ")[1]
    assert known.startswith("synelo, elo, trueskill") and "epa" not in known
    assert admin.get(f"/v1/pools/{name}").status_code == 404  # nothing was created
    r = admin.post("/v1/pools", json={"name": name, "model": "glicko"})
    assert "epa" not in r.json()["detail"][0]["msg"]  # the known models a pool can choose

    pool = new_pool(admin, "elo")
    for body in random_rounds(3):
        assert server.post(f"/v1/pools/{pool}/rounds", json=body).status_code == 201
    before = admin.get(f"/v1/pools/{pool}/leaderboard").json()
    r = admin.patch(f"/v1/pools/{pool}", json={"model": "epa", "reason": "compare"})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "model"]
    assert "replay-only" in r.json()["detail"][0]["msg"]
    assert admin.get(f"/v1/pools/{pool}").json()["model"] == "elo"
    assert admin.get(f"/v1/pools/{pool}/changes").json()["changes"] == []
    assert admin.get(f"/v1/pools/{pool}/leaderboard").json() == before


@pytest.mark.parametrize("model", OTHER_MODELS)
def test_a_pool_of_each_model_rates_as_the_model_does(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, model: str
) -> None:
    """Every answer is the model's own arithmetic on the states: P per round, the display
    rating and the model's fields per player, the stored states after an export's replay."""
    chosen = {
        "elo": {"k": 24.0},
        "hive": {"c": 1.5},
        "whr": {"window_days": 5},
        "positional": {"k": 24.0},
        "sectors-edge": {"matches": 30},
        "margin": {"beta": 1.2},
    }.get(model, {"beta": 200.0})
    pool = new_pool(admin, model, t_shadow=3, **chosen)
    shown = admin.get(f"/v1/pools/{pool}").json()
    assert shown["theta"] is None and shown["params"]["t_shadow"] == 3
    reference = service_model(model, chosen)
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}  # the pool's context entries (Hive's side rates)
    bodies = random_rounds(60)
    answers = []
    for body in bodies:
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text
        answer = r.json()
        rated = reference.rate(states, facts(body), context)
        context.update(rated.context)
        assert answer["p_a"] == rated.p_a
        for change in answer["players"]:
            before = round(reference.rating(reference.state_of(states, change["steam_id"])))
            assert change["before"] == before and change["k"] is None
            assert change["after"] == round(reference.rating(rated.states[change["steam_id"]]))
        states.update(rated.states)
        answers.append(answer)
    # a retry answers the stored outcome, changing nothing
    again = server.post(f"/v1/pools/{pool}/rounds", json=bodies[-1])
    assert again.status_code == 200 and again.json() == answers[-1]

    looked = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": PLAYERS}).json()
    for player in looked["players"]:
        state = states[player["steam_id"]]
        assert player["rating"] == round(reference.rating(state))
        assert player["skill"] == reference.fields(state)
        assert player["convergence"] is None and player["k"] is None
        assert player["visible"] == (player["rounds_played"] >= 3)

    # the export replays to every stored P and state
    exported = import_journal(live.store, pool)
    assert exported.header["model"] == model
    replayed = create_replay(model, {}, HistoryInfo(4, exported.header))
    result = replay(replayed, exported.matches)
    assert result.predictions.tolist() == [a["p_a"] for a in answers]
    for player in looked["players"]:
        state = replayed.rating_of(player["steam_id"])  # type: ignore[attr-defined]
        assert reference.fields(state) == player["skill"]

    # prediction, splits and autobalance use the current states
    teams = {"A": PLAYERS[:3], "B": PLAYERS[3:6]}
    positions = round_fields([teams["A"], teams["B"]])["positions"]
    predicted = server.post(
        f"/v1/pools/{pool}/predict", json={"teams": teams, "positions": positions}
    )
    assert predicted.status_code == 200, predicted.text
    expected = reference.predict(
        states,
        RoundFacts(tuple(teams["A"]), tuple(teams["B"]), "A", extras={"positions": positions}),
        context,
    )
    assert predicted.json()["p_a"] == expected
    each = reference.strengths([reference.state_of(states, p) for p in teams["A"] + teams["B"]])
    assert predicted.json()["strength_a"] == pytest.approx(sum(each[:3]))
    all_play = reference.split_mode == "all-play"
    seated = PLAYERS[: 7 if all_play else 6]
    # what the solver evens out: the strengths of the players split together
    strength = dict(
        zip(
            seated,
            reference.strengths([reference.state_of(states, p) for p in seated]),
            strict=True,
        )
    )
    splits = server.post(f"/v1/pools/{pool}/splits", json={"players": seated}).json()
    assert splits["mode"] == reference.split_mode
    for split in splits["splits"]:
        facts_ = RoundFacts(tuple(split["A"]), tuple(split["B"]), "A")
        assert split["p_a"] == reference.predict(states, facts_, context)
        assert split["sum_a"] == sum(round(strength[p]) for p in split["A"])
    if all_play:  # one split of all 7, 3 v 4, with the least |logit| (epad included) of all 35

        def logit(team_a: Sequence[str], team_b: Sequence[str]) -> float:
            return reference.split_logit(
                [round(strength[p]) for p in team_a], [round(strength[p]) for p in team_b], context
            )

        (best,) = splits["splits"]
        assert sorted([len(best["A"]), len(best["B"])]) == [3, 4] and best["bench"] == []
        assert best["logit"] == pytest.approx(logit(best["A"], best["B"]), abs=1e-12)
        assert abs(best["logit"]) == pytest.approx(
            min(abs(logit(a, [p for p in seated if p not in a])) for a in _threes(seated)),
            abs=1e-12,
        )
    else:
        best = splits["splits"][-1]  # 3v3: the most even strength sums of all 20 splits
        assert best["gap"] == min(
            abs(
                sum(round(strength[p]) for p in a)
                - sum(round(strength[p]) for p in seated if p not in a)
            )
            for a in _threes(seated)
        )
    assert best["optimal"]
    moved = server.post(
        f"/v1/pools/{pool}/autobalance", json={"teams": {"A": PLAYERS[:5], "B": []}}
    )
    assert moved.status_code == 200 and moved.json()["moves"]

    # history, leaderboard and quality
    history = admin.get(f"/v1/pools/{pool}/players/{PLAYERS[0]}/history").json()["entries"]
    assert history and all(e["kind"] == "round" for e in history)
    board = admin.get(f"/v1/pools/{pool}/leaderboard").json()["players"]
    assert [p["rating"] for p in board] == sorted((p["rating"] for p in board), reverse=True)
    quality = admin.get(f"/v1/pools/{pool}/quality").json()
    assert quality["model"] == model and quality["rounds"] == 60
    assert quality["theta"] is None and quality["theta_suggested_status"] == "n/a"
    assert quality["mean_convergence"] is None

    # admin set and reset are the model's, journaled
    target = PLAYERS[0]
    chosen_rating = round(reference.rating(reference.new_state())) + 34
    put = admin.put(f"/v1/pools/{pool}/players/{target}", json={"rating": chosen_rating})
    assert put.status_code == 200, put.text
    assert put.json()["rating"] == chosen_rating
    set_state = reference.with_rating(states[target], chosen_rating)
    assert put.json()["skill"] == reference.fields(set_state)
    reset = admin.delete(f"/v1/pools/{pool}/players/{target}").json()
    assert reset["rounds_played"] == 0
    assert reset["skill"] == reference.fields(reference.new_state())
    kinds = [
        e["kind"] for e in admin.get(f"/v1/pools/{pool}/players/{target}/history").json()["entries"]
    ]
    assert kinds[:2] == ["reset", "set"]


def _threes(players: list[str]) -> list[tuple[str, ...]]:
    from itertools import combinations

    return list(combinations(players, 3))


def test_prediction_checks_its_body_and_answers_synelo_pools_too(
    admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    teams = {"A": [steam(1), steam(2)], "B": [steam(3)]}
    r = server.post(f"/v1/pools/{pool}/predict", json={"teams": teams})
    assert r.status_code == 200
    # everyone at R_0 1000, two against one: F1u, the sums at two players (2000 against
    # 2000) and ln(2/1) for the larger side: 1/(1 + 1/2) = 2/3
    assert r.json()["p_a"] == pytest.approx(2 / 3)
    bad = [
        ({"teams": teams, "score": [10, 4]}, ["body", "score"]),
        ({"teams": {"A": [steam(1)], "B": [steam(1)]}}, ["body", "teams", "B", 0]),
        ({"teams": teams, "positions": {steam(9): "offense"}}, ["body", "positions", steam(9)]),
        (
            {"teams": teams, "commanders": {"A": steam(3), "B": steam(3)}},
            ["body", "commanders", "A"],
        ),
    ]
    for body, loc in bad:
        r = server.post(f"/v1/pools/{pool}/predict", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["detail"][0]["loc"] == loc, (body, r.text)
    assert admin.get(f"/v1/pools/{pool}/quality").json()["players"] == 0  # nothing stored


def test_the_replay_accepts_every_listed_model() -> None:
    fields = round_fields([("a", "b"), ("c", "d")])
    matches = [Match(str(i), ("a", "b"), ("c", "d"), "AB"[i % 2], details=fields) for i in range(4)]
    for name in MODELS:
        assert len(replay(create_replay(name, {}, HistoryInfo(2)), matches).predictions) == 4


def test_an_admin_set_the_model_could_not_rate_from_is_refused(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """TrueSkill's package overflows when one skill lies too far from the other: a set that
    far would make every later round of the player fail, so it is refused."""
    pool = new_pool(admin, "trueskill")
    target = steam(5)
    assert admin.put(f"/v1/pools/{pool}/players/{target}", json={"rating": 900}).status_code == 200
    for rating in (40_000, 1_000_001):
        r = admin.put(f"/v1/pools/{pool}/players/{target}", json={"rating": rating})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "rating"]
    assert server.get(f"/v1/pools/{pool}/players/{target}").json()["rating"] == 900
    body = {
        "round_id": "x",
        "server_id": "s",
        "winner": "B",
        "teams": {"A": [target], "B": [steam(6)]},
    }
    assert server.post(f"/v1/pools/{pool}/rounds", json=body).status_code == 201
    elo = new_pool(admin, "elo")
    assert (
        admin.put(f"/v1/pools/{elo}/players/{target}", json={"rating": 1_000_000}).status_code
        == 200
    )
