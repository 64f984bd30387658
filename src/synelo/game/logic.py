"""Round, scramble and autobalance logic: one state machine per game-mode family.

Pure and event-driven: `feed(event)` takes one event (a flat dict, see `typedefs`) and answers
the actions the game server must take, in order. No I/O, no clock: time is the events' `t`,
and a timer (the autobalance delay) fires at the first event at or after its deadline, with
the deadline as the action's `t` (a `tick` event only advances time).

Actions:
- `report_round`: `winner`, `team_a`/`team_b` (rosters at round start: they decide P) and
  `participants_a`/`participants_b` (the players rated), each sorted. The client adds round_id.
- `request_splits`: `players`, the eligible pool (on A, B or waiting), sorted.
- `scramble`: `reason`; the scramble is pending until the host applies it (`apply_scramble`).
  An automatic trigger fires only as the settings' controls allow (`scramble_*`).
- `move`: `player`, `from`, `to`, `reason` (`odd_joiner`, `f11`, `sectors_edge`); the state
  machine has already applied it (the engine's team_change that follows changes nothing).
- `teams`: `source` (`cache` or `fallback`), `A`, `B`, `waiting`: the pending scramble applied
  (`synelo.game.splits`); the state machine has seated everyone already.

MvM is inert: no action at all.
"""

from __future__ import annotations

from collections.abc import Callable

from synelo.balance import MatchState, SectorsEdgePolicy, SEPlayer, place_joiner, transfer_moves
from synelo.game import splits
from synelo.game.typedefs import (
    EVENT_TYPES,
    MODE_ALIASES,
    MODES,
    ROUND_TRIGGERS,
    Action,
    Event,
    GameSettings,
    Side,
    Slot,
    event_time,
    other,
)

SIDES: tuple[Side, Side] = ("A", "B")


