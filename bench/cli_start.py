"""Benchmark of the `synelo` command's start: what each CLI test pays before any work.

Method
------
1. Commands the tests run most: ``--help``, ``models``, ``pool list`` on a migrated SQLite
   database, and ``init`` on a fresh data folder (migrations, the default pool, two tokens).
2. Each runs ``--runs`` times as ``python -m synelo`` in a fresh process, bare and under
   coverage (``COVERAGE_PROCESS_START`` at pyproject.toml: how the tests' subprocesses
   measure themselves, the data going to a temporary folder).
3. ``--against DIR`` times another checkout's ``src/`` too (e.g. main's, with its compiled
   modules), run for run interleaved with this one, so both see the same machine load.
4. Per command and mode it prints the median wall time and the median CPU time (user +
   system, the child's own), and with ``--against`` the ratio of the medians. On a machine
   that other work shares, the CPU time is the figure to compare.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "--help": ["--help"],
    "models": ["models"],
    "pool list": ["pool", "list"],
    "init": ["init"],
}


def run_once(src: Path, args: list[str], folder: Path, coverage: bool) -> tuple[float, float]:
    """One `python -m synelo ARGS` with its data in `folder`: (wall s, CPU s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNELO_", "COVERAGE_"))}
    env.update(PYTHONPATH=str(src), SYNELO_DATA_DIR=str(folder / "data"))
    if coverage:
        env.update(
            COVERAGE_PROCESS_START=str(ROOT / "pyproject.toml"),
            COVERAGE_FILE=str(folder / ".coverage"),
        )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "synelo", *args],
        env=env,
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def prepare(src: Path, name: str, folder: Path) -> None:
    """A fresh data folder for `init`; a migrated one for the others."""
    shutil.rmtree(folder / "data", ignore_errors=True)
    for leftover in folder.glob(".coverage*"):
        leftover.unlink()
    if name != "init":
        run_once(src, ["migrate"], folder, coverage=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command and mode")
    parser.add_argument("--against", type=Path, help="another checkout, timed the same way")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated")
    args = parser.parse_args()
    trees = {"this": ROOT / "src"}
    if args.against is not None:
        trees["against"] = args.against.resolve() / "src"
    print(f"python {sys.version.split()[0]}, {args.runs} runs each; medians in seconds")
    print(
        f"{'command':<10} {'coverage':<9} "
        + " ".join(f"{t + ' wall':>13} {'cpu':>6}" for t in trees)
        + ("   ratio (cpu)" if len(trees) > 1 else "")
    )
    for name in args.commands.split(","):
        for coverage in (False, True):
            samples: dict[str, list[tuple[float, float]]] = {tree: [] for tree in trees}
            with tempfile.TemporaryDirectory() as tmp:
                for _ in range(args.runs):
                    for tree, src in trees.items():
                        folder = Path(tmp, tree)
                        folder.mkdir(exist_ok=True)
                        prepare(src, name, folder)
                        samples[tree].append(run_once(src, COMMANDS[name], folder, coverage))
            medians = {
                tree: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
                for tree, s in samples.items()
            }
            line = f"{name:<10} {'yes' if coverage else 'no':<9} " + " ".join(
                f"{wall:>13.2f} {cpu:>6.2f}" for wall, cpu in medians.values()
            )
            if len(trees) > 1:
                line += f"   {medians['against'][1] / medians['this'][1]:.2f}×"
            print(line, flush=True)


if __name__ == "__main__":
    main()
