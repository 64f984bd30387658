"""Seed 002: Sector's Edge autobalance, as a policy the game-server side drives with events.

The game tells the policy about the match after every death, team change, join and leave
(`check`), and about each death (`on_death`); the policy answers whether the teams are
unbalanced and, once the delay has passed, which dying player to move. It needs no ratings
service: power comes from the players' own scoreboard history and points.

Seed errata fixed: `CanBeAutobalanced` filters teammates on `!p.InParty` where it means
`!q.InParty`; the `sortedPointsPower` snippet increments the field instead of `currentPower`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Team = Literal["A", "B"]


@dataclass(frozen=True, slots=True)
class SEPlayer:
    """What the policy needs to know about one player."""

    id: str
    team: Team
    pub_power: float  # average scoreboard position over the last 50 matches (higher is better)
    points: int = 0  # points in this match
    in_party: bool = False
    autobalanced: bool = False  # already moved once this match


@dataclass(frozen=True, slots=True)
class MatchState:
    """The match conditions under which the seed never autobalances."""

    seconds_left: float = float("inf")
    sandbox: bool = False  # sandbox or trailer mode
    tournament: bool = False  # a tournament or scrimmage is running
    ffa: bool = False


@dataclass(frozen=True, slots=True)
class SEMove:
    player: str
    from_team: Team
    to_team: Team


def sorted_power(players: Iterable[SEPlayer]) -> dict[str, int]:
    """sortedPower: rank by pubPower ascending, plus 5 so that presence itself counts."""
    ranked = sorted(players, key=lambda p: (p.pub_power, p.id))
    return {p.id: i + 5 for i, p in enumerate(ranked)}


def sorted_points_power(players: Iterable[SEPlayer]) -> dict[str, int]:
    """sortedPointsPower (v1.2.2): rank by points ascending from 5; everyone on 0 points is 5."""
    out, current = {}, 5
    for p in sorted(players, key=lambda p: (p.points, p.id)):
        out[p.id] = current
        if p.points > 0:
            current += 1
    return out


def player_power(players: Iterable[SEPlayer], version: str = "1.2.2") -> dict[str, float]:
    """CurrentAveragePower: sortedPower (v1.2.1), or its mean with sortedPointsPower (v1.2.2)."""
    players = list(players)
    ranked = sorted_power(players)
    if version == "1.2.1":
        return {k: float(v) for k, v in ranked.items()}
    points = sorted_points_power(players)
    return {k: (ranked[k] + points[k]) / 2 for k in ranked}


class SectorsEdgePolicy:
    """The design's autobalancer: mark the stronger team, then move eligible players on death.

    - Never unbalanced: sandbox/trailer, tournament/scrimmage, under 3 minutes left, FFA, or
      team sizes within 1.
    - Unbalanced: sizes 2+ v 0, 3+ v ≤1 or 4+ v ≤2, or a team power difference ≥ 10.
    - `delay` seconds after the teams were first seen unbalanced, a player of the stronger
      team who dies is moved if they are not in a party, were not moved before, are in the
      bottom two-thirds of their team by points (among teammates neither in a party nor moved
      before), and the move does not leave the weaker team more than `power_gap` stronger.
    """

    def __init__(
        self,
        *,
        delay: float = 20.0,
        power_gap: float = 10.0,
        min_seconds_left: float = 180.0,
        version: str = "1.2.2",
    ) -> None:
        self.delay, self.power_gap = delay, power_gap
        self.min_seconds_left, self.version = min_seconds_left, version
        self.marked_at: float | None = None
        self.overpowered: Team | None = None

    def team_power(self, players: Mapping[str, SEPlayer]) -> dict[Team, float]:
        power = player_power(players.values(), self.version)
        totals: dict[Team, float] = {"A": 0.0, "B": 0.0}
        for p in players.values():
            totals[p.team] += power[p.id]
        return totals

    def unbalanced(self, players: Mapping[str, SEPlayer], match: MatchState) -> bool:
        """The design's criteria, the never-unbalanced conditions first."""
        if match.sandbox or match.tournament or match.ffa:
            return False
        if match.seconds_left < self.min_seconds_left:
            return False
        sizes = sorted(sum(1 for p in players.values() if p.team == t) for t in ("A", "B"))
        small, big = sizes
        if big - small <= 1:
            return False
        if (big >= 2 and small == 0) or (big >= 3 and small <= 1) or (big >= 4 and small <= 2):
            return True
        power = self.team_power(players)
        return abs(power["A"] - power["B"]) >= self.power_gap

    def check(self, players: Mapping[str, SEPlayer], match: MatchState, now: float) -> bool:
        """Run on every death, team change, join and leave: mark or clear the stronger team."""
        if not self.unbalanced(players, match):
            self.marked_at = self.overpowered = None
            return False
        power = self.team_power(players)
        strong: Team = "A" if power["A"] >= power["B"] else "B"
        if self.overpowered != strong:
            self.overpowered, self.marked_at = strong, now
        return True

    def eligible(self, player: SEPlayer, players: Mapping[str, SEPlayer]) -> bool:
        """CanBeAutobalanced, with the design's p/q slip fixed (teammates in parties excluded)."""
        if player.autobalanced or player.in_party:
            return False
        mates = sorted(
            (
                q
                for q in players.values()
                if q.team == player.team and not q.autobalanced and not q.in_party
            ),
            key=lambda q: (q.points, q.id),
        )
        bottom = int(len(mates) * 0.67)
        return any(q.id == player.id for q in mates[:bottom])

    def on_death(
        self, player_id: str, players: Mapping[str, SEPlayer], match: MatchState, now: float
    ) -> SEMove | None:
        """The move for a player who just died, if the policy makes one."""
        if not self.check(players, match, now) or self.marked_at is None:
            return None
        player = players[player_id]
        if player.team != self.overpowered or now - self.marked_at < self.delay:
            return None
        if not self.eligible(player, players):
            return None
        weak: Team = "B" if player.team == "A" else "A"
        mine = player_power(players.values(), self.version)[player.id]
        power = self.team_power(players)
        if power[weak] + mine > power[player.team] - mine + self.power_gap:
            return None  # the move would overshoot and start balancing the other way
        return SEMove(player.id, player.team, weak)
