"""The event scripts (tests/game_scripts/, format in its README) replayed through the real
synelo.smx on the emulated TF2 server, and the plugin's actions read back from outside it.

`replay(script, smx)` loads the compiled plugin into a fresh `Server`, starts the mode's map
(`Game.start_map`: the map's entities, OnMapStart, OnConfigsExecuted) with the script's
settings as ConVars, turns each event into what a TF2 server does at the script's `t` (the
engine clock starts at 0 with the map, so `t` is the plugin's own clock), and returns the
actions it observed, in the order they happened, as the script's action objects.

Events (engine side):

- `join`: the client connects (SourceMod's connect, authorise and admin-check forwards; the
  plugin's player lookup is answered at once), then the engine seats it (`player_team`), as
  an auto-assign does: A is RED, B is BLU, `waiting` Spectator queued for arena
  (`m_bArenaSpectator` 0), `none` Spectator by choice. Not a `jointeam`: the plugin would
  place a live round's newcomer through `/autobalance` (the community rule `place_joiner`),
  while the script's joiner is "engine-assigned" and left to the odd-joiner rule.
- `leave`: disconnect. `team_change`: the engine moves the player (`player_team`).
- `damage`, `heal`: `player_hurt`, `player_healed`. `capture`: `teamplay_point_captured`
  (no cappers), in CTF `teamplay_flag_event` (captured) by the first player of that team.
- `points`: the player's scoreboard total (`m_iTotalScore`); `death`: the player dies
  (`player_death`).
- `waiting_ended`: `teamplay_restart_round`, then the TF2 extension's
  `TF2_OnWaitingForPlayersEnd`.
- `apply_scramble`: `teamplay_round_start`, the pre-round in which the plugin applies a
  pending scramble. `round_start`: the doors going up, `teamplay_round_active` (arena:
  `arena_round_start`; modes with a setup time: then `teamplay_setup_finished`). TF2 fires
  `teamplay_round_start` before every round; here it is fired only where the script has the
  host apply the scramble, since the plugin applies a pending one at every
  `teamplay_round_start` (the twin keeps it pending until `apply_scramble`).
- `round_end`: `teamplay_round_win` (team 0 for a draw) with `full_round`.
- `tick`: the clock moves on (the plugin's 1 s timer runs). `splits`: the service's answer
  to the `/splits` request it follows (see below). `rating`: refused (no script has one; the
  plugin learns ratings only from lookups and report answers).

The service is `Responder`, given to the server as `server.http` (the interface of
`ripext.Http`): lookups answer the script's ratings (a player without one is unknown: the
plugin uses r0); `/rounds` 201; `/autobalance` by `synelo.balance.transfer_moves`, or
`place_joiner` for a joiner, as the service's route does, with the script's ratings and the
teams in the order the body lists them; `/splits` is held and answered at the script's next
`splits` event with its splits, or, when the script has none for it, answered 503 at once
(nothing cached, as in the twin) -- except a request made in the pre-round of an
`apply_scramble`, which the service answers after the doors went up (503 at the
`round_start`), so the scramble stays pending as the twin's does, and one made while the
script says the service is down (`service_down`), which fails to connect at once (or, when
that pre-round's request is still unanswered, fails then: its timeout). A /splits request
sent from inside `teamplay_round_start` is the host's own fetch for the scramble it applies
(TryScramble), not the logic's `request_splits`, and is not reported as one. Players get
SteamIDs in the order of their script ids, so the plugin's id order is the script's.
Community scripts: `CommunityServer` below.

Actions (plugin side, all observed from outside the plugin):

- `report_round`: the body of POST /rounds (winner, teams, participants);
- `request_splits`: the `players` of POST /splits;
- `scramble`: the chat broadcast "Teams will be scrambled ... next round" at the decision;
  its reason from the admin command `sm_synelo_status` ("scramble pending: yes (reason N)");
- `teams`: the LogAction "synelo: scrambled the teams ..." (`(local split ...)`: the
  fallback), then every eligible player's team;
- `move`: the LogAction "synelo: moved ... (reason)" with its target's SteamID and new
  team; `from` is the team the engine saw the player leave.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugin.emulate.engine import BLU, RED, SPECTATOR, Client, ConVar, Server
from plugin.emulate.game import SETUP_SECONDS, Game
from plugin.emulate.loader import TRANSLATIONS
from plugin.emulate.natives import flag_bits
from plugin.emulate.ripext import Exchange, Request, Response

from synelo.balance import place_joiner, transfer_moves
from synelo.game.typedefs import TRIGGERS

FIRST_STEAM_ID = 76561197960265728
# A script's `immune` player: the generic admin flag, sm_synelo_immunity_flag's default.
IMMUNE_FLAG = "b"
# The script's modes as the emulator's (game.MODES)
MODE = {
    "arena": "arena",
    "attack_defend": "ad",
    "payload": "pl",
    "koth": "koth",
    "cp": "cp",
    "ctf": "ctf",
    "payload_race": "plr",
    "mvm": "mvm",
    "pd": "pd",
    "rd": "rd",
    "pass": "pass",
    "sd": "sd",
}
# The script's settings as the plugin's ConVars (plugin/README.md)
CONVAR = {
    "streak": "sm_synelo_streak",
    "full_rounds": "sm_synelo_full_rounds",
    "autobalance": "sm_synelo_autobalance",
    "autobalance_delay": "sm_synelo_autobalance_delay",
    "se_delay": "sm_synelo_se_delay",
    "se_power_gap": "sm_synelo_se_power_gap",
    "scramble_min_players": "sm_synelo_autoscramble_min_players",
    "scramble_cooldown": "sm_synelo_autoscramble_cooldown",
    "scramble_round_min": "sm_synelo_autoscramble_round_min",
    "scramble_round_max": "sm_synelo_autoscramble_round_max",
    "vote_percent": "sm_synelo_vote_ratio",
    "vote_min_players": "sm_synelo_vote_min_players",
    "vote_cooldown": "sm_synelo_vote_cooldown",
    "vote_map_delay": "sm_synelo_vote_delay",
    "vote_at_round_end": "sm_synelo_vote_at_round_end",
    "teamlock": "sm_synelo_teamlock_seconds",
    "teamlock_spectate": "sm_synelo_teamlock_spectate",
    "move_cooldown": "sm_synelo_move_cooldown",
    "parties": "sm_synelo_parties",
    "party_size": "sm_synelo_party_size",
    "command_interval": "sm_synelo_command_interval",
}
# SLWhy, as sm_synelo_status prints it
WHY = ["none", *TRIGGERS, "admin"]
SCRAMBLE_NEXT = "Teams will be scrambled by rating at the start of the next round."
R0 = 1000  # the plugin's rating of a player it has no rating for (SL_Configure's r0)


def convars(settings: dict[str, Any]) -> dict[str, str]:
    """The ConVars that give the plugin the script's settings."""
    # The twin moves an F11 player at once; the plugin waits up to sm_synelo_move_wait for a
    # live player to die (only the plugin knows who is alive): the scripts run without it.
    out: dict[str, str] = {"sm_synelo_move_wait": "0"}
    switches = {t: bool(settings.get(f"scramble_{t}", True)) for t in TRIGGERS}
    if not all(switches.values()):
        out["sm_synelo_autoscramble_triggers"] = ",".join(t for t in TRIGGERS if switches[t])
    for key, value in settings.items():
        if key.startswith("scramble_") and key[len("scramble_") :] in TRIGGERS:
            continue
        if key == "r0":
            if int(value) != R0:
                raise ValueError(f"the plugin's r0 is {R0}; the script sets {value}")
            continue
        if key not in CONVAR:
            raise ValueError(f"no ConVar for the setting {key!r}")
        out[CONVAR[key]] = str(int(value)) if isinstance(value, bool) else str(value)
    return out


