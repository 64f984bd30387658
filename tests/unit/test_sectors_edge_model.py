"""The sectors-edge model (seed 002, E1–E5): place values, pubPower per mode, team power as
Σ sortedPower, the online logistic scale, and the community proposal's power."""

from __future__ import annotations

import math
import random

import pytest
from scipy.optimize import minimize_scalar

from synelo.balance.sectors_edge import SEPlayer, sorted_power
from synelo.models import ParameterError, RoundError, RoundFacts, create_model
from synelo.models.sectors_edge import ScoreboardRecord, SectorsEdge
from synelo.ratings.sectors_edge import (
    community_value,
    place_fractions,
    pub_power,
    scale_step,
    sigmoid,
    sorted_powers,
    win_probability,
)


def test_e1_places_from_points() -> None:
    points = {f"p{i}": float(100 - i) for i in range(24)}
    places = place_fractions(points)
    assert places["p0"] == 1.0  # first of 24: CTF's 24 once scaled
    assert 24 * places["p0"] == 24.0
    assert places["p23"] == pytest.approx(1 / 24)
    assert 24 * places["p5"] == pytest.approx(24 * (24 - 6 + 1) / 24)
    # ties share the mean of their places: 2nd and 3rd are both 2.5th
    tied = place_fractions({"a": 9, "b": 5, "c": 5, "d": 0})
    assert tied == {"a": 1.0, "b": pytest.approx((4 - 2.5 + 1) / 4), "c": tied["b"], "d": 0.25}
    assert place_fractions({"solo": 3}) == {"solo": 1.0}
    assert place_fractions({"x": 0, "y": 0}) == {"x": 0.75, "y": 0.75}


def test_e2_pub_power_over_the_last_matches_of_the_mode() -> None:
    model = SectorsEdge({"matches": 3, "community_matches": 3})
    state = model.new_state()
    assert model.values({}, ["new"], "CTF") == [12.0]  # a new player: the middle of 24
    assert model.values({}, ["new"], "SAL") == [8.0]
    assert model.values({}, ["new"], "koth") == [12.0]  # any other mode: other_max 24
    places = [1.0, 0.5, 0.25, 0.75]
    for i, place in enumerate(places):
        facts = RoundFacts(
            ("me", "x"),
            ("y", "z"),
            "A",
            extras={"mode": "CTF", "player_scores": _points_for("me", place)},
        )
        state = model.rate({"me": state}, facts).states["me"]
        kept = places[max(0, i - 2) : i + 1]  # the last 3
        assert state.recent["CTF"] == pytest.approx(tuple(kept))
        assert model.values({"me": state}, ["me"], "CTF") == [
            pytest.approx(24 * sum(kept) / len(kept))
        ]
    assert model.fields(state)["CTF.pub_power"] == pytest.approx(24 * (0.5 + 0.25 + 0.75) / 3)
    assert model.fields(state)["CTF.matches"] == 3
    assert pub_power([], 16, 0.5) == 8.0


def _points_for(player: str, place: float) -> dict[str, int]:
    """Points that put `player` at the place value `place` among 4 (1, ¾, ½, ¼)."""
    rank = round((1 - place) * 4)  # 0 for first
    others = [p for p in ("me", "x", "y", "z") if p != player]
    order = [*others[:rank], player, *others[rank:]]
    return {p: 40 - 10 * i for i, p in enumerate(order)}


def test_e3_team_power_is_the_sum_of_sorted_power() -> None:
    model = SectorsEdge()
    states = {
        p: ScoreboardRecord(0.5, {"CTF": (v,)})
        for p, v in {"a1": 0.9, "a2": 0.2, "b1": 0.6, "b2": 0.4, "b3": 0.1}.items()
    }
    facts = RoundFacts(("a1", "a2", "new"), ("b1", "b2", "b3"), "A", extras={"mode": "CTF"})
    ranks = sorted_power(
        SEPlayer(p, "A", 24 * (states[p].recent["CTF"][0] if p in states else 0.5))
        for p in ("a1", "a2", "new", "b1", "b2", "b3")
    )
    assert ranks == {"b3": 5, "a2": 6, "b2": 7, "new": 8, "b1": 9, "a1": 10}
    power_a, power_b = model.team_powers(states, facts)
    assert (power_a, power_b) == (10 + 6 + 8, 9 + 7 + 5)
    assert model.predict(states, facts) == pytest.approx(sigmoid(0.05 * (24 - 21)))
    # the split solver's strengths rank the players given together, by display rating
    assert model.strengths([states["a1"], states["b3"], states["b1"]]) == [7.0, 5.0, 6.0]


