"""A scenario: a server of one mode, its players and what happens to them, run on the plugin.

`run(options)` plays it and returns the record `python -m plugin.emulate --json` writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugin.emulate.engine import BLU, RED, SPECTATOR, Server
from plugin.emulate.game import MODES, Game
from plugin.emulate.loader import ensure_built, sha256
from plugin.emulate.natives import TopMenu, flag_bits
from plugin.emulate.ripext import Http

NAME_LEN = 32  # TF2 names are at most 32 bytes
ROBOTS = 4  # MvM: the robots' bots on BLU (as many as the slots leave, up to this)


@dataclass
class Options:
    mode: str = "koth"
    players: int = 13
    rounds: int = 6
    url: str = "http://127.0.0.1:8000"
    token: str = ""
    pool: str = "default"
    seed: int = 1
    max_clients: int = 0  # 0: the players and 2 slots more, at least 24
    long_names: bool = False  # 32-byte names (multi-byte characters)
    late_joiners: int = 0  # join one by one during round 2
    leavers: int = 0  # leave during round 2
    outage: tuple[int, int] | None = None  # (first round, rounds): the service is down
    votes: bool = False  # everyone votes to scramble during round 2
    admins: int = 0  # the first N players have the admin flag `b` (generic)
    convars: dict[str, str] = field(default_factory=dict)
    winners: str = ""  # each round's winner, R or B (a round past the end: drawn by skill)
    round_seconds: float = 0.0  # every round's length (0: the mode's)
    loser_captures: float = 0.5  # koth, cp: the chance the losers capture a point early on
    map_name: str | None = None  # the map's path, e.g. workshop/koth_x.ugc1 (None: the mode's)
    source_tv: bool = False  # SourceTV takes slot 1 (a fake client on Spectator) first
    smx: Path | None = None


@dataclass
class Run:
    """A scenario under way: the server, its game and the players who connected at the start."""

    server: Server
    game: Game
    players: list[Any]
    smx: Path

    def record(self) -> dict[str, Any]:
        return record(self.server, self.game, self.smx)


def player_name(n: int, long: bool) -> str:
    if not long:
        return f"player{n:02d}"
    base = f"ü{n:03d}" + "é" * 20  # two-byte characters, cut to 32 bytes below
    data = base.encode()[:NAME_LEN]
    return data.decode("utf-8", errors="ignore")


def run(options: Options) -> dict[str, Any]:
    """The whole scenario: the map starts, waiting for players, the rounds, then time for the
    buffered reports to go out; returns the record."""
    current = start(options)
    for r in range(1, options.rounds + 1):
        first, count = options.outage or (0, 0)
        current.server.http.down = first <= r < first + count
        if r == 2:
            _round_two_events(current.game, options, current.players)
        play(current, options, r)
    return finish(current)


def start(options: Options, *, wait: bool = True) -> Run:
    """The server starts with the plugin and the admin menu, the map loads, the players
    connect and join a team, and (with `wait`) waiting for players runs."""
    if options.mode not in MODES:
        raise ValueError(f"--mode must be one of {', '.join(MODES)}")
    smx = options.smx or ensure_built()
    robots = ROBOTS if options.mode == "mvm" else 0  # MvM's bots take slots too
    extra = robots + int(options.source_tv)
    slots = options.max_clients or max(24, options.players + 2 + options.late_joiners + extra)
    server = Server(smx, max_clients=min(slots, 101), seed=options.seed)
    server.http = Http()
    convars = {
        "sm_synelo_url": options.url.rstrip("/"),
        "sm_synelo_token": options.token,
        "sm_synelo_pool": options.pool,
        **options.convars,
    }
    game = Game(
        server,
        options.mode,
        round_seconds=options.round_seconds or None,
        loser_captures=options.loser_captures,
        map_name=options.map_name,
    )
    # The server starts: the map loads with the plugin (AskPluginLoad2 ... OnPluginStart),
    # OnMapStart, then server.cfg and cfg/sourcemod/plugin.synelo.cfg set the ConVars, then
    # OnConfigsExecuted (Game.start_map). The options' ConVars are that cfg: the plugin does not
    # see them in OnMapStart, on the first map or any other.
    server.map = ""
    server.admin_menu = server.handles.new(TopMenu())
    server.load()
    unknown = sorted(set(convars) - set(server.convars))
    if unknown:  # a typo would otherwise be a ConVar nobody reads
        raise ValueError(
            f"no such ConVar (neither the plugin's nor the engine's): {', '.join(unknown)}"
        )
    server.server_cfg.update(convars)
    game.start_map()
    if options.source_tv:
        server.set_team(game.connect("SourceTV", fake=True), SPECTATOR)
    players = []
    for n in range(1, options.players + 1):
        flags = flag_bits("b") if n <= options.admins else 0
        players.append(game.connect(player_name(n, options.long_names), flags=flags))
    for n in range(1, min(robots, server.max_clients - len(server.clients)) + 1):
        game.connect(f"robot{n}", fake=True)
    for client in server.sorted_clients():
        if client.team != SPECTATOR:
            game.join_team(client)
    if wait:
        game.waiting_for_players()
    return Run(server, game, players, smx)


def play(current: Run, options: Options, number: int, **round_options: Any) -> None:
    """Round `number` (from 1), its winner from `options.winners` when it names one."""
    pick = options.winners[number - 1 : number].upper()
    winner = {"R": RED, "B": BLU}.get(pick)
    round_options.setdefault("winner", winner)
    current.game.play_round(**round_options)


def finish(current: Run) -> dict[str, Any]:
    """The service is back, time passes for the buffered reports; the record."""
    current.server.http.down = False
    current.game.tick(600.0)  # time for the buffered reports to go out (backoff: at most 300 s)
    return current.record()


def _round_two_events(game: Game, options: Options, players: list[Any]) -> None:
    server = game.server
    for n in range(options.late_joiners):
        client = game.connect(player_name(options.players + n + 1, options.long_names))
        game.join_team(client)
        server.advance(1.0)
    for client in players[: options.leavers]:
        if client.index in server.clients:
            game.leave(client)
    if options.votes:
        for client in players:
            if client.index in server.clients:
                server.say(client.index, "!synelo_votescramble")


_REASON = re.compile(r"\(([a-z0-9_]+)\)\s*$")


def record(server: Server, game: Game, smx: Path) -> dict[str, Any]:
    _match_reports(server, game)
    actions = [e for e in server.log if e["kind"] == "action"]
    scrambles, moves = [], []
    for entry in actions:
        m = _REASON.search(entry["text"])
        reason = m.group(1) if m else ""
        if entry.get("target"):
            moves.append(
                {
                    "t": entry["t"],
                    "player": entry["target"],
                    "to": entry.get("to", ""),
                    "reason": reason,
                    "text": entry["text"],
                }
            )
        elif "scrambled the teams" in entry["text"]:
            scrambles.append({"t": entry["t"], "reason": reason, "text": entry["text"]})
    return {
        "smx_sha256": sha256(smx),
        "mode": game.mode,
        "map": server.map,
        "max_clients": server.max_clients,
        "rounds": [
            {
                "number": r.number,
                "map": r.map,
                "started": r.started,
                "ended": r.ended,
                "teams": r.teams,
                "winner": r.winner,
                "stored": r.stored,
                "round_id": r.round_id,
            }
            for r in game.rounds
        ],
        "scrambles": scrambles,
        "moves": moves,
        "team_changes": server.team_changes(),
        "reseats": reseats(server.team_changes()),
        "chat": server.chat,
        "log": [e for e in server.log if e["kind"] != "team"],
        "requests": [
            {
                "t": round(x.t, 3),
                "method": x.method,
                "path": x.url.split("/v1/", 1)[-1],
                "status": x.status,
                "error": x.error,
            }
            for x in server.http.exchanges
        ],
        "convars": {k: v.value for k, v in sorted(server.convars.items())},
        "status": server.run_command(0, "sm_synelo_status") if server.plugin else None,
    }


def reseats(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scrambles as the players see them, whatever the plugin logged: the instants at which
    the plugin moved players both from RED to BLU and from BLU to RED (a move to even the
    teams goes one way only), with how many players changed team then."""
    by_time: dict[float, list[dict[str, Any]]] = {}
    for change in changes:
        by_time.setdefault(change["t"], []).append(change)
    out = []
    for t, group in sorted(by_time.items()):
        ways = {(c["from"], c["to"]) for c in group}
        if {("red", "blue"), ("blue", "red")} <= ways:
            out.append({"t": t, "players": len(group)})
    return out


def _match_reports(server: Server, game: Game) -> None:
    """A round is stored when a report with its round_id got a 2xx from the service."""
    stored = {
        str(x.body.get("round_id"))
        for x in server.http.exchanges
        if x.method == "POST"
        and x.url.endswith("/rounds")
        and isinstance(x.body, dict)
        and 200 <= x.status < 300
    }
    for r in game.rounds:
        r.stored = r.round_id is not None and r.round_id in stored


def _round_key(round_id: str) -> tuple[str, int]:
    prefix, _, seq = round_id.rpartition("-")
    return (prefix, int(seq) if seq.isdigit() else 0)


__all__ = ["Options", "Run", "finish", "play", "record", "reseats", "run", "start", "RED", "BLU"]
