"""Seasons (docs/maths/seasons.md): each model's S1–S7 on a two-player pool at fraction ½,
worked by hand; the default share; the history's event line; the replay and the recompute
that apply it; and WHR's refit, which keeps a season's effect."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import (
    AdminEvent,
    HistoryFormatError,
    Match,
    parse_event,
    read_history,
    write_history,
)
from synelo.evaluation.replay import replay
from synelo.models import Param, RoundFacts, create_model
from synelo.models.base import DEFAULT_SEASON_FRACTION, check_fraction, new_season
from synelo.models.elo import Elo
from synelo.models.positional import PositionalSkill
from synelo.models.recompute import AdminIn, Recompute, RoundEvent
from synelo.models.sectors_edge import ScoreboardRecord
from synelo.ratings import PlayerRecord, new_window
from synelo.ratings.hive import HiveSkill
from synelo.ratings.whr import Anchor, PlayerDays

HALF = 0.5
AT = datetime(2026, 5, 1, tzinfo=UTC)


def test_elo_pulls_each_rating_half_way_to_the_mean_and_leaves_a_new_player() -> None:
    """S1: 1100 and 900 around a mean of 1000 become 1050 and 950; a player still at a new
    player's r0 (1000) is left as is and out of the mean."""
    season = new_season(Elo(), {"a": 1100.0, "b": 900.0, "c": 1000.0}, HALF)
    assert season.fraction == HALF
    assert season.states == {"a": 1050.0, "b": 950.0}


def test_synelo_rounds_the_pulled_rating_and_restarts_the_window() -> None:
    """S2: 1201 and 1000 (mean 1100.5) become round(1150.75) = 1151 and round(1050.25) =
    1050; the rounds played stay, the window is empty again, so C = 1 as after a set."""
    model = create_model("synelo")
    window = new_window(model.synelo)
    for _ in range(30):
        window.append(1200, 0.6, 1.0)
    records = {
        "a": PlayerRecord(1201, 30, window),
        "b": PlayerRecord(1000, 5, new_window(model.synelo)),
    }
    season = new_season(model, records, HALF)
    a, b = season.states["a"], season.states["b"]
    assert (a.rating, a.rounds_played, len(a.window)) == (1151, 30, 0)
    assert (b.rating, b.rounds_played) == (1050, 5)
    assert model.fields(a) == model.fields(model.with_rating(records["a"], 1151))  # a set's
    assert model.fields(records["a"])["convergence"] < 1.0 == model.fields(a)["convergence"]


@pytest.mark.parametrize("name", ["trueskill", "openskill-pl", "openskill-bt", "openskill-tm"])
def test_a_gaussian_skill_pulls_mu_and_grows_sigma_back_toward_a_new_players(name: str) -> None:
    """S3 with σ₀ = 500: μ 1700 and 1300 (mean 1500) become 1600 and 1400; σ² = 300² grows
    to 90,000 + ½(250,000 − 90,000) = 170,000, and 400² to 205,000."""
    model: Any = create_model(name)
    make = model.env.create_rating if name == "trueskill" else model.model.rating
    states = {"a": make(mu=1700.0, sigma=300.0), "b": make(mu=1300.0, sigma=400.0)}
    moved = new_season(model, states, HALF).states
    assert (moved["a"].mu, moved["b"].mu) == (1600.0, 1400.0)
    assert moved["a"].sigma == pytest.approx(math.sqrt(170_000.0), rel=1e-15)
    assert moved["b"].sigma == pytest.approx(math.sqrt(205_000.0), rel=1e-15)
    assert model.rating(moved["a"]) == pytest.approx(1600.0 - 3 * math.sqrt(170_000.0))


def test_whr_pulls_the_last_day_and_adds_variance_as_a_gap_would() -> None:
    """S4: anchors at +1 (variance ½) and −1 (variance 1) around a mean of 0 become
    priors at +½ with ½ + ½(2 − ½) = 1.25 and at −½ with 1 + ½(2 − 1) = 1.5; a variance
    above a newcomer's 2 (3) grows no further and shrinks not at all."""
    model = create_model("whr")
    states = {
        "a": PlayerDays(anchor=Anchor(1.0, 0.5), variance=0.5),
        "b": PlayerDays(anchor=Anchor(-1.0, 1.0), variance=1.0),
        "c": PlayerDays(anchor=Anchor(0.0, 3.0), variance=3.0),
    }
    moved = new_season(model, states, HALF).states
    assert moved["a"].anchor == Anchor(0.5, 1.25) and moved["a"].variance == 1.25
    assert moved["b"].anchor == Anchor(-0.5, 1.5) and moved["b"].variance == 1.5
    assert moved["c"].anchor == Anchor(0.0, 3.0)
    assert model.rating(moved["a"]) == pytest.approx(1500 + 400 / math.log(10) * 0.5)


