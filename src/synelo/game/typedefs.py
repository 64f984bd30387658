"""The data shapes of the game logic: settings, events in and actions out.

Events and actions are flat JSON objects (plain dicts) so that the same event scripts drive
this package and the SourceMod plugin (see `tests/game_scripts/README.md`). Every event has a
time `t` (seconds, a number) and a `type`; player ids are strings; teams are "A", "B",
"waiting" (eligible, waiting to play: the arena queue) or "none" (unassigned or spectator).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Event = dict[str, Any]
Action = dict[str, Any]
Side = Literal["A", "B"]
Slot = Literal["A", "B", "waiting", "none"]

MODES = ("arena", "attack_defend", "payload", "koth", "cp", "ctf")
EVENT_TYPES = (
    "waiting_ended",
    "round_start",
    "damage",
    "heal",
    "join",
    "leave",
    "team_change",
    "capture",
    "round_end",
    "rating",
    "points",
    "death",
    "tick",
)


@dataclass(frozen=True, slots=True)
class GameSettings:
    """The plugin's settings (ConVars); a script's `settings` object overrides any of them."""

    streak: int = 3  # arena: consecutive wins by one team that trigger a scramble
    full_rounds: int = 2  # attack/defend, payload: full rounds between scrambles
    autobalance: Literal["f11", "sectors_edge"] = "f11"
    autobalance_delay: float = 10.0  # seconds between seeing an imbalance and fixing it
    r0: int = 1000  # rating of a player whose rating is not known (yet)
    se_delay: float = 20.0  # Sector's Edge: seconds after marking the stronger team
    se_power_gap: float = 10.0  # Sector's Edge: power difference that is unbalanced

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameSettings:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown settings: {sorted(unknown)}")
        return cls(**data)


def other(side: Side) -> Side:
    return "B" if side == "A" else "A"
