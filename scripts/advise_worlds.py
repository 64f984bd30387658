"""The worlds of docs/evaluation.md's "Choosing a model: synelo advise", each built to suit one
model's assumptions, and what `synelo advise` picks on each.

- **ns2** (suits `hive`): `synelo simulate-history`'s NS2-like world, with side offsets,
  commanders, map biases, leavers and late joiners (`synelo.sim.history.generate`).
- **drift** (suits `whr`): skills that drift as a random walk from one day to the next, with
  a few rounds a day, every round dated (`team_world` below).
- **stationary** (said to suit `synelo`): the same world with skills that never move.
- **arrivals** (said to suit `synelo`: stationary skills, in a larger game): skill sd 0.3,
  6v6 among 120 players, all but 24 of whom arrive over the first 60 % of the rounds.
- **jumps** (suits `whr`, and `hive`: skills that change between dated rounds): the drift
  world's rounds, where each day a player's skill jumps by N(0, 1) with chance 1 %, and is
  otherwise still.

In `team_world` each round draws 2k of the players at random and splits them at random; side
A wins with P = σ(Σ_A s − Σ_B s), the skills in logits. Nothing else (no sides, maps,
commanders or leavers) decides a round.

    PYTHONPATH=src python scripts/advise_worlds.py --rounds 3000

prints, per world, the model picked, its log loss, its margin (± SE) over the runner-up and
the seconds advise took; then every row's log loss and its gap to the pick (± SE).
"""

from __future__ import annotations

import argparse
import math
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from synelo.evaluation.advise import Advice, advise
from synelo.evaluation.history import Match, parse_match
from synelo.sim.history import HistoryWorldConfig, generate

START = datetime(2026, 1, 1, tzinfo=UTC)


def team_world(
    *,
    players: int = 60,
    rounds: int = 2000,
    team_size: int = 3,
    skill_sd: float = 0.6,
    drift_sd: float = 0.0,
    jump_rate: float = 0.0,
    jump_sd: float = 1.0,
    rounds_per_day: int = 10,
    arrival_span: float = 0.0,
    seed: int = 1,
) -> tuple[dict[str, Any], list[Match]]:
    """A header and the rounds of a world of plain k-v-k rounds (see the module): each
    player's skill (logits) starts N(0, skill_sd²) and moves N(0, drift_sd²) every day, and
    with chance `jump_rate` a day jumps by N(0, jump_sd²); `rounds_per_day` rounds a day,
    an hour apart. With `arrival_span` > 0, all but 4k players arrive at uniform random
    rounds within that share of the history, and a round draws among those arrived."""
    if players < 2 * team_size:
        raise ValueError(f"{players} players cannot fill a {team_size}v{team_size}")
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, skill_sd, players)
    arrival = np.zeros(players)
    if arrival_span > 0:
        arrival = np.sort(rng.uniform(0.0, rounds * arrival_span, players))
        arrival[: 4 * team_size] = 0.0
    matches: list[Match] = []
    for n in range(rounds):
        day, slot = divmod(n, rounds_per_day)
        if slot == 0 and n > 0 and drift_sd > 0:
            skill = skill + rng.normal(0.0, drift_sd, players)
        if slot == 0 and n > 0 and jump_rate > 0:
            jumps = rng.random(players) < jump_rate
            skill = skill + jumps * rng.normal(0.0, jump_sd, players)
        here = np.flatnonzero(arrival <= n) if arrival_span > 0 else players
        drawn = rng.choice(here, size=2 * team_size, replace=False)
        a, b = drawn[:team_size], drawn[team_size:]
        p_a = 1 / (1 + math.exp(-(skill[a].sum() - skill[b].sum())))
        matches.append(
            Match(
                f"r{n + 1}",
                tuple(f"p{i}" for i in a),
                tuple(f"p{i}" for i in b),
                "A" if rng.random() < p_a else "B",
                time=START + timedelta(days=day, hours=slot),
            )
        )
    header = {"source": "scripts/advise_worlds.py", "team_size": team_size}
    return header, matches


def ns2_world(*, rounds: int = 2000, seed: int = 1) -> tuple[dict[str, Any], list[Match]]:
    """`synelo simulate-history`'s NS2-like world, 6v6 among 150 players."""
    lines, _ = generate(HistoryWorldConfig(players=150, matches=rounds, team_size=6, seed=seed))
    return lines[0], [parse_match(line) for line in lines[1:]]


WORLDS = {
    "ns2": ("hive", lambda rounds, seed: ns2_world(rounds=rounds, seed=seed)),
    "drift": (
        "whr",
        lambda rounds, seed: team_world(rounds=rounds, drift_sd=0.15, seed=seed),
    ),
    "stationary": ("synelo", lambda rounds, seed: team_world(rounds=rounds, seed=seed)),
    "arrivals": (
        "synelo",
        lambda rounds, seed: team_world(
            players=120, team_size=6, skill_sd=0.3, arrival_span=0.6, rounds=rounds, seed=seed
        ),
    ),
    "jumps": (
        "whr",
        lambda rounds, seed: team_world(rounds=rounds, jump_rate=0.01, jump_sd=1.0, seed=seed),
    ),
}


def line(world: str, suits: str, advice: Advice) -> str:
    best, up = advice.best, advice.runner_up
    gap = "—" if up is None else f"{up.difference:.4f} ± {up.se:.4f} over {up.other}"
    within = ", ".join(advice.within_noise) or "none"
    return (
        f"{world:<11} suits {suits:<7} picked {best.model} ({best.setting}) "
        f"log loss {best.scores.log_loss:.4f}; {gap}; within the noise: {within}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--world", choices=sorted(WORLDS), action="append")
    args = parser.parse_args()
    for world in args.world or WORLDS:
        suits, build = WORLDS[world]
        header, matches = build(args.rounds, args.seed)
        start = time.perf_counter()
        advice = advise(matches, header)
        seconds = time.perf_counter() - start
        print(line(world, suits, advice) + f" ({seconds:.0f} s)", flush=True)
        gaps = {(m.other, m.setting): m for m in advice.gaps}
        for row in advice.rows:
            gap = gaps.get((row.model, row.setting))
            behind = "best" if gap is None else f"{gap.difference:+.4f} ± {gap.se:.4f}"
            print(f"    {row.label:<20} {row.scores.log_loss:.4f}  {behind:<18} {row.params}")


if __name__ == "__main__":
    main()
