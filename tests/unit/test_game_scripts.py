"""Every event script in tests/game_scripts/ replayed through synelo.game: the emitted actions
must be exactly the script's expected ones (the SourceMod plugin replays the same files)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from synelo.game import MODES, GameSettings, load_script, logic_for, replay, splits
from synelo.game.community import CommunityRules, CommunitySettings, votes_needed

SCRIPTS = sorted((Path(__file__).parent.parent / "game_scripts").glob("*.json"))


def test_there_is_a_script_for_every_mode() -> None:
    assert {load_script(p).mode for p in SCRIPTS} == {*MODES, "community"}


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script(path: Path) -> None:
    script = load_script(path)
    assert script.name == path.stem
    assert replay(script) == script.expect


# The format the plugin relies on (tests/game_scripts/README.md): these keys and no others.
EVENT_KEYS = {
    "join": ({"player", "team"}, {"rating", "pub_power", "party"}),
    "leave": ({"player"}, set()),
    "team_change": ({"player", "team"}, set()),
    "rating": ({"player", "rating"}, set()),
    "waiting_ended": (set(), set()),
    "round_start": (set(), {"attackers"}),
    "damage": (set(), {"attacker", "victim"}),
    "heal": ({"healer"}, {"target"}),
    "capture": ({"team"}, set()),
    "points": ({"player", "points"}, set()),
    "death": ({"player"}, set()),
    "round_end": ({"winner", "full_round"}, set()),
    "tick": (set(), set()),
    "splits": ({"splits"}, set()),
    "apply_scramble": (set(), {"service_down"}),
}
COMMUNITY_EVENT_KEYS = {
    "map_start": (set(), set()),
    "join": ({"player", "team"}, {"immune"}),
    "leave": ({"player"}, set()),
    "team_change": ({"player", "team"}, set()),
    "round_start": (set(), set()),
    "round_end": (set(), set()),
    "vote": ({"player"}, set()),
    "scrambled": (set(), set()),
    "moved": ({"player", "to"}, set()),
    "team_request": ({"player", "team"}, set()),
    "immune": ({"player", "immune"}, set()),
    "move_request": ({"player"}, {"busy"}),
    "command": ({"player", "command"}, set()),
    "party_invite": ({"player", "target"}, set()),
    "party_accept": ({"player"}, set()),
    "party_leave": ({"player"}, set()),
    "tick": (set(), set()),
}
COMMUNITY_ACTION_KEYS = {
    "vote_counted": ({"player", "votes", "needed"}, set()),
    "vote_refused": ({"player", "reason"}, {"wait"}),
    "scramble": ({"reason"}, set()),
    "scramble_pending": ({"reason"}, set()),
    "team_allowed": ({"player", "team"}, set()),
    "team_refused": ({"player", "team", "reason", "wait", "attempts"}, set()),
    "place_joiner": ({"player"}, set()),
    "move_allowed": ({"player"}, set()),
    "move_refused": ({"player", "reason"}, {"wait"}),
    "command_run": ({"player", "command"}, set()),
    "command_refused": ({"player", "command", "wait"}, set()),
    "party_invited": ({"player", "target"}, set()),
    "party_joined": ({"player", "party"}, set()),
    "party_left": ({"player", "party"}, set()),
    "party_refused": ({"player", "reason"}, set()),
}
ACTION_KEYS = {
    "report_round": {"winner", "team_a", "team_b", "participants_a", "participants_b"},
    "request_splits": {"players"},
    "scramble": {"reason"},
    "move": {"player", "from", "to", "reason"},
    "teams": {"source", "A", "B", "waiting"},
}


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_keeps_to_the_format(path: Path) -> None:
    script = load_script(path)
    times = [e["t"] for e in script.events]
    assert times == sorted(times)
    assert all(float(t) * 1000 == round(float(t) * 1000) for t in times)  # the plugin's ms
    if script.mode == "community":
        for event in script.events:
            required, optional = COMMUNITY_EVENT_KEYS[event["type"]]
            assert required <= set(event) - {"t", "type"} <= required | optional, event
        for action in script.expect:
            required, optional = COMMUNITY_ACTION_KEYS[action["type"]]
            assert required <= set(action) - {"t", "type"} <= required | optional, action
            assert action.get("party", []) == sorted(action.get("party", []))
        return
    for event in script.events:
        required, optional = EVENT_KEYS[event["type"]]
        keys = set(event) - {"t", "type"}
        assert required <= keys <= required | optional, event
    for action in script.expect:
        assert set(action) - {"t", "type"} == ACTION_KEYS[action["type"]], action
        for key in (
            "team_a",
            "team_b",
            "participants_a",
            "participants_b",
            "players",
            "A",
            "B",
            "waiting",
        ):
            if key in action:
                assert action[key] == sorted(action[key])


def test_bad_input_is_refused() -> None:
    logic = logic_for("koth")
    logic.feed({"t": 5, "type": "tick"})
    with pytest.raises(ValueError, match="before the previous"):
        logic.feed({"t": 4, "type": "tick"})
    with pytest.raises(ValueError, match="unknown event"):
        logic.feed({"t": 6, "type": "explode"})
    with pytest.raises(ValueError, match="unknown mode"):
        logic_for("deathmatch")
    with pytest.raises(ValueError, match="unknown settings"):
        GameSettings.from_dict({"streaks": 3})


def test_the_community_rules_refuse_bad_input() -> None:
    rules = CommunityRules()
    rules.feed({"t": 5, "type": "tick"})
    with pytest.raises(ValueError, match="before the previous"):
        rules.feed({"t": 4, "type": "tick"})
    with pytest.raises(ValueError, match="unknown event"):
        rules.feed({"t": 6, "type": "round_won"})
    with pytest.raises(ValueError, match="unknown settings"):
        CommunitySettings.from_dict({"vote_ratio": 0.6})


@pytest.mark.parametrize(
    ("percent", "players", "needed"),
    [
        (60, 6, 4),
        (60, 5, 3),
        (60, 10, 6),
        (50, 4, 2),
        (50, 5, 3),
        (100, 7, 7),
        (1, 3, 1),
        (0, 9, 1),
    ],
)
def test_votes_needed_round_up(percent: int, players: int, needed: int) -> None:
    assert votes_needed(percent, players) == needed


def test_parties_sent_are_the_members_that_count_there() -> None:
    """/splits gets each party's members on a team or waiting, /autobalance those on a team,
    a party of fewer such members none, and nothing while parties are off."""
    rules = CommunityRules()
    for player, team in [("a1", "A"), ("a2", "A"), ("w1", "waiting"), ("b1", "B"), ("s1", "none")]:
        rules.feed({"t": 0, "type": "join", "player": player, "team": team})
    for host, guest in [("a1", "a2"), ("a1", "s1"), ("b1", "w1")]:
        rules.feed({"t": 1, "type": "party_invite", "player": host, "target": guest})
        rules.feed({"t": 1, "type": "party_accept", "player": guest})
    assert rules.parties() == [["a1", "a2"], ["b1", "w1"]]
    assert rules.parties(teams_only=True) == [["a1", "a2"]]
    off = CommunityRules(CommunitySettings(parties=False))
    off.party_of, off.slot = rules.party_of, rules.slot
    assert off.parties() == []


# --- applying a split (synelo.game.splits): nobody waits outside arena ------------------------


def test_the_short_mode_names_are_the_long_ones() -> None:
    assert logic_for("ad").family == logic_for("attack_defend").family == "attack_defend"
    assert type(logic_for("pl")) is type(logic_for("payload"))
    assert type(logic_for("plr")) is type(logic_for("payload_race"))


@pytest.mark.parametrize("n", [2, 3, 7, 13, 24, 101])
@pytest.mark.parametrize("stale", ["fresh", "leavers", "joiners", "both", "fallback"])
def test_a_plan_seats_everyone_floor_and_ceil(n: int, stale: str) -> None:
    """Whatever happened since the split was cached, everyone eligible plays, ⌊n/2⌋ v ⌈n/2⌉."""
    rng = random.Random(n * 31 + len(stale))
    ratings = {f"p{i:03d}": rng.randrange(400, 2400) for i in range(n + 6)}
    cached = sorted(ratings)[: n + 3]
    split = (cached[::2], cached[1::2])
    eligible = {
        "fresh": cached,
        "leavers": cached[3:],
        "joiners": sorted(ratings)[3:],
        "both": sorted(ratings)[5 : n + 5],
        "fallback": cached,
    }[stale]
    placed = splits.plan(None if stale == "fallback" else split, eligible, ratings.__getitem__)
    sides = [placed[p] for p in eligible]
    assert set(placed) == set(eligible) and "waiting" not in sides
    assert sorted([sides.count("A"), sides.count("B")]) == [
        len(eligible) // 2,
        -(-len(eligible) // 2),
    ]


def test_a_fresh_split_is_applied_as_it_is_and_the_fallback_is_close() -> None:
    ratings = {"a": 1900, "b": 1500, "c": 1400, "d": 1200, "e": 1000}
    split = (["a", "d"], ["b", "c", "e"])
    assert splits.plan(split, sorted(ratings), ratings.__getitem__) == {
        "a": "A",
        "d": "A",
        "b": "B",
        "c": "B",
        "e": "B",
    }
    fallback = splits.plan(None, sorted(ratings), ratings.__getitem__)
    gap = sum(r if fallback[p] == "A" else -r for p, r in ratings.items())
    # greedy alone: {a, d} 3100 v {b, c, e} 3900; one swap: {a, b} 3400 v 3600, the optimum
    assert abs(gap) == 200
    assert splits.named(fallback, {p: "B" if fallback[p] == "A" else "A" for p in ratings}) == {
        p: "B" if s == "A" else "A" for p, s in fallback.items()
    }
