"""Round, scramble and autobalance logic for game servers: pure, event-driven, no I/O."""

from synelo.game.logic import (
    ArenaLogic,
    AttackDefendLogic,
    CaptureLogic,
    RoundLogic,
    logic_for,
)
from synelo.game.scripts import Script, load_script, replay
from synelo.game.typedefs import MODES, Action, Event, GameSettings

__all__ = [
    "MODES",
    "Action",
    "ArenaLogic",
    "AttackDefendLogic",
    "CaptureLogic",
    "Event",
    "GameSettings",
    "RoundLogic",
    "Script",
    "load_script",
    "logic_for",
    "replay",
]