def test_predictions_use_only_what_is_known_before_the_round() -> None:
    model = SectorsEdge()
    states = {
        "a": ScoreboardRecord(0.5, {"CTF": (0.9,)}),
        "b": ScoreboardRecord(0.5, {"CTF": (0.3,)}),
    }
    one = RoundFacts(
        ("a",), ("b",), "B", extras={"mode": "CTF", "player_scores": {"a": 0, "b": 50}}
    )
    two = RoundFacts(
        ("a",), ("b",), "B", extras={"mode": "CTF", "player_scores": {"a": 50, "b": 0}}
    )
    assert model.rate(states, one).p_a == model.rate(states, two).p_a == model.predict(states, one)


def test_e5_the_online_scale_reaches_the_batch_fit() -> None:
    """Rounds drawn with β = 0.15 over power gaps of a few units: after 4,000 of them the
    online Newton steps sit within 0.005 of the maximum of the same posterior (a Gaussian
    prior on β times the logistic likelihood), found by a batch optimiser."""
    rng = random.Random(7)
    prior, precision = 0.05, 100.0
    gaps, wins = [], []
    for _ in range(4000):
        gap = rng.uniform(-12, 12)
        gaps.append(gap)
        wins.append(1.0 if rng.random() < sigmoid(0.15 * gap) else 0.0)
    beta, information = prior, precision
    for gap, won in zip(gaps, wins, strict=True):
        beta, information = scale_step(beta, information, gap, won)

    def negative_log_posterior(b: float) -> float:
        out = 0.5 * precision * (b - prior) ** 2
        for gap, won in zip(gaps, wins, strict=True):
            p = sigmoid(b * gap)
            out -= math.log(p if won else 1 - p)
        return out

    batch = minimize_scalar(negative_log_posterior, bounds=(0.0, 1.0), method="bounded").x
    assert beta == pytest.approx(batch, abs=0.005)
    assert beta == pytest.approx(0.15, abs=0.02)
    assert win_probability(30, 20, 0.1) == pytest.approx(sigmoid(1.0))


def test_the_pool_context_carries_the_scale_per_mode() -> None:
    model = SectorsEdge()
    states: dict[str, ScoreboardRecord] = {}
    context: dict[str, object] = {}
    facts = RoundFacts(
        ("a", "b"),
        ("c", "d"),
        "A",
        extras={"mode": "SAL", "player_scores": {"a": 9, "b": 1, "c": 5, "d": 3}},
    )
    assert model.context_keys(facts) == ("scale:SAL", "scale")
    rated = model.rate(states, facts, context)  # type: ignore[arg-type]
    power_a, power_b = model.team_powers(states, facts)
    beta, information = scale_step(0.05, 100.0, power_a - power_b, 1.0)
    fit = {"beta": beta, "information": information}
    assert rated.context == {"scale:SAL": fit, "scale": fit}
    assert model.predict(states, facts, rated.context) == win_probability(power_a, power_b, beta)
    # a mode not rated yet, or none, reads the pool's scale over every mode
    assert (
        model.scale(rated.context, "CTF") == model.scale(rated.context, "") == (beta, information)
    )
    assert model.context_keys(RoundFacts(("a",), ("b",), "A")) == ("scale",)
    # a mode called "*" is a mode like any other
    assert model.context_keys(RoundFacts(("a",), ("b",), "A", extras={"mode": "*"}))[0] == "scale:*"


def test_a_prediction_without_a_mode_reads_every_mode() -> None:
    """A split or a prediction names no mode: the players' places of every mode count, so
    a team that always tops the CTF board is the favourite there too (a regression: it was
    read as a mode of its own, where everyone was new and ranked by id)."""
    model = SectorsEdge()
    states: dict[str, ScoreboardRecord] = {}
    context: dict[str, object] = {}
    points = {"a": 30, "b": 29, "c": 28, "x": 1, "y": 2, "z": 3}
    for _ in range(10):
        facts = RoundFacts(
            ("a", "b", "c"), ("x", "y", "z"), "A", extras={"mode": "CTF", "player_scores": points}
        )
        rated = model.rate(states, facts, context)  # type: ignore[arg-type]
        states.update(rated.states)
        context.update(rated.context)
    bare = RoundFacts(("a", "b", "c"), ("x", "y", "z"), "A")
    assert model.team_powers(states, bare) == (8 + 9 + 10, 5 + 6 + 7)
    assert model.predict(states, bare, context) > 0.75  # type: ignore[arg-type]
    # ranks among the players given: x (last), a (first), two new players in the middle,
    # sharing the mean of ranks 6 and 7
    new = model.new_state()
    assert model.strengths([states["x"], states["a"], new, new]) == [5.0, 8.0, 6.5, 6.5]


