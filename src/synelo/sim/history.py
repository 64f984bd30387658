"""`synelo simulate-history`: an open-loop NS2-like world that writes a match history and the
hidden truth it was drawn from, to score a replay against (`synelo replay --truth`).

Unlike `synelo simulate` nothing is rated while it runs: the world draws every round from its
own hidden figures, so one history serves any model. Each player has a skill, a side offset
(skill + offset on the reference side, marines; skill − offset on aliens) and a commanding
skill; each map a side bias. A round's winner is drawn from

    P(A wins) = σ(L),  L = Σ_i T_i·w_i·ŝ_i / Σ_i w_i + F + κ·(χ_A − χ_B)

over everyone who played but the commanders (`outcome_logit`): T_i = ±1 for A/B, w_i the
fraction of the round played, ŝ_i the skill on the side played, F the map's bias for A's
side, χ the commanders' skills and κ `command_weight`. A commander sits in the chair for the
whole round: their commanding skill counts, their playing skill does not. Round-start
rosters decide nothing by themselves: a leaver counts for the time they stayed, a late
joiner for theirs. Pure numpy, seeded: one config
gives the same files every time.

Uneven rounds, off by default: with `uneven_share` > 0 that share of the rounds starts k + 1
against k (the larger side A or B at random). L sums skills, so the larger team is ahead by
about one fighter's skill over Σ w; `extra_player_bonus` adds a stated logit for it on top.

Scores, off by default: with `scores` each round reports both sides' points, drawn from the
same draw that decides its winner. The round's latent margin is z = L − logit(u), where u is
the uniform number the winner is drawn with (A wins when u < σ(L), that is when z > 0), so
z is L plus a standard logistic noise and P(A wins) stays σ(L); the scores are
100 + SCORE_UNIT·z/2 for A and 100 − SCORE_UNIT·z/2 for B. The winner and every other draw
are those of the world without scores.

Other shapes, for checking models on every shape of history (docs/evaluation.md, "History
shapes"), each off by default and drawing the same random numbers as the default world, so a
seed gives the same rounds with or without them:
- `sides=False`: a symmetric game. Nobody has a side offset and no map favours a side
  (both 0 in the truth), and the rows carry no `sides`.
- `commanders=False`: nobody sits in a chair; everyone fights, and the rows carry no
  `commanders`. A 1v1 (`team_size` 1) needs it: its only player cannot both command and fight.
- `times=False`: the rows carry no `time` (a history with no dates, as FRC's).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from synelo.evaluation.history import FORMAT_VERSION

REFERENCE_SIDE = "marines"
OTHER_SIDE = "aliens"
START = datetime(2026, 1, 1, tzinfo=UTC)
BREAK = 60  # seconds between one round's end and the next one's start
SHORTEST, LONGEST = 120, 3600  # a round's length is clipped to these (seconds)
LIKES_COMMAND_WEIGHT = 10.0  # how much likelier a "likes to command" player takes the chair
SCORE_BASE, SCORE_UNIT = 100.0, 10.0  # a round's scores: 100 ± 10·z/2 (see the module)
SHAPE_SWITCHES = ("sides", "commanders", "times")  # on by default (see the module)


@dataclass(frozen=True, slots=True)
class HistoryWorldConfig:
    """The world's sizes and the spreads of its hidden figures. `offset_sd`, `command_sd` and
    `command_weight` left at None follow the others (skill_sd/2, skill_sd, 1/team_size), so
    that changing the skill spread or the team size keeps the world's proportions."""

    players: int = 300
    matches: int = 20_000
    team_size: int = 8
    maps: int = 8
    skill_mean: float = 5.0
    skill_sd: float = 2.5
    offset_sd: float | None = None
    command_sd: float | None = None
    command_weight: float | None = None
    map_bias_sd: float = 0.4
    median_length: float = 900.0
    length_sigma: float = 0.35
    leave_rate: float = 0.15  # a non-commander's chance to leave mid-round
    replace_rate: float = 0.7  # a leaver's slot taken by a late joiner
    start_share: float = 1 / 3  # players there from the first match
    arrival_span: float = 0.6  # the others arrive uniformly over this share of the matches
    commander_share: float = 0.2  # players who like to command
    activity_sd: float = 0.5  # lognormal spread of how often a player plays
    uneven_share: float = 0.0  # rounds that start k + 1 against k (0: every round k against k)
    extra_player_bonus: float = 0.0  # logit for the larger side of an uneven round, beyond L
    scores: bool = False  # each round reports both sides' points (see the module)
    sides: bool = True  # side offsets and map biases, and the rows' `sides`
    commanders: bool = True  # one player a team commands from a chair
    times: bool = True  # the rows carry a `time`
    seed: int = 1

    @property
    def offset_spread(self) -> float:
        return self.skill_sd / 2 if self.offset_sd is None else self.offset_sd

    @property
    def command_spread(self) -> float:
        return self.skill_sd if self.command_sd is None else self.command_sd

    @property
    def largest_roster(self) -> int:
        """The most players a round starts with: 2k, or 2k + 1 with uneven rounds."""
        return 2 * self.team_size + (1 if self.uneven_share > 0 else 0)

    @property
    def kappa(self) -> float:
        return 1 / self.team_size if self.command_weight is None else self.command_weight

    def check(self) -> None:
        """ValueError naming what cannot make a world."""
        if self.team_size < 1:
            raise ValueError("team_size must be at least 1")
        if self.team_size < 2 and self.commanders:
            raise ValueError(
                "a team of 1 cannot have a commander besides a fighter: turn commanders off "
                "(--no-commanders)"
            )
        if self.players < self.largest_roster:
            k = self.team_size
            shape = f"{k}v{k}" if self.largest_roster == 2 * k else f"{k + 1}v{k}"
            raise ValueError(f"{self.players} players cannot fill a {shape}")
        if self.matches < 1 or self.maps < 1:
            raise ValueError("matches and maps must be at least 1")
        for name in ("leave_rate", "replace_rate", "start_share", "arrival_span", "uneven_share"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within 0…1")
        if self.skill_sd < 0 or self.map_bias_sd < 0 or self.median_length <= 0:
            raise ValueError("spreads must be ≥ 0 and median_length > 0")

    def to_json(self) -> dict[str, Any]:
        """Every field, with the derived defaults filled in (what the world used)."""
        out = asdict(self)
        out.update(
            offset_sd=self.offset_spread,
            command_sd=self.command_spread,
            command_weight=self.kappa,
        )
        for name in SHAPE_SWITCHES:  # written only when off: the default truth stays as it was
            if out[name]:
                del out[name]
        return out


@dataclass(frozen=True, slots=True)
class Population:
    """The players' hidden figures, by index (player i is `player_id(i)`)."""

    skill: np.ndarray
    offset: np.ndarray  # + on marines, − on aliens
    command: np.ndarray
    arrival: np.ndarray  # the first match index they may play
    activity: np.ndarray  # weight when drawing who plays
    likes_command: np.ndarray  # bool


def iso_time(t: datetime) -> str:
    """A match's time as the histories write it: UTC, to the second, with a Z."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def player_id(i: int) -> str:
    return f"p{i + 1:04d}"


def map_name(m: int) -> str:
    return f"ns2_map{m + 1}"


def draw_population(config: HistoryWorldConfig, rng: np.random.Generator) -> Population:
    """Skills, offsets and commanding skills independent of each other (commanding with the
    skill's spread by default, so that a chair can matter as much as a seat); a third there
    from the start (at least two full teams), the rest arriving uniformly over the first
    `arrival_span` of the matches."""
    n = config.players
    skill = rng.normal(config.skill_mean, config.skill_sd, n)
    offset = rng.normal(0.0, config.offset_spread, n)
    command = rng.normal(0.0, config.command_spread, n)
    activity = rng.lognormal(0.0, config.activity_sd, n)
    likes_command = np.zeros(n, dtype=bool)
    likes_command[rng.permutation(n)[: round(n * config.commander_share)]] = True
    first = min(n, max(math.ceil(n * config.start_share), config.largest_roster))
    last = max(1, int(config.matches * config.arrival_span))
    arrival = np.zeros(n, dtype=np.int64)
    late = rng.permutation(n)[first:]
    arrival[late] = rng.integers(1, last + 1, len(late))
    return Population(skill, offset, command, arrival, activity, likes_command)


def outcome_logit(
    played: Sequence[tuple[bool, float, float]], side_bias: float, command_gap: float, kappa: float
) -> float:
    """L = Σ T_i·w_i·ŝ_i / Σ w_i + F + κ·(χ_A − χ_B) from (on A, w_i, ŝ_i) per player who
    played; T_i is +1 on A and −1 on B."""
    lead = sum(w * s if on_a else -w * s for on_a, w, s in played)
    return lead / sum(w for _, w, _ in played) + side_bias + kappa * command_gap


def _pick(weights: Sequence[float], u: float) -> int:
    """The index a uniform `u` in [0, 1) falls on, each index as likely as its weight."""
    return min(bisect.bisect_right(list(accumulate(weights)), u * sum(weights)), len(weights) - 1)


def _seconds(x: float) -> float:
    """A time within a round, to a tenth of a second (what the history records)."""
    return round(x, 1)


def generate(config: HistoryWorldConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The match lines (header first) and the truth: see the module for the world. Without
    uneven rounds no random number is drawn for them, so the default world is the one it
    was before they existed."""
    config.check()
    rng = np.random.default_rng(config.seed)
    pop, biases = _switched_off(
        config, draw_population(config, rng), rng.normal(0.0, config.map_bias_sd, config.maps)
    )
    by_arrival = np.argsort(pop.arrival, kind="stable")
    arrivals = pop.arrival[by_arrival]
    skill, offset, command = pop.skill.tolist(), pop.offset.tolist(), pop.command.tolist()
    chair_weight = np.where(pop.likes_command, LIKES_COMMAND_WEIGHT, 1.0).tolist()
    k, kappa = config.team_size, config.kappa
    ids = [player_id(i) for i in range(config.players)]
    lines: list[dict[str, Any]] = [header(config)]
    clock = 0
    for n in range(config.matches):
        pool = by_arrival[: int(np.searchsorted(arrivals, n, side="right"))]
        weights = pop.activity[pool] / pop.activity[pool].sum()
        # the rosters first, then late joiners in the order they would be picked
        size_a, size_b = _sizes(config, rng)
        size = size_a + size_b
        drawn = rng.choice(pool, size=min(len(pool), 4 * k), replace=False, p=weights).tolist()
        roster = [drawn[i] for i in rng.permutation(size).tolist()]
        joiners = drawn[size:]
        a_marines = bool(rng.random() < 0.5)
        u_a, u_b = rng.random(2).tolist()
        chairs = (
            (
                _pick([chair_weight[p] for p in roster[:size_a]], u_a),
                size_a + _pick([chair_weight[p] for p in roster[size_a:]], u_b),
            )
            if config.commanders
            else ()
        )
        seated = {roster[c] for c in chairs}  # in the chair, not fighting
        length = rng.lognormal(math.log(config.median_length), config.length_sigma)
        duration = float(min(max(round(length), SHORTEST), LONGEST))
        leaves = (rng.random(size) < config.leave_rate).tolist()
        left_at = rng.uniform(0.0, duration, size).tolist()
        replaced = (rng.random(size) < config.replace_rate).tolist()
        played: list[tuple[int, bool, float, float]] = []  # player, on A, from, to
        for slot, player in enumerate(roster):
            on_a = slot < size_a
            if not leaves[slot] or slot in chairs:  # commanders command the whole round
                played.append((player, on_a, 0.0, duration))
                continue
            t = min(max(_seconds(left_at[slot]), 0.1), duration - 0.1)
            played.append((player, on_a, 0.0, t))
            if replaced[slot] and joiners:
                played.append((joiners.pop(0), on_a, t, duration))
        m = int(rng.integers(config.maps))
        bonus = config.extra_player_bonus * ((size_a > size_b) - (size_a < size_b))
        logit = bonus + outcome_logit(
            [
                (
                    on_a,
                    (end - start) / duration,
                    skill[p] + offset[p] * (1 if on_a == a_marines else -1),
                )
                for p, on_a, start, end in played
                if p not in seated
            ],
            float(biases[m] if a_marines else -biases[m]),
            command[roster[chairs[0]]] - command[roster[chairs[1]]] if chairs else 0.0,
            kappa,
        )
        u = float(rng.random())
        winner = "A" if u < 1 / (1 + math.exp(-logit)) else "B"
        line: dict[str, Any] = {
            "id": f"w{n + 1}",
            "teams": {
                "A": [ids[p] for p in roster[:size_a]],
                "B": [ids[p] for p in roster[size_a:]],
            },
            "participants": {
                "A": [ids[p] for p, a, _, _ in played if a],
                "B": [ids[p] for p, a, _, _ in played if not a],
            },
            "winner": winner,
            "time": iso_time(START + timedelta(seconds=clock)),
            "map": map_name(m),
            "duration": duration,
            "sides": (
                {"A": REFERENCE_SIDE, "B": OTHER_SIDE}
                if a_marines
                else {"A": OTHER_SIDE, "B": REFERENCE_SIDE}
            ),
        }
        _shape_row(config, line, [ids[roster[c]] for c in chairs], logit, u)
        partial = {
            ids[p]: {"from": start, "to": end}
            for p, _, start, end in played
            if start > 0 or end < duration
        }
        if partial:
            line["time_played"] = partial
        lines.append(line)
        clock += int(duration) + BREAK
    return lines, truth(config, pop, biases)


def _switched_off(
    config: HistoryWorldConfig, pop: Population, biases: np.ndarray
) -> tuple[Population, np.ndarray]:
    """The world's figures with its switched-off features at 0: drawn all the same, so that
    every later draw is the default world's."""
    if not config.sides:
        pop = replace(pop, offset=np.zeros_like(pop.offset))
        biases = np.zeros_like(biases)
    if not config.commanders:
        pop = replace(pop, command=np.zeros_like(pop.command))
    return pop, biases


def _shape_row(
    config: HistoryWorldConfig, line: dict[str, Any], chairs: list[str], logit: float, u: float
) -> None:
    """A row's commanders and scores, and no `sides` nor `time` when they are switched off."""
    if chairs:
        line["commanders"] = {"A": chairs[0], "B": chairs[1]}
    if not config.sides:
        del line["sides"]
    if not config.times:
        del line["time"]
    if config.scores:
        line["scores"] = round_scores(logit, u)


def round_scores(logit: float, u: float) -> dict[str, float]:
    """Both sides' points from the latent margin z = L − logit(u) (see the module): A's are
    higher exactly when A won (u < σ(L)), rounded to 0.001."""
    u = min(max(u, 1e-12), 1 - 1e-12)
    half = SCORE_UNIT * (logit - math.log(u / (1 - u))) / 2
    return {"A": round(SCORE_BASE + half, 3), "B": round(SCORE_BASE - half, 3)}


def _sizes(config: HistoryWorldConfig, rng: np.random.Generator) -> tuple[int, int]:
    """The round-start team sizes: k against k, or with `uneven_share` k + 1 against k."""
    k = config.team_size
    if config.uneven_share <= 0:
        return k, k
    uneven, larger_a = (rng.random(2) < (config.uneven_share, 0.5)).tolist()
    if not uneven:
        return k, k
    return (k + 1, k) if larger_a else (k, k + 1)


def header(config: HistoryWorldConfig) -> dict[str, Any]:
    """The history's first line: where it comes from and what a reader should know."""
    k = config.team_size
    uneven = (
        f" ({config.uneven_share:.0%} of them {k + 1}v{k}, the larger side at random; "
        f"extra-player bonus {config.extra_player_bonus:g} in logit)"
        if config.uneven_share > 0
        else ""
    )
    off = [
        what
        for what, on in (
            ("side offsets or map biases (no `sides`)", config.sides),
            ("commanders", config.commanders),
            ("times", config.times),
        )
        if not on
    ]
    shape = [f"this world has no {', no '.join(off)}"] if off else []
    parts = [
        "hidden skills",
        *(("side offsets", "map biases") if config.sides else ()),
        *(("commanders' skills",) if config.commanders else ()),
    ]
    sources = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    # the side the truth's offsets are for, in a world that has them
    reference = {"reference_side": REFERENCE_SIDE} if config.sides else {}
    return {
        "synelo_history": FORMAT_VERSION,
        "source": "synelo extended world",
        "team_size": k,
        **reference,
        "notes": [
            f"simulated (seed {config.seed}): {config.players} players, {config.matches} "
            f"matches of {k}v{k}{uneven} on {config.maps} maps",
            f"P(A wins) = σ(L) from {sources}; see docs/simulator.md",
            "teams are the round-start rosters; participants add the late joiners; "
            "time_played gives the span of everyone who missed part of a round",
            "the hidden truth is in the file written beside this one (--truth)",
            *shape,
        ],
    }


def truth(config: HistoryWorldConfig, pop: Population, biases: np.ndarray) -> dict[str, Any]:
    """What the world hid: per player skill, offset (on the reference side), command and
    arrival (the first match index they could play); per map the bias for marines."""
    return {
        "players": {
            player_id(i): {
                "skill": float(pop.skill[i]),
                "offset": float(pop.offset[i]),
                "command": float(pop.command[i]),
                "arrival": int(pop.arrival[i]),
            }
            for i in range(config.players)
        },
        "reference_side": REFERENCE_SIDE,
        "maps": {map_name(m): float(b) for m, b in enumerate(biases)},
        "config": config.to_json(),
    }


def write(config: HistoryWorldConfig, out: Path, truth_path: Path) -> int:
    """Write the history to `out` and the truth to `truth_path`; the number of matches."""
    return save_world(*generate(config), out, truth_path)


def save_world(
    lines: Sequence[dict[str, Any]], hidden: dict[str, Any], out: Path, truth_path: Path
) -> int:
    """Write a simulated world's history (header first) to `out` and its truth to
    `truth_path`; the number of matches. Every world of `simulate-history` saves this way."""
    with out.open("wb") as f:
        for line in lines:
            f.write(orjson.dumps(line) + b"\n")
    truth_path.write_bytes(orjson.dumps(hidden, option=orjson.OPT_INDENT_2))
    return len(lines) - 1
