"""Sector's Edge team splits on the scoreboard world: the original power against the
community proposal, with a random split as the baseline (seed 002).

Why: the thread of seed 002 proposes replacing Sector's Edge's sortedPower with a weight of
min(mean, median) of recent form and a greedy assignment that "disregards team size". The
developer had already found that a power with no presence term gave 3v8s in Salvage. This
module measures, on a world whose hidden skills decide the winner, what each rule does to
the teams' sizes and to the true chance that team A wins. It is pure and seeded: one
`SplitsConfig` gives the same figures every time.

How:

1. **Warm-up.** `synelo.sim.scoreboard.generate` plays `world.matches` matches of the
   world (random splits, as the world does). For every match and player the place value
   of E1 (`place_fractions` over the match's `player_scores`) is kept per mode, newest last.
   The population is the one that history was played by (`draw_population` on the world's
   seed again, checked against the history's truth).
2. **Lobbies.** `lobbies` fresh lobbies by `draw_lobby`, from a random stream of their own.
   The players' histories stay as the warm-up left them.
3. **Three splits of every lobby** (the mode's maximum M is 6 for SPI and STA, 16 for SAL,
   24 for BRK and CTF; players with no place value in the mode count `unknown` of it):

   - *original*: pubPower = M · mean of the last `pub_keep` (50) place values in the mode
     (E2, `pub_power`); sortedPower = 5 + rank by pubPower among the lobby (`sorted_power`);
     k v k with every party on one team, minimising |Σ_A sortedPower − Σ_B sortedPower|
     exactly, by the service's split solver (`best_splits`).
   - *community*: weight = M · min(mean, median) of the last `community_keep` (20) place
     values (E2′, `community_value`); `community_assign` places parties (weight × 1.15,
     1.20, 1.25 for 2, 3, 4+) then lone players, each on the lighter team, sizes ignored.
   - *random*: `split_at_random`, k v k with parties whole: the world's own split.

4. **The true chance** that A wins, from the hidden skills s, under two outcome models
   (`win_chances`):

   - *mean* (the world's): P(A) = σ(c·(s̄_A − s̄_B)), s̄ a team's mean skill, c the world's
     `outcome_scale`. It does not care how many players a team has.
   - *sum*: P(A) = σ((c/k)·(Σ_A s − Σ_B s)), k the mode's team size: the same as *mean* on
     k v k, and a team counts every player it has. Skills are centred on the world's mean
     (0), so an extra player adds their own skill: a plus only when they are above average.
     With c per unit of summed skill instead of c/k, even random 12v12 splits would be
     near-certain wins, and the variant would say nothing about this world.

5. **Metrics** (`summarise`), per mode and over all lobbies: mean |P − ½|, the share with
   |P − ½| > 0.2, the mean P that the larger team wins when sizes differ, the presence per
   player that would make those larger teams even on average under *sum* (δ*), and the
   team size gap |n_A − n_B|: its mean and maximum, the share of lobbies where it is ≥ 2 (a
   lobby has 2k players, so any gap is even) and the widest split seen (e.g. 3 v 13).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from synelo.balance import best_splits
from synelo.balance.sectors_edge import SEPlayer, community_assign, sorted_power
from synelo.ratings.sectors_edge import community_value, place_fractions, pub_power, sigmoid
from synelo.sim.history import player_id
from synelo.sim.scoreboard import (
    MODE_SIZES,
    Lobby,
    Population,
    ScoreboardConfig,
    draw_lobby,
    draw_population,
    generate,
    split_at_random,
    win_probability,
)

METHODS = ("original", "community", "random")
OUTCOMES = ("mean", "sum")  # the world's P (mean skill), and the summed-skill variant
MODE_MAXIMA = {m: float(2 * k) for m, k in MODE_SIZES.items()}  # 6, 6, 16, 24, 24: the seed's
LOPSIDED = 0.2  # |P − ½| above this counts as a lopsided match
LOBBY_STREAM = 2  # the lobbies' random stream: SeedSequence((world seed, 2))

History = dict[str, list[list[float]]]  # mode → player index → place values, newest last


@dataclass(frozen=True, slots=True)
class SplitsConfig:
    """The world (its `matches` are the warm-up), how many lobbies to split, and the
    windows of E2 and E2′."""

    world: ScoreboardConfig = field(default_factory=lambda: ScoreboardConfig(matches=20_000))
    lobbies: int = 2_000
    pub_keep: int = 50  # pubPower: the last 50 matches in the mode
    community_keep: int = 20  # the community proposal: the last 20
    unknown: float = 0.5  # the place value of a player with none in the mode

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["world"] = self.world.to_json()
        return out


@dataclass(frozen=True, slots=True)
class Assignment:
    """One lobby split one way: its mode, the team sizes and P(A wins) per outcome model."""

    method: str
    mode: str
    size_a: int
    size_b: int
    p_a: Mapping[str, float]
    skill_a: float  # Σ of team A's hidden skills
    skill_b: float


@dataclass(frozen=True, slots=True)
class Metrics:
    """What `summarise` reports for a set of assignments (see the module, step 5)."""

    lobbies: int
    mean_edge: dict[str, float]  # mean |P − ½| per outcome model
    lopsided: dict[str, float]  # share of lobbies with |P − ½| > 0.2
    larger_wins: dict[str, float | None]  # mean P(larger team wins), lobbies of unequal sizes
    presence_to_even: float | None  # δ*: see `summarise`
    mean_size_gap: float
    max_size_gap: int
    uneven: float  # share of lobbies with a size gap ≥ 2
    widest: tuple[int, int]  # (smaller, larger) team of the widest gap seen


@dataclass(frozen=True, slots=True)
class Comparison:
    """`compare`'s answer: metrics by mode ("all" for every lobby) and by method, and the
    mean number of place values behind a lobby player's pubPower and community weight."""

    config: SplitsConfig
    metrics: dict[str, dict[str, Metrics]]
    pub_depth: dict[str, float]
    community_depth: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config.to_json(),
            "outcomes": {
                "mean": "P(A) = σ(c·(mean skill A − mean skill B)) (the world's)",
                "sum": "P(A) = σ((c/k)·(Σ skill A − Σ skill B)), k the mode's team size",
            },
            "metrics": {
                mode: {method: asdict(m) for method, m in by_method.items()}
                for mode, by_method in self.metrics.items()
            },
            "pub_depth": self.pub_depth,
            "community_depth": self.community_depth,
        }


