"""Benchmark of the split solver against the seed's F9 enumeration, in one process.

Method: for each pool size N, `--pools` pools of ratings are drawn as the issue says (normal
around 1000, sd 300, rounded, floored at 100; seeded, so every run sees the same pools). For
each pool the solver (`synelo.balance.best_splits`, exact method on: `n_max=None`, budget
10 s) answers every k from 2 to N/2, and its time is taken (process CPU time, see `timed`).
On the first `--f9-pools` pools of each N up to `--f9-max`, the seed's F9 enumeration (errata
fixed, `synelo.balance.gosper`) does the same, and its gaps are checked against the solver's.
The seed's greedy fallback alone (`n_max=0`) runs on every pool too (each method in its
own pass over the pools): its time and its mean
excess gap over the optimum show what falling back costs. Reported per N: solver p50/p99
(ms), the share of pools where every k is proven optimal, F9 p50/p99 and the ratio of the
p50s, the greedy's p50 and mean excess gap.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from rich.console import Console
from rich.table import Table

from synelo.balance import best_splits
from synelo.balance.gosper import enumerate_all

THETA = 2400.0


def draw(rng: random.Random, n: int) -> list[int]:
    return [max(100, round(rng.gauss(1000, 300))) for _ in range(n)]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn):  # type: ignore[no-untyped-def]
    """The result and the CPU seconds this process spent: the solver and F9 are single-threaded,
    so on a quiet machine this is their wall time, and it stays fair on a shared one."""
    began = time.process_time()
    out = fn()
    return out, time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="12,16,20,24,32,48,64,100")
    parser.add_argument("--pools", type=int, default=50)
    parser.add_argument("--f9-pools", type=int, default=10)
    parser.add_argument("--f9-max", type=int, default=24)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    console = Console(width=130)
    table = Table(title="split solver: all k from 2 to N/2, per pool")
    for col in (
        "N",
        "pools",
        "solver p50 ms",
        "solver p99 ms",
        "all optimal",
        "F9 p50 ms",
        "F9 p99 ms",
        "F9/solver",
        "greedy p50 ms",
        "greedy excess gap",
    ):
        table.add_column(col, justify="right")
    figures = {}
    best_splits(draw(random.Random(0), 24), theta=THETA)  # warm up (imports, first calls)
    for n in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(args.seed * 1000 + n)
        pools = [draw(rng, n) for _ in range(args.pools)]
        # Each method in its own loop over the pools, so that none runs with the caches and
        # allocator state another one left behind.
        results, solver_t = [], []
        for ratings in pools:
            result, t = timed(
                lambda r=ratings: best_splits(r, theta=THETA, n_max=None, budget_s=10)
            )
            results.append(result)
            solver_t.append(t)
        proven = sum(all(s.optimal for s in result.splits) for result in results)
        greedy_t, excess = [], []
        for ratings, result in zip(pools, results, strict=True):
            greedy, tg = timed(lambda r=ratings: best_splits(r, theta=THETA, n_max=0))
            greedy_t.append(tg)
            excess += [g.gap - s.gap for g, s in zip(greedy.splits, result.splits, strict=True)]
        f9_t = []
        f9_count = args.f9_pools if n <= args.f9_max else 0
        for ratings, result in zip(pools[:f9_count], results, strict=False):
            baseline, tf = timed(lambda r=ratings: enumerate_all(r))
            assert all(baseline[s.k][0] == s.gap for s in result.splits), "F9 disagrees"
            f9_t.append(tf)
        f9_solver_t = solver_t[: len(f9_t)]
        row = {
            "p50": quantile(solver_t, 0.5) * 1e3,
            "p99": quantile(solver_t, 0.99) * 1e3,
            "optimal": proven / len(pools),
        }
        cells = [
            str(n),
            str(len(pools)),
            f"{row['p50']:.2f}",
            f"{row['p99']:.2f}",
            f"{row['optimal']:.0%}",
        ]
        if f9_t:
            row["f9_ratio"] = statistics.median(f9_t) / statistics.median(f9_solver_t)
            cells += [
                f"{quantile(f9_t, 0.5) * 1e3:.0f}",
                f"{quantile(f9_t, 0.99) * 1e3:.0f}",
                f"{row['f9_ratio']:.0f}×",
            ]
        else:
            cells += ["–", "–", "–"]
        cells += [f"{quantile(greedy_t, 0.5) * 1e3:.2f}", f"{statistics.mean(excess):.1f}"]
        table.add_row(*cells)
        figures[n] = row
    console.print(table)
    console.print(
        "F9/solver is the ratio of the medians over the pools both ran on. "
        "Greedy excess gap: mean over pools and k of (greedy gap − optimal gap)."
    )
    targets = [
        ("N=24: ≥ 1000× faster than F9", figures.get(24, {}).get("f9_ratio", 0) >= 1000),
        ("N=32: p50 ≤ 5 ms", figures.get(32, {}).get("p50", 1e9) <= 5),
        ("N=32: p99 ≤ 25 ms", figures.get(32, {}).get("p99", 1e9) <= 25),
        ("N=64: p50 ≤ 100 ms", figures.get(64, {}).get("p50", 1e9) <= 100),
        ("N=100: p50 ≤ 500 ms", figures.get(100, {}).get("p50", 1e9) <= 500),
        ("N=100: optimal in ≥ 99 % of pools", figures.get(100, {}).get("optimal", 0) >= 0.99),
    ]
    for name, met in targets:
        console.print(f"  {'met' if met else 'MISSED'}  {name}")


if __name__ == "__main__":
    main()
