"""Compare Sector's Edge's original power with the community proposal on the scoreboard
world, with a random split as the baseline, and print the figures (seed 002).

    .venv/bin/python scripts/compare_se_splits.py                     # 2,000 lobbies, seed 1
    .venv/bin/python scripts/compare_se_splits.py --lobbies 500 --seed 2 --json se.json

Why a script: the figures in docs/evaluation.md ("Sector's Edge: the original power against
the community proposal") come from this command, so anyone can make them again. The work is
`synelo.sim.sectors_edge_splits.compare`; this prints its table and writes its JSON.

Columns: P is P(A wins) from the hidden skills. "mean" is the world's model,
σ(c·(mean skill A − mean skill B)); "sum" is σ((c/k)·(Σ skill A − Σ skill B)), k the mode's
team size, equal to "mean" when the teams are k v k. |P−½| is the mean distance from an
even match; >0.2 the share of lobbies further than 0.2 from it; "larger" the mean P that
the larger team wins where sizes differ; δ* the worth per player, in skill units, that
would make those larger teams even on average under "sum"; then the team size gap.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table

from synelo.sim.scoreboard import ScoreboardConfig
from synelo.sim.sectors_edge_splits import OUTCOMES, Comparison, SplitsConfig, compare


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def table(result: Comparison) -> Table:
    """One row per mode and method; "all" last."""
    world = result.config.world
    out = Table(
        title=(
            f"Sector's Edge splits: {result.config.lobbies:,} lobbies, seed {world.seed}, "
            f"{world.players} players warmed up on {world.matches:,} matches"
        )
    )
    out.add_column("mode")
    out.add_column("split")
    out.add_column("lobbies", justify="right")
    for o in OUTCOMES:
        out.add_column(f"|P−½| {o}", justify="right")
        out.add_column(f">0.2 {o}", justify="right")
        out.add_column(f"larger {o}", justify="right")
    out.add_column("δ*", justify="right")
    out.add_column("mean gap", justify="right")
    out.add_column("max gap", justify="right")
    out.add_column("gap ≥ 2", justify="right")
    out.add_column("widest", justify="right")
    for mode, by_method in result.metrics.items():
        for method, m in by_method.items():
            cells = [mode, method, f"{m.lobbies:,}"]
            for o in OUTCOMES:
                cells += [
                    _num(m.mean_edge[o]),
                    f"{m.lopsided[o]:.1%}",
                    _num(m.larger_wins[o]),
                ]
            cells += [
                _num(m.presence_to_even, 2),
                f"{m.mean_size_gap:.2f}",
                str(m.max_size_gap),
                f"{m.uneven:.1%}",
                f"{m.widest[0]} v {m.widest[1]}",
            ]
            out.add_row(*cells, end_section=method == "random")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lobbies", type=int, default=2_000, help="lobbies to split (2,000)")
    parser.add_argument("--seed", type=int, default=1, help="the world's seed (1)")
    parser.add_argument("--players", type=int, default=400, help="the population (400)")
    parser.add_argument(
        "--warmup", type=int, default=20_000, help="matches played before the lobbies (20,000)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    world = ScoreboardConfig(players=args.players, matches=args.warmup, seed=args.seed)
    result = compare(SplitsConfig(world, lobbies=args.lobbies))
    console = Console(width=220)
    console.print(table(result))
    depth = ", ".join(
        f"{m} {result.pub_depth[m]:.1f}/{result.community_depth[m]:.1f}" for m in result.pub_depth
    )
    console.print(f"place values behind a lobby player's pubPower/community weight: {depth}")
    if args.json:
        args.json.write_bytes(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2))
        console.print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