class RoundLogic:
    """What every mode shares: rosters, participation, mid-round autobalance, waiting for
    players. Subclasses decide participation details and when to scramble."""

    family = "base"
    rate_active_only = True  # outside arena: rated = dealt or took damage, or healed
    autobalances = True  # outside arena mid-round joins go straight to a team
    waiting_scramble = True

    def __init__(self, settings: GameSettings | None = None) -> None:
        self.settings = settings or GameSettings()
        self.slot: dict[str, Slot] = {}  # every connected player's team
        self.rating: dict[str, int] = {}
        self.pub_power: dict[str, float] = {}
        self.points: dict[str, int] = {}
        self.party: set[str] = set()
        self.now = 0.0
        self.live = False  # between round_start (doors up) and round_end
        self.round = 0  # rounds started
        self.start_teams: dict[str, Side] = {}
        self.active: set[str] = set()  # dealt or took damage, or healed, this round
        self.last_side: dict[str, Side] = {}  # each player's latest side this round
        self.left_idle: set[str] = set()  # left before any activity this round
        self.captures = {"A": 0, "B": 0}
        self.attackers: Side = "B"
        self.joiner: str | None = None  # the odd joiner of this round, while it matters
        self.pending_since: float | None = None  # when the imbalance was first seen
        self.moved: set[str] = set()  # Sector's Edge: moved once this round
        self.round_started_at = 0.0
        self.last_scramble_at: float | None = None  # when the last scramble fired
        self.scramble_pending = False
        self.splits: list[splits.Split] = []  # the service's last answer
        self.sectors_edge = (
            SectorsEdgePolicy(delay=self.settings.se_delay, power_gap=self.settings.se_power_gap)
            if self.settings.autobalance == "sectors_edge"
            else None
        )

    # -- the entry point -------------------------------------------------------------------

    def feed(self, event: Event) -> list[Action]:
        """Consume one event; the actions it (and any timer due by its time) causes."""
        t = event_time(event, EVENT_TYPES, self.now)
        kind = event["type"]
        out: list[Action] = []
        deadline = self.deadline()
        if deadline is not None and t >= deadline:
            self.now = deadline
            self._autobalance(out)
        self.now = t
        handler: Callable[[Event, list[Action]], None] = getattr(self, f"_on_{kind}")
        handler(event, out)
        return out

    # -- rosters ---------------------------------------------------------------------------

    def team(self, side: Side) -> list[str]:
        return sorted(p for p, s in self.slot.items() if s == side)

    def eligible(self) -> list[str]:
        """Everyone who is not unassigned or a spectator (SynElo's N)."""
        return sorted(p for p, s in self.slot.items() if s != "none")

    def _rating(self, player: str) -> int:
        return self.rating.get(player, self.settings.r0)

    def _on_join(self, e: Event, out: list[Action]) -> None:
        player, slot = e["player"], e.get("team", "none")
        if "rating" in e:
            self.rating[player] = int(e["rating"])
        if "pub_power" in e:
            self.pub_power[player] = float(e["pub_power"])
        if e.get("party"):
            self.party.add(player)
        sizes_equal = len(self.team("A")) == len(self.team("B"))
        self._seat(player, slot)
        if self.live and slot in SIDES:
            self.joiner = player if sizes_equal else None
        self._roster_changed(out)

    def _on_leave(self, e: Event, out: list[Action]) -> None:
        player = e["player"]
        self.slot.pop(player, None)
        if self.live and player in self.start_teams and player not in self.active:
            self.left_idle.add(player)
        if self.joiner == player:
            self.joiner = None
        self._roster_changed(out)

    def _on_team_change(self, e: Event, out: list[Action]) -> None:
        player, slot = e["player"], e["team"]
        if self.slot.get(player) == slot:
            return  # the engine confirming a move made here
        self._seat(player, slot)
        if self.joiner == player:
            self.joiner = None
        self._roster_changed(out)

    def _on_rating(self, e: Event, out: list[Action]) -> None:
        self.rating[e["player"]] = int(e["rating"])

    def _on_points(self, e: Event, out: list[Action]) -> None:
        self.points[e["player"]] = int(e["points"])

    def _on_tick(self, e: Event, out: list[Action]) -> None:
        pass

    # -- the split cache and the scramble --------------------------------------------------

    def _on_splits(self, e: Event, out: list[Action]) -> None:
        """The service answered /splits: its splits replace the cache."""
        self.splits = [(list(s["A"]), list(s["B"])) for s in e["splits"]]

    def _on_apply_scramble(self, e: Event, out: list[Action]) -> None:
        """The host applies the pending scramble (before the doors go up): the cached split
        (`synelo.game.splits`); with nothing usable cached, the local fallback when the
        service did not answer (`service_down`) or when 2 or 3 players are eligible, too few
        to ask it (its splits start at 2v2); otherwise it stays pending."""
        if not self.scramble_pending:
            return
        eligible = self.eligible()
        arena = self.family == "arena"
        split = splits.choose(self.splits, eligible, arena)
        source = "cache"
        if split is None:
            if len(eligible) < 2 or (len(eligible) >= 4 and not e.get("service_down")):
                return
            source = "fallback"
        if split is not None and arena:
            placed = splits.arena_seats(split, eligible)
        else:
            placed = splits.plan(split, eligible, self._rating, bench_odd=arena)
        seats = splits.named(placed, self.slot)
        self.scramble_pending = False
        out.append(
            {
                "t": self.now,
                "type": "teams",
                "source": source,
                "A": sorted(p for p, s in seats.items() if s == "A"),
                "B": sorted(p for p, s in seats.items() if s == "B"),
                "waiting": sorted(p for p, s in seats.items() if s == "waiting"),
            }
        )
        for p, side in seats.items():
            if self.joiner == p and self.slot.get(p) != side:
                self.joiner = None
            self._seat(p, side)
        self._roster_changed(out)

    # -- participation ---------------------------------------------------------------------

    def _mark_active(self, player: str | None) -> None:
        if self.live and player and self.slot.get(player) in SIDES:
            self.active.add(player)

    def _on_damage(self, e: Event, out: list[Action]) -> None:
        self._mark_active(e.get("attacker"))
        self._mark_active(e.get("victim"))

    def _on_heal(self, e: Event, out: list[Action]) -> None:
        self._mark_active(e.get("healer"))

    def participants(self) -> dict[Side, list[str]]:
        """Rated players by side. Arena: on a team at doors up and did not leave before any
        activity. Elsewhere: anyone who dealt or took damage or healed, on their round-start
        side when they had one (the service rates a player on that side only), else on the
        last side they were on (a mid-round joiner moved by autobalance counts for the new)."""
        if self.rate_active_only:
            chosen = {p: self.start_teams.get(p, self.last_side.get(p)) for p in self.active}
        else:
            chosen = {p: s for p, s in self.start_teams.items() if p not in self.left_idle}
        return {side: sorted(p for p, s in chosen.items() if s == side) for side in SIDES}

    # -- the round -------------------------------------------------------------------------

    def _on_waiting_ended(self, e: Event, out: list[Action]) -> None:
        if self.waiting_scramble:
            out.append(self._request_splits())
            self._scramble(out, "waiting_ended")

    def _on_round_start(self, e: Event, out: list[Action]) -> None:
        self.live = True
        self.round += 1
        self.start_teams = {p: s for p, s in self.slot.items() if s in SIDES}
        self.active, self.left_idle = set(), set()
        self.last_side = dict(self.start_teams)
        self.captures = {"A": 0, "B": 0}
        self.round_started_at = self.now
        self.attackers = e.get("attackers", "B")
        self.joiner = self.pending_since = None
        self.moved = set()
        self._roster_changed(out)

    def _on_capture(self, e: Event, out: list[Action]) -> None:
        if self.live:
            self.captures[e["team"]] += 1

    def _on_round_end(self, e: Event, out: list[Action]) -> None:
        if not self.live:
            return
        self.live = False
        self.joiner = self.pending_since = None
        winner = e["winner"]
        start = {
            side: sorted(p for p, s in self.start_teams.items() if s == side) for side in SIDES
        }
        rated = self.participants()
        if start["A"] and start["B"] and (rated["A"] or rated["B"]):
            out.append(
                {
                    "t": self.now,
                    "type": "report_round",
                    "winner": winner,
                    "team_a": start["A"],
                    "team_b": start["B"],
                    "participants_a": rated["A"],
                    "participants_b": rated["B"],
                }
            )
        out.append(self._request_splits())
        reason = self.scramble_reason(e)
        if reason is not None:
            self._scramble(out, reason)

    def scramble_reason(self, e: Event) -> str | None:
        """The family's scramble trigger, checked at every round end."""
        raise NotImplementedError

    def _request_splits(self) -> Action:
        return {"t": self.now, "type": "request_splits", "players": self.eligible()}

    def _scramble(self, out: list[Action], reason: str) -> None:
        if not self.allowed(reason):
            return  # held back: the trigger's counters go on
        self.reset_counters()
        self.last_scramble_at = self.now
        self.scramble_pending = True
        out.append({"t": self.now, "type": "scramble", "reason": reason})

    def allowed(self, trigger: str) -> bool:
        """Whether the controls let an automatic trigger fire now: its switch, the eligible
        players, the cooldown since any scramble and, for the triggers judged on a round's
        outcome, the round-time window."""
        s = self.settings
        if (
            not s.trigger_on(trigger)
            or len(self.eligible()) < s.scramble_min_players
            or (
                self.last_scramble_at is not None
                and self.now - self.last_scramble_at < s.scramble_cooldown
            )
        ):
            return False
        if trigger not in ROUND_TRIGGERS:
            return True
        lasted = self.now - self.round_started_at
        return lasted >= s.scramble_round_min and (
            s.scramble_round_max <= 0 or lasted <= s.scramble_round_max
        )

    def reset_counters(self) -> None:
        """Forget the trigger state once the teams are scrambled."""

    # -- mid-round autobalance -------------------------------------------------------------

    def _roster_changed(self, out: list[Action]) -> None:
        if not self.live or not self.autobalances:
            return
        if self.sectors_edge is not None:
            self.sectors_edge.check(self._se_players(), MatchState(), self.now)
            return
        if self._imbalance() is None:
            self.pending_since = None  # resolved itself: cancelled
        elif self.pending_since is None:
            self.pending_since = self.now

    def deadline(self) -> float | None:
        """When the pending autobalance fires (None: nothing pending)."""
        if self.pending_since is None:
            return None
        return self.pending_since + self.settings.autobalance_delay

    def _imbalance(self) -> str | None:
        """ "f11" when the sizes differ by 2 or more; "odd_joiner" when the last joiner made
        them differ by 1 and would leave a smaller gap on the other side; else None."""
        a, b = self.team("A"), self.team("B")
        if abs(len(a) - len(b)) >= 2:
            return "f11"
        j = self.joiner
        if j is None or abs(len(a) - len(b)) != 1:
            return None
        side = self.slot.get(j)
        if side != "A" and side != "B":  # (spelled out so that mypy narrows it to a Side)
            return None
        if len(self.team(side)) < len(self.team(other(side))):
            return None
        rest_a, rest_b = [p for p in a if p != j], [p for p in b if p != j]
        players = [*rest_a, *rest_b, j]
        ratings = [self._rating(p) for p in players]
        best = place_joiner(
            ratings,
            range(len(rest_a)),
            range(len(rest_a), len(rest_a) + len(rest_b)),
            len(players) - 1,
        )
        return "odd_joiner" if best != side else None

    def _autobalance(self, out: list[Action]) -> None:
        """The delay has passed and the imbalance is still there: fix it (odd joiner or F11)."""
        kind = self._imbalance()
        self.pending_since = None
        if kind == "odd_joiner":
            j = self.joiner
            assert j is not None
            self._move(out, j, other(self.slot[j]), kind)  # type: ignore[arg-type]
            self.joiner = None
        elif kind == "f11":
            a, b = self.team("A"), self.team("B")
            players = [*a, *b]
            outcome = transfer_moves(
                [self._rating(p) for p in players], range(len(a)), range(len(a), len(players))
            )
            for m in outcome.moves:
                self._move(out, players[m.player], m.to_team, kind)
            self.joiner = None

    def _move(self, out: list[Action], player: str, to: Side, reason: str) -> None:
        out.append(
            {
                "t": self.now,
                "type": "move",
                "player": player,
                "from": self.slot[player],
                "to": to,
                "reason": reason,
            }
        )
        self._seat(player, to)

    def _seat(self, player: str, slot: Slot) -> None:
        self.slot[player] = slot
        if slot in SIDES:
            self.last_side[player] = slot

    # -- Sector's Edge instead of F11 -------------------------------------------

    def _se_players(self) -> dict[str, SEPlayer]:
        return {
            p: SEPlayer(
                p,
                s,
                self.pub_power.get(p, 0.0),
                self.points.get(p, 0),
                p in self.party,
                p in self.moved,
            )
            for p, s in self.slot.items()
            if s in SIDES
        }

    def _on_death(self, e: Event, out: list[Action]) -> None:
        if not self.live or self.sectors_edge is None or not self.autobalances:
            return
        move = self.sectors_edge.on_death(e["player"], self._se_players(), MatchState(), self.now)
        if move is not None:
            self.moved.add(move.player)
            self._move(out, move.player, move.to_team, "sectors_edge")
            self.sectors_edge.check(self._se_players(), MatchState(), self.now)


