"""A replay scored against the hidden truth of a simulated world (`synelo replay --truth`).

Log loss says how well a model predicts; a simulated world also knows what the model should
have found. With the truth file of `synelo simulate-history`, the replay records every
participant's strength after each of their matches (`RatingModel.strength_of`) and this
module compares:

- **skill**: Spearman between the final strengths and the hidden skills, over players with
  at least `MIN_MATCHES` matches;
- **traits**: for each per-player figure the model learns (`RatingModel.traits`) that the
  truth also holds (a side offset, a commanding skill), Spearman between the two, over the
  players the model has it for with `MIN_MATCHES` matches (for `command`: who commanded at
  least `MIN_COMMANDS` times);
- **rounds to within**: how many rounds a new player needs before their strength is within
  10 % of the skill range of their level. A least-squares line strength ≈ α + β·skill over
  the players with `FIT_MATCHES` matches gives each player's level on the model's scale and
  the range (the 95th minus the 5th percentile of α + β·skill over every player of the
  truth). A player who arrived after the first match and played `NEW_MATCHES` matches
  settles at their n-th match when their strength is then within `NEAR` of the range of
  their level and stays within `STAY` of it through their next `HOLD` matches (all of which
  must have been played). Reported: the median and 75th percentile over those players, and
  the median per tercile of hidden skill (cut over every player of the truth). A player
  who never settles counts as never: a quantile that lands on them is None, as is one of
  no player.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from synelo.evaluation.history import Match
from synelo.evaluation.stats import spearman

if TYPE_CHECKING:
    from rich.table import Table

    from synelo.evaluation.adapters.base import RatingModel

MIN_MATCHES = 10
MIN_COMMANDS = 5
FIT_MATCHES = 50
NEW_MATCHES = 100
NEAR, STAY, HOLD = 0.10, 0.20, 20
TERCILES = ("low", "mid", "high")
NOT_TRAITS = ("skill", "arrival")  # per-player truth that is no learned trait


@dataclass(frozen=True, slots=True)
class Truth:
    """A world's hidden figures per player: skill, the first match they could play (when
    known), and the other figures by name (offset, command…)."""

    skill: dict[str, float]
    arrival: dict[str, int] = field(default_factory=dict)
    traits: dict[str, dict[str, float]] = field(default_factory=dict)


def parse_truth(obj: Any) -> Truth:
    """A Truth from a decoded truth file; ValueError says what is wrong."""
    players = obj.get("players") if isinstance(obj, dict) else None
    if not isinstance(players, dict) or not players:
        raise ValueError('a truth file is an object with "players": {id: {"skill": x, …}}')
    skill: dict[str, float] = {}
    arrival: dict[str, int] = {}
    traits: dict[str, dict[str, float]] = {}
    for player, figures in players.items():
        if not isinstance(figures, dict) or not _is_number(figures.get("skill")):
            raise ValueError(f"players.{player}: needs a numeric skill")
        for name, value in figures.items():
            if not _is_number(value):
                raise ValueError(f"players.{player}.{name} must be a number")
            if name == "skill":
                skill[player] = float(value)
            elif name == "arrival":
                arrival[player] = int(value)
            else:
                traits.setdefault(name, {})[player] = float(value)
    return Truth(skill, arrival, traits)


def load_truth(path: Path | str) -> Truth:
    """Read a truth file (`synelo simulate-history --truth`); ValueError if it is not one."""
    try:
        return parse_truth(orjson.loads(Path(path).read_bytes()))
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class TraitScore:
    spearman: float | None
    players: int


@dataclass(frozen=True, slots=True)
class Settling:
    """Rounds a new player needs to come within `NEAR` of their level (see the module)."""

    median: float | None
    p75: float | None
    players: int  # new players measured
    never: int  # of whom never settled
    by_tercile: dict[str, float | None]
    alpha: float | None = None  # the line strength ≈ α + β·skill
    beta: float | None = None
    range: float | None = None  # p95 − p5 of α + β·skill over every player

    def to_json(self) -> dict[str, Any]:
        return {
            "median": self.median,
            "p75": self.p75,
            "players": self.players,
            "never": self.never,
            "by_tercile": self.by_tercile,
            "line": {"alpha": self.alpha, "beta": self.beta, "range": self.range},
        }


@dataclass(frozen=True, slots=True)
class TruthScores:
    spearman_skill: float | None
    skill_players: int
    traits: dict[str, TraitScore]
    rounds_to_within: Settling

    def to_json(self) -> dict[str, Any]:
        return {
            "spearman_skill": self.spearman_skill,
            "skill_players": self.skill_players,
            "traits": {
                name: {"spearman": t.spearman, "players": t.players}
                for name, t in self.traits.items()
            },
            "rounds_to_within": self.rounds_to_within.to_json(),
        }


def record_strengths(
    model: RatingModel, match: Match, trajectories: dict[str, list[float]]
) -> None:
    """Append every participant's strength after `match` to their trajectory (NaN when the
    model has none), so that a trajectory's length is the player's number of matches."""
    strength_of = model.strength_of
    part_a, part_b = (
        match.participants if match.participants is not None else (match.team_a, match.team_b)
    )
    for player in (*part_a, *part_b):
        strength = strength_of(player)
        seen = trajectories.get(player)
        if seen is None:
            trajectories[player] = seen = []
        seen.append(math.nan if strength is None else strength)


def settled_at(
    trajectory: Sequence[float], target: float, near: float, stay: float, hold: int = HOLD
) -> int | None:
    """The first n (1-based) whose strength is within `near` of `target` and the next `hold`
    within `stay`; None if none, or if too few matches follow to tell."""
    dev = np.abs(np.asarray(trajectory, dtype=float) - target)
    strays = np.concatenate(([0], np.cumsum(~(dev <= stay))))  # NaN strays
    for i in np.flatnonzero(dev <= near):
        if i + hold >= len(dev):
            return None
        if strays[i + 1 + hold] == strays[i + 1]:
            return int(i) + 1
    return None


def _quantile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile (linear) of `values`, where inf stands for never: None when it would
    depend on a never, or there is no value."""
    if not values:
        return None
    x = np.sort(np.asarray(values, dtype=float))
    pos = q * (len(x) - 1)
    low, high = math.floor(pos), math.ceil(pos)
    if not math.isfinite(x[high]):
        return None
    return float(x[low] + (x[high] - x[low]) * (pos - low))