def warm_up(world: ScoreboardConfig) -> tuple[Population, History]:
    """The world's population and, per mode and player, the E1 place values of every match
    they played in `world.matches` matches of the world."""
    lines, truth = generate(world)
    population = draw_population(world, np.random.default_rng(world.seed))
    hidden = [truth["players"][player_id(i)]["skill"] for i in range(world.players)]
    if population.skill.tolist() != hidden:  # pragma: no cover - generate's first draw
        raise RuntimeError("the warm-up was not played by the population drawn again")
    index = {player_id(i): i for i in range(world.players)}
    history: History = {m: [[] for _ in range(world.players)] for m in world.modes}
    for line in lines[1:]:
        places = place_fractions({p: float(s) for p, s in line["player_scores"].items()})
        per_player = history[line["mode"]]
        for player, value in places.items():
            per_player[index[player]].append(value)
    return population, history


def original_split(lobby: Lobby, pub: Mapping[int, float]) -> tuple[list[int], list[int]]:
    """k v k, parties whole, least |Σ_A − Σ_B| of sortedPower = 5 + rank by pubPower among
    the lobby (equal pubPower ranked by player id, as `sorted_power` does): the service's
    own exact split solver (`best_splits`) on those values."""
    ranked = sorted_power(SEPlayer(player_id(p), "A", pub[p]) for p in lobby.players)
    players = list(lobby.players)
    seat = {p: i for i, p in enumerate(players)}
    k = lobby.team_size
    (split,) = best_splits(
        [ranked[player_id(p)] for p in players],
        theta=1.0,  # the split's P is not used here
        min_k=k,
        max_k=k,
        parties=[[seat[p] for p in party] for party in lobby.parties],
        budget_s=60.0,
    ).splits
    if not split.optimal or split.split_parties:
        raise ValueError("the solver did not prove an even split with every party whole")
    return [players[i] for i in split.a], [players[i] for i in split.b]


def community_split(lobby: Lobby, weight: Mapping[int, float]) -> tuple[list[int], list[int]]:
    """`community_assign` on the lobby: parties first (with their multipliers), then lone
    players, each on the team of lower total weight; sizes ignored."""
    teams = community_assign(
        {player_id(p): weight[p] for p in lobby.players},
        [[player_id(p) for p in party] for party in lobby.parties],
    )
    team_a = [p for p in lobby.players if teams[player_id(p)] == "A"]
    team_b = [p for p in lobby.players if teams[player_id(p)] == "B"]
    return team_a, team_b


def win_chances(
    skill: Sequence[float], team_a: Sequence[int], team_b: Sequence[int], c: float, k: int
) -> dict[str, float]:
    """P(A wins) under each outcome model: "mean", σ(c·(s̄_A − s̄_B)) (the world's own
    `win_probability`), and "sum", σ((c/k)·(Σ_A s − Σ_B s)) with k the mode's team size."""
    a, b = [skill[p] for p in team_a], [skill[p] for p in team_b]
    return {
        "mean": win_probability(a, b, c),
        "sum": sigmoid(c / k * (math.fsum(a) - math.fsum(b))),
    }


