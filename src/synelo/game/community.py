"""What a community server adds around the round logic: vote scramble, team lock after a
scramble, immunity from moves, parties and per-player command limits.

Pure and event-driven like `logic.RoundLogic`, and kept apart from it: these rules decide
whether a player may do something (vote, change team, be moved, use a command, form a
party), never how teams are split. The same rules are in the plugin's
`include/synelo/community.inc`; the event scripts of `tests/game_scripts/` with
`"mode": "community"` drive both (format in its README).

Times are the events' `t` in seconds; a wait in an action is whole seconds, rounded up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from synelo.game.typedefs import Action, Event, Side, Slot, event_time, settings_from

COMMUNITY_EVENTS = (
    "map_start",
    "join",
    "leave",
    "team_change",
    "round_start",
    "round_end",
    "vote",
    "scrambled",
    "moved",
    "team_request",
    "immune",
    "move_request",
    "command",
    "party_invite",
    "party_accept",
    "party_leave",
    "tick",
)
SIDES: tuple[Side, Side] = ("A", "B")


@dataclass(frozen=True, slots=True)
class CommunitySettings:
    """The plugin's ConVars for these rules; a script's `settings` overrides any of them."""

    vote_percent: int = 60  # share of the players on a team whose votes scramble
    vote_min_players: int = 6  # fewer players on the teams: no vote
    vote_cooldown: float = 300.0  # seconds after any scramble before a vote counts
    vote_map_delay: float = 60.0  # seconds after the map started before a vote counts
    vote_at_round_end: bool = False  # a passed vote scrambles at the round end, not at once
    teamlock: float = 60.0  # seconds a scramble or a move keeps a player on their side
    teamlock_spectate: bool = True  # a locked player may go to spectator (and come back)
    move_cooldown: float = 120.0  # seconds between two moves of the same player
    parties: bool = True
    party_size: int = 4  # members a party may have
    command_interval: float = 5.0  # seconds between two uses of a command by one player

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CommunitySettings:
        return settings_from(cls, data)


def votes_needed(percent: int, players: int) -> int:
    """Votes that pass a scramble among `players` on the teams: `percent` of them, rounded
    up, and at least one (integer arithmetic, as the plugin computes it)."""
    return max(1, (percent * players + 99) // 100)


def wait(until: float, now: float) -> int:
    """Whole seconds from `now` until `until`, rounded up (at least 1 while it is ahead)."""
    return max(1, math.ceil(until - now - 1e-9))


class CommunityRules:
    """The state of one map's vote, team locks, immunity, parties and command uses."""

    def __init__(self, settings: CommunitySettings | None = None) -> None:
        self.settings = settings or CommunitySettings()
        self.slot: dict[str, Slot] = {}
        self.immune: set[str] = set()
        self.now = 0.0
        self.live = False
        self.map_started = 0.0
        self.last_scramble: float | None = None
        self.votes: set[str] = set()
        self.pending = False  # a passed vote waits for the round end
        self.locks: dict[str, tuple[Side, float]] = {}  # player: (side, until)
        self.attempts: dict[str, int] = {}  # refused team changes per player (stacking)
        self.last_moved: dict[str, float] = {}
        self.used: dict[tuple[str, str], float] = {}  # (player, command): when last run
        self.party_of: dict[str, int] = {}
        self.invites: dict[str, str] = {}  # invited player: who invited them
        self.next_party = 1

    def feed(self, event: Event) -> list[Action]:
        """Consume one event; the actions it causes."""
        self.now = event_time(event, COMMUNITY_EVENTS, self.now)
        out: list[Action] = []
        handler: Callable[[Event, list[Action]], None] = getattr(self, f"_on_{event['type']}")
        handler(event, out)
        return out

    def _act(self, out: list[Action], kind: str, **fields: Any) -> None:
        out.append({"t": self.now, "type": kind, **fields})

    # -- the players -----------------------------------------------------------------------

    def playing(self) -> list[str]:
        return sorted(p for p, s in self.slot.items() if s in SIDES)

    def _on_map_start(self, e: Event, out: list[Action]) -> None:
        self.map_started = self.now
        self.last_scramble = None
        self.votes, self.pending, self.live = set(), False, False
        self.locks, self.attempts, self.last_moved = {}, {}, {}
        self.used = {}  # the plugin's clock restarts with the map
        self.slot = dict.fromkeys(self.slot, "none")  # off the teams until seated again

    def _on_join(self, e: Event, out: list[Action]) -> None:
        player = e["player"]
        self.slot[player] = e.get("team", "none")
        if e.get("immune"):
            self.immune.add(player)

    def _on_leave(self, e: Event, out: list[Action]) -> None:
        """The player's vote, invites and party place go; their lock, stacking count, move
        cooldown and command limits stay, so that reconnecting gets round none of them."""
        player = e["player"]
        self.slot.pop(player, None)
        self.immune.discard(player)
        self.votes.discard(player)
        self.invites = {k: v for k, v in self.invites.items() if player not in (k, v)}
        if player in self.party_of:
            self._leave_party(player, out)

    def _on_team_change(self, e: Event, out: list[Action]) -> None:
        """The engine changed the player's team; off the teams, their vote no longer counts."""
        self.slot[e["player"]] = e["team"]
        if e["team"] not in SIDES:
            self.votes.discard(e["player"])

    def _on_immune(self, e: Event, out: list[Action]) -> None:
        (self.immune.add if e["immune"] else self.immune.discard)(e["player"])

    def _on_round_start(self, e: Event, out: list[Action]) -> None:
        self.live = True

    def _on_round_end(self, e: Event, out: list[Action]) -> None:
        self.live = False
        if self.pending:
            self.pending = False
            self._act(out, "scramble", reason="vote")

    def _on_tick(self, e: Event, out: list[Action]) -> None:
        pass

    # -- vote scramble ---------------------------------------------------------------------

    def _vote_refusal(self, player: str) -> tuple[str, int | None] | None:
        s = self.settings
        if self.slot.get(player) not in SIDES:
            return "not_playing", None
        if player in self.votes:
            return "already_voted", None
        if self.pending:
            return "pending", None
        if self.now < self.map_started + s.vote_map_delay:
            return "too_early", wait(self.map_started + s.vote_map_delay, self.now)
        if self.last_scramble is not None and self.now < self.last_scramble + s.vote_cooldown:
            return "cooldown", wait(self.last_scramble + s.vote_cooldown, self.now)
        if len(self.playing()) < s.vote_min_players:
            return "too_few_players", None
        return None

    def _on_vote(self, e: Event, out: list[Action]) -> None:
        """A player votes to scramble: counted, or refused with why (and how long to wait).
        The vote passes when the votes reach `vote_percent` of the players on the teams."""
        player = e["player"]
        refusal = self._vote_refusal(player)
        if refusal is not None:
            reason, left = refusal
            extra = {} if left is None else {"wait": left}
            self._act(out, "vote_refused", player=player, reason=reason, **extra)
            return
        self.votes.add(player)
        needed = votes_needed(self.settings.vote_percent, len(self.playing()))
        self._act(out, "vote_counted", player=player, votes=len(self.votes), needed=needed)
        if len(self.votes) >= needed:
            self.votes = set()
            if self.settings.vote_at_round_end and self.live:
                self.pending = True
                self._act(out, "scramble_pending", reason="vote")
            else:
                self._act(out, "scramble", reason="vote")

    # -- team lock -------------------------------------------------------------------------

    def _lock(self, player: str, side: Side) -> None:
        if self.settings.teamlock > 0:
            self.locks[player] = (side, self.now + self.settings.teamlock)

    def _on_scrambled(self, e: Event, out: list[Action]) -> None:
        """The teams were scrambled (by any rule): votes start over, the cooldown starts,
        and every player on a team is locked there."""
        self.last_scramble = self.now
        self.votes, self.pending = set(), False
        for player in self.playing():
            self._lock(player, self.slot[player])  # type: ignore[arg-type]

    def _on_moved(self, e: Event, out: list[Action]) -> None:
        """A player was moved (autobalance): locked on the new side, cooldown started."""
        player, side = e["player"], e["to"]
        self.slot[player] = side
        self.last_moved[player] = self.now
        self._lock(player, side)

    def _on_team_request(self, e: Event, out: list[Action]) -> None:
        """A player asks to join a team ("A", "B") or spectate ("none"): allowed, refused
        while locked on the other side, or, for a newcomer to a live round, placed by the
        service's odd-joiner rule instead of where they clicked."""
        player, wanted = e["player"], e["team"]
        current = self.slot.get(player, "none")
        lock = self.locks.get(player)
        if lock is not None and lock[1] <= self.now:
            del self.locks[player]
            lock = None
        if wanted == current:
            self._act(out, "team_allowed", player=player, team=wanted)
        elif (
            lock is not None
            and wanted != lock[0]
            and not (wanted == "none" and self.settings.teamlock_spectate)
        ):
            self.attempts[player] = self.attempts.get(player, 0) + 1
            self._act(
                out,
                "team_refused",
                player=player,
                team=wanted,
                reason="team_lock",
                wait=wait(lock[1], self.now),
                attempts=self.attempts[player],
            )
        elif self.live and current not in SIDES and wanted in SIDES and lock is None:
            self._act(out, "place_joiner", player=player)
        else:
            self._act(out, "team_allowed", player=player, team=wanted)

    # -- immunity --------------------------------------------------------------------------

    def _on_move_request(self, e: Event, out: list[Action]) -> None:
        """May this player be moved now? Not when immune (the admin flag), not mid-life
        while busy (an engineer's buildings, the intelligence, an übercharge), and not again
        within `move_cooldown` of their last move."""
        player = e["player"]
        last = self.last_moved.get(player)
        if player in self.immune:
            self._act(out, "move_refused", player=player, reason="immune")
        elif e.get("busy"):
            self._act(out, "move_refused", player=player, reason="busy")
        elif last is not None and self.now < last + self.settings.move_cooldown:
            until = last + self.settings.move_cooldown
            self._act(
                out, "move_refused", player=player, reason="cooldown", wait=wait(until, self.now)
            )
        else:
            self._act(out, "move_allowed", player=player)

    # -- commands --------------------------------------------------------------------------

    def _on_command(self, e: Event, out: list[Action]) -> None:
        """A player's command runs at most once every `command_interval` seconds."""
        player, command = e["player"], e["command"]
        last = self.used.get((player, command))
        until = None if last is None else last + self.settings.command_interval
        if until is not None and self.now < until:
            self._act(
                out,
                "command_refused",
                player=player,
                command=command,
                wait=wait(until, self.now),
            )
            return
        if player in self.slot:  # the server's console is no player: never limited
            self.used[(player, command)] = self.now
        self._act(out, "command_run", player=player, command=command)

    # -- parties ---------------------------------------------------------------------------

    def members(self, party: int) -> list[str]:
        return sorted(p for p, q in self.party_of.items() if q == party)

    def parties(self, teams_only: bool = False) -> list[list[str]]:
        """What the plugin sends to /splits (the members on a team or waiting) and, with
        `teams_only`, to /autobalance (the members on a team), so that the service keeps
        them together: each party of 2 or more such members, sorted; none while parties
        are off."""
        if not self.settings.parties:
            return []
        counted = SIDES if teams_only else (*SIDES, "waiting")
        found = (
            [p for p in self.members(q) if self.slot.get(p) in counted]
            for q in set(self.party_of.values())
        )
        return sorted(party for party in found if len(party) >= 2)

    def _party_refused(self, out: list[Action], player: str, reason: str) -> None:
        self._act(out, "party_refused", player=player, reason=reason)

    def _on_party_invite(self, e: Event, out: list[Action]) -> None:
        player, target = e["player"], e["target"]
        mine = self.party_of.get(player)
        if not self.settings.parties:
            self._party_refused(out, player, "disabled")
        elif target == player:
            self._party_refused(out, player, "self")
        elif player not in self.slot or target not in self.slot:
            self._party_refused(out, player, "unknown_player")
        elif target in self.party_of:
            self._party_refused(out, player, "target_in_party")
        elif mine is not None and len(self.members(mine)) >= self.settings.party_size:
            self._party_refused(out, player, "full")
        else:
            self.invites[target] = player
            self._act(out, "party_invited", player=player, target=target)

    def _on_party_accept(self, e: Event, out: list[Action]) -> None:
        player = e["player"]
        host = self.invites.get(player)
        if not self.settings.parties:
            self._party_refused(out, player, "disabled")
        elif host is None:
            self._party_refused(out, player, "no_invite")
        elif player in self.party_of:
            self._party_refused(out, player, "in_party")
        else:
            party = self.party_of.get(host)
            if party is not None and len(self.members(party)) >= self.settings.party_size:
                self._party_refused(out, player, "full")
                return
            del self.invites[player]
            if party is None:
                party = self.party_of[host] = self.next_party
                self.next_party += 1
            self.party_of[player] = party
            self._act(out, "party_joined", player=player, party=self.members(party))

    def _on_party_leave(self, e: Event, out: list[Action]) -> None:
        player = e["player"]
        if player not in self.party_of:
            self._party_refused(out, player, "no_party")
        else:
            self._leave_party(player, out)

    def _leave_party(self, player: str, out: list[Action]) -> None:
        """The player leaves their party: `party` lists who is left in it, and one left
        alone means it is dissolved (so that the plugin can tell them)."""
        party = self.party_of.pop(player)
        rest = self.members(party)
        if len(rest) < 2:
            for p in rest:
                del self.party_of[p]
        self._act(out, "party_left", player=player, party=rest)
