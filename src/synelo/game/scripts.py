"""Event scripts: a JSON file of events and the actions they must cause (format in
`tests/game_scripts/README.md`), replayed here and by the SourceMod plugin's tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synelo.game.community import CommunityRules, CommunitySettings
from synelo.game.logic import RoundLogic, logic_for
from synelo.game.typedefs import Action, Event, GameSettings


@dataclass(frozen=True, slots=True)
class Script:
    name: str
    rule: str
    mode: str
    settings: dict[str, Any]
    events: list[Event]
    expect: list[Action]


def load_script(path: Path) -> Script:
    data = json.loads(Path(path).read_text())
    return Script(
        data["name"],
        data["rule"],
        data["mode"],
        data.get("settings", {}),
        data["events"],
        data["expect"],
    )


def replay(script: Script) -> list[Action]:
    """Every action the mode's state machine emits for the script's events, in order (mode
    "community": the community rules instead of a round logic)."""
    logic: RoundLogic | CommunityRules
    if script.mode == "community":
        logic = CommunityRules(CommunitySettings.from_dict(script.settings))
    else:
        logic = logic_for(script.mode, GameSettings.from_dict(script.settings))
    return [action for event in script.events for action in logic.feed(event)]
