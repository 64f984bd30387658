"""`epa`, the reimplementation of Statbotics' EPA (S1–S7 of docs/maths/models.md): its
prediction and update worked by hand on a 2v2, the falling learning rate and rising margin
weight, the carry-over into a new season, rounds without scores, the scale learned from the
scores seen so far, and its states' JSON form."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import Match
from synelo.evaluation.replay import replay
from synelo.models import MODELS, RoundFacts, create_model, pool_models
from synelo.models.epa import Epa, EpaTeam
from synelo.ratings.epa import SETTLED, ScoreStats, learning_rate, margin_weight

# a settled season: 20 alliance scores of mean 60 (a team's share 30 in 2v2) and sd 20
SEASON = {"season": {"n": 20, "share": 30.0, "mean": 60.0, "m2": 400.0 * 19}}


def two_v_two(
    scores: dict[str, float] | None = None, winner: str = "A", kind: str | None = None
) -> RoundFacts:
    extras: dict[str, Any] = {} if scores is None else {"scores": scores}
    if kind is not None:
        extras["type"] = kind
    return RoundFacts(("a1", "a2"), ("b1", "b2"), winner, extras=extras)  # type: ignore[arg-type]


def teams() -> dict[str, EpaTeam]:
    """a1 and a2 on 40 and 30 points (0 and 8 rounds played), b1 on 25 (20 rounds played);
    b2 is new."""
    return {"a1": EpaTeam(40.0, 0), "a2": EpaTeam(30.0, 8), "b1": EpaTeam(25.0, 20)}


def test_a_2v2_is_predicted_and_rated_as_worked_by_hand() -> None:
    model = Epa()
    # b2 is new: it starts at the share less 0.2 sd, 30 − 0.2·20 = 26; A's sum 70, B's 51
    p = 1 / (1 + 10 ** (-0.625 * (70 - 51) / 20))
    assert p == pytest.approx(0.796921, abs=1e-6)
    assert model.predict(teams(), two_v_two(), SEASON) == pytest.approx(p, abs=1e-12)

    rated = model.rate(teams(), two_v_two({"A": 80, "B": 45}), SEASON)
    assert rated.p_a == pytest.approx(p, abs=1e-12)
    new = rated.states
    # A scored 10 over its 70, B 6 under its 51; each team's share of the error is 1/2
    # a1, N 0: K 0.5, M 0 → 40 + 0.5·10/2
    assert (new["a1"].epa, new["a1"].matches) == (pytest.approx(42.5), 1)
    # a2, N 8: K = 0.5 − 2/30, M 0 → 30 + K·10/2
    assert new["a2"].epa == pytest.approx(30 + (0.5 - 2 / 30) * 5) and new["a2"].matches == 9
    # b1, N 20: K 0.3, M = 8/24 = 1/3 → error (−6 − 10/3)/(4/3) = −7 → 25 − 0.3·7/2
    assert new["b1"].epa == pytest.approx(23.95) and new["b1"].matches == 21
    # b2, new: 26 − 0.5·6/2, and it now has points of its own
    assert new["b2"] == EpaTeam(pytest.approx(24.5), 1, None, None)  # type: ignore[arg-type]
    # the season's scale learns both scores: 22 of them, sum 1325, sum of squares 88025
    learned = ScoreStats.from_json(rated.context["season"])
    assert learned.n == 22
    assert learned.mean == pytest.approx(1325 / 22)
    assert learned.share == pytest.approx((20 * 30 + 40 + 22.5) / 22)
    assert learned.m2 == pytest.approx(88025 - 1325**2 / 22)


def test_a_playoff_round_weighs_a_third_and_counts_no_match() -> None:
    rated = Epa().rate(teams(), two_v_two({"A": 80, "B": 45}, kind="playoff"), SEASON)
    assert rated.states["a1"].epa == pytest.approx(40 + 2.5 / 3)
    assert rated.states["a1"].matches == 0 and rated.states["b1"].matches == 20
    half = Epa({"playoff_weight": 0.5}).rate(teams(), two_v_two({"A": 80, "B": 45}, kind="playoff"))
    assert half.p_a == 0.5  # no scale in the context: nothing known of the scores yet


def test_the_learning_rate_falls_and_the_margin_weight_rises_with_the_rounds_played() -> None:
    assert [learning_rate(n) for n in (0, 6, 9, 12, 40)] == pytest.approx([0.5, 0.5, 0.4, 0.3, 0.3])
    assert [margin_weight(n) for n in (0, 12, 24, 36, 90)] == pytest.approx([0, 0, 0.5, 1, 1])
    # one team beats its prediction by 10 each round: each step shrinks with N
    model = Epa()
    states: dict[str, EpaTeam] = {"a1": EpaTeam(30.0), "a2": EpaTeam(30.0)}
    states |= {"b1": EpaTeam(30.0), "b2": EpaTeam(30.0)}
    steps = []
    for _ in range(14):
        before = states["a1"].epa
        a = sum(states[p].epa for p in ("a1", "a2"))
        b = sum(states[p].epa for p in ("b1", "b2"))
        states |= model.rate(states, two_v_two({"A": a + 10, "B": b}), SEASON).states
        steps.append(states["a1"].epa - before)
    assert steps[:7] == pytest.approx([2.5] * 7)  # K 0.5 up to N = 6
    assert steps[9] == pytest.approx(0.4 * 5)  # N = 9
    # K 0.3 from N = 12; at N = 13 the margin weight is 1/24 and B met its prediction:
    # (10 − 0)/(1 + 1/24) = 9.6 of error, 0.3·9.6/2
    assert steps[12:] == pytest.approx([1.5, 1.44])
    assert states["a1"].matches == 14


def test_a_round_without_scores_moves_nobody_and_learns_no_scale() -> None:
    model = Epa()
    before = teams()
    rated = model.rate(before, two_v_two(winner="B"), SEASON)
    assert rated.p_a == model.predict(before, two_v_two(), SEASON)
    assert rated.context == {}
    assert {p: model.encode(s) for p, s in rated.states.items()} == {
        **{p: model.encode(s) for p, s in teams().items()},
        "b2": model.encode(model.new_state()),
    }
    malformed = two_v_two({"A": 80, "B": "lots"})  # not a score: as if absent
    assert model.rate(before, malformed, SEASON).context == {}


def test_the_scale_is_learned_from_the_scores_seen_so_far() -> None:
    model = Epa()
    states: dict[str, EpaTeam] = {}
    # the pool's first round: nothing known, P ½; its own two scores give the scale
    first = model.rate(states, two_v_two({"A": 70, "B": 50}), {})
    assert first.p_a == 0.5
    stats = ScoreStats.from_json(first.context["season"])
    assert (stats.n, stats.share, stats.sd) == (2, 30.0, pytest.approx(math.sqrt(200)))
    # every team started at 30 − 0.2·√200 and moved half its alliance's error over two
    start = 30 - 0.2 * math.sqrt(200)
    assert first.states["a1"].epa == pytest.approx(start + 0.5 * (70 - 2 * start) / 2)
    assert first.states["b2"].epa == pytest.approx(start + 0.5 * (50 - 2 * start) / 2)
    # a settled season predicts on its own scale, not on the last season's
    context = {**SEASON, "previous": {"n": 40, "share": 5.0, "mean": 10.0, "m2": 39.0}}
    assert model.predict(teams(), two_v_two(), context) == pytest.approx(0.796921, abs=1e-6)
    # an unsettled one (fewer than SETTLED scores) on the last season's: sd 1, share 5
    young = {"season": {"n": SETTLED - 1, "share": 30.0, "mean": 60.0, "m2": 400.0 * 18}}
    p = 1 / (1 + 10 ** (-0.625 * (70 - (25 + 5 - 0.2))))
    on_previous = model.predict(teams(), two_v_two(), {**young, "previous": context["previous"]})
    assert on_previous == pytest.approx(p)
    # …and on its own when there was no season before
    assert model.predict(teams(), two_v_two(), young) == pytest.approx(
        1 / (1 + 10 ** (-0.625 * (70 - 51) / 20))
    )


def test_a_season_carries_each_team_back_toward_a_new_teams_start() -> None:
    model = Epa()
    assert model.season_fraction() == 0.4  # EPA's mean reversion by default
    states = {
        # played this season on 50 points, one sd above the share; stood 0.5 the season before
        "t1": EpaTeam(50.0, 30, None, 0.5),
        # did not play this season (still carrying 0.1); stood 0.6 the season before
        "t2": EpaTeam(32.0, 0, 0.1, 0.6),
        # played this season only: the season before counts as a new team's standing
        "t3": EpaTeam(20.0, 12),
    }
    out = model.season(states, 0.4, SEASON)
    t1, t2, t3 = out.states["t1"], out.states["t2"], out.states["t3"]
    # t1: 0.7·1 + 0.3·0.5 = 0.85, then 0.4 of the way to −0.2: 0.43
    assert t1.carry == pytest.approx(0.43) and t1.last == pytest.approx(1.0)
    assert t1.epa == pytest.approx(30 + 20 * 0.43) and t1.matches == 0  # shown until it plays
    # t2: 0.7·(−0.2) + 0.3·0.6 = 0.04, then 0.04 + 0.4·(−0.24) = −0.056; it has no season now
    assert t2.carry == pytest.approx(-0.056) and t2.last is None
    # t3: 0.7·(−0.5) + 0.3·(−0.2) = −0.41, then −0.41 + 0.4·0.21 = −0.326
    assert t3.carry == pytest.approx(-0.326) and t3.last == pytest.approx(-0.5)
    # the season's scores become the last season's; the new season starts from none
    assert out.context == {"season": ScoreStats().to_json(), "previous": SEASON["season"]}
    # in the new season, a team starts from its carried standing on the new scale (share
    # 10, sd 5) at its first round, then counts N from 0
    new_season = {**out.context, "season": {"n": 30, "share": 10.0, "mean": 30.0, "m2": 725.0}}
    rated = model.rate(
        out.states,
        RoundFacts(("t1",), ("t3",), "A", extras={"scores": {"A": 15, "B": 9}}),
        new_season,
    )
    start_1, start_3 = 10 + 5 * 0.43, 10 + 5 * -0.326
    assert rated.p_a == pytest.approx(1 / (1 + 10 ** (-0.625 * (start_1 - start_3) / 5)))
    assert rated.states["t1"].epa == pytest.approx(start_1 + 0.5 * (15 - start_1))
    assert rated.states["t1"].matches == 1 and rated.states["t1"].carry is None
    assert rated.states["t1"].last == pytest.approx(1.0)  # kept for the next season's blend
    # no reversion: the standing carries whole (blended with the season before)
    assert model.season(states, 0.0, SEASON).states["t1"].carry == pytest.approx(0.85)
    # a season with a single score has no scale: the teams keep what they show
    lone = {"season": {"n": 1, "share": 30.0, "mean": 60.0, "m2": 0.0}}
    assert model.season(states, 0.4, lone).states["t1"].epa == 50.0


def test_every_state_survives_its_json_form() -> None:
    model = Epa()
    states = {
        "fresh": model.new_state(),
        "playing": EpaTeam(41.25, 13, None, 0.3),
        "carrying": EpaTeam(12.5, 0, -0.056, None),
        "set": model.with_rating(model.new_state(), 77.0),
    }
    for state in states.values():
        again = model.decode(orjson.loads(orjson.dumps(model.encode(state))))
        assert again == state
    assert model.decode({}) == model.new_state() == EpaTeam(0.0, 0, -0.2, None)
    assert model.rating(states["set"]) == 77.0 and states["set"].carry is None
    assert model.fields(states["playing"]) == {"rating": 41.25, "rounds": 13.0}


def test_epa_is_a_replay_only_peer() -> None:
    assert "epa" in MODELS and "epa" not in pool_models()
    assert MODELS["epa"].replay_only and not any(MODELS[n].replay_only for n in pool_models())
    assert create_model("epa", {"season": 0.25}).season_fraction() == 0.25
    # `synelo replay` runs it: a playoff's type reaches the model
    matches = [
        Match(str(i), ("a", "b"), ("c", "d"), "A", scores=(50.0 + i, 40.0), type=kind)
        for i, kind in enumerate(["qualification"] * 3 + ["playoff"])
    ]
    replayed = create_replay("epa", {}, HistoryInfo(2))
    result = replay(replayed, matches)
    assert len(result.predictions) == 4 and result.predictions[0] == 0.5
    assert result.predictions[2] > 0.5  # A outscored B twice
    assert replayed.rating_of("a").matches == 3  # the playoff counted no match
