"""Every event script in tests/game_scripts/ replayed through synelo.game: the emitted actions
must be exactly the script's expected ones (the SourceMod plugin replays the same files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synelo.game import MODES, GameSettings, load_script, logic_for, replay

SCRIPTS = sorted((Path(__file__).parent.parent / "game_scripts").glob("*.json"))


def test_there_is_a_script_for_every_mode() -> None:
    assert {load_script(p).mode for p in SCRIPTS} == set(MODES)


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
}
ACTION_KEYS = {
    "report_round": {"winner", "team_a", "team_b", "participants_a", "participants_b"},
    "request_splits": {"players"},
    "scramble": {"reason"},
    "move": {"player", "from", "to", "reason"},
}


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_keeps_to_the_format(path: Path) -> None:
    script = load_script(path)
    times = [e["t"] for e in script.events]
    assert times == sorted(times)
    for event in script.events:
        required, optional = EVENT_KEYS[event["type"]]
        keys = set(event) - {"t", "type"}
        assert required <= keys <= required | optional, event
    for action in script.expect:
        assert set(action) - {"t", "type"} == ACTION_KEYS[action["type"]], action
        for key in ("team_a", "team_b", "participants_a", "participants_b", "players"):
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
