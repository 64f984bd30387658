"""A change to the round path, measured against the code without it, in the same run.

This machine's speed moves by 2-3x between sessions and by a fifth between blocks of one
run, so two runs of `update.py` cannot tell a change of a few percent. Here two servers run
side by side on PostgreSQL, each with `--workers` workers and a fresh schema of its own:
"base" from this checkout, "changed" from another copy of the source (`--changed`, the
folder that holds its `synelo` package, put first on the server's PYTHONPATH). Each gets
the same warm-up, then `--blocks` blocks of `--size` rounds, alternating between the two
in ABBA order, so a drift of the machine weighs on both. It prints each block and the
changed/base ratio of each, then both servers' totals.

    cp -r src /tmp/changed && $EDITOR /tmp/changed/synelo/store/driver_sql.py
    .venv/bin/python bench/compare_trees.py --changed /tmp/changed

The copy's compiled modules (mypyc's .so files in `synelo/ratings`) take precedence over
their .py files: delete them from the copy to change the rating math.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import update  # noqa: E402  (the benchmark's load generator, servers and schemas)

NAMES = ("base", "changed")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--changed", required=True, type=Path, help="the changed source folder")
    p.add_argument("--blocks", type=int, default=8, help="measured blocks a server")
    p.add_argument("--size", type=int, default=1500, help="rounds a block")
    p.add_argument("--warmup", type=int, default=400, help="warm-up rounds a worker")
    p.add_argument("--history", type=int, default=0, help="rounds of history each first")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--population", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--pg-url", default=None, help="as update.py's --pg-url")
    args = p.parse_args(argv)
    if not (args.changed / "synelo" / "__init__.py").is_file():
        p.error(f"--changed: no synelo package in {args.changed}")
    return args


def load_args(args: argparse.Namespace) -> argparse.Namespace:
    """update.py's settings for its `load`: PostgreSQL, these sizes and workers."""
    argv = ["--database", "postgresql", "--workers", str(args.workers)]
    argv += ["--population", str(args.population), "--concurrency", str(args.concurrency)]
    if args.pg_url:
        argv += ["--pg-url", args.pg_url]
    return update.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, list[update.LoadResult]]:
    bench = load_args(args)
    with (
        tempfile.TemporaryDirectory(prefix="synelo-compare-") as tmp,
        update.pg_schemas(bench.pg_url, NAMES) as urls,
    ):
        envs, logs = {}, {}
        for name in NAMES:
            folder = Path(tmp) / name
            folder.mkdir()
            envs[name] = update.bench_env(folder, urls[name])
            logs[name] = folder / "server.log"
            update.synelo_init(envs[name])
            if args.history:
                url = update.database_url(folder, urls[name])
                update.fill_history(url, args.history, args.population, bench.seed)
        envs["changed"]["PYTHONPATH"] = str(args.changed.resolve())
        if args.history:
            update.checkpoint(bench.pg_url)
        with (
            update.server(envs["base"], logs["base"], args.workers) as base,
            update.server(envs["changed"], logs["changed"], args.workers) as changed,
        ):
            targets = {"base": base, "changed": changed}
            print(f"both servers up ({update.machine()})", flush=True)
            for name in NAMES:
                update.warm_up(name, targets[name], logs[name], bench, args.warmup * args.workers)
            results: dict[str, list[update.LoadResult]] = {name: [] for name in NAMES}
            for b in range(args.blocks):
                for name in NAMES if b % 2 == 0 else NAMES[::-1]:
                    other = targets["changed" if name == "base" else "base"][1]
                    results[name].append(
                        update.load(
                            f"{name}-{b}", targets[name], logs[name], bench, args.size, other
                        )
                    )
                print_block(b + 1, results["base"][-1], results["changed"][-1])
    return results


def print_block(number: int, base: update.LoadResult, changed: update.LoadResult) -> None:
    def part(r: update.LoadResult) -> str:
        return (
            f"{r.rate:7.1f} rounds/s (p99 {r.percentile(0.99):5.1f} ms, "
            f"server CPU {r.cpu_ms(r.server_cpu):.2f} ms/round)"
        )

    print(
        f"  block {number}: base {part(base)}, changed {part(changed)}, "
        f"ratio {changed.rate / base.rate:.3f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    ratios = [c.rate / b.rate for b, c in zip(results["base"], results["changed"], strict=True)]
    for name in NAMES:
        m = update.merge(results[name])
        print(
            f"{name:8} {m.rounds:6d} rounds {m.rate:7.1f} rounds/s  p50 {m.percentile(0.5):5.1f} "
            f"p99 {m.percentile(0.99):5.1f} ms  server CPU {m.cpu_ms(m.server_cpu):.2f} ms/round"
        )
    total = update.merge(results["changed"]).rate / update.merge(results["base"]).rate
    print(
        f"changed/base: {total:.3f} (blocks {min(ratios):.3f}-{max(ratios):.3f}, "
        f"median {statistics.median(ratios):.3f})"
    )
    return 0


if __name__ == "__main__":  # the load runs in spawned processes, which import this module
    sys.exit(main())
