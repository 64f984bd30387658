"""A foosball world for `synelo simulate-history --world foosball`: 2v2 with positions, to
test models that learn a player's offense and defense apart (the truth holds both).

Each player has an offense skill and a defense skill (normals with a stated correlation)
and prefers the position where theirs is higher. A match draws four players by activity,
splits them 2v2 at random, and each team sets its striker (offense) and keeper (defense) by
preference. Goals are independent: A scores each one with

    p = σ((off_A − def_B) − (off_B − def_A))

(σ the logistic), where off_X is the skill of X's offense player at offense and def_X that
of X's defense player at defense; the first side to `goals` wins, so there are no draws.
No player arrives late. Pure numpy, seeded: one config gives the same files every time.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from synelo.evaluation.history import FORMAT_VERSION
from synelo.sim.history import iso_time, player_id, save_world

START = datetime(2026, 1, 1, tzinfo=UTC)
GOAL_SECONDS = 30  # a match lasts this much a goal scored…
BREAK = 60  # …and the next one starts this long after it ends
OFFENSE, DEFENSE = "offense", "defense"


@dataclass(frozen=True, slots=True)
class FoosballConfig:
    """The world's sizes and spreads. Skills are in logit a goal: a striker one `skill_sd`
    better, all else equal, raises their team's logit of scoring each goal by `skill_sd`."""

    players: int = 40
    matches: int = 5_000
    goals: int = 10  # a match is played to this many goals
    skill_sd: float = 0.3  # spread of offense and of defense skill
    correlation: float = 0.3  # between a player's offense and defense skill
    off_position: float = 0.05  # a team's chance to play with its positions swapped anyway
    activity_sd: float = 0.5  # lognormal spread of how often a player plays
    seed: int = 1
    start: datetime = START  # the first match's time

    def check(self) -> None:
        """ValueError naming the field that cannot make a world."""
        if self.players < 4:
            raise ValueError(f"players: {self.players} players cannot fill a 2v2")
        if self.matches < 1:
            raise ValueError("matches must be at least 1")
        if self.goals < 1:
            raise ValueError("goals must be at least 1")
        if not self.skill_sd >= 0:
            raise ValueError("skill_sd must be ≥ 0")
        if not -1 <= self.correlation <= 1:
            raise ValueError("correlation must be within −1…1")
        if not 0 <= self.off_position <= 1:
            raise ValueError("off_position must be within 0…1")
        if not self.activity_sd >= 0:
            raise ValueError("activity_sd must be ≥ 0")
        if self.start.tzinfo is None:
            raise ValueError("start must have a time zone")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["start"] = iso_time(self.start)
        return out


@dataclass(frozen=True, slots=True)
class Population:
    """The players' hidden figures, by index (player i is `player_id(i)`)."""

    offense: np.ndarray
    defense: np.ndarray
    prefers_offense: np.ndarray  # bool: the position whose skill is higher
    activity: np.ndarray  # weight when drawing who plays


def draw_population(config: FoosballConfig, rng: np.random.Generator) -> Population:
    """off = σ_s·z₁ and def = σ_s·(ρ·z₁ + √(1 − ρ²)·z₂) with z₁, z₂ standard normals, so
    that each has sd σ_s (`skill_sd`) and their correlation is ρ (`correlation`)."""
    n, rho, sd = config.players, config.correlation, config.skill_sd
    z = rng.standard_normal((n, 2))
    offense = sd * z[:, 0]
    defense = sd * (rho * z[:, 0] + math.sqrt(1 - rho * rho) * z[:, 1])
    activity = rng.lognormal(0.0, config.activity_sd, n)
    return Population(offense, defense, offense >= defense, activity)


def goal_logit(off_a: float, def_a: float, off_b: float, def_b: float) -> float:
    """The logit of A scoring a goal: (off_A − def_B) − (off_B − def_A)."""
    return (off_a - def_b) - (off_b - def_a)


def match_win_probability(p: float, goals: int) -> float:
    """P(A wins) when A scores each goal with probability p, first to G = `goals`:
    Σ_{j=0}^{G−1} C(G − 1 + j, j)·p^G·(1 − p)^j (A's G-th goal comes after j of B's)."""
    return sum(math.comb(goals - 1 + j, j) * p**goals * (1 - p) ** j for j in range(goals))