def test_whr_ends_the_days_and_carries_the_weight_played() -> None:
    """After one 1v1 game each has played weight 1: the season folds the day away, keeps W
    = 1 for W4's drift, and the next game opens the first day of the new season."""
    model = create_model("whr")
    rated = model.rate({}, RoundFacts(("a",), ("b",), "A", extras={"day": 3}))
    ra, rb = rated.states["a"].rating, rated.states["b"].rating
    moved = new_season(model, rated.states, HALF).states
    for player, r in (("a", ra), ("b", rb)):
        state, before = moved[player], rated.states[player]
        assert state.days == [] and state.weight_before == 1.0
        assert state.anchor == Anchor(r + HALF * ((ra + rb) / 2 - r), state.variance)
        assert state.variance == before.variance + HALF * (2.0 - before.variance)
    again = model.rate(moved, RoundFacts(("a",), ("b",), "B", extras={"day": 9}))
    assert again.states["a"].days == [9] and again.states["a"].weight_before == 1.0


def test_hive_pulls_its_skills_and_shrinks_its_adagrad_sums() -> None:
    """S5: s 2 and 1 (mean 1.5) become 1.75 and 1.25; χ 1 and 0 of two commanders (mean
    ½) become 0.75 and 0.25; g 4 and 2 halve; o, rounds and commands stay."""
    model = create_model("hive")
    states = {
        "a": HiveSkill(2.0, 4.0, 0.1, 1.0, 2.0, 3, 1),
        "b": HiveSkill(1.0, 2.0, -0.1, 0.0, 6.0, 2, 1),
    }
    moved = new_season(model, states, HALF).states
    assert moved["a"] == HiveSkill(1.75, 2.0, 0.1, 0.75, 1.0, 3, 1)
    assert moved["b"] == HiveSkill(1.25, 1.0, -0.1, 0.25, 3.0, 2, 1)


def test_positional_pulls_every_position_and_so_the_display_rating() -> None:
    """S6: displays 1650 ((1700·3 + 1500)/4) and 1550, mean 1600: offense 1700 → 1650,
    defense 1500 → 1550, so the display is 1625, half-way; 1550 → 1575; bases 1600 stay."""
    model = create_model("positional")
    states = {
        "a": PositionalSkill(
            1600.0, {"offense": 1700.0, "defense": 1500.0}, {"offense": 3, "defense": 1}
        ),
        "b": PositionalSkill(1600.0, {"offense": 1550.0}, {"offense": 2}),
    }
    moved = new_season(model, states, HALF).states
    assert moved["a"] == PositionalSkill(
        1600.0, {"offense": 1650.0, "defense": 1550.0}, {"offense": 3, "defense": 1}
    )
    assert moved["b"] == PositionalSkill(1600.0, {"offense": 1575.0}, {"offense": 2})
    assert (model.rating(moved["a"]), model.rating(moved["b"])) == (1625.0, 1575.0)


def test_sectors_edge_pulls_every_place_value() -> None:
    """S7: displays 80 and 30, mean 55: places 0.9, 0.7 → 0.725, 0.625 (display 67.5);
    0.2 and 0.4 → 0.375 and 0.475 (display 42.5); the bases ½ → 0.525."""
    model = create_model("sectors-edge")
    states = {
        "a": ScoreboardRecord(0.5, {"CTF": (0.9, 0.7)}),
        "b": ScoreboardRecord(0.5, {"CTF": (0.2,), "SPI": (0.4,)}),
    }
    moved = new_season(model, states, HALF).states
    a, b = moved["a"], moved["b"]
    assert a.base == b.base == pytest.approx(0.525)
    assert a.recent["CTF"] == pytest.approx((0.725, 0.625))
    assert (b.recent["CTF"], b.recent["SPI"]) == (pytest.approx((0.375,)), pytest.approx((0.475,)))
    assert (model.rating(a), model.rating(b)) == (pytest.approx(67.5), pytest.approx(42.5))