def test_players_nothing_tells_apart_weigh_the_same() -> None:
    """Six new players: every sortedPower is 7.5, so P(A) is ½ whoever is on which side (it
    was 0.611 or 0.389 by the order of their ids), and the strengths agree with P."""
    model = SectorsEdge()
    for team_a, team_b in ((("4", "5", "6"), ("1", "2", "3")), (("1", "2", "3"), ("4", "5", "6"))):
        facts = RoundFacts(team_a, team_b, "A", extras={"mode": "CTF"})
        assert model.team_powers({}, facts) == (22.5, 22.5)
        assert model.predict({}, facts) == 0.5
    assert sorted_powers([3.0, 1.0, 3.0, 2.0, 3.0]) == [8.0, 5.0, 8.0, 6.0, 8.0]


def test_places_count_everyone_on_the_scoreboard() -> None:
    """A leaver (on a roster, not rated) who scored most still takes first place: the rated
    players are 2nd to 4th of 4, as the seed ranks "out of all players in the match"."""
    model = SectorsEdge()
    facts = RoundFacts(
        ("a", "b"),
        ("c", "d"),
        "A",
        participants_a=("b",),
        participants_b=("c", "d"),
        extras={"mode": "CTF", "player_scores": {"a": 50, "b": 40, "c": 30, "d": 20}},
    )
    rated = model.rate({}, facts).states
    assert set(rated) == {"b", "c", "d"}
    assert [rated[p].recent["CTF"] for p in ("b", "c", "d")] == [(0.75,), (0.5,), (0.25,)]


def test_modes_match_whatever_their_case() -> None:
    model = SectorsEdge()
    assert model.maximum("sal") == model.maximum("SAL") == 16.0
    assert model.maximum("koth") == 24.0
    with pytest.raises(ParameterError) as bad:
        create_model("sectors-edge", {"matches": 10, "community_matches": 20})
    assert bad.value.name == "community_matches"


def test_the_community_power() -> None:
    model = SectorsEdge({"power": "community", "community_matches": 4})
    recent = (1.0, 1.0, 0.2, 0.2, 0.2)  # the last 4: 1, .2, .2, .2 → mean .4, median .2
    state = ScoreboardRecord(0.5, {"CTF": recent})
    assert model.values({"p": state}, ["p"], "CTF") == [pytest.approx(24 * 0.2)]
    assert community_value([0.2, 0.9, 0.9], 10, 0.5) == pytest.approx(10 * (2.0 / 3))
    assert community_value([], 10, 0.5) == 5.0
    facts = RoundFacts(("p",), ("new",), "A", extras={"mode": "CTF"})
    assert model.team_powers({"p": state}, facts) == (pytest.approx(4.8), 12.0)


def test_rounds_need_player_scores_and_admin_sets_are_percentiles() -> None:
    model = SectorsEdge()
    with pytest.raises(RoundError) as caught:
        model.rate({}, RoundFacts(("a",), ("b",), "A"))
    assert caught.value.field == ("player_scores",)
    partial = RoundFacts(("a",), ("b",), "A", extras={"player_scores": {"a": 3}})
    with pytest.raises(RoundError, match="player b has no score"):
        model.check_round(partial)
    model.check_round(RoundFacts(("a",), ("b",), "A"), rated=False)
    state = ScoreboardRecord(0.5, {"CTF": (0.9, 0.8), "SAL": (0.1,)})
    assert model.rating(state) == pytest.approx(100 * 1.8 / 3)
    moved = model.with_rating(state, 80)
    assert model.rating(moved) == pytest.approx(80) and moved.recent["SAL"] == (0.8,) * 50
    assert model.rating(model.with_rating(model.new_state(), 30)) == pytest.approx(30)
    with pytest.raises(ValueError):
        model.with_rating(state, 101)
    with pytest.raises(ParameterError) as bad:
        create_model("sectors-edge", {"mode_max": "CTF=24"})
    assert bad.value.name == "mode_max"
    assert SectorsEdge({"mode_max": "CTF:30"}).values({}, ["n"], "CTF") == [15.0]
