"""The model interface (`synelo.models`): parameters checked against their bounds, states
that survive their JSON form bit for bit, SynElo through it equal to the service's code,
and the contract every model keeps (P in (0, 1), P(A) + P(B) = 1, new players)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import orjson
import pytest

from synelo.evaluation.history import Match
from synelo.models import MODELS, Param, ParameterError, create_model
from synelo.ratings import SynEloParams
from tests.model_rounds import round_facts
from tests.service_reference import rate_like_the_service


def random_matches(count: int, seed: int = 1) -> list[Match]:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(9)]
    out = []
    for i in range(count):
        size = rng.randint(1, 4)
        picked = rng.sample(players, 2 * size)
        out.append(Match(str(i), tuple(picked[:size]), tuple(picked[size:]), rng.choice("AB")))
    return out


def test_parameters_are_checked_and_named() -> None:
    assert create_model("elo", {"k": 16}).params == {"theta": 400.0, "k": 16, "r0": 1000.0}
    for name, params, wrong in [
        ("elo", {"k": -1.0}, "k"),
        ("elo", {"theta": 0.0}, "theta"),  # bounded away from 0: Θ divides
        ("elo", {"theta": float("nan")}, "theta"),
        ("elo", {"k": True}, "k"),
        ("trueskill", {"draw_probability": 1.0}, "draw_probability"),
        ("openskill-bt", {"sigma": "8"}, "sigma"),
        ("synelo", {"window": 2.5}, "window"),
        ("synelo", {"convergence": "fast"}, "convergence"),
        ("synelo", {"k_max": 0}, "k_max"),  # above 0, not at it
        ("trueskill", {"k": 1}, "k"),
    ]:
        with pytest.raises(ParameterError) as caught:
            create_model(name, params)
        assert caught.value.name == wrong
    assert Param(1.0, 0.0, 2.0).check("x", 2) == 2
    with pytest.raises(ParameterError, match="at least"):
        Param(1.0, 0.0, 2.0).check("x", -0.5)


@pytest.mark.parametrize("name", list(MODELS))
def test_every_state_survives_its_json_form_exactly(name: str) -> None:
    model = create_model(name)
    states: dict[str, Any] = {}
    matches = random_matches(300)
    for m in matches:
        states.update(model.rate(states, round_facts(m.team_a, m.team_b, m.winner)).states)
    decoded = {
        p: model.decode(orjson.loads(orjson.dumps(model.encode(s)))) for p, s in states.items()
    }
    probe = round_facts(("p0", "p1"), ("p2", "p3"), "A")
    assert model.predict(decoded, probe) == model.predict(states, probe)
    after = model.rate(decoded, probe).states
    before = model.rate(states, probe).states
    assert {p: model.encode(s) for p, s in after.items()} == {
        p: model.encode(s) for p, s in before.items()
    }
    assert model.encode(model.decode({})) == model.encode(model.new_state())


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_keeps_the_contract(name: str) -> None:
    model = create_model(name)
    states: dict[str, Any] = {}
    for m in random_matches(100, seed=2):
        facts = round_facts(m.team_a, m.team_b, m.winner)
        mirrored = round_facts(m.team_b, m.team_a, "B" if m.winner == "A" else "A")
        p = model.predict(states, facts)
        assert 0.0 < p < 1.0
        # (abs 1e-7: the trueskill package's Φ is an approximation good to ~2e-8)
        assert model.predict(states, mirrored) == pytest.approx(1.0 - p, abs=1e-7)
        rated = model.rate(states, facts)
        assert rated.p_a == p and set(rated.states) == {*m.team_a, *m.team_b}
        states.update(rated.states)
    # x wins and tops the scoreboard, y loses at its foot (sectors-edge rates the places);
    # A outscores B (epa learns from the alliances' scores alone)
    won = round_facts(("x", "m"), ("y", "n"), "A", scores={"x": 9, "m": 5, "n": 3, "y": 1})
    won = replace(won, extras={**won.extras, "scores": {"A": 14, "B": 4}})
    winners = model.rate({}, won).states
    if model.replay_only:  # epa starts a team on the pool's learned scale: no rating before
        assert model.rating(winners["x"]) > model.rating(winners["y"])
        return
    assert model.rating(winners["x"]) > model.rating(model.new_state()) > model.rating(winners["y"])


def test_only_participants_move_and_the_rosters_decide_p() -> None:
    for name in MODELS:
        model = create_model(name)
        new = model.rating(model.new_state())
        strong = model.with_rating(model.new_state(), new + 40)
        facts = round_facts(("s", "a"), ("b", "c"), "B", ("a",), ("b", "c", "j"))
        rated = model.rate({"s": strong}, facts)
        assert set(rated.states) == {"a", "b", "c", "j"}, name  # s left before the end
        assert rated.p_a == model.predict({"s": strong}, round_facts(("s", "a"), ("b", "c"), "B"))


def test_synelo_through_the_interface_is_the_service_code() -> None:
    matches = random_matches(400, seed=3)
    params = SynEloParams(theta=400.0, convergence="revised", k_min=12.0)
    expected_p, records, _ = rate_like_the_service(matches, params)
    model = create_model("synelo", {**params.to_dict()})
    states: dict[str, Any] = {}
    got = []
    for m in matches:
        rated = model.rate(states, round_facts(m.team_a, m.team_b, m.winner))
        got.append(rated.p_a)
        states.update(rated.states)
    assert got == expected_p
    assert {p: s.rating for p, s in states.items()} == {p: r.rating for p, r in records.items()}
    one = next(iter(states))
    assert model.fields(states[one])["convergence"] == records[one].current_convergence(params)