class SeasonedElo(Elo):
    parameters = {**Elo.parameters, "season": Param(0.4, 0.0, 1.0, tune=(0.0, 1.0))}


def test_the_share_when_none_is_named() -> None:
    """The model's `season` parameter where it has one, else DEFAULT_SEASON_FRACTION (0.3);
    fraction 0 moves nothing and 1 puts everyone at the mean."""
    states = {"a": 1100.0, "b": 900.0}
    assert DEFAULT_SEASON_FRACTION == 0.3
    assert new_season(Elo(), states).states == {"a": 1070.0, "b": 930.0}
    seasoned = new_season(SeasonedElo(), states)
    assert seasoned.fraction == 0.4 and seasoned.states == {"a": 1060.0, "b": 940.0}
    assert new_season(SeasonedElo({"season": 0.1}), states).fraction == 0.1
    assert new_season(Elo(), states, 0).states == states
    assert new_season(Elo(), states, 1).states == {"a": 1000.0, "b": 1000.0}
    assert new_season(Elo(), {}, HALF).states == {}


@pytest.mark.parametrize("bad", [2, -0.1, "x", True, None, math.nan])
def test_a_fraction_is_a_number_within_0_and_1(bad: object) -> None:
    with pytest.raises(ValueError, match="fraction must be"):
        check_fraction(bad)  # type: ignore[arg-type]


# --- the history's event line --------------------------------------------------------------