class ArenaLogic(RoundLogic):
    """Arena: round 1 a 1v1 duel, round 2 scrambled unconditionally, then a scramble when one
    team wins `streak` rounds in a row (counted from the last scramble; a draw breaks it).
    Participants are the doors-up rosters less those who left before any activity; the
    queue absorbs mid-round joins (no autobalance) and the round-2 scramble plays the part
    of the waiting-for-players scramble."""

    family = "arena"
    rate_active_only = False
    autobalances = False
    waiting_scramble = False

    def __init__(self, settings: GameSettings | None = None) -> None:
        super().__init__(settings)
        self.streak_team: str | None = None
        self.streak = 0

    def scramble_reason(self, e: Event) -> str | None:
        if self.round == 1:
            return "arena_round_2"
        winner = e["winner"]
        if winner in SIDES and winner == self.streak_team:
            self.streak += 1
        else:
            self.streak_team, self.streak = (winner, 1) if winner in SIDES else (None, 0)
        if self.round >= 3 and self.streak >= self.settings.streak:
            return "streak"
        return None

    def reset_counters(self) -> None:
        self.streak_team, self.streak = None, 0


class AttackDefendLogic(RoundLogic):
    """Attack/defend and payload: scramble when the attackers (round_start's `attackers`,
    default B) lose without capturing anything — they ran out of time — or after
    `full_rounds` rounds with the full_round flag since the last scramble."""

    family = "attack_defend"

    def __init__(self, settings: GameSettings | None = None) -> None:
        super().__init__(settings)
        self.full = 0

    def scramble_reason(self, e: Event) -> str | None:
        if e.get("full_round"):
            self.full += 1
        if e["winner"] == other(self.attackers) and self.captures[self.attackers] == 0:
            return "attackers_timed_out"
        if self.full >= self.settings.full_rounds:
            return "full_rounds"
        return None

    def reset_counters(self) -> None:
        self.full = 0