@dataclass
class Held:
    """A /splits request the service answers later."""

    response: Response
    deliver: Any = None


@dataclass
class Responder:
    """The synelo service as the script has it answer (ripext.Http's interface)."""

    players: dict[str, str]  # steam id -> script player
    ratings: dict[str, int] = field(default_factory=dict)  # script player -> rating
    down: bool = False  # the script's service_down: every request fails to connect
    late: bool = False  # a pre-round: /splits is answered after the doors go up
    answer_next: list[dict[str, Any]] | None = None  # splits of the script's next `splits`
    keep_teams: bool = False  # /splits answers the current teams (a scramble that moves nobody)
    exchanges: list[Exchange] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)  # waiting for a `splits` event
    held_late: list[Held] = field(default_factory=list)  # waiting for the doors
    log: list[tuple[float, str, Any]] = field(default_factory=list)  # (t, path, body)

    def send(  # noqa: C901
        self, method: str, request: Request, body: bytes | None, now: float
    ) -> tuple[Response, str]:
        data = json.loads(body) if body else None
        path = request.url.split("/v1/", 1)[-1]
        path = path.split("/", 2)[-1] if path.startswith("pools/") else path
        self.log.append((now, path, data))
        if self.down:
            return self._note(now, method, request, data, Response(0, b"", {})), (
                "Failed to connect: Connection refused"
            )
        if path == "players/lookup":
            found = [
                {
                    "steam_id": sid,
                    "rating": self.ratings[self.players[sid]],
                    "visible": True,
                    "rounds_played": 10,
                    "place": None,
                }
                for sid in data["steam_ids"]
                if self.players.get(sid) in self.ratings
            ]
            return self._answer(now, method, request, data, 200, {"players": found})
        if path == "predict":
            return self._answer(now, method, request, data, 200, {"p_a": 0.5})
        if path.startswith("public/"):
            return self._answer(now, method, request, data, 200, {"players": []})
        if path == "rounds":
            return self._answer(now, method, request, data, 201, {"players": []})
        if path == "autobalance":
            return self._answer(now, method, request, data, 200, self._autobalance(data))
        if path == "splits" and self.keep_teams:
            split = {"k": min(len(data["current"]["A"]), len(data["current"]["B"]))}
            return self._answer(
                now, method, request, data, 200, {"splits": [split | data["current"]]}
            )
        if path == "splits":
            response = Response(503, b'{"detail": "busy"}', {})
            if self.answer_next is not None:
                self.held.append(Held(response))
            elif self.late:
                self.held_late.append(Held(response))
            return self._note(now, method, request, data, response), ""
        return self._answer(now, method, request, data, 404, {"detail": "not emulated"})

    def _note(
        self, now: float, method: str, request: Request, data: Any, response: Response
    ) -> Response:
        self.exchanges.append(Exchange(now, method, request.url, data, response.status, None, ""))
        return response

    def _answer(
        self, now: float, method: str, request: Request, data: Any, status: int, answer: Any
    ) -> tuple[Response, str]:
        response = Response(status, json.dumps(answer).encode(), {})
        return self._note(now, method, request, data, response), ""

    def rating(self, steam_id: str) -> int:
        return self.ratings.get(self.players[steam_id], R0)

    def _autobalance(self, body: dict[str, Any]) -> dict[str, Any]:
        a, b = list(body["teams"]["A"]), list(body["teams"]["B"])
        joiner = body.get("joiner")
        if joiner:
            everyone = [*a, *b, joiner]
            side = place_joiner(
                [self.rating(p) for p in everyone],
                range(len(a)),
                range(len(a), len(a) + len(b)),
                len(everyone) - 1,
            )
            return {"moves": [{"steam_id": joiner, "from": "none", "to": side}]}
        everyone = [*a, *b]
        locked = {everyone.index(p) for p in body.get("locked", []) if p in everyone}
        outcome = transfer_moves(
            [self.rating(p) for p in everyone],
            range(len(a)),
            range(len(a), len(everyone)),
            locked=locked,
        )
        return {
            "moves": [
                {"steam_id": everyone[m.player], "from": m.from_team, "to": m.to_team}
                for m in outcome.moves
            ]
        }


