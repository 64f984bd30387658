"""A scoreboard world for `synelo simulate-history --world scoreboard` (Sector's Edge-like):
modes of different sizes, friends who queue together, and per-player points, to test models
that read scoreboards and to compare team splits on the lobbies such a game draws.

Each player has a skill s ~ N(`skill_mean`, `skill_sd`) and an activity (lognormal). A
share of the players belongs to fixed friend groups of 2–4. A match draws its mode (SPI and
STA 3v3, SAL 8v8, BRK and CTF 12v12), then its lobby by activity: when a group member is
drawn, each of their friends comes along with chance `party_join`, and those who came
together sit on one team (`draw_lobby`, `split_at_random`). The winner is drawn from

    P(A wins) = σ(c·(s̄_A − s̄_B))

with s̄ a team's mean skill and c `outcome_scale`; there are no draws. Each player's points,

    points = round(max(0, base·exp(a·z + b·W + ε) − cut)),  z = (s − skill_mean)/skill_sd,

with W = 1 on the winning side, ε ~ N(0, `points_noise`) and base, a, b, cut the config's
`points_base`, `points_skill`, `win_bonus`, `points_cut`: more skill, more points, a bonus
for winning, and now and then a player on 0. The scoreboard's places follow the points.
No player arrives late. Pure numpy, seeded: one config gives the same files every time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from synelo.evaluation.history import FORMAT_VERSION
from synelo.sim.history import iso_time, player_id, save_world

START = datetime(2026, 1, 1, tzinfo=UTC)
BREAK = 60  # seconds between one match's end and the next one's start
# the team size and the length in seconds of a match of each mode
MODE_SIZES = {"SPI": 3, "STA": 3, "SAL": 8, "BRK": 12, "CTF": 12}
MODE_LENGTHS = {"SPI": 300, "STA": 300, "SAL": 600, "BRK": 900, "CTF": 900}
DEFAULT_MODE_WEIGHTS = {"SPI": 0.1, "STA": 0.1, "SAL": 0.3, "BRK": 0.1, "CTF": 0.4}
SMALLEST_PARTY, LARGEST_PARTY = 2, 4


@dataclass(frozen=True, slots=True)
class ScoreboardConfig:
    """The world's sizes, its modes' weights (any modes of `MODE_SIZES`; a mode left out or
    at 0 is never played) and the figures of the module's formulas."""

    players: int = 400
    matches: int = 10_000
    mode_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MODE_WEIGHTS))
    skill_mean: float = 0.0
    skill_sd: float = 1.0
    activity_sd: float = 0.5  # lognormal spread of how often a player plays
    party_share: float = 0.25  # players in a fixed friend group of 2–4
    party_join: float = 0.7  # a friend's chance to come along when a group member is drawn
    outcome_scale: float = 2.0  # c: logit a unit of mean-skill gap between the teams
    points_base: float = 100.0  # a player of mean skill on the losing side, before noise
    points_skill: float = 0.5  # a: log points a skill sd
    win_bonus: float = 0.25  # b: log points for being on the winning side
    points_noise: float = 0.8  # sd of ε
    points_cut: float = 10.0  # points taken off before rounding: a bad match scores 0
    seed: int = 1
    start: datetime = START  # the first match's time

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes played (weight > 0), in `MODE_SIZES`' order."""
        return tuple(m for m in MODE_SIZES if self.mode_weights.get(m, 0) > 0)

    @property
    def largest_team(self) -> int:
        return max(MODE_SIZES[m] for m in self.modes)

    def check(self) -> None:
        """ValueError naming the field that cannot make a world."""
        if unknown := set(self.mode_weights) - set(MODE_SIZES):
            raise ValueError(
                f"mode_weights: unknown mode(s) {', '.join(sorted(unknown))} "
                f"(known: {', '.join(MODE_SIZES)})"
            )
        if any(not w >= 0 for w in self.mode_weights.values()) or not self.modes:
            raise ValueError("mode_weights must be ≥ 0, with at least one mode above 0")
        if self.players < 2 * self.largest_team:
            k = self.largest_team
            raise ValueError(f"players: {self.players} players cannot fill a {k}v{k}")
        if self.matches < 1:
            raise ValueError("matches must be at least 1")
        for name in ("party_share", "party_join"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within 0…1")
        for name in ("skill_sd", "activity_sd", "points_noise", "points_base", "points_cut"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be ≥ 0")
        if self.start.tzinfo is None:
            raise ValueError("start must have a time zone")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["start"] = iso_time(self.start)
        return out


@dataclass(frozen=True, slots=True)
class Population:
    """The players' hidden figures, by index (player i is `player_id(i)`), and the fixed
    friend groups (`group_of[i]`: player i's group in `groups`, −1 for none)."""

    skill: np.ndarray
    activity: np.ndarray  # weight when drawing who plays
    groups: tuple[tuple[int, ...], ...]
    group_of: np.ndarray


@dataclass(frozen=True, slots=True)
class Lobby:
    """The players of one match before the split: its mode, everyone present (2k, in the
    order they came) and the parties among them (2+ who came together: one team each)."""

    mode: str
    players: tuple[int, ...]
    parties: tuple[tuple[int, ...], ...]

    @property
    def team_size(self) -> int:
        return MODE_SIZES[self.mode]


def draw_population(config: ScoreboardConfig, rng: np.random.Generator) -> Population:
    """Skills and activities independent; round(players·`party_share`) players at random
    put into groups of 2–4 (each size equally likely, the last ones adjusted so that nobody
    is left in a group of one)."""
    n = config.players
    skill = rng.normal(config.skill_mean, config.skill_sd, n)
    activity = rng.lognormal(0.0, config.activity_sd, n)
    members = rng.permutation(n)[: round(n * config.party_share)].tolist()
    groups: list[tuple[int, ...]] = []
    at = 0
    while len(members) - at >= SMALLEST_PARTY:
        left = len(members) - at
        size = left if left <= LARGEST_PARTY else int(rng.integers(2, LARGEST_PARTY + 1))
        if left - size == 1:  # 5 left and a 4 drawn: 3 and 2
            size -= 1
        groups.append(tuple(members[at : at + size]))
        at += size
    group_of = np.full(n, -1, dtype=np.int64)
    for g, group in enumerate(groups):
        group_of[list(group)] = g
    return Population(skill, activity, tuple(groups), group_of)


def _can_place(sizes: Sequence[int], room_a: int, room_b: int) -> bool:
    """Whether parties of these sizes fit two teams with this much room, none split: some
    subset sums to at most `room_a` and the rest to at most `room_b`."""
    total, sums = sum(sizes), {0}
    for size in sizes:
        sums |= {s + size for s in sums if s + size <= room_a}
    return any(total - s <= room_b for s in sums)


def _draw_mode(config: ScoreboardConfig, u: float) -> str:
    """The mode a uniform `u` in [0, 1) falls on, each as likely as its weight."""
    modes = config.modes
    cumulative = np.cumsum([config.mode_weights[m] for m in modes])
    at = int(np.searchsorted(cumulative, u * cumulative[-1], side="right"))
    return modes[min(at, len(modes) - 1)]


def draw_lobby(config: ScoreboardConfig, rng: np.random.Generator, population: Population) -> Lobby:
    """One match's mode and lobby, without a split: what a split comparison draws from this
    world. The mode by `mode_weights`; then players in activity-weighted order without
    replacement (the order of E_i / w_i, E_i exponential: Efraimidis–Spirakis), each
    bringing each friend of their group not yet present with chance `party_join`, until 2k
    are present. A friend stays home when the party would not fit: over k, over 2k in all,
    or no longer splittable into two teams of k with every party whole."""
    mode = _draw_mode(config, rng.random())
    k = MODE_SIZES[mode]
    order = np.argsort(rng.exponential(size=config.players) / population.activity).tolist()
    present: list[int] = []
    here: set[int] = set()
    parties: list[tuple[int, ...]] = []
    for player in order:
        if len(present) == 2 * k:
            break
        if player in here:
            continue
        party = [player]
        g = int(population.group_of[player])
        if g >= 0:
            friends = [f for f in population.groups[g] if f != player and f not in here]
            comes = (rng.random(len(friends)) < config.party_join).tolist()
            for friend, coming in zip(friends, comes, strict=True):
                if (
                    coming
                    and len(party) < k
                    and len(present) + len(party) < 2 * k
                    and _can_place([*map(len, parties), len(party) + 1], k, k)
                ):
                    party.append(friend)
        present.extend(party)
        here.update(party)
        if len(party) > 1:
            parties.append(tuple(party))
    return Lobby(mode, tuple(present), tuple(parties))


def split_at_random(lobby: Lobby, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """Teams A and B of k each: the parties in random order, each on a side drawn at random
    among those where it and the parties after it still fit; the others shuffled into the
    places left."""
    k = lobby.team_size
    parties = [lobby.parties[i] for i in rng.permutation(len(lobby.parties)).tolist()]
    team_a: list[int] = []
    team_b: list[int] = []
    for i, party in enumerate(parties):
        rest = [len(p) for p in parties[i + 1 :]]
        fits_a = len(team_a) + len(party) <= k and _can_place(
            rest, k - len(team_a) - len(party), k - len(team_b)
        )
        fits_b = len(team_b) + len(party) <= k and _can_place(
            rest, k - len(team_a), k - len(team_b) - len(party)
        )
        to_a = fits_a and (not fits_b or rng.random() < 0.5)
        (team_a if to_a else team_b).extend(party)
    in_party = {p for party in parties for p in party}
    others = [p for p in lobby.players if p not in in_party]
    others = [others[i] for i in rng.permutation(len(others)).tolist()]
    cut = k - len(team_a)
    return team_a + others[:cut], team_b + others[cut:]


def win_probability(skill_a: Sequence[float], skill_b: Sequence[float], c: float) -> float:
    """P(A wins) = σ(c·(s̄_A − s̄_B)), s̄ a team's mean skill."""
    gap = sum(skill_a) / len(skill_a) - sum(skill_b) / len(skill_b)
    return 1 / (1 + math.exp(-c * gap))


def points(
    config: ScoreboardConfig, skill: np.ndarray, won: np.ndarray, noise: np.ndarray
) -> list[int]:
    """round(max(0, base·exp(a·z + b·W + ε) − cut)) per player, z the standardised skill,
    W 1 on the winning side, ε the `noise` drawn for them."""
    z = (skill - config.skill_mean) / config.skill_sd if config.skill_sd > 0 else 0 * skill
    raw = config.points_base * np.exp(config.points_skill * z + config.win_bonus * won + noise)
    return [int(x) for x in np.rint(np.maximum(0.0, raw - config.points_cut))]


def generate(config: ScoreboardConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The match lines (header first) and the truth: see the module for the world."""
    config.check()
    rng = np.random.default_rng(config.seed)
    pop = draw_population(config, rng)
    skill = pop.skill.tolist()
    ids = [player_id(i) for i in range(config.players)]
    lines: list[dict[str, Any]] = [header(config)]
    clock = config.start
    for n in range(config.matches):
        lobby = draw_lobby(config, rng, pop)
        team_a, team_b = split_at_random(lobby, rng)
        p_a = win_probability(
            [skill[p] for p in team_a], [skill[p] for p in team_b], config.outcome_scale
        )
        a_won = bool(rng.random() < p_a)
        roster = team_a + team_b
        won = np.array([a_won] * len(team_a) + [not a_won] * len(team_b), dtype=float)
        noise = rng.normal(0.0, config.points_noise, len(roster))
        scored = points(config, pop.skill[roster], won, noise)
        lines.append(
            {
                "id": f"s{n + 1}",
                "teams": {"A": [ids[p] for p in team_a], "B": [ids[p] for p in team_b]},
                "winner": "A" if a_won else "B",
                "time": iso_time(clock),
                "mode": lobby.mode,
                "player_scores": {ids[p]: s for p, s in zip(roster, scored, strict=True)},
                "parties": [[ids[p] for p in party] for party in lobby.parties],
            }
        )
        clock += timedelta(seconds=MODE_LENGTHS[lobby.mode] + BREAK)
    return lines, truth(config, pop)


def header(config: ScoreboardConfig) -> dict[str, Any]:
    """The history's first line: where it comes from and what a reader should know."""
    modes = ", ".join(f"{m} {MODE_SIZES[m]}v{MODE_SIZES[m]}" for m in config.modes)
    return {
        "synelo_history": FORMAT_VERSION,
        "source": "synelo scoreboard world",
        "team_size": config.largest_team,  # the largest; modes gives each mode's
        "modes": {m: MODE_SIZES[m] for m in config.modes},
        "notes": [
            f"simulated (seed {config.seed}): {config.players} players, {config.matches} "
            f"matches of {modes}",
            "P(A wins) = σ(c·(mean skill A − mean skill B)) from hidden skills; points grow "
            "with skill and winning; see docs/simulator.md",
            "parties lists who came together (always on one team); the reader ignores it",
            "the hidden truth is in the file written beside this one (--truth)",
        ],
    }


def truth(config: ScoreboardConfig, pop: Population) -> dict[str, Any]:
    """What the world hid: per player the skill and arrival 0 (everyone is there from the
    first match); the fixed friend groups."""
    return {
        "players": {
            player_id(i): {"skill": float(pop.skill[i]), "arrival": 0}
            for i in range(config.players)
        },
        "parties": [[player_id(i) for i in group] for group in pop.groups],
        "config": config.to_json(),
    }


def write(config: ScoreboardConfig, out: Path, truth_path: Path) -> int:
    """Write the history to `out` and the truth to `truth_path`; the number of matches."""
    return save_world(*generate(config), out, truth_path)
