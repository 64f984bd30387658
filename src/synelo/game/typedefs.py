"""The data shapes of the game logic: settings, events in and actions out.

Events and actions are flat JSON objects (plain dicts) so that the same event scripts drive
this package and the SourceMod plugin (see `tests/game_scripts/README.md`). Every event has a
time `t` (seconds, a number) and a `type`; player ids are strings; teams are "A", "B",
"waiting" (eligible, waiting to play: the arena queue) or "none" (unassigned or spectator).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal, TypeVar

Event = dict[str, Any]
Action = dict[str, Any]
Side = Literal["A", "B"]
Slot = Literal["A", "B", "waiting", "none"]
S = TypeVar("S")

MODES = (
    "arena",
    "attack_defend",
    "payload",
    "koth",
    "cp",
    "ctf",
    "payload_race",
    "mvm",
    "pd",
    "rd",
    "pass",
    "sd",
)
# sm_synelo_mode's and `--mode`'s short names for the modes whose script name is longer
MODE_ALIASES = {"ad": "attack_defend", "pl": "payload", "plr": "payload_race"}
# The automatic scramble triggers, each with its switch `scramble_<trigger>` in GameSettings
TRIGGERS = (
    "waiting_ended",
    "arena_round_2",
    "streak",
    "attackers_timed_out",
    "full_rounds",
    "no_capture",
)
# The triggers judged on a round's outcome: only these look at the round-time window
ROUND_TRIGGERS = ("streak", "attackers_timed_out", "full_rounds", "no_capture")
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
    "splits",
    "apply_scramble",
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
    # The controls of automatic scrambles (not the vote, not an admin's), tests/game_scripts/
    # README.md: eligible players at least, seconds since the last scramble of any kind, the
    # round's length from the doors going up (outcome triggers only; max 0: none), switches.
    scramble_min_players: int = 8
    scramble_cooldown: float = 300.0
    scramble_round_min: float = 0.0
    scramble_round_max: float = 0.0
    scramble_waiting_ended: bool = True
    scramble_arena_round_2: bool = True
    scramble_streak: bool = True
    scramble_attackers_timed_out: bool = True
    scramble_full_rounds: bool = True
    scramble_no_capture: bool = True

    def trigger_on(self, trigger: str) -> bool:
        """Whether the switch of an automatic trigger is on."""
        return bool(getattr(self, f"scramble_{trigger}"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameSettings:
        return settings_from(cls, data)


def settings_from(cls: type[S], data: dict[str, Any]) -> S:
    """A settings dataclass from a script's `settings`; an unknown name is an error."""
    unknown = set(data) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
    if unknown:
        raise ValueError(f"unknown settings: {sorted(unknown)}")
    return cls(**data)


def event_time(event: Event, types: tuple[str, ...], now: float) -> float:
    """The event's `t`, once its type is one of `types` and it is not before `now`."""
    kind = event.get("type")
    if kind not in types:
        raise ValueError(f"unknown event type {kind!r}")
    t = float(event["t"])
    if t < now:
        raise ValueError(f"event at t={t} is before the previous one (t={now})")
    return t


def other(side: Side) -> Side:
    return "B" if side == "A" else "A"