def _splits_answer(splits: list[dict[str, list[str]]], ids: dict[str, str]) -> bytes:
    return json.dumps(
        {
            "splits": [
                {
                    "k": min(len(s["A"]), len(s["B"])),
                    "A": [ids[p] for p in s["A"]],
                    "B": [ids[p] for p in s["B"]],
                }
                for s in splits
            ]
        }
    ).encode()


_REASON = re.compile(r"\(([a-z_0-9]+)\)\s*$")
_PENDING = re.compile(r"scramble pending: yes \(reason (\d+)\)")


class ScriptServer:
    """One script on one emulated server running the real plugin."""

    def __init__(self, script: dict[str, Any], smx: Path) -> None:
        self.script = script
        self.community = script["mode"] == "community"
        self.mode = "koth" if self.community else MODE[script["mode"]]
        # (a community `team_change` of a player not seen joining: they connect, then choose)
        seated = ("join", "team_change") if self.community else ("join",)
        names = sorted({e["player"] for e in script["events"] if e["type"] in seated})
        # SteamIDs in the players' order, so that the plugin's id order is the script's
        self.ids = {p: str(FIRST_STEAM_ID + 1 + n) for n, p in enumerate(names)}
        self.players = {sid: p for p, sid in self.ids.items()}
        self.server = Server(smx, max_clients=len(names) + 1, start_epoch=1_700_000_000)
        self.http = Responder(self.players)
        self.server.http = self.http
        self.game = Game(self.server, self.mode)
        self.actions: list[dict[str, Any]] = []
        self.stream: list[tuple[float, str, Any]] = []  # what the plugin did, in order
        self.last_team: dict[str, int] = {}  # steam id -> the team before the last change
        self.events = script["events"]
        self._hook_observers()
        s = self.server
        s.load()
        settings = dict(script.get("settings", {}))
        if self.community and not any(e["type"] == "command" for e in self.events):
            settings.setdefault("command_interval", 0)  # see CommunityServer
        for name, value in convars(settings).items():
            if name not in s.convars:
                s.convars[name] = ConVar(name, value, value)
        # The settings are the plugin's cfg: set after OnMapStart, before OnConfigsExecuted.
        s.server_cfg.update(convars(settings))
        self.game.start_map()

    # --- observing the plugin -----------------------------------------------------------

    def _hook_observers(self) -> None:
        s, stream = self.server, self.stream
        note, say_to, send = s.note, s.say_to, self.http.send

        def noted(kind: str, text: str) -> None:
            note(kind, text)
            stream.append((s.now, kind, s.log[-1]))

        def said(client: int, text: str) -> None:
            say_to(client, text)
            to = s.clients[client].steam_id if client in s.clients else ""
            stream.append((s.now, "chat", (self.players.get(to, ""), text)))

        def sent(method: str, request: Request, body: bytes | None, now: float) -> Any:
            response, error = send(method, request, body, now)
            stream.append((now, "http", self.http.log[-1]))
            if self.http.held and self.http.held[-1].response is response:
                self._hold(self.http.held[-1])
            elif self.http.held_late and self.http.held_late[-1].response is response:
                self._hold(self.http.held_late[-1])
            return response, error

        def team_changed(client: Client, old: int, new: int) -> None:
            self.last_team[client.steam_id] = old

        s.note = noted  # type: ignore[method-assign]
        s.say_to = said  # type: ignore[method-assign]
        self.http.send = sent  # type: ignore[method-assign]
        s.on_team_change.append(team_changed)

    def _hold(self, held: Held) -> None:
        """rip.ext's callback for this request waits until the service answers."""
        s = self.server
        queue_later = s.later

        def capture(action: Any) -> None:
            held.deliver = action
            s.later = queue_later  # type: ignore[method-assign]

        s.later = capture  # type: ignore[method-assign]

    def _release(self, held: list[Held], status: int, body: bytes) -> None:
        for h in held:
            h.response.status, h.response.body = status, body
            if h.deliver is not None:
                self.server.later(h.deliver)
        held.clear()

    # --- the script -------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]]:
        for index, event in enumerate(self.events):
            t = float(event["t"])
            self.server.advance(t - self.server.now)
            self._observe()
            self._next_splits(index)
            self.feed(event)
            self._observe()
        return self.actions

    def _next_splits(self, index: int) -> None:
        """The script's answer to a /splits request made now: its next `splits` event, unless
        another round end or waiting_ended comes first (then that request is its question)."""
        self.http.answer_next = None
        for event in self.events[index + 1 :]:
            if event["type"] == "splits":
                self.http.answer_next = event["splits"]
                return
            if event["type"] in ("round_end", "waiting_ended"):
                return

    def client(self, player: str) -> Client:
        found = self.server.by_steam(self.ids[player])
        if found is None or not found.connected:
            raise ValueError(f"{player} is not on the server")
        return found

    def seat(self, client: Client, team: str) -> None:
        s = self.server
        client.arena_spectator = team == "none"
        target = {"A": RED, "B": BLU, "waiting": SPECTATOR, "none": SPECTATOR}[team]
        s.set_team(client, target)
        s._drain()
        client.alive = target in (RED, BLU)

    def feed(self, e: dict[str, Any]) -> None:  # noqa: C901
        s, kind = self.server, e["type"]
        if kind == "join":
            if "rating" in e:
                self.http.ratings[e["player"]] = int(e["rating"])
            if e.get("party"):
                raise ValueError("a Sector's Edge party has no engine counterpart")
            if "pub_power" in e:
                self.http.ratings[e["player"]] = self.power_rating(e)
            flags = flag_bits(IMMUNE_FLAG) if e.get("immune") else 0
            client = s.connect(e["player"], steam_id=self.ids[e["player"]], flags=flags)
            self.seat(client, e.get("team", "none"))
        elif kind == "leave":
            s.disconnect(self.client(e["player"]))
        elif kind == "team_change":
            self.seat(self.client(e["player"]), e["team"])
        elif kind == "rating":
            raise ValueError("a `rating` event has no engine counterpart")
        elif kind == "waiting_ended":
            s.fire("teamplay_restart_round")
            s.forward("TF2_OnWaitingForPlayersEnd")
        elif kind == "apply_scramble":
            self.apply_scramble(bool(e.get("service_down", False)))
        elif kind == "round_start":
            self.doors_up()
        elif kind == "damage":
            attacker = self._userid(e.get("attacker"))
            victim = self._userid(e.get("victim"))
            s.fire("player_hurt", userid=victim, attacker=attacker, health=50, damageamount=50)
        elif kind == "heal":
            healer = self._userid(e.get("healer"))
            patient = self._userid(e.get("target")) or healer
            s.fire("player_healed", patient=patient, healer=healer, amount=50)
        elif kind == "capture":
            self.capture(e["team"])
        elif kind == "points":
            self.client(e["player"]).score = int(e["points"])
        elif kind == "death":
            victim = self.client(e["player"])
            victim.alive = False
            s.fire("player_death", userid=victim.userid, attacker=0, death_flags=0)
        elif kind == "round_end":
            team = {"A": RED, "B": BLU, "draw": 0}[e.get("winner", "draw")]
            s.fire(
                "teamplay_round_win",
                team=team,
                winreason=1 if team else 0,
                full_round=int(bool(e.get("full_round", False))),
                round_time=0.0,
                losing_team_num_caps=0,
                was_sudden_death=0,
            )
        elif kind == "tick":
            pass
        elif kind == "splits":
            body = _splits_answer(e["splits"], self.ids)
            self._release(self.http.held, 200, body)
        else:
            raise ValueError(f"unknown event type {kind!r}")

    def power_rating(self, e: dict[str, Any]) -> int:
        """Sector's Edge ranks players by pub power; the plugin ranks them by their rating
        (TF2 keeps no scoreboard history), so the script's pub power reaches it as the
        rating the lookup answers. Only where every rating is the same, so that no other
        rule sees a difference."""
        if len({j.get("rating", R0) for j in self.events if j["type"] == "join"}) != 1:
            raise ValueError("pub_power with unequal ratings: the plugin has one key for both")
        return R0 + round(10 * float(e["pub_power"]))

    def _userid(self, player: str | None) -> int:
        return self.client(player).userid if player else 0

    def capture(self, team: str) -> None:
        s, number = self.server, RED if team == "A" else BLU
        carriers = [c.index for c in s.sorted_clients() if c.team == number]
        if self.mode == "ctf" and carriers:  # the intelligence captured (eventtype 2)
            who = {"player": carriers[0], "carrier": carriers[0]}
            s.fire("teamplay_flag_event", eventtype=2, home=0, team=number, **who)
        else:
            s.fire("teamplay_point_captured", cp=0, cpname="point", team=number, cappers="")

    def apply_scramble(self, service_down: bool) -> None:
        """The pre-round: `teamplay_round_start`, where the plugin applies a pending scramble
        (asking for splits when none is usable). With `service_down` after such a request
        of an earlier `apply_scramble` is still unanswered, that request fails now (its
        timeout) instead: a second round start in one pre-round is not TF2's."""
        s, http = self.server, self.http
        mark = len(self.stream)
        if service_down and http.held_late:
            self._release(http.held_late, 0, b"")
        else:
            http.down, http.late = service_down, not service_down
            s.fire("teamplay_round_start", full_reset=1)
            for c in s.clients.values():
                c.alive = c.team in (RED, BLU)
            http.down = False
        for n in range(mark, len(self.stream)):
            t, kind, what = self.stream[n]
            if kind == "http" and what[1] == "splits":
                self.stream[n] = (t, "prefetch", what)  # the host's own fetch, not the logic's
        scrambled = [
            x
            for x in self.stream[mark:]
            if x[1] == "action" and x[2]["text"].startswith("synelo: scrambled the teams")
        ]
        if scrambled:
            self._teams(scrambled[-1])

    def doors_up(self) -> None:
        s = self.server
        self.http.late = False
        if self.mode == "arena":
            s.fire("arena_round_start")
        setup = bool(SETUP_SECONDS.get(self.mode))
        self.game.set_in_setup(setup)  # the round timer in its setup time (m_bInSetup)
        s.fire("teamplay_round_active")
        if setup:
            s.fire("teamplay_setup_finished")
            self.game.set_in_setup(False)
        self._release(self.http.held_late, 503, b'{"detail": "busy"}')

    # --- reading the actions ------------------------------------------------------------

    def _teams(self, entry: tuple[float, str, Any]) -> None:
        sides: dict[str, list[str]] = {"A": [], "B": [], "waiting": []}
        for c in self.server.sorted_clients():
            if c.steam_id not in self.players:
                continue
            if c.team == RED:
                sides["A"].append(self.players[c.steam_id])
            elif c.team == BLU:
                sides["B"].append(self.players[c.steam_id])
            elif self.mode == "arena" and c.team == SPECTATOR and not c.arena_spectator:
                sides["waiting"].append(self.players[c.steam_id])
        fallback = "(local split" in entry[2]["text"]
        self.stream.append(
            (
                entry[0],
                "teams",
                {
                    "source": "fallback" if fallback else "cache",
                    **{k: sorted(v) for k, v in sides.items()},
                },
            )
        )

    def _observe(self) -> None:
        """Turns what the plugin did since the last call into actions."""
        pending, self.stream[:] = list(self.stream), []
        announced = False
        for t, kind, what in pending:
            if kind == "http":
                self._http_action(t, what)
            elif kind == "chat" and what[1] == SCRAMBLE_NEXT and not announced:
                announced = True  # PrintToChatAll: once per player
                self.actions.append({"t": t, "type": "scramble", "reason": self._pending_why()})
            elif kind == "action" and what.get("target"):
                self._move(t, what)
            elif kind == "teams":
                self.actions.append({"t": t, "type": "teams", **what})
        self.stream[:] = []

    def _pending_why(self) -> str:
        reply = self.server.run_command(0, "sm_synelo_status") or ""
        m = _PENDING.search(reply)
        return WHY[int(m.group(1))] if m and int(m.group(1)) < len(WHY) else "unknown"

    def _http_action(self, t: float, what: tuple[float, str, Any]) -> None:
        _, path, body = what
        if path == "rounds":
            name = self.players.__getitem__
            self.actions.append(
                {
                    "t": t,
                    "type": "report_round",
                    "winner": body["winner"],
                    "team_a": sorted(map(name, body["teams"]["A"])),
                    "team_b": sorted(map(name, body["teams"]["B"])),
                    "participants_a": sorted(map(name, body["participants"]["A"])),
                    "participants_b": sorted(map(name, body["participants"]["B"])),
                }
            )
        elif path == "splits":
            expected = "even" if self.mode == "arena" else "all-play"
            if body.get("mode") != expected:
                raise AssertionError(f"/splits asked for mode {body.get('mode')!r}")
            players = sorted(self.players[p] for p in body["players"])
            self.actions.append({"t": t, "type": "request_splits", "players": players})

    def _move(self, t: float, entry: dict[str, Any]) -> None:
        m = _REASON.search(entry["text"])
        if not entry["text"].startswith("synelo: moved") or m is None:
            return
        side = {"red": "A", "blue": "B"}.get(entry["to"], "none")
        old = self.last_team.get(entry["target"])
        self.actions.append(
            {
                "t": t,
                "type": "move",
                "player": self.players[entry["target"]],
                "from": {RED: "A", BLU: "B"}.get(old, "none"),  # type: ignore[arg-type]
                "to": side,
                "reason": m.group(1),
            }
        )


