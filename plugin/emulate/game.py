"""What happens on the emulated server: maps, modes, rounds and players, on the simulated clock.

The order of events follows TF2's round state machine (source-sdk-2013,
`src/game/shared/teamplayroundbased_gamerules.cpp`) and SourceMod's forwards
(`core/PlayerManager.cpp`, `core/logic/PluginSys.cpp`, the TF2 extension's
`gameplayrules.cpp`); plugin/README.md lists each step with its source.

- Map start: OnMapStart, OnAutoConfigsBuffered, then server.cfg and the plugin's cfg
  (`Server.server_cfg`), then OnConfigsExecuted; the players connect (OnClientConnected,
  OnClientPutInServer, OnClientAuthorized, OnClientPostAdminCheck) and pick a team with the
  `jointeam` command, which command listeners see first.
- Waiting for players (not in arena): teamplay_round_start, 5 s of pre-round,
  teamplay_round_active, then after `mp_waitingforplayers_time` the restart:
  teamplay_restart_round, TF2_OnWaitingForPlayersEnd, and the first real round.
- A round: teamplay_round_start (`full_reset`), 5 s of pre-round (arena: 10 s, then
  arena_round_start), teamplay_round_active, teamplay_setup_finished after the setup time on
  maps that have one, play (player_hurt, player_healed, teamplay_point_captured,
  teamplay_flag_event, player_death), teamplay_round_win, then `mp_bonusroundtime` (15 s).
- Who wins: each player has a hidden skill; a team wins with the logistic of its skill sum's
  lead (seeded, so a run repeats), unless the scenario names the winner.

Arena's queue, simply (TF2's `CTFGameRules::Arena_RunTeamLogic`, `Arena_PlayersNeededForMatch`
and `Arena_PrepareNewPlayerQueue`): the team size is `tf_arena_override_team_size` when set,
else half the players ready to play, at most a third of the server's slots (rounded). A player
who joins (`jointeam auto`) takes a seat on the smaller team while one is free, else waits on
Spectator with `m_bArenaSpectator` false (queued, not spectating by choice). Before each round
after the first, when people wait, the losers join the back of the queue (all players on a
streak of `tf_arena_max_streak`), then the queue fills both teams up to the team size in
the order people queued; players beyond the size, the last seated first, go back to the queue.
Where it differs from TF2: no class limits, no "first blood" or notifications, the queue
order is the time each player entered Spectator (TF2 sorts by a queue time it also keeps
for winners), and players are seated on the smaller team (TF2 fills the winners' team with
`iUnknown` players first, then auto-assigns).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from plugin.emulate.engine import BLU, RED, SPECTATOR, UNASSIGNED, Client, Entity, Server

MODES = ("arena", "koth", "cp", "ad", "ctf", "pl", "plr", "mvm", "pd", "rd", "pass", "sd")

# Each mode's map, its logic entities and what its rounds fire.
MAPS = {
    "arena": "arena_lumberyard_event",
    "koth": "koth_harvest_final",
    "cp": "cp_process_final",
    "ad": "cp_dustbowl",
    "ctf": "ctf_2fort",
    "pl": "pl_badwater",
    "plr": "plr_hightower",
    "mvm": "mvm_coaltown",
    "pd": "pd_watergate",
    "rd": "rd_asteroid",
    "pass": "pass_brickyard",
    "sd": "sd_doomsday",
}
SETUP_SECONDS = {"ad": 60, "pl": 60}
SWITCHING = ("ad", "pl")  # modes whose teams change colours after each full round
ROUND_SECONDS = {
    "arena": 90,
    "koth": 240,
    "cp": 400,
    "ad": 500,
    "ctf": 500,
    "pl": 500,
    "plr": 400,
    "mvm": 300,
    "pd": 300,
    "rd": 400,
    "pass": 300,
    "sd": 400,
}
PREROUND_SECONDS = 5.0
KOTH_SECONDS = 180.0  # each team's KOTH timer (tf_logic_koth's timer_length default)
# The emulated PD and RD maps' points to win (the logic's m_nMaxPoints, a map setting).
MAX_POINTS = {"pd": 100, "rd": 300}
PLR_CHECKPOINT = 0.5  # payload race: each track's checkpoint, as a share of the track
MAX_CONTROL_POINTS = 8  # the objective resource's arrays (MAX_CONTROL_POINTS, shareddefs.h)
WINREASON_DEFEND_UNTIL_TIME_LIMIT = 4
SUDDEN_DEATH_SECONDS = 30.0  # how long a sudden death lasts here before it is decided
STALEMATE_TIMER = 1  # stalemate_reasons_t: the round timer ran out
WINREASON_ALL_POINTS_CAPTURED, WINREASON_OPPONENTS_DEAD, WINREASON_STALEMATE = 1, 2, 5
ARENA_PREROUND_SECONDS = 10.0
BONUS_SECONDS = 15.0
MEDIC, ENGINEER, SCOUT = 5, 9, 1
TF_COND_UBERCHARGED = 5


def round_timer(
    setup: int = 0, *, disabled: bool = False, hud: bool = True, team: int = 0
) -> tuple[str, dict[str, Any]]:
    """A team_round_timer and the CTeamRoundTimer netprops the plugin reads (source-sdk-2013,
    teamplay_round_timer.cpp): it spawns paused; `m_flTimeRemaining` counts while paused,
    `m_flTimerEndTime` while it runs. `team`: the KOTH team whose timer it is (not a netprop:
    the game's m_hRedKothTimer / m_hBlueKothTimer point at it)."""
    props: dict[str, Any] = {
        "__netclass": "CTeamRoundTimer",
        "m_nSetupTimeLength": setup,
        "m_bTimerPaused": 1,
        "m_flTimeRemaining": 0.0,
        "m_flTimerEndTime": 0.0,
        "m_nTimerLength": 0,  # the round's length once set (SetTime), time added included
        "m_bIsDisabled": int(disabled),
        "m_bShowInHUD": int(hud),
    }
    if team:
        props["__koth_team"] = team
    return ("team_round_timer", props)


def control_point(owner: int, *, stage: int = 1) -> tuple[str, dict[str, Any]]:
    """A team_control_point: its default owner (a datamap field) and its owner (m_iTeamNum,
    CTeamControlPoint::InternalSetOwner's ChangeTeam). `stage`: the attack/defend stage it
    belongs to (not a netprop: the objective resource's m_bInMiniRound says which are in play)."""
    return ("team_control_point", {"m_iDefaultOwner": owner, "m_iTeamNum": owner, "__stage": stage})


def train_watcher(team: int) -> tuple[str, dict[str, Any]]:
    """A team_train_watcher (CTeamTrainWatcher): the team whose cart it follows
    (m_iTeamNum), the share of its track covered (m_flTotalProgress, 0..1) and m_bDisabled
    (a datamap field)."""
    return (
        "team_train_watcher",
        {
            "__netclass": "CTeamTrainWatcher",
            "m_iTeamNum": team,
            "m_flTotalProgress": 0.0,
            "m_bDisabled": 0,
        },
    )


def destruction_logic(classname: str, mode: str) -> tuple[str, dict[str, Any]]:
    """Player or robot destruction's logic (CTFRobotDestructionLogic's netprops): the points
    to win and each team's points."""
    props = {
        "__netclass": "CTFPlayerDestructionLogic" if mode == "pd" else "CTFRobotDestructionLogic",
        "m_nMaxPoints": MAX_POINTS[mode],
        "m_nRedScore": 0,
        "m_nBlueScore": 0,
    }
    return (classname, props)


# What play_round's `margin` means in each mode (None: the default in brackets).
MARGINS = {
    "ctf": "the losers' flag captures (0); the winners reach tf_flag_caps_per_round",
    "pass": "the losers' goals (0); the winners reach tf_flag_caps_per_round",
    "cp": "the points the losers take early on, the middle first, then the winners' nearest "
    "it, at most 2 (1 with the chance loser_captures, else 0); a decided round ends with the "
    "winners owning every point",
    "koth": "the seconds the losers hold the point before the winners take it for good "
    "(1/8 of the round's length with the chance loser_captures, else they never take it); "
    "the winners then hold it until their clock runs out",
    "arena": "the winners alive at the end (half of them, rounded up); every loser dies",
    "ad": "BLU wins: the seconds left on the stage's clock at the last capture (a quarter of "
    "it); RED wins: the share of the stage's points BLU took before the clock ran out (0)",
    "pl": "BLU wins: the seconds left on the clock as the cart reaches the end (a quarter of "
    "it); RED wins: the share of the track BLU's cart covered before the clock ran out (0)",
    "plr": "the share of its track the losers' cart covered (0)",
    "pd": "the losers' points (0); the winners reach the logic's m_nMaxPoints",
    "rd": "the losers' points (0); the winners reach the logic's m_nMaxPoints",
}


def check_margin(
    mode: str, won: int, margin: float | None, *, length: float, koth: float, caps: int
) -> None:
    """A clear error for a `margin` the mode cannot play (MARGINS): `length` is the round's,
    `koth` each KOTH clock's, `caps` the captures that win CTF and PASS Time."""
    if margin is None:
        return
    if mode not in MARGINS:
        raise ValueError(f"{mode} rounds take no margin")
    limits: dict[str, tuple[float, float]] = {
        "ctf": (0, caps - 1),
        "pass": (0, caps - 1),
        "cp": (0, 2),  # with 3 of the 5, the losers would have won
        "koth": (0, koth - 1),
        "arena": (1, 100),
        "plr": (0, 0.99),
        "pd": (0, MAX_POINTS["pd"] - 1),
        "rd": (0, MAX_POINTS["rd"] - 1),
        "ad": (0, length - 1) if won == BLU else (0, 0.99),
        "pl": (0, length - 1) if won == BLU else (0, 0.99),
    }
    low, high = limits[mode]
    if not low <= margin <= high:
        raise ValueError(f"a {mode} margin must be from {low} to {high}: {MARGINS[mode]}")


def engine_entities() -> list[tuple[str, dict[str, Any]]]:
    """The entities TF2 has on every map: the team entities (CTFTeam, teams 0 to 3) with
    their round's flag captures (m_nFlagCaptures) and score (m_iScore), and the objective
    resource (CTFObjectiveResource) with its control points' owners (m_iOwner), which are in
    the stage in play (m_bInMiniRound), and the round timer in the HUD (m_iTimerToShowInHUD)."""
    teams = [
        ("tf_team", {"__netclass": "CTFTeam", "m_iTeamNum": n, "m_nFlagCaptures": 0, "m_iScore": 0})
        for n in (UNASSIGNED, SPECTATOR, RED, BLU)
    ]
    resource = {
        "__netclass": "CTFObjectiveResource",
        "m_iNumControlPoints": 0,
        "m_iOwner": [0] * MAX_CONTROL_POINTS,
        "m_bInMiniRound": [1] * MAX_CONTROL_POINTS,
        "m_iTimerToShowInHUD": 0,
    }
    return [*teams, ("tf_objective_resource", resource)]


def map_entities(mode: str) -> list[tuple[str, dict[str, Any]]]:
    """The entities the plugin looks for on this mode's map (classname, props).

    KOTH has a timer per team (tf_logic_koth's, not in the HUD's timer slot: TF2 draws them
    itself); the one of the team holding the point runs, the other is paused, and none runs
    while the point is neutral. Attack/defend (cp_dustbowl) has a timer per stage, only the
    stage in play enabled and in the HUD; the map's entity order puts a later stage's first."""
    timer = round_timer(SETUP_SECONDS.get(mode, 0))
    point = control_point(0)
    red_point = control_point(RED)
    flag = ("item_teamflag", {})
    return {
        "arena": [("tf_logic_arena", {}), point],
        "koth": [
            ("tf_logic_koth", {}),
            point,
            round_timer(hud=False, team=BLU),
            round_timer(hud=False, team=RED),
        ],
        "cp": [
            control_point(RED),
            control_point(RED),
            point,
            control_point(BLU),
            control_point(BLU),
            timer,
        ],
        "ad": [
            red_point,
            red_point,
            control_point(RED, stage=2),  # the next stage's: not in this round's play
            round_timer(SETUP_SECONDS["ad"], disabled=True, hud=False),  # stage 2
            timer,  # stage 1, in play
            round_timer(SETUP_SECONDS["ad"], disabled=True, hud=False),  # stage 3
        ],
        "ctf": [flag, flag, timer],
        "pl": [train_watcher(BLU), red_point, red_point, red_point, timer],
        "plr": [
            ("tf_logic_multiple_escort", {}),
            train_watcher(RED),
            train_watcher(BLU),
            point,
            point,
            timer,
        ],
        "mvm": [("tf_logic_mann_vs_machine", {}), flag, ("func_upgradestation", {})],
        "pd": [destruction_logic("tf_logic_player_destruction", "pd"), flag, timer],
        "rd": [destruction_logic("tf_logic_robot_destruction", "rd"), timer],
        "pass": [("passtime_logic", {}), timer],
        # No logic entity: TF2 knows Special Delivery by the map's "sd_" prefix alone
        # (CTFGameRules::Activate sets m_bPlayingSpecialDeliveryMode from the map name).
        "sd": [flag, timer],
    }[mode]


@dataclass
class RoundRecord:
    number: int
    map: str
    started: float
    teams: dict[str, list[str]]
    winner: str = ""
    ended: float = 0.0
    stored: bool = False
    round_id: str | None = None


@dataclass
class Game:
    """Drives `server` through maps and rounds of one mode."""

    server: Server
    mode: str
    skills: dict[str, float] = field(default_factory=dict)
    rounds: list[RoundRecord] = field(default_factory=list)
    round_live: bool = False
    map_count: int = 0
    round_seconds: float | None = None  # every round's length (None: the mode's, ROUND_SECONDS)
    loser_captures: float = 0.5  # koth, cp: the chance the losers capture a point early on
    queued_at: dict[int, float] = field(default_factory=dict)  # arena: client -> when queued
    last_winner: int = 0
    seated_at: dict[int, float] = field(default_factory=dict)  # arena: client -> when seated
    map_name: str | None = None  # the map's path (e.g. workshop/koth_x.ugc1); None: MAPS
    koth_seconds: float | None = None  # each KOTH clock (None: 3/4 of the round's length)
    switch_teams: bool = False  # ad, pl: the teams change colours before the next round
    _retake_at: float = 0.0  # koth: when the winners take the point back from the losers
    _streak: int = 0  # arena: rounds the last winner won in a row

    def __post_init__(self) -> None:
        if self.mode == "arena":
            self.server.auto_team = self._arena_seat
            self.server.on_team_change.append(self._note_queue)

    # --- maps ---------------------------------------------------------------------------

    def start_map(self) -> None:
        s = self.server
        self.map_count += 1
        s.map = self.map_name or MAPS[self.mode]
        s.map_started = s.now
        s.entities = {}
        index = 200
        rules = {"m_bInSetup": 0, "m_hRedKothTimer": -1, "m_hBlueKothTimer": -1}
        for classname, props in [
            ("tf_player_manager", {"__netclass": "CTFPlayerResource"}),
            ("tf_gamerules", rules),
            *map_entities(self.mode),
            *engine_entities(),
        ]:
            index += 1
            entity = Entity(index, classname, dict(props))
            if classname == "tf_player_manager":
                entity.props["m_iTotalScore"] = self._score
            s.entities[index] = entity
        self._resource()["m_iNumControlPoints"] = len(self.points())
        # SourceMod: OnMapStart, then server.cfg and every AutoExecConfig file run (on every
        # map load: OnAutoConfigsBuffered is "right after OnMapStart() but any time before
        # OnConfigsExecuted()"), then OnConfigsExecuted (sm.alliedmods.net/new-api/sourcemod/
        # OnAutoConfigsBuffered, .../OnConfigsExecuted). A plugin reading its ConVars in
        # OnMapStart sees the previous map's values, or the defaults on the first map.
        s.forward("OnMapStart")
        s.call_if("OnAutoConfigsBuffered")
        for name, value in s.server_cfg.items():
            if name in s.convars:
                s.set_convar(name, value)
        s.forward("OnConfigsExecuted")

    def _score(self, element: int) -> int:
        client = self.server.clients.get(element)
        return client.score if client else 0

    def end_map(self) -> None:
        """SourceMod disconnects every client, then OnMapEnd; NO_MAPCHANGE timers die."""
        s = self.server
        for client in s.sorted_clients():
            s.call_if("OnClientDisconnect", client.index)
            s.call_if("OnClientDisconnect_Post", client.index)
            client.team, client.alive = UNASSIGNED, False
            client.in_game = client.authorized = False
        s.forward("OnMapEnd")
        for timer in list(s.timers.values()):
            if timer.flags & 2:  # TIMER_FLAG_NO_MAPCHANGE
                s.kill_timer(timer.handle)

    def reconnect_all(self) -> None:
        """After a map change every client comes back (the full connect sequence)."""
        s = self.server
        for client in s.sorted_clients():
            s.call_if("OnClientConnected", client.index)
            client.in_game = True
            s.call_if("OnClientPutInServer", client.index)
            s.authorize(client)
        for client in s.sorted_clients():
            self.join_team(client)

    # --- players ------------------------------------------------------------------------

    def connect(
        self, name: str, *, skill: float | None = None, flags: int = 0, fake: bool = False
    ) -> Client:
        s = self.server
        client = s.connect(name, fake=fake, flags=flags)
        self.skills[client.steam_id] = skill if skill is not None else s.rng.gauss(0.0, 1.0)
        client.tf_class = (MEDIC, ENGINEER, SCOUT, 2, 3, 4, 6, 7, 8)[client.index % 9]
        return client

    def join_team(self, client: Client, choice: str = "auto") -> None:
        """The player's `jointeam` (MvM humans play RED; bots are seated by the game)."""
        s = self.server
        if client.fake:
            s.set_team(client, BLU)
        elif self.mode == "mvm":
            s.run_command(client.index, "jointeam red")
        else:
            s.run_command(client.index, f"jointeam {choice}")
        s._drain()
        if client.team in (RED, BLU) and (self.round_live or not self.rounds):
            client.alive = True

    def leave(self, client: Client) -> None:
        self.server.disconnect(client)

    def teams(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {"red": [], "blue": [], "spectator": []}
        for client in self.server.sorted_clients():
            if client.fake:
                continue
            key = {RED: "red", BLU: "blue", SPECTATOR: "spectator"}.get(client.team)
            if key:
                out[key].append(client.steam_id)
        for ids in out.values():
            ids.sort()
        return out

    # --- arena's queue ------------------------------------------------------------------

    def _note_queue(self, client: Client, old: int, new: int) -> None:
        if new == SPECTATOR and not client.arena_spectator:
            self.queued_at[client.index] = self.server.now
        else:
            self.queued_at.pop(client.index, None)
        if new in (RED, BLU):
            self.seated_at[client.index] = self.server.now

    def queue(self) -> list[Client]:
        """Arena: the players waiting to play, first in line first."""
        waiting = [
            c
            for c in self.server.sorted_clients()
            if c.team == SPECTATOR and not c.arena_spectator and not c.fake
        ]
        return sorted(waiting, key=lambda c: (self.queued_at.get(c.index, 0.0), c.index))

    def arena_team_size(self, joining: int = 0) -> int:
        """Players a team has in arena; `joining` counts players about to be ready."""
        s = self.server
        override = int(float(s.convars["tf_arena_override_team_size"].value or 0))
        if override > 0:
            return override
        ready = sum(
            1
            for c in s.clients.values()
            if not c.fake
            and (c.team in (RED, BLU) or (c.team == SPECTATOR and not c.arena_spectator))
        )
        return max(1, min(int(s.max_clients / 3.0 + 0.5), (ready + joining) // 2))

    def _arena_seat(self, client: Client) -> int:
        """`jointeam auto` in arena: a free seat on the smaller team, else the queue."""
        size = self.arena_team_size(joining=1)
        red = sum(1 for c in self.server.clients.values() if c.team == RED and c is not client)
        blu = sum(1 for c in self.server.clients.values() if c.team == BLU and c is not client)
        if min(red, blu) >= size or self.round_live:
            return SPECTATOR
        return BLU if blu < red else RED

    def arena_team_logic(self) -> None:
        """Before an arena round: losers to the queue when people wait, then seats filled."""
        s = self.server
        size = self.arena_team_size()
        streak = int(float(s.convars["tf_arena_max_streak"].value or 0))
        if self.queue() and self.last_winner in (RED, BLU):
            streaked = streak > 0 and self._streak >= streak
            for client in s.sorted_clients():
                if client.team in (RED, BLU) and (client.team != self.last_winner or streaked):
                    s.set_team(client, SPECTATOR)
            if streaked:
                self._streak = 0
        for team in (RED, BLU):
            seated = [c for c in s.sorted_clients() if c.team == team and not c.fake]
            seated.sort(key=lambda c: self.seated_at.get(c.index, 0.0))
            for client in seated[size:][::-1]:
                s.set_team(client, SPECTATOR)
        line = self.queue()
        while line:
            red = sum(1 for c in s.clients.values() if c.team == RED)
            blu = sum(1 for c in s.clients.values() if c.team == BLU)
            if min(red, blu) >= size:
                break
            s.set_team(line.pop(0), BLU if blu < red else RED)
        s._drain()

    # --- rounds -------------------------------------------------------------------------

    def waiting_for_players(self, seconds: float = 30.0) -> None:
        """The pre-game round and its restart (not in arena: SetInWaitingForPlayers refuses)."""
        s = self.server
        if self.mode == "arena":
            return
        s.forward("TF2_OnWaitingForPlayersStart")
        self._round_spawn(float(seconds))
        s.fire("teamplay_round_start", full_reset=1)
        s.advance(PREROUND_SECONDS)
        s.fire("teamplay_round_active")
        self._respawn_all()
        s.advance(max(seconds - PREROUND_SECONDS, 0.0))
        s.fire("teamplay_restart_round")
        s.forward("TF2_OnWaitingForPlayersEnd")

    def _respawn_all(self) -> None:
        for client in self.server.clients.values():
            client.alive = client.team in (RED, BLU)

    def play_round(
        self,
        *,
        winner: int | None = None,
        activity: int = 3,
        moments: dict[float, Callable[[], None]] | None = None,
        timed_out: bool = False,
        margin: float | None = None,
    ) -> RoundRecord:
        """One round. `moments`: what happens at so many seconds after the doors go up
        (players leaving or joining mid-round, a medic's charge filling, ...).

        `margin`: how the round is won, in the mode's terms (MARGINS; None: the default
        there). The game plays it out and keeps the engine's values as TF2 does: flag
        captures, control point owners, the KOTH clocks, the stage clock, the carts, the
        destruction points, who is alive at the end.

        `timed_out`: the round timer runs out with the objective undecided, and TF2 calls
        CTeamplayRoundBasedRules::SetStalemate(STALEMATE_TIMER) (source-sdk-2013,
        teamplayroundbased_gamerules.cpp). With `mp_stalemate_enable` 0 that is
        SetWinningTeam(TEAM_UNASSIGNED, WINREASON_STALEMATE): teamplay_round_win with team 0,
        a draw, whoever `winner` names. With 1, sudden death begins: teamplay_round_stalemate
        (`reason` 1), no respawns; State_Think_STALEMATE then ends the round with
        teamplay_round_win when a team is all dead (`winner`, WINREASON_OPPONENTS_DEAD,
        `was_sudden_death` 1), or with team 0 (WINREASON_STALEMATE) when `winner` is 0."""
        s = self.server
        number = len(self.rounds) + 1
        setup = SETUP_SECONDS.get(self.mode, 0)
        length = self.round_seconds or ROUND_SECONDS[self.mode]
        if margin is not None and winner not in (RED, BLU):
            raise ValueError("a margin needs the round's winner, RED or BLU")
        check_margin(
            self.mode,
            winner or 0,
            margin,
            length=length,
            koth=self.koth_length(length),
            caps=self.caps_per_round(),
        )
        self._doors_up(length)
        for after, action in (moments or {}).items():
            s.at(s.now + after, action)
        record = RoundRecord(number, s.map, round(s.now, 3), self.teams())
        self.rounds.append(record)
        self.round_live = True
        if setup:
            self._end_setup(setup, length)
        won = winner if winner is not None else self._draw_winner()
        self._play(won, length, activity, decided=not timed_out, margin=margin)
        sudden_death = False
        if timed_out:
            won, sudden_death = self._stalemate(won)
        record.winner = {RED: "red", BLU: "blue"}.get(won, "draw")
        self._streak = self._streak + 1 if won == self.last_winner else 1
        self.last_winner = won
        self.round_live = False
        before = s.global_string("g_slLastRoundId")
        reason = WINREASON_ALL_POINTS_CAPTURED
        if timed_out:
            reason = WINREASON_OPPONENTS_DEAD if won in (RED, BLU) else WINREASON_STALEMATE
        elif self.mode in SWITCHING and won == RED:
            reason = WINREASON_DEFEND_UNTIL_TIME_LIMIT
        s.fire(
            "teamplay_round_win",
            team=won,
            winreason=reason,
            full_round=1,
            round_time=float(length),
            losing_team_num_caps=0,
            was_sudden_death=int(sudden_death),
        )
        after = s.global_string("g_slLastRoundId")  # the id the plugin gave the round's report
        record.round_id = after if after != before else None
        # Attack/defend and payload maps set their control point master's "switch teams":
        # after a full round the attackers defend.
        self.switch_teams = self.mode in SWITCHING
        record.ended = round(s.now, 3)
        s.advance(BONUS_SECONDS)
        return record

    # --- round timers (CTeamRoundTimer, teamplay_round_timer.cpp) ---------------------------

    def timers(self) -> list[Entity]:
        return [e for e in self.server.entities.values() if e.classname == "team_round_timer"]

    def _round_spawn(self, length: float) -> None:
        """Before teamplay_round_start (InputRoundSpawn): each enabled timer is set, paused,
        to its setup time, or else its length (SetTime: m_nTimerLength too); a timer in setup
        sets the game rules' m_bInSetup (CTeamRoundTimer::SetState). KOTH's clocks are new
        each round (CTFGameRules::SetupOnRoundStart clears m_hRedKothTimer and
        m_hBlueKothTimer, tf_logic_koth makes them again), each at the KOTH length. The round
        starts afresh: no flag captured, the points at their default owners, the carts at the
        start, no destruction points."""
        in_setup = False
        rules = self._gamerules()
        koth = self.koth_length(length)
        for timer in self.timers():
            props = timer.props
            props["m_bTimerPaused"] = 1
            team = props.get("__koth_team")
            if team:
                props["m_flTimeRemaining"] = koth
                props["m_nTimerLength"] = round(koth)
                rules["m_hRedKothTimer" if team == RED else "m_hBlueKothTimer"] = timer.index
            elif not props["m_bIsDisabled"]:
                setup = props["m_nSetupTimeLength"]
                props["m_flTimeRemaining"] = float(setup or length)
                props["m_nTimerLength"] = round(setup or length)
                in_setup = in_setup or setup > 0
                if props["m_bShowInHUD"]:
                    self._resource()["m_iTimerToShowInHUD"] = timer.index
        self.set_in_setup(in_setup)
        for team in self.entities_of("tf_team"):
            team.props["m_nFlagCaptures"] = 0
        for number, point in enumerate(self.points()):
            self._resource()["m_bInMiniRound"][number] = int(point.props["__stage"] == 1)
            self.set_owner(number, point.props["m_iDefaultOwner"])
        for entity in self.entities_of("team_train_watcher"):
            entity.props["m_flTotalProgress"] = 0.0
        for entity in self._destruction():
            entity.props["m_nRedScore"] = entity.props["m_nBlueScore"] = 0

    def koth_length(self, length: float) -> float:
        """Each team's KOTH clock: `koth_seconds`, else 3/4 of the round's length (180 s of
        the default 240, tf_logic_koth's timer_length default)."""
        if self.koth_seconds is not None:
            return float(self.koth_seconds)
        return KOTH_SECONDS * length / ROUND_SECONDS["koth"]

    # --- the game's state the plugin reads (netprops) ------------------------------------

    def entities_of(self, classname: str) -> list[Entity]:
        return [e for e in self.server.entities.values() if e.classname == classname]

    def _resource(self) -> dict[str, Any]:
        return self.entities_of("tf_objective_resource")[0].props

    def _destruction(self) -> list[Entity]:
        return [
            *self.entities_of("tf_logic_player_destruction"),
            *self.entities_of("tf_logic_robot_destruction"),
        ]

    def points(self) -> list[Entity]:
        """The map's control points, in the objective resource's order (the entities')."""
        return self.entities_of("team_control_point")

    def set_owner(self, number: int, team: int) -> None:
        """Point `number` now belongs to `team`: the point's m_iTeamNum and the objective
        resource's m_iOwner."""
        self.points()[number].props["m_iTeamNum"] = team
        self._resource()["m_iOwner"][number] = team

    def owners(self) -> list[int]:
        """The owner of each point in the stage in play."""
        resource = self._resource()
        return [
            resource["m_iOwner"][n]
            for n in range(resource["m_iNumControlPoints"])
            if resource["m_bInMiniRound"][n]
        ]

    def team_entity(self, team: int) -> Entity:
        return next(e for e in self.entities_of("tf_team") if e.props["m_iTeamNum"] == team)

    def watcher(self, team: int) -> Entity:
        watchers = self.entities_of("team_train_watcher")
        return next(e for e in watchers if e.props["m_iTeamNum"] == team)

    def _gamerules(self) -> dict[str, Any]:
        rules = next(e for e in self.server.entities.values() if e.classname == "tf_gamerules")
        return rules.props

    def set_in_setup(self, in_setup: bool) -> None:
        """The game rules' m_bInSetup (a round timer in its setup time)."""
        self._gamerules()["m_bInSetup"] = int(in_setup)

    def _resume_timers(self) -> None:
        """The doors go up: the enabled timers run (KOTH's wait for a capture)."""
        for timer in self.timers():
            if not timer.props["m_bIsDisabled"] and not timer.props.get("__koth_team"):
                self._resume(timer)

    def _resume(self, timer: Entity) -> None:
        props = timer.props
        if props["m_bTimerPaused"]:
            props["m_bTimerPaused"] = 0
            props["m_flTimerEndTime"] = self.server.game_time() + props["m_flTimeRemaining"]

    def _pause(self, timer: Entity) -> None:
        props = timer.props
        if not props["m_bTimerPaused"]:
            props["m_bTimerPaused"] = 1
            props["m_flTimeRemaining"] = props["m_flTimerEndTime"] - self.server.game_time()

    def _setup_finished(self, length: float) -> None:
        """RoundTimerSetupThink: after teamplay_setup_finished, SetState(RT_STATE_NORMAL)
        (m_bInSetup 0) and the round's length on the timer (its m_nTimerLength too)."""
        self.set_in_setup(False)
        for timer in self.timers():
            if not timer.props["m_bIsDisabled"] and not timer.props.get("__koth_team"):
                timer.props["m_flTimerEndTime"] = self.server.game_time() + length
                timer.props["m_nTimerLength"] = round(length)

    def koth_capture(self, team: int) -> None:
        """KOTH: `team` holds the point; its timer runs, the other team's is paused."""
        for timer in self.timers():
            owner = timer.props.get("__koth_team")
            if owner == team:
                self._resume(timer)
            elif owner:
                self._pause(timer)

    def set_time_left(self, seconds: float) -> None:
        """The running timers (the stage's, or the KOTH point holder's) show `seconds` left."""
        for timer in self.timers():
            if not timer.props["m_bTimerPaused"] and not timer.props["m_bIsDisabled"]:
                timer.props["m_flTimerEndTime"] = self.server.game_time() + seconds

    def _stalemate(self, won: int) -> tuple[int, bool]:
        """The round timer ran out: (the round's winner, whether it was won in sudden death)."""
        s = self.server
        if not int(float(s.convars["mp_stalemate_enable"].value or 0)):
            return UNASSIGNED, False
        s.fire("teamplay_round_stalemate", reason=STALEMATE_TIMER)
        s.advance(SUDDEN_DEATH_SECONDS)
        if won not in (RED, BLU):
            return UNASSIGNED, False
        for client in s.sorted_clients():  # the losers die, one by one; nobody respawns
            if client.alive and client.team not in (won, SPECTATOR, UNASSIGNED):
                client.alive = False
                s.fire("player_death", userid=client.userid, attacker=0, death_flags=0)
        return won, True

    def begin_round(self) -> None:
        """A round's start, as play_round begins it, left under way: the pre-round, the doors
        going up and the setup time; then the caller plays it (the timers run)."""
        length = self.round_seconds or ROUND_SECONDS[self.mode]
        self._doors_up(length)
        self.round_live = True
        setup = SETUP_SECONDS.get(self.mode, 0)
        if setup:
            self._end_setup(setup, length)

    def _doors_up(self, length: float) -> None:
        """Arena's queue or the switch of sides, teamplay_round_start, the pre-round, then
        the doors: the timers run and teamplay_round_active fires."""
        s = self.server
        if self.mode == "arena":
            self.arena_team_logic()
        if self.switch_teams:
            self.switch_sides()
        self._round_spawn(float(length))
        s.fire("teamplay_round_start", full_reset=1)
        self._respawn_all()
        s.advance(ARENA_PREROUND_SECONDS if self.mode == "arena" else PREROUND_SECONDS)
        if self.mode == "arena":
            s.fire("arena_round_start")
        self._resume_timers()
        s.fire("teamplay_round_active")

    def _end_setup(self, setup: float, length: float) -> None:
        self.server.advance(setup)
        self.server.fire("teamplay_setup_finished")
        self._setup_finished(float(length))

    def switch_sides(self) -> None:
        """TF2's HandleSwitchTeams, in the pre-round of the round after a full round of an
        attack/defend or payload map (CTeamplayRoundBasedRules::RoundRespawn: the switch,
        then every player respawns; then teamplay_round_start): each player on RED goes to
        BLU and each on BLU to RED, one player_team each. Nobody dies of it: the round's
        respawn follows."""
        s = self.server
        self.switch_teams = False
        for client in s.sorted_clients():
            if client.team in (RED, BLU):
                client.alive = False
                s.set_team(client, BLU if client.team == RED else RED)

    def _draw_winner(self) -> int:
        red = sum(self.skills.get(i, 0.0) for i in self.teams()["red"])
        blu = sum(self.skills.get(i, 0.0) for i in self.teams()["blue"])
        if self.mode == "mvm":
            blu = red  # the robots: a coin
        p_red = 1.0 / (1.0 + math.exp(-(red - blu)))
        return RED if self.server.rng.random() < p_red else BLU

    def _play(
        self,
        won: int,
        length: float,
        activity: int,
        *,
        decided: bool = True,
        margin: float | None = None,
    ) -> None:
        """Damage, heals and the mode's objectives, spread over the round (`decided`: the
        winners complete the objective at the end; else the timer runs out).

        The steps take 3/4 of the round's length, as the game's clock runs: KOTH's winners
        then hold the point until their clock runs out; attack/defend's and payload's
        attackers capture the last point with `margin` seconds left (default: a quarter of
        the clock), and their defenders win when the clock runs out."""
        s = self.server
        steps = max(activity, 1)
        lost = BLU if won == RED else RED
        played = length * steps / (steps + 1)
        if decided and self.mode in SWITCHING:
            left = margin if margin is not None else length / 4
            played = length - left if won == BLU else length
        for step in range(steps):
            s.advance(played / steps)
            live = [c for c in s.sorted_clients() if c.alive and c.team in (RED, BLU)]
            for client in live:
                foes = [c for c in live if c.team != client.team]
                if client.tf_class == MEDIC:
                    mates = [c for c in live if c.team == client.team and c is not client]
                    if mates:
                        patient = s.rng.choice(mates)
                        s.fire(
                            "player_healed", patient=patient.userid, healer=client.userid, amount=50
                        )
                elif foes:
                    victim = s.rng.choice(foes)
                    client.score += 1
                    s.fire(
                        "player_hurt",
                        userid=victim.userid,
                        attacker=client.userid,
                        health=50,
                        damageamount=50,
                        custom=0,
                        showdisguisedcrit=0,
                        crit=0,
                        minicrit=0,
                        allseecrit=0,
                        weaponid=0,
                        bonuseffect=0,
                    )
            self._objective(step, steps, won, lost, decided, margin)
        if decided and self.mode == "koth":
            self._koth_finish(won)
        if decided and self.mode == "arena":
            self._arena_finish(won, margin)

    def _objective(
        self, step: int, steps: int, won: int, lost: int, decided: bool, margin: float | None
    ) -> None:
        if step == 0:
            self._early(won, lost, margin)
        if step == steps - 1 and decided:
            self._complete(won, lost, margin)

    def _complete(self, won: int, lost: int, margin: float | None) -> None:
        """The last step of a decided round: the winners complete their objective."""
        if self.mode == "cp":
            for number, point in enumerate(self.points()):
                if point.props["m_iTeamNum"] != won:
                    self._point_captured(number, won)
        elif self.mode == "plr":
            self._cart(lost, margin or 0.0)
            self._cart(won, 1.0)
        elif self.mode in SWITCHING and won == BLU:
            self._attackers_took(1.0)
        elif self.mode in ("ctf", "pass"):
            for _ in range(self.caps_per_round() - self._flags(won)):
                self._flag_captured(won)
        elif self.mode in MAX_POINTS:
            self._destruction_points(won, MAX_POINTS[self.mode])

    def _early(self, won: int, lost: int, margin: float | None) -> None:
        """The first step's objectives: the losers' share of the round (MARGINS)."""
        if self.mode == "koth":
            self._koth_early(won, lost, margin)
        elif self.mode == "cp":
            self._cp_early(lost, margin)
        elif self.mode in ("ctf", "pass"):
            for _ in range(int(margin or 0)):
                self._flag_captured(lost)
        elif self.mode in SWITCHING and won == RED:
            self._attackers_took(margin or 0.0)
        elif self.mode in MAX_POINTS:
            self._destruction_points(lost, int(margin or 0))

    def _koth_early(self, won: int, lost: int, margin: float | None) -> None:
        """KOTH: the losers take the point and hold it (`margin` seconds, or by chance), then
        the winners take it; or the winners take it at once."""
        s = self.server
        if margin is None:
            captures = s.rng.random() < self.loser_captures
            hold = self.round_length() / 8
        else:
            captures, hold = margin > 0, margin
        if not captures:
            self._point_captured(0, won)
            return
        self._point_captured(0, lost)
        self._retake_at = s.now + hold
        s.at(self._retake_at, lambda: self._point_captured(0, won))

    def _cp_early(self, lost: int, margin: float | None) -> None:
        """Control points: the losers take `margin` points (or one by chance), the middle
        first, then the winners' nearest it."""
        if margin is None:
            taken = 1 if self.server.rng.random() < self.loser_captures else 0
        else:
            taken = int(margin)
        count = len(self.points())
        mid = count // 2
        beyond = range(mid - 1, -1, -1) if lost == BLU else range(mid + 1, count)
        for number in [mid, *beyond][:taken]:
            self._point_captured(number, lost)

    def caps_per_round(self) -> int:
        """The captures that win a CTF or PASS Time round (tf_flag_caps_per_round; at 0 the
        emulated round is still won by one)."""
        return int(float(self.server.convars["tf_flag_caps_per_round"].value or 0)) or 1

    def round_length(self) -> float:
        return float(self.round_seconds or ROUND_SECONDS[self.mode])

    def _point_captured(self, number: int, team: int) -> None:
        """`team` captures point `number`: its owner changes (KOTH: the clocks too), and
        teamplay_point_captured fires."""
        self.set_owner(number, team)
        self._captured(team)
        self.server.fire(
            "teamplay_point_captured", cp=number, cpname="point", team=team, cappers=""
        )

    def _stage_points(self) -> list[int]:
        resource = self._resource()
        return [n for n in range(len(self.points())) if resource["m_bInMiniRound"][n]]

    def _attackers_took(self, share: float) -> None:
        """Attack/defend and payload, a defence to the end: the attackers (BLU) took `share`
        of the stage: its points in order (attack/defend), or the cart that far, capturing
        each checkpoint it passes (payload)."""
        if self.mode == "ad":
            stage = self._stage_points()
            for number in stage[: int(share * len(stage) + 1e-9)]:
                if self.points()[number].props["m_iTeamNum"] != BLU:
                    self._point_captured(number, BLU)
        else:
            self._cart(BLU, share)

    def _cart(self, team: int, share: float) -> None:
        """`team`'s cart reaches `share` of its track (m_flTotalProgress), capturing the
        checkpoints it passes: payload's points at even shares of the track (the last at its
        end), payload race's at PLR_CHECKPOINT and the end."""
        watcher = self.watcher(team)
        before = watcher.props["m_flTotalProgress"]
        watcher.props["m_flTotalProgress"] = share
        if self.mode == "pl":
            points = self.points()
            marks = [(n + 1) / len(points) for n in range(len(points))]
            for number, mark in enumerate(marks):
                if before < mark <= share + 1e-9:
                    self._point_captured(number, team)
        else:
            number = 0 if team == RED else 1
            for mark in (PLR_CHECKPOINT, 1.0):
                if before < mark <= share + 1e-9:
                    self._point_captured(number, team)

    def _flags(self, team: int) -> int:
        return int(self.team_entity(team).props["m_nFlagCaptures"])

    def _flag_captured(self, team: int) -> None:
        """A capture for `team`: CTF's intelligence brought home by one of its live players
        (teamplay_flag_event), or a PASS Time goal; the team's m_nFlagCaptures counts it."""
        s = self.server
        self.team_entity(team).props["m_nFlagCaptures"] = self._flags(team) + 1
        carriers = [c for c in s.sorted_clients() if c.team == team and c.alive]
        if self.mode == "ctf" and carriers:
            s.fire(
                "teamplay_flag_event",
                player=carriers[0].index,
                carrier=carriers[0].index,
                eventtype=2,
                home=0,
                team=team,
            )

    def _destruction_points(self, team: int, points: int) -> None:
        for logic in self._destruction():
            logic.props["m_nRedScore" if team == RED else "m_nBlueScore"] = points

    def _koth_finish(self, won: int) -> None:
        """KOTH: the winners hold the point until their clock runs out (a capture still to come
        happens first); the round ends then."""
        s = self.server
        if self._retake_at > s.now:
            s.advance(self._retake_at - s.now)
        self._retake_at = 0.0
        timer = next(t for t in self.timers() if t.props.get("__koth_team") == won)
        left = timer.props["m_flTimerEndTime"] - s.game_time()
        if not timer.props["m_bTimerPaused"] and left > 0:
            s.advance(left)

    def _arena_finish(self, won: int, margin: float | None) -> None:
        """Arena, won by elimination: the winners fall to `margin` alive (default: half of
        them, rounded up), then the last losers die; each a player_death."""
        s = self.server
        winners = [c for c in s.sorted_clients() if c.alive and c.team == won]
        lost = BLU if won == RED else RED
        losers = [c for c in s.sorted_clients() if c.alive and c.team == lost]
        keep = int(margin) if margin is not None else (len(winners) + 1) // 2
        for client in winners[keep:]:
            client.alive = False
            killer = losers[0].userid if losers else 0
            s.fire("player_death", userid=client.userid, attacker=killer, death_flags=0)
        for client in losers:
            client.alive = False
            killer = winners[0].userid if winners else 0
            s.fire("player_death", userid=client.userid, attacker=killer, death_flags=0)

    def _captured(self, team: int) -> None:
        if self.mode == "koth" and team in (RED, BLU):
            self.koth_capture(team)

    def capture(self, cappers: list[Client]) -> None:
        """These players capture a point for their team now (`cappers`: a character per
        capper, its client index): the map's second point, or its only one, changes owner."""
        team = cappers[0].team
        number = min(1, len(self.points()) - 1)
        if number >= 0:
            self.set_owner(number, team)
        self._captured(team)
        self.server.fire(
            "teamplay_point_captured",
            cp=max(number, 0),
            cpname="point",
            team=team,
            cappers="".join(chr(c.index) for c in cappers),
        )

    # --- moments ------------------------------------------------------------------------

    def tick(self, seconds: float) -> None:
        self.server.advance(seconds)