@dataclass(frozen=True, slots=True)
class Drawn:
    """One lobby, its three splits (teams A and B of player indices), their `Assignment`s
    and the mean number of place values behind its players' pubPower and community weight."""

    lobby: Lobby
    splits: dict[str, tuple[list[int], list[int]]]
    rows: tuple[Assignment, ...]
    pub_depth: float
    community_depth: float


def assignments(config: SplitsConfig) -> Iterator[Drawn]:
    """Every lobby of the comparison, split the three ways, in the order drawn."""
    world = config.world
    world.check()
    if config.lobbies < 1 or config.pub_keep < 1 or config.community_keep < 1:
        raise ValueError("lobbies, pub_keep and community_keep must be at least 1")
    population, history = warm_up(world)
    skill = population.skill.tolist()
    rng = np.random.default_rng((world.seed, LOBBY_STREAM))
    for _ in range(config.lobbies):
        lobby = draw_lobby(world, rng, population)
        top, past = MODE_MAXIMA[lobby.mode], history[lobby.mode]
        pub = {
            p: pub_power(past[p][-config.pub_keep :], top, config.unknown) for p in lobby.players
        }
        weight = {
            p: community_value(past[p][-config.community_keep :], top, config.unknown)
            for p in lobby.players
        }
        splits = {
            "original": original_split(lobby, pub),
            "community": community_split(lobby, weight),
            "random": split_at_random(lobby, rng),
        }
        rows = tuple(
            Assignment(
                method,
                lobby.mode,
                len(a),
                len(b),
                win_chances(skill, a, b, world.outcome_scale, lobby.team_size),
                math.fsum(skill[p] for p in a),
                math.fsum(skill[p] for p in b),
            )
            for method, (a, b) in splits.items()
        )
        seen = [len(past[p]) for p in lobby.players]
        yield Drawn(
            lobby,
            splits,
            rows,
            statistics.fmean(min(n, config.pub_keep) for n in seen),
            statistics.fmean(min(n, config.community_keep) for n in seen),
        )


def summarise(rows: Sequence[Assignment]) -> Metrics:
    """Step 5 of the module over `rows` (at least one).

    `presence_to_even` is δ* = Σ (Σ_small s − Σ_large s) / Σ |n_A − n_B| over the lobbies of
    unequal sizes: the worth, in skill units, that each player would need on top of their
    skill for the larger teams to be even on average under the summed model, whose logit
    with a presence δ a player is (c/k)·(Σ_A (s + δ) − Σ_B (s + δ)). None when no sizes differ.
    """
    if not rows:
        raise ValueError("nothing to summarise")
    edges = {o: [abs(r.p_a[o] - 0.5) for r in rows] for o in OUTCOMES}
    gaps = [abs(r.size_a - r.size_b) for r in rows]
    uneven = [r for r in rows if r.size_a != r.size_b]
    larger_wins: dict[str, float | None] = {
        o: (
            statistics.fmean(r.p_a[o] if r.size_a > r.size_b else 1 - r.p_a[o] for r in uneven)
            if uneven
            else None
        )
        for o in OUTCOMES
    }
    presence = (
        math.fsum(
            (r.skill_b - r.skill_a) if r.size_a > r.size_b else (r.skill_a - r.skill_b)
            for r in uneven
        )
        / sum(abs(r.size_a - r.size_b) for r in uneven)
        if uneven
        else None
    )
    widest = max(rows, key=lambda r: abs(r.size_a - r.size_b))  # the first of the widest
    return Metrics(
        len(rows),
        {o: statistics.fmean(e) for o, e in edges.items()},
        {o: sum(x > LOPSIDED for x in e) / len(rows) for o, e in edges.items()},
        larger_wins,
        presence,
        statistics.fmean(gaps),
        max(gaps),
        sum(g >= 2 for g in gaps) / len(rows),
        (min(widest.size_a, widest.size_b), max(widest.size_a, widest.size_b)),
    )


def compare(config: SplitsConfig | None = None) -> Comparison:
    """The whole comparison: see the module."""
    config = config or SplitsConfig()
    drawn = list(assignments(config))
    rows = [r for d in drawn for r in d.rows]
    modes = [m for m in config.world.modes if any(d.lobby.mode == m for d in drawn)]
    metrics = {
        scope: {
            method: summarise([r for r in rows if r.method == method and scope in ("all", r.mode)])
            for method in METHODS
        }
        for scope in [*modes, "all"]
    }
    depth = {
        m: [(d.pub_depth, d.community_depth) for d in drawn if d.lobby.mode == m] for m in modes
    }
    return Comparison(
        config,
        metrics,
        {m: statistics.fmean(x for x, _ in depth[m]) for m in modes},
        {m: statistics.fmean(y for _, y in depth[m]) for m in modes},
    )