def replay(script: dict[str, Any], smx: Path) -> list[dict[str, Any]]:
    """The actions the real plugin takes for the script's events, observed from outside."""
    if script["mode"] == "community":
        return CommunityServer(script, smx).run()
    return ScriptServer(script, smx).run()


# --- the community rules -------------------------------------------------------------------

UBERCHARGED = 5  # TFCond_Ubercharged: busy mid-life
_HELD = re.compile(
    r"\[synelo\] (.+?): held from moves \((immune|busy|cooldown)(?:, (\d+) s left)?\)$",
    re.MULTILINE,
)
COMMAND = {
    "rank": "sm_synelo_rank",
    "top": "sm_synelo_top",
    "balance": "sm_synelo_balance",
    "party": "sm_synelo_party",
    "votescramble": "sm_synelo_votescramble",
}
TIMED = ("too_early", "cooldown")  # refusals that say how long to wait
VOTE_WHY = ("not_playing", "already_voted", "pending", "too_early", "cooldown", "too_few_players")
_ATTEMPTS = re.compile(r"\[synelo\] (\S+): (\d+) team change\(s\) refused")


def phrases() -> dict[str, re.Pattern[str]]:
    """Each synelo phrase's English text as a pattern ({1}, {2}, ... captured in order)."""
    text = (TRANSLATIONS / "synelo.phrases.txt").read_text(encoding="utf-8")
    out = {}
    for key, english in re.findall(
        r'"(Synelo [^"]+)"\s*\{[^"]*(?:"#format"\s*"[^"]*"\s*)?"en"\s*"([^"]*)"', text
    ):
        parts = re.split(r"\{\d+\}", english)
        out[key] = re.compile("(.+?)".join(re.escape(part) for part in parts) + "$")
    return out