def test_a_bare_season_line_and_a_full_one_read_and_write_back(tmp_path: Path) -> None:
    bare = AdminEvent("season")
    full = AdminEvent("season", time=AT, by="ops", reason="summer", fraction=0.25)
    assert parse_event({"event": "season"}) == bare
    assert bare.to_json() == {"event": "season"}
    assert full.to_json() == {
        "event": "season",
        "fraction": 0.25,
        "by": "ops",
        "reason": "summer",
        "time": AT.isoformat(),
    }
    matches = [
        Match("m1", ("a",), ("b",), "A"),
        Match("m2", ("a",), ("b",), "B", events=(bare, full)),
    ]
    path = tmp_path / "h.jsonl"
    write_history(path, matches, trailing=(AdminEvent("season", fraction=1),))
    lines = path.read_text().splitlines()
    assert lines[1] == '{"event":"season"}' and lines[-1] == '{"event":"season","fraction":1}'
    back = read_history(path, strict=True)
    assert back.matches == matches and back.trailing == (AdminEvent("season", fraction=1.0),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"event": "season", "fraction": 2}, "fraction must be within 0…1"),
        ({"event": "season", "fraction": "x"}, "fraction must be a number"),
        ({"event": "season", "player": "a"}, "a season event names no player"),
        ({"event": "season", "round": "m1"}, "a season event names no round"),
        ({"event": "set", "player": "a", "rating": 1, "fraction": 0.5}, "only a season"),
        ({"event": "winter"}, '"unvoid" or "season"'),
    ],
)
def test_a_bad_season_line_is_named(tmp_path: Path, line: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_event(line)
    path = tmp_path / "h.jsonl"
    match = {"id": "m", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A"}
    path.write_bytes(orjson.dumps(line) + b"\n" + orjson.dumps(match) + b"\n")
    with pytest.raises(HistoryFormatError, match="line 1"):
        read_history(path, strict=True)


# --- the replay and the recompute -----------------------------------------------------------


def rounds(n: int) -> list[Match]:
    """n 1v1 matches of a, b, c: a beats the others, b beats c."""
    pairs = [("a", "b"), ("b", "c"), ("a", "c")]
    return [Match(f"m{i}", (pairs[i % 3][0],), (pairs[i % 3][1],), "A") for i in range(n)]


@pytest.mark.parametrize("name", ["elo", "synelo", "trueskill", "whr", "hive"])
def test_a_replay_applies_the_season_where_the_history_has_it(name: str) -> None:
    """A season line before match 6 does to the replay's players what `new_season` does to
    the same players, and changes the predictions after it."""
    plain, with_season = rounds(9), rounds(9)
    with_season[6] = replace(with_season[6], events=(AdminEvent("season", fraction=HALF),))
    first = create_replay(name, {}, HistoryInfo(1))
    replay(first, plain[:6])
    before = first.display_ratings()
    first.new_season(HALF)
    after = first.display_ratings()
    assert after != before and set(after) == set(before)
    second = create_replay(name, {}, HistoryInfo(1))
    third = create_replay(name, {}, HistoryInfo(1))
    seasoned = replay(second, with_season)
    unseasoned = replay(third, plain)
    assert list(seasoned.predictions[:6]) == list(unseasoned.predictions[:6])
    assert list(seasoned.predictions[6:]) != list(unseasoned.predictions[6:])


def test_the_recompute_journals_every_player_a_season_moves() -> None:
    """A "season" row per player it moved, in key order, before and after (a new player, d,
    set and then reset, is left out); the ratings are Elo's S1."""
    engine = Recompute(Elo(), None)
    for i, match in enumerate(rounds(3)):
        engine.round(RoundEvent(i + 1, i + 1, RoundFacts(match.team_a, match.team_b, "A"), AT, AT))
    engine.change(AdminIn("set", "d", 1300, AT))
    engine.change(AdminIn("reset", "d", None, AT))
    ratings = {key: p.state for key, p in engine.players.items() if key != "d"}
    expected = new_season(Elo(), ratings, HALF).states
    lines = engine.change(AdminIn("season", "", None, AT, HALF))
    assert [(line.player, line.kind, line.round_pk) for line in lines] == [
        ("a", "season", None),
        ("b", "season", None),
        ("c", "season", None),
    ]
    assert {k: engine.players[k].state for k in "abc"} == expected
    assert [line.after for line in lines] == [round(expected[k]) for k in "abc"]
    assert engine.players["d"].state == 1000.0
    assert engine.change(AdminIn("season", "", None, AT))[0].after == round(
        expected["a"] + DEFAULT_SEASON_FRACTION * (sum(expected.values()) / 3 - expected["a"])
    )


def test_a_whr_refit_keeps_the_season() -> None:
    """A refit fits the stretch before a season, then takes its MAP through S4: with
    fraction 1, every player who played only before it ends at the mean of their fitted
    ratings with a newcomer's variance, as the online season left them; without the season
    the refit gives them their spread back."""
    model = create_model("whr")
    engine = Recompute(model, None, refit=True)
    for i, match in enumerate(rounds(12)):
        facts = RoundFacts(match.team_a, match.team_b, "A", extras={"day": i})
        engine.round(RoundEvent(i + 1, i + 1, facts, AT, AT))
    engine.change(AdminIn("season", "", None, AT, 1.0))
    online = [p.state.rating for p in engine.players.values()]
    assert max(online) - min(online) < 1e-12
    engine.refit(AT)
    fitted = [engine.players[key].state for key in "abc"]
    ratings = [state.rating for state in fitted]
    assert max(ratings) - min(ratings) < 1e-12 and ratings != online
    assert all(state.variance == pytest.approx(2.0) and state.days == [] for state in fitted)
    unseasoned = model.refit(
        {key: p.state for key, p in engine.players.items()}, engine.rated, engine.context
    )
    assert unseasoned is not None and len({s.rating for s in unseasoned.states.values()}) == 3


def test_a_whr_refit_runs_on_after_a_season() -> None:
    """Rounds after the season are fitted from the priors the season gave: c, who lost
    every round before it and wins every one after, ends above where the season put it."""
    model = create_model("whr")
    before, after = rounds(9), [Match(f"n{i}", ("c",), ("a",), "A") for i in range(6)]
    history: list[RoundFacts] = [
        RoundFacts(m.team_a, m.team_b, m.winner, extras={"day": i})
        for i, m in enumerate([*before, *after])
    ]
    states: dict[str, PlayerDays] = {}
    for facts in history:
        states.update(model.rate(states, facts).states)
    refitted = model.refit(states, history, {}, seasons=[(9, HALF)])
    assert refitted is not None
    c = refitted.states["c"]
    assert c.days == list(range(9, 15)) and c.anchor is not None
    assert c.rating > c.anchor.mean and c.weight_before == 6.0