def _settling(
    truth: Truth,
    matches: Sequence[Match],
    trajectories: Mapping[str, Sequence[float]],
    final: Mapping[str, float],
) -> Settling:
    empty = Settling(None, None, 0, 0, dict.fromkeys(TERCILES))
    fit = [
        p
        for p, t in trajectories.items()
        if len(t) >= FIT_MATCHES and p in truth.skill and p in final
    ]
    xs = np.array([truth.skill[p] for p in fit])
    if len(fit) < 2 or np.ptp(xs) == 0:
        return empty
    beta, alpha = (float(c) for c in np.polyfit(xs, [final[p] for p in fit], 1))
    every = np.array(list(truth.skill.values()))
    spread = abs(beta) * float(np.percentile(every, 95) - np.percentile(every, 5))
    if spread == 0:
        return Settling(None, None, 0, 0, dict.fromkeys(TERCILES), alpha, beta, spread)
    arrived = truth.arrival or _first_matches(matches)
    cuts = np.percentile(every, [100 / 3, 200 / 3])
    rounds: dict[str, list[float]] = {name: [] for name in TERCILES}
    for player, trajectory in trajectories.items():
        if (
            arrived.get(player, 0) <= 0
            or player not in truth.skill
            or len(trajectory) < NEW_MATCHES
        ):
            continue
        skill = truth.skill[player]
        n = settled_at(trajectory, alpha + beta * skill, NEAR * spread, STAY * spread)
        tercile = TERCILES[int(np.searchsorted(cuts, skill, side="right"))]
        rounds[tercile].append(math.inf if n is None else float(n))
    every_round = [n for group in rounds.values() for n in group]
    return Settling(
        _quantile(every_round, 0.5),
        _quantile(every_round, 0.75),
        len(every_round),
        sum(not math.isfinite(n) for n in every_round),
        {name: _quantile(group, 0.5) for name, group in rounds.items()},
        alpha,
        beta,
        spread,
    )


def _first_matches(matches: Sequence[Match]) -> dict[str, int]:
    """Each player's first match index, standing in for a truth without arrivals."""
    first: dict[str, int] = {}
    for n, match in enumerate(matches):
        sides = match.participants or (match.team_a, match.team_b)
        for player in (*sides[0], *sides[1]):
            first.setdefault(player, n)
    return first


def _commands(matches: Sequence[Match]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for match in matches:
        commanders = (match.details or {}).get("commanders")
        if match.voided or not isinstance(commanders, dict):
            continue
        for player in commanders.values():
            counts[player] = counts.get(player, 0) + 1
    return counts


def score_truth(
    model: RatingModel,
    matches: Sequence[Match],
    trajectories: Mapping[str, Sequence[float]],
    truth: Truth,
) -> TruthScores:
    """The scores of the module's docstring, from the model as the replay left it."""
    final: dict[str, float] = {}
    for player in trajectories:
        strength = model.strength_of(player)
        if strength is not None and math.isfinite(strength):
            final[player] = strength
    ranked = [
        p
        for p, t in trajectories.items()
        if len(t) >= MIN_MATCHES and p in final and p in truth.skill
    ]
    rho = spearman([final[p] for p in ranked], [truth.skill[p] for p in ranked])
    commands = _commands(matches)
    traits: dict[str, TraitScore] = {}
    for name, learned in model.traits().items():
        hidden = truth.traits.get(name)
        if hidden is None:
            continue
        players = [
            p
            for p, value in learned.items()
            if p in hidden
            and math.isfinite(value)
            and (
                commands.get(p, 0) >= MIN_COMMANDS
                if name == "command"
                else len(trajectories.get(p, ())) >= MIN_MATCHES
            )
        ]
        traits[name] = TraitScore(
            spearman([learned[p] for p in players], [hidden[p] for p in players]), len(players)
        )
    return TruthScores(rho, len(ranked), traits, _settling(truth, matches, trajectories, final))


def truth_table(scores: TruthScores) -> Table:
    """The scores against the truth, one line each."""
    from rich.table import Table

    def fmt(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    def count(x: float | None) -> str:  # a median of rounds may end in .5
        return "–" if x is None else f"{x:,g}"

    table = Table(title="against the hidden truth")
    table.add_column("measure")
    table.add_column("players", justify="right")
    table.add_column("value", justify="right")
    table.add_row(
        f"Spearman, strength vs skill (≥ {MIN_MATCHES} matches)",
        f"{scores.skill_players:,}",
        fmt(scores.spearman_skill),
    )
    for name, trait in scores.traits.items():
        table.add_row(
            f"Spearman, {name} vs hidden {name}", f"{trait.players:,}", fmt(trait.spearman)
        )
    s = scores.rounds_to_within
    table.add_row(
        f"rounds to within {NEAR:.0%} of range: median / p75 ({s.never:,} never)",
        f"{s.players:,}",
        f"{count(s.median)} / {count(s.p75)}",
    )
    table.add_row(
        "  median by skill tercile: " + " / ".join(TERCILES),
        "",
        " / ".join(count(s.by_tercile[name]) for name in TERCILES),
    )
    return table
