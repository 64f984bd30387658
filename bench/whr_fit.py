"""Benchmark of the whr model's full MAP fit (W10) on a long history of mixed team sizes.

Method
------
1. A seeded world (numpy, drawn here) of ``--players`` players (default 5,000) over
   ``--days`` days (default 730: two years) plays ``--rounds`` rounds (default 100,000),
   the same number each day. Each player has a hidden skill that drifts (a random walk of
   ``--drift`` Elo a day), an arrival day (a third there from day 0, the rest arriving over
   the first 80 % of the days) and a lognormal activity: each day a player who has arrived
   comes with a probability that follows their activity, and the day's rounds draw their
   players from those who came. A round is k v k with k uniform in 1..8, or, one time in
   five, k v k+1 (the larger side drawn at random). A wins with probability σ(mean skill of A
   − mean skill of B + a hidden extra-player advantage of 0.6/k natural units for the larger
   side), the model's own W1.
2. ``synelo.ratings.whr_fit.fit`` fits every PlayerDay and the epads on all the rounds with
   the model's defaults (Zero-K's drift, the simple epad of 15 steps, fitted jointly): the
   wall time of the fit, from the games to the result with its variances and game terms.
   Printed: the time, Newton iterations, whether it converged and the largest change of its
   last step, the PlayerDays and the epads of the steps the rounds use against the hidden
   ones.
3. The served model's ``Whr.refit`` on the same rounds, as a re-rate calls it (the rounds as
   ``RoundFacts`` with their day, every player's state new): the same fit plus folding each
   player's days past the 30-day window into a prior (W8). Its wall time, and its ratio to
   the fit's, in this process.
4. Spearman's ρ of the last-day ratings against the hidden last-day skills, to show that
   the fit found the world. Target: the fit of 100,000 rounds in ≤ 30 s.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from synelo.evaluation.stats import spearman
from synelo.models import RoundFacts
from synelo.models.whr import Whr
from synelo.ratings.whr import NATURAL
from synelo.ratings.whr_fit import FitGame, fit

TARGET_S = 30.0
MAX_SIZE = 8
UNEVEN_SHARE = 0.2
EPAD_SCALE = 0.6  # the hidden advantage of k+1 over k players: EPAD_SCALE/k natural units


@dataclass(frozen=True, slots=True)
class World:
    """The drawn history and the hidden skills at each player's last day."""

    games: list[FitGame]
    last_skill: dict[str, float]


def draw_world(
    players: int, days: int, rounds: int, drift_elo: float, session: float, seed: int
) -> World:
    """Step 1 of the method: the rounds, day by day, from skills that drift."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 250.0 / NATURAL, players)
    step = drift_elo / NATURAL
    arrival = np.where(
        rng.random(players) < 1 / 3, 0, rng.integers(0, max(1, int(0.8 * days)), players)
    )
    activity = rng.lognormal(0.0, 0.7, players)
    names = [f"p{i}" for i in range(players)]
    per_day = np.full(days, rounds // days)
    per_day[: rounds % days] += 1
    last_skill: dict[str, float] = {}
    games: list[FitGame] = []
    for day in range(days):
        skill += rng.normal(0.0, step, players)
        arrived = np.flatnonzero(arrival <= day)
        k = rng.integers(1, MAX_SIZE + 1, per_day[day])
        uneven = rng.random(per_day[day]) < UNEVEN_SHARE
        larger_a = rng.random(per_day[day]) < 0.5
        slots = int(np.sum(2 * k + uneven))
        # who comes today: enough for `session` rounds each on average, the active likelier
        weight = activity[arrived]
        chance = np.minimum(1.0, weight * (slots / session / weight.sum()))
        came = arrived[rng.random(len(arrived)) < chance]
        if len(came) < 2 * MAX_SIZE + 1:
            came = arrived
        u = rng.random(per_day[day])
        for j in range(per_day[day]):
            size_a = int(k[j] + (uneven[j] and larger_a[j]))
            size_b = int(k[j] + (uneven[j] and not larger_a[j]))
            chosen = rng.choice(came, size_a + size_b, replace=False)
            a, b = chosen[:size_a], chosen[size_a:]
            logit = float(skill[a].mean() - skill[b].mean())
            if size_a != size_b:
                logit += math.copysign(EPAD_SCALE / min(size_a, size_b), size_a - size_b)
            score = 1.0 if u[j] < 1.0 / (1.0 + math.exp(-logit)) else 0.0
            games.append(
                FitGame(tuple(names[i] for i in a), tuple(names[i] for i in b), day, score)
            )
            for i in chosen:
                last_skill[names[i]] = float(skill[i])
    return World(games, last_skill)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=5_000)
    parser.add_argument("--days", type=int, default=730)
    parser.add_argument("--drift", type=float, default=5.0, help="Elo a day of skill drift")
    parser.add_argument(
        "--session", type=float, default=3.0, help="rounds a player plays on a day they come"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-refit", action="store_true", help="skip the model's refit")
    args = parser.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load}")

    began = time.perf_counter()
    world = draw_world(args.players, args.days, args.rounds, args.drift, args.session, args.seed)
    games = world.games
    sizes = [len(g.team_a) + len(g.team_b) for g in games]
    uneven = sum(len(g.team_a) != len(g.team_b) for g in games)
    print(
        f"world: {len(games):,} rounds ({uneven:,} uneven, {sum(sizes):,} player slots), "
        f"{len(world.last_skill):,} players over {args.days} days "
        f"({time.perf_counter() - began:.1f} s)"
    )

    model = Whr()
    began = time.perf_counter()
    result = fit(games, model.drift, model.epad_kind, model.steps)
    fit_s = time.perf_counter() - began
    player_days = sum(len(p.days) for p in result.players.values())
    print(
        f"fit: {fit_s:.1f} s, {result.iterations} Newton iterations, converged "
        f"{result.converged} (largest change {result.largest_change:.1e} natural), "
        f"{player_days:,} PlayerDays ({sum(sizes) / player_days:.1f} rounds a PlayerDay)"
    )
    used = sorted(
        {min(len(g.team_a), len(g.team_b)) for g in games if len(g.team_a) != len(g.team_b)}
    )
    print(
        "epad (Elo, fitted / hidden): "
        + ", ".join(
            f"{k}v{k + 1} {result.epad[str(k)] * NATURAL:.0f}/{EPAD_SCALE / k * NATURAL:.0f}"
            for k in used
        )
    )
    keys = sorted(world.last_skill)
    rho = spearman([result.players[p].rating for p in keys], [world.last_skill[p] for p in keys])
    print(f"Spearman ρ of the last-day ratings against the hidden skills: {rho:.3f}")

    if not args.no_refit:
        facts = [
            RoundFacts(g.team_a, g.team_b, "A" if g.score == 1.0 else "B", extras={"day": g.day})
            for g in games
        ]
        states = {p: model.new_state() for p in keys}
        began = time.perf_counter()
        refitted = model.refit(states, facts, {})
        refit_s = time.perf_counter() - began
        assert refitted is not None
        print(
            f"model refit: {refit_s:.1f} s ({refit_s / fit_s:.2f} × the fit), "
            f"{len(refitted.states):,} states"
        )
    verdict = "met" if fit_s <= TARGET_S and result.converged else "NOT met"
    print(f"target: fit of {len(games):,} rounds converged in ≤ {TARGET_S:.0f} s: {verdict}")


if __name__ == "__main__":
    main()