def _positions(
    pair: tuple[int, int], prefers_offense: np.ndarray, tie: float, swap: float, off_position: float
) -> tuple[int, int]:
    """(offense, defense) of a team: by preference, a coin `tie` when both prefer the same
    position, then swapped when `swap` < `off_position`."""
    first, second = pair
    if prefers_offense[first] != prefers_offense[second]:
        striker = first if prefers_offense[first] else second
    else:
        striker = first if tie < 0.5 else second
    keeper = second if striker == first else first
    return (keeper, striker) if swap < off_position else (striker, keeper)


def generate(config: FoosballConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The match lines (header first) and the truth: see the module for the world."""
    config.check()
    rng = np.random.default_rng(config.seed)
    pop = draw_population(config, rng)
    weights = pop.activity / pop.activity.sum()
    offense, defense = pop.offense.tolist(), pop.defense.tolist()
    ids = [player_id(i) for i in range(config.players)]
    g = config.goals
    shots = np.arange(1, 2 * g)  # goals scored so far, after each of the 2G − 1 that can be
    lines: list[dict[str, Any]] = [header(config)]
    clock = config.start
    for n in range(config.matches):
        four = rng.choice(config.players, size=4, replace=False, p=weights).tolist()
        coins = rng.random(4).tolist()
        prefers, swap = pop.prefers_offense, config.off_position
        a_off, a_def = _positions((four[0], four[1]), prefers, coins[0], coins[1], swap)
        b_off, b_def = _positions((four[2], four[3]), prefers, coins[2], coins[3], swap)
        logit = goal_logit(offense[a_off], defense[a_def], offense[b_off], defense[b_def])
        # the first 2G − 1 goals decide the match: one side has G by then
        a_goals = np.cumsum(rng.random(2 * g - 1) < 1 / (1 + math.exp(-logit)))
        end = int(np.argmax(np.maximum(a_goals, shots - a_goals) == g))
        score_a, score_b = int(a_goals[end]), int(shots[end] - a_goals[end])
        lines.append(
            {
                "id": f"f{n + 1}",
                "teams": {"A": [ids[a_off], ids[a_def]], "B": [ids[b_off], ids[b_def]]},
                "winner": "A" if score_a == g else "B",
                "time": iso_time(clock),
                "scores": {"A": score_a, "B": score_b},
                "positions": {
                    ids[a_off]: OFFENSE,
                    ids[a_def]: DEFENSE,
                    ids[b_off]: OFFENSE,
                    ids[b_def]: DEFENSE,
                },
                "mode": "2v2",
            }
        )
        clock += timedelta(seconds=GOAL_SECONDS * (score_a + score_b) + BREAK)
    return lines, truth(config, pop)


def header(config: FoosballConfig) -> dict[str, Any]:
    """The history's first line: where it comes from and what a reader should know."""
    return {
        "synelo_history": FORMAT_VERSION,
        "source": "synelo foosball world",
        "team_size": 2,
        "notes": [
            f"simulated (seed {config.seed}): {config.players} players, {config.matches} "
            f"matches of 2v2 foosball to {config.goals} goals",
            "each goal is A's with p = σ((off_A − def_B) − (off_B − def_A)) from hidden "
            "offense and defense skills; see docs/simulator.md",
            "teams list the offense player first; positions say who played where",
            "the hidden truth is in the file written beside this one (--truth)",
        ],
    }


def truth(config: FoosballConfig, pop: Population) -> dict[str, Any]:
    """What the world hid: per player offense, defense, their mean as the skill, and arrival
    0 (everyone is there from the first match)."""
    return {
        "players": {
            player_id(i): {
                "skill": (float(pop.offense[i]) + float(pop.defense[i])) / 2,
                "offense": float(pop.offense[i]),
                "defense": float(pop.defense[i]),
                "arrival": 0,
            }
            for i in range(config.players)
        },
        "config": config.to_json(),
    }


def write(config: FoosballConfig, out: Path, truth_path: Path) -> int:
    """Write the history to `out` and the truth to `truth_path`; the number of matches."""
    return save_world(*generate(config), out, truth_path)
