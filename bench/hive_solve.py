"""Benchmark of the Hive model's full-history solve (H8) on 100,000 12v12 rounds.

Method
------
1. `synelo.sim.history` draws an NS2-like world: ``--players`` players (default 2,000),
   ``--rounds`` 12v12 rounds (default 100,000) with sides, maps, commanders, late joiners and
   leavers.
2. The rounds go through the Hive model's online update in this process, as a pool rates
   them (`Hive.rate` with the pool context in memory): the baseline, timed.
3. The solve refits every player's s, o and χ on all the rounds (`Hive.solve`): the time to
   build the design matrix and the time of L-BFGS-B are reported apart, with its iterations,
   whether it met the tolerance and the largest projected gradient left.
4. Reported: both times, their ratio, and the target (solve ≤ 60 s), plus the log loss of
   the online predictions and of the solved skills' fit, and Spearman's ρ of s against the
   hidden skills before and after the solve.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from synelo.evaluation.adapters.model import round_facts
from synelo.evaluation.history import parse_match
from synelo.evaluation.stats import spearman
from synelo.models.hive import Hive
from synelo.ratings.hive import logit_a, sigmoid
from synelo.ratings.hive_solve import SolveReport, solve_skills
from synelo.sim.history import HistoryWorldConfig, generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    began = time.perf_counter()
    config = HistoryWorldConfig(
        players=args.players, matches=args.rounds, team_size=12, seed=args.seed
    )
    lines, truth = generate(config)
    matches = [parse_match(line) for line in lines if "teams" in line]
    print(
        f"world: {len(matches):,} rounds of 12v12, {args.players:,} players "
        f"({time.perf_counter() - began:.1f} s)"
    )

    model = Hive({"reference_side": truth["reference_side"]})
    states: dict[str, Any] = {}
    context: dict[str, Any] = {}
    facts = [round_facts(m) for m in matches]
    predictions = np.empty(len(facts))
    began = time.perf_counter()
    for n, f in enumerate(facts):
        entries = {k: context[k] for k in model.context_keys(f) if k in context}
        rated = model.rate(states, f, entries)
        states.update(rated.states)
        context.update(rated.context)
        predictions[n] = rated.p_a
    online_s = time.perf_counter() - began
    print(f"online update: {online_s:.1f} s, {len(facts) / online_s:,.0f} rounds/s")

    began = time.perf_counter()
    played = [model.played_round(f, model._context(f, context)) for f in facts]
    design_s = time.perf_counter() - began
    report: list[SolveReport] = []
    began = time.perf_counter()
    solved = solve_skills(played, states, model.hive, report)
    solve_s = time.perf_counter() - began
    outcome = report[0]
    print(
        f"solve: design {design_s:.1f} s, L-BFGS-B {solve_s:.1f} s "
        f"({outcome.iterations} iterations, converged {outcome.converged}, largest "
        f"projected gradient {outcome.gradient:.1e}; {outcome.message}); "
        f"total {design_s + solve_s:.1f} s, {(design_s + solve_s) / online_s:.2f} × the online pass"
    )

    g = np.array([1.0 if m.winner == "A" else 0.0 if m.winner == "B" else 0.5 for m in matches])
    online_ll = float(np.mean(-(g * np.log(predictions) + (1 - g) * np.log(1 - predictions))))
    fitted = np.array([sigmoid(logit_a(r, solved, model.hive.s0)) for r in played])
    solved_ll = float(np.mean(-(g * np.log(fitted) + (1 - g) * np.log(1 - fitted))))
    hidden = truth["players"]
    keys = sorted(set(states) & set(hidden))
    before = spearman([states[k].s for k in keys], [hidden[k]["skill"] for k in keys])
    after = spearman([solved[k].s for k in keys], [hidden[k]["skill"] for k in keys])
    print(f"log loss: online predictions {online_ll:.4f}, solved fit {solved_ll:.4f}")
    print(f"Spearman of s against the hidden skills: online {before:.3f}, solved {after:.3f}")
    verdict = "met" if design_s + solve_s <= 60.0 and outcome.converged else "NOT met"
    print(f"target: solve of {len(matches):,} rounds converged in ≤ 60 s: {verdict}")


if __name__ == "__main__":
    main()