class CommunityServer(ScriptServer):
    """A community script (mode "community") on a KOTH server running the real plugin.

    Events: `map_start` (the first is the map the server starts on); `join` (`immune`: the
    admin flag `b`, sm_synelo_immunity_flag's default), `leave`, `team_change` as above;
    `round_start` the doors going up and `round_end` a draw; `vote` the chat command
    `!synelo_votescramble`; `team_request` the console command `jointeam red|blue` or
    `spectate`; `command` `sm_synelo_<command>`; `party_invite`, `party_accept`,
    `party_leave` `sm_synelo_party <target>|accept|leave`; `immune` the flag granted or
    removed and the admin cache rebuilt (OnRebuildAdminCache); `tick` time.
    `scrambled` an admin's `sm_synelo_scramble` applied at once in a pre-round
    (`teamplay_round_start`) with a split that keeps everyone's team (the service answers
    /splits with the body's `current` teams), so that the plugin's own scramble path locks
    the teams and starts the cooldown; below the service's 4 players the plugin splits
    locally (its fallback split, which keeps a 1 v 1). `moved` the admin command
    `sm_synelo_move <player> red|blue`, the rules' own move (the player is locked on the new
    team and their move cooldown starts). `move_request` whether autobalance may move the
    player now, as `sm_synelo_status` lists the players held from moves and why (`busy`:
    the player is übercharged during the request). A `team_change` of a player not seen
    joining connects them first, and an `immune` flag of one not yet here is the admin entry
    they connect with.

    The plugin limits every player command, `!synelo_party` included, to one use per
    `command_interval`; the twin limits only `command` events. A script without one runs
    with sm_synelo_command_interval 0, so that its party commands reach the party rules.

    Actions, from what the players read: the vote's broadcasts (counted, passed, passed at
    the round end), refusals (each reason's phrase, to the player), "Wait N seconds"
    (command_refused), the party messages (party_joined and party_left list the players
    who were told, the party's members), the team lock's message (team_refused; its
    attempts from `sm_synelo_status`), POST /autobalance with a `joiner` (place_joiner).
    A command that was not refused is command_run; a team request neither refused nor
    placed is team_allowed once the engine has seated the player there.
    """

    def __init__(self, script: dict[str, Any], smx: Path) -> None:
        super().__init__(script, smx)
        self.phrase = phrases()
        self.unapplied: list[dict[str, Any]] = []  # `scrambled` the plugin did not apply
        self.maps = 0
        self.admin_flags: dict[str, int] = {}  # `immune` before the join: their admin entry
        self.ever_joined: set[str] = set()

    def run(self) -> list[dict[str, Any]]:
        self.absent: list[dict[str, Any]] = []  # events of players not on the server
        for event in self.events:
            self.server.advance(float(event["t"]) - self.server.now)
            self.stream[:] = []
            who = event.get("player") if event["type"] not in ("join", "map_start") else None
            if event["type"] == "immune" and self._absent(who):
                self.admin_flags[who] = flag_bits(IMMUNE_FLAG) if event["immune"] else 0
                continue
            if event["type"] == "team_change" and who not in self.ever_joined:
                self.feed({"t": event["t"], "type": "join", "player": who, "team": "none"})
            if event["type"] == "join":
                self.ever_joined.add(event["player"])
            if who and self._absent(who):
                self.absent.append(event)  # a player who left types nothing
                continue
            logged = len(self.server.log)
            self.feed(event)
            if event["type"] == "scrambled" and not any(
                "synelo: scrambled the teams" in e["text"] for e in self.server.log[logged:]
            ):
                self.unapplied.append(event)
            self.read(event)
        return self.actions

    def _absent(self, player: str | None) -> bool:
        return bool(player) and self.server.by_steam(self.ids.get(player or "", "")) is None

    def feed(self, e: dict[str, Any]) -> None:  # noqa: C901
        s, kind = self.server, e["type"]
        player = e.get("player", "")
        if kind == "map_start":
            self.maps += 1
            if self.maps > 1 or s.now > 0:
                self.game.end_map()
                self.game.start_map()
                for client in s.sorted_clients():
                    s.call_if("OnClientConnected", client.index)
                    client.in_game = True
                    s.call_if("OnClientPutInServer", client.index)
                    s.authorize(client)
        elif kind == "vote":
            s.say(self.client(player).index, "!synelo_votescramble")
        elif kind == "team_request":
            line = {"A": "jointeam red", "B": "jointeam blue", "none": "spectate"}[e["team"]]
            s.run_command(self.client(player).index, line)
            s._drain()
        elif kind == "command":
            s.run_command(self.client(player).index, COMMAND[e["command"]])
        elif kind == "party_invite":
            reply = s.run_command(self.client(player).index, f"sm_synelo_party {e['target']}")
            if reply and reply.startswith("[SM] "):  # SourceMod's FindTarget found nobody
                self.stream.append((s.now, "target_error", reply))
        elif kind in ("party_accept", "party_leave"):
            word = "accept" if kind == "party_accept" else "leave"
            s.run_command(self.client(player).index, f"sm_synelo_party {word}")
        elif kind == "immune":
            self.client(player).flags = flag_bits(IMMUNE_FLAG) if e["immune"] else 0
            s.forward("OnRebuildAdminCache", 1)
        elif kind == "join" and player in self.admin_flags:
            super().feed({**e, "immune": bool(self.admin_flags.pop(player))})
        elif kind == "move_request":
            self.move_request(self.client(player), bool(e.get("busy")))
        elif kind == "moved":
            team = {"A": "red", "B": "blue"}[e["to"]]
            reply = s.run_command(0, f"sm_synelo_move {player} {team}") or ""
            if "moved" not in reply.split("\n")[-1]:
                raise AssertionError(f"sm_synelo_move {player} {team} refused: {reply!r}")
        elif kind == "round_start":
            self.doors_up()
        elif kind == "round_end":
            super().feed({**e, "winner": "draw", "full_round": True})
        elif kind == "scrambled":
            # An admin's scramble, applied in a pre-round with the service's split of the
            # current teams: everyone stays, and the plugin's scramble locks them and starts
            # the cooldown (SG_Scrambled), as the rule says.
            s.run_command(0, "sm_synelo_scramble")
            self.http.keep_teams = True
            s.fire("teamplay_round_start", full_reset=1)
            self.http.keep_teams = False
        else:
            super().feed(e)

    def move_request(self, client: Client, busy: bool) -> None:
        """Whether autobalance may move the client now, from sm_synelo_status's list of the
        players held from moves: a move_allowed or move_refused action (its wait, for the
        cooldown). Busy: übercharged and alive while the plugin is asked."""
        alive = client.alive
        if busy:
            client.alive = True
            client.conditions.add(UBERCHARGED)
        try:
            reply = self.server.run_command(0, "sm_synelo_status") or ""
        finally:
            client.conditions.discard(UBERCHARGED)
            client.alive = alive
        player = self.players[client.steam_id]
        held = {m.group(1): m for m in _HELD.finditer(reply)}
        if player not in held:
            allowed = {"type": "move_allowed", "player": player}
            self.stream.append((self.server.now, "move", allowed))
            return
        action = {"type": "move_refused", "player": player, "reason": held[player].group(2)}
        if held[player].group(3):
            action["wait"] = int(held[player].group(3))
        self.stream.append((self.server.now, "move", action))

    def _match(self, text: str) -> tuple[str, list[str]] | None:
        for key, pattern in self.phrase.items():
            m = pattern.match(text)
            if m:
                return key, list(m.groups())
        return None

    def read(self, e: dict[str, Any]) -> None:  # noqa: C901
        """The actions of one event, from what the plugin said and sent during it."""
        player, kind = e.get("player", ""), e["type"]
        got: list[dict[str, Any]] = []
        t = float(e["t"])
        told: dict[str, list[str]] = {}  # a party message -> who was told
        order: list[tuple[str, list[str]]] = []
        for _, what_kind, what in self.stream:
            if what_kind == "move":
                got.append(what)
            if what_kind == "http" and what[1] == "autobalance" and what[2].get("joiner"):
                got.append({"type": "place_joiner", "player": self.players[what[2]["joiner"]]})
            if what_kind == "target_error":
                got.append({"type": "party_refused", "player": player, "reason": "unknown_player"})
            if what_kind != "chat":
                continue
            to, text = what
            found = self._match(text)
            if found is None:
                continue
            key, args = found
            if key in ("Synelo Party Joined", "Synelo Party Left", "Synelo Party Dissolved"):
                if text not in told:
                    order.append((key, args))
                    told[text] = []
                told[text].append(to)
                continue
            if key == "Synelo Vote Counted":
                action = {"type": "vote_counted", "player": args[0]}
                action.update(votes=int(args[1]), needed=int(args[2]))
                if action not in got:
                    got.append(action)
            elif key in ("Synelo Vote Passed", "Synelo Vote Passed Round End"):
                kind_ = "scramble" if key == "Synelo Vote Passed" else "scramble_pending"
                if {"type": kind_, "reason": "vote"} not in got:
                    got.append({"type": kind_, "reason": "vote"})
            elif key.startswith("Synelo Refused "):
                why = key[len("Synelo Refused ") :]
                action = {"type": "vote_refused" if why in VOTE_WHY else "party_refused"}
                action.update(player=to, reason=why)
                if why in TIMED:
                    action["wait"] = int(args[0])
                got.append(action)
            elif key == "Synelo Team Locked":
                got.append(
                    {
                        "type": "team_refused",
                        "player": to,
                        "team": e["team"],
                        "reason": "team_lock",
                        "wait": int(args[0]),
                        "attempts": self._attempts(to),
                    }
                )
            elif key == "Synelo Command Wait":
                command = e.get("command") or ("votescramble" if kind == "vote" else "party")
                got.append(
                    {"type": "command_refused", "player": to, "command": command}
                    | {"wait": int(args[0])}
                )
            elif key == "Synelo Party Invited":
                got.append({"type": "party_invited", "player": to, "target": args[0]})
        for key, args in order:
            text = next(x for x in told if self._match(x) == (key, args))
            members = sorted(set(told[text]))
            if key == "Synelo Party Joined":
                got.append({"type": "party_joined", "player": args[0], "party": members})
            else:
                left = [m for m in members if m != args[0]]  # one left: dissolved
                got.append({"type": "party_left", "player": args[0], "party": left})
        if kind == "command" and not any(a["type"] == "command_refused" for a in got):
            got.append({"type": "command_run", "player": player, "command": e["command"]})
        if kind == "team_request" and not got:
            team = {RED: "A", BLU: "B"}.get(self.client(player).team, "none")
            got.append({"type": "team_allowed", "player": player, "team": team})
        self.actions.extend({"t": t, **a} for a in got)

    def _attempts(self, player: str) -> int:
        reply = self.server.run_command(0, "sm_synelo_status") or ""
        counts = {m.group(1): int(m.group(2)) for m in _ATTEMPTS.finditer(reply)}
        return counts.get(player, 0)
