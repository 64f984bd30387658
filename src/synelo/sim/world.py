"""The simulated world: players with a hidden true skill, game servers that run rounds through
`synelo.game` and talk to the service through `synelo.client`, exactly as a plugin would.

A round's winner is drawn from F1's logistic model on the **true** skills of the round-start
teams, with the world's own scale Θ_world: P(A wins) = 1/(1 + exp(−(Σ true_A − Σ true_B)/Θ_world)).
A thrower, from `throw_from` on, loses on purpose for `throw_rounds` of their own rounds: a
team with a throwing player on it loses (if both teams have one, the draw is as usual).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synelo.client import RoundReporter, RoundResult, ServiceUnavailable, SplitCache, SyneloClient
from synelo.game import GameSettings, RoundLogic, logic_for
from synelo.game.typedefs import Slot

STEAM_BASE = 76561197960265728


def steam_id(n: int) -> str:
    return str(STEAM_BASE + n)


@dataclass
class SimPlayer:
    id: str
    skill: float  # hidden true skill, on the rating scale
    role: str = "regular"  # regular | thrower | smurf
    throws_left: int = 0  # a thrower's rounds still to lose on purpose
    online_from: int = 0  # global round from which the player may connect
    always_on: bool = False  # adversaries stay connected once on
    server: int | None = None  # the server they are on


@dataclass
class RoundRecord:
    """What the simulator knows of one reported round."""

    round_id: str
    server: int
    index: int  # global round number when it was played (1-based)
    winner: str
    true_p: float
    participants: int
    result: RoundResult | None = None
    # the round-start teams the winner was drawn from (the MAP bound's rounds)
    teams: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))


@dataclass
class Observations:
    reports: dict[str, RoundRecord] = field(default_factory=dict)
    scrambles: list[tuple[int, str, bool]] = field(default_factory=list)  # (round, reason, done)
    trajectory: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    rounds_played: int = 0
    moves: int = 0


class SimServer:
    """One game server: its state machine, its reporter and split cache, its players."""

    def __init__(
        self, index: int, mode: str, team_size: int, client: SyneloClient, settings: GameSettings
    ) -> None:
        self.index, self.mode, self.team_size = index, mode, team_size
        self.id = f"sim{index}"
        self.client = client
        self.logic: RoundLogic = logic_for(mode, settings)
        self.clock = 0.0  # this server's simulated seconds
        self.reporter = RoundReporter(client, self.id, clock=lambda: self.clock)
        self.cache = SplitCache(client, max_k=team_size)
        self.capacity = 2 * team_size + (2 if mode == "arena" else 0)
        self.started = False
        self.known: dict[str, int] = {}  # ratings this server was told
        self.round_p = 0.5  # P(A wins) the current round's winner is drawn from
        self.round_teams: tuple[list[str], list[str]] = ([], [])  # its round-start teams

    @property
    def slots(self) -> dict[str, Slot]:
        return self.logic.slot


class World:
    """Players, servers and the loop that plays the rounds one after another (the server
    whose clock is earliest plays next), feeding every event to its state machine and
    carrying out every action through the client."""

    def __init__(
        self,
        *,
        players: list[SimPlayer],
        servers: list[SimServer],
        theta: float,
        rng: np.random.Generator,
        churn: float = 0.02,
        join_rate: float = 0.5,
        throw_from: int = 0,
        idle: float = 0.03,
    ) -> None:
        self.players = {p.id: p for p in players}
        self.servers = servers
        self.theta, self.rng = theta, rng
        self.churn, self.join_rate, self.idle = churn, join_rate, idle
        self.throw_from = throw_from
        # per thrower: the global rounds of their first and last thrown round
        self.throw_span: dict[str, tuple[int, int]] = {}
        self.obs = Observations()
        self.round = 0  # global rounds played

    # -- truth -----------------------------------------------------------------------------

    def true_p(self, team_a: list[str], team_b: list[str]) -> float:
        """F1's logistic on the true skills of the round-start teams, at the world's scale."""
        skill = self.players
        gap = sum(skill[p].skill for p in team_a) - sum(skill[p].skill for p in team_b)
        return 1.0 / (1.0 + math.exp(-gap / self.theta))

    def throwing(self, pid: str) -> bool:
        p = self.players[pid]
        return p.role == "thrower" and self.round >= self.throw_from and p.throws_left > 0

    def round_p(self, team_a: list[str], team_b: list[str]) -> float:
        """P(A wins) of this round: the true P, or 0 or 1 when only one team has a throwing
        player on it. Counts the throwers' thrown rounds."""
        thrown_a = [p for p in team_a if self.throwing(p)]
        thrown_b = [p for p in team_b if self.throwing(p)]
        for pid in thrown_a + thrown_b:
            self.players[pid].throws_left -= 1
            first = self.throw_span.get(pid, (self.round, self.round))[0]
            self.throw_span[pid] = (first, self.round)
        if thrown_a and not thrown_b:
            return 0.0
        if thrown_b and not thrown_a:
            return 1.0
        return self.true_p(team_a, team_b) if team_a and team_b else 0.5

    # -- the loop --------------------------------------------------------------------------

    def step(self, before_round: Callable[[int], None] | None = None) -> None:
        """Play one round on the server whose clock is earliest."""
        server = min(self.servers, key=lambda s: (s.clock, s.index))
        self.round += 1
        if before_round is not None:
            before_round(self.round)
        self.play_round(server)

    def feed(self, server: SimServer, event: dict[str, Any]) -> None:
        """One event to the server's state machine (a timer due by then fires first), and
        its actions carried out."""
        self.handle(server, server.logic.feed(event))

    def offline(self) -> list[str]:
        return [
            p.id for p in self.players.values() if p.server is None and p.online_from <= self.round
        ]

    def connect(self, server: SimServer, pid: str, t: float, team: str) -> None:
        self.players[pid].server = server.index
        rating = server.known.get(pid)
        try:
            rating = server.client.player(pid).rating
            server.known[pid] = rating
        except ServiceUnavailable:
            pass  # the plugin keeps what it knew, or R_0
        # pub_power (Sector's Edge's scoreboard history) follows the true skill
        event: dict[str, Any] = {
            "t": t,
            "type": "join",
            "player": pid,
            "team": team,
            "pub_power": self.players[pid].skill,
        }
        if rating is not None:
            event["rating"] = rating
        self.feed(server, event)

    def engine_team(self, server: SimServer) -> str:
        """Where the game puts a joiner: the arena queue, else the smaller team (a coin on
        a tie)."""
        if server.mode == "arena":
            return "waiting"
        a, b = len(server.logic.team("A")), len(server.logic.team("B"))
        if a != b:
            return "A" if a < b else "B"
        return "A" if self.rng.random() < 0.5 else "B"

    def fill(self, server: SimServer, t: float) -> None:
        """Before a round: free slots are taken by players who are online."""
        free = server.capacity - len(server.slots)
        candidates = self.offline()
        always = [p for p in candidates if self.players[p].always_on]
        others = [p for p in candidates if not self.players[p].always_on]
        self.rng.shuffle(others)
        for pid in (always + others)[: max(free, 0)]:
            self.connect(server, pid, t, self.engine_team(server))

    def seat_waiting(self, server: SimServer, t: float) -> None:
        """Outside arena nobody waits at round start: the game seats them on the smaller
        team. In arena, short teams are filled from the queue."""
        waiting = [p for p, s in sorted(server.slots.items()) if s == "waiting"]
        for pid in waiting:
            a, b = len(server.logic.team("A")), len(server.logic.team("B"))
            if server.mode == "arena" and min(a, b) >= server.team_size:
                break
            if server.mode == "arena" and server.logic.round == 0 and min(a, b) >= 1:
                break  # round 1 is a 1v1 duel
            self.feed(
                server,
                {"t": t, "type": "team_change", "player": pid, "team": "A" if a <= b else "B"},
            )

    def play_round(self, server: SimServer) -> None:
        rng, t = self.rng, server.clock
        if not server.started:
            self.fill(server, t)
            server.started = True
            self.feed(server, {"t": t, "type": "waiting_ended"})
        else:
            self.fill(server, t)
        self.seat_waiting(server, t)
        t += 1.0
        attackers = "A" if rng.random() < 0.5 else "B"
        halves = server.mode in ("attack_defend", "payload")
        if halves:  # stopwatch: the teams swap sides, two halves make a full round
            attackers = "B" if server.logic.round % 2 == 0 else "A"
        self.feed(server, {"t": t, "type": "round_start", "attackers": attackers})
        team_a, team_b = server.logic.team("A"), server.logic.team("B")
        self.obs.rounds_played += 1
        length = float(rng.uniform(120, 480))
        end = t + length
        p_a = server.round_p = self.round_p(team_a, team_b)
        server.round_teams = (list(team_a), list(team_b))
        winner = "A" if rng.random() < p_a else "B"
        loser = "B" if winner == "A" else "A"
        p_loser = p_a if loser == "A" else 1 - p_a
        timeline: list[tuple[float, int, dict[str, Any]]] = []
        n = 0

        def at(time: float, event: dict[str, Any]) -> None:
            nonlocal n
            n += 1
            timeline.append((time, n, event))

        for pid in team_a + team_b:
            if rng.random() >= self.idle:
                at(t + float(rng.uniform(1, length)), {"type": "fight", "player": pid})
            if not self.players[pid].always_on and rng.random() < self.churn:
                gone = t + float(rng.uniform(1, length))
                at(gone, {"type": "leave", "player": pid})
                if rng.random() < self.join_rate:  # someone takes the slot mid-round
                    at(float(rng.uniform(gone, end)), {"type": "arrive"})
        at(t + float(rng.uniform(1, length)), {"type": "capture", "team": winner})
        if rng.random() < min(1.0, 2 * p_loser):
            at(t + float(rng.uniform(1, length)), {"type": "capture", "team": loser})
        for time, _, event in sorted(timeline, key=lambda x: (x[0], x[1])):
            self.happen(server, time, event)
        self.feed(
            server,
            {
                "t": end,
                "type": "round_end",
                "winner": winner,
                "full_round": not halves or server.logic.round % 2 == 0,
            },
        )
        server.clock = end + float(rng.uniform(5, 15))

    def happen(self, server: SimServer, t: float, event: dict[str, Any]) -> None:  # noqa: C901
        kind = event["type"]
        slots = server.slots
        if kind == "fight":
            pid = event["player"]
            side = slots.get(pid)
            if side not in ("A", "B"):
                return
            foes = server.logic.team("B" if side == "A" else "A")
            if foes:
                victim = foes[int(self.rng.integers(len(foes)))]
                self.feed(server, {"t": t, "type": "damage", "attacker": pid, "victim": victim})
                if server.logic.sectors_edge is not None and self.rng.random() < 0.5:
                    # Sector's Edge moves players when they die (F11 needs no deaths)
                    self.feed(server, {"t": t, "type": "death", "player": victim})
        elif kind == "leave":
            pid = event["player"]
            if pid in slots:
                self.players[pid].server = None
                self.feed(server, {"t": t, "type": "leave", "player": pid})
        elif kind == "arrive":
            candidates = self.offline()
            if candidates and len(slots) < server.capacity:
                pid = candidates[int(self.rng.integers(len(candidates)))]
                self.connect(server, pid, t, self.engine_team(server))
                if slots.get(pid) in ("A", "B") and self.rng.random() < 0.8:
                    self.feed(server, {"t": t, "type": "damage", "victim": pid})
        elif kind == "capture":
            self.feed(server, {"t": t, "type": "capture", "team": event["team"]})

    # -- actions ---------------------------------------------------------------------------

    def handle(self, server: SimServer, actions: list[dict[str, Any]]) -> None:
        scrambling = any(a["type"] == "scramble" for a in actions)
        for action in actions:
            kind = action["type"]
            if kind == "report_round":
                self.report(server, action)
            elif kind == "request_splits":
                server.cache.refresh(action["players"], self.current(server))
                if server.cache.pending and not scrambling:  # the next try of a pending one
                    self.scramble(server, action["t"], "pending")
            elif kind == "scramble":
                self.scramble(server, action["t"], action["reason"])
            elif kind == "move":
                self.obs.moves += 1

    def current(self, server: SimServer) -> tuple[list[str], list[str]]:
        return server.logic.team("A"), server.logic.team("B")

    def report(self, server: SimServer, action: dict[str, Any]) -> None:
        teams = (action["team_a"], action["team_b"])
        participants = (action["participants_a"], action["participants_b"])
        results = server.reporter.report(action["winner"], teams, participants)
        round_id = server.reporter.last_round_id
        assert round_id is not None  # report() has just set it
        self.obs.reports[round_id] = RoundRecord(
            round_id,
            server.index,
            self.round,
            action["winner"],
            server.round_p,  # the P the winner was drawn from (0 or 1 in a thrown round)
            len(participants[0]) + len(participants[1]),
            teams=server.round_teams,
        )
        for result in results:
            self.record(server, result)

    def record(self, server: SimServer, result: RoundResult) -> None:
        rec = self.obs.reports.get(result.round_id)
        if rec is not None and rec.result is None:
            rec.result = result
        for change in result.players:
            server.known[change.steam_id] = change.after
            if self.players[change.steam_id].role != "regular":
                self.obs.trajectory.setdefault(change.steam_id, []).append(
                    (self.round, result.seq, change.after)
                )
            if change.steam_id in server.slots:
                server.logic.feed(
                    {
                        "t": server.logic.now,
                        "type": "rating",
                        "player": change.steam_id,
                        "rating": change.after,
                    }
                )

    def scramble(self, server: SimServer, t: float, reason: str) -> None:
        eligible = server.logic.eligible()
        split = server.cache.scramble(eligible, self.current(server))
        self.obs.scrambles.append((self.round, reason, split is not None))
        if split is None:
            return
        seated = split.players
        for pid in eligible:
            team = "A" if pid in split.A else "B" if pid in split.B else "waiting"
            if pid in seated or server.slots.get(pid) != "waiting":
                self.feed(server, {"t": t, "type": "team_change", "player": pid, "team": team})
