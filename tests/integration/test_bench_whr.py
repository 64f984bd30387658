"""`make bench-whr`'s two scripts run end to end at a tiny size: the full fit of a generated
mixed-size history and the replay of the test FRC 2016 sample (the figures themselves are
not tested: speed lives in the benchmark, not in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_whr_fit_benchmark_fits_a_mixed_history_and_the_models_refit() -> None:
    out = run(
        "bench/whr_fit.py", "--rounds", "1500", "--players", "150", "--days", "20", "--seed", "3"
    )
    world = next(line for line in out.splitlines() if line.startswith("world: "))
    assert world.startswith("world: 1,500 rounds (") and "over 20 days" in world
    fitted = next(line for line in out.splitlines() if line.startswith("fit: "))
    assert "converged True" in fitted and "PlayerDays" in fitted
    # both kinds of uneven round were drawn, and their epads fitted: 1v2 up to 8v9
    assert "1v2 " in out and "8v9 " in out
    assert "model refit: " in out
    assert "target: fit of 1,500 rounds converged in ≤ 30 s: met" in out


def test_replay_benchmark_times_whr_against_synelo() -> None:
    out = run(
        "bench/replay.py",
        "--data",
        str(ROOT / "tests" / "data" / "frc"),
        "--years",
        "2016",
        "--models",
        "whr,synelo",
        "--repeat",
        "1",
    )
    assert [line.split()[2] for line in out.splitlines() if line.startswith("  run 1")] == [
        "whr:",
        "synelo:",
    ]
    assert "whr replay in <= 60 s: " in out
    # the synelo/openskill-pl targets need both of them
    assert "ratio synelo/openskill-pl" not in out