class CaptureLogic(RoundLogic):
    """KOTH and 5CP (control points), CTF (flags) and Payload Race (checkpoints): scramble
    when the losing team never captured before the other won. `capture` events count points,
    flags or checkpoints alike. In Payload Race both teams attack, so the attackers' timeout
    cannot apply; a race whose loser never reached a checkpoint is the same stomp."""

    family = "capture"

    def scramble_reason(self, e: Event) -> str | None:
        winner = e["winner"]
        if winner in SIDES and self.captures[other(winner)] == 0:
            return "no_capture"
        return None


class ObjectiveLogic(RoundLogic):
    """Player Destruction, Robot Destruction, PASS Time and Special Delivery: rated and
    autobalanced, scrambled when waiting for players ends, no round-end trigger (they never
    fire a capture, so no_capture would fire after every round)."""

    family = "objective"

    def scramble_reason(self, e: Event) -> str | None:
        return None


class InertLogic(RoundLogic):
    """Mann vs. Machine: synelo never moves a player, never reports, never scrambles."""

    family = "inert"

    def feed(self, event: Event) -> list[Action]:
        self.now = event_time(event, EVENT_TYPES, self.now)
        return []

    def scramble_reason(self, e: Event) -> str | None:
        return None


FAMILIES: dict[str, type[RoundLogic]] = {
    "arena": ArenaLogic,
    "attack_defend": AttackDefendLogic,
    "payload": AttackDefendLogic,
    "koth": CaptureLogic,
    "cp": CaptureLogic,
    "ctf": CaptureLogic,
    "payload_race": CaptureLogic,
    "mvm": InertLogic,
    "pd": ObjectiveLogic,
    "rd": ObjectiveLogic,
    "pass": ObjectiveLogic,
    "sd": ObjectiveLogic,
}
assert set(FAMILIES) == set(MODES)


def logic_for(mode: str, settings: GameSettings | None = None) -> RoundLogic:
    """The state machine of a game mode (`MODES`, or a short name of `MODE_ALIASES`)."""
    try:
        return FAMILIES[MODE_ALIASES.get(mode, mode)](settings)
    except KeyError:
        raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}") from None
