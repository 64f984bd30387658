"""The update benchmark runs end to end at a tiny size (the figures themselves are not tested:
speed lives in the benchmark, not in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from synelo.models import MODELS, pool_models

BENCH = Path(__file__).resolve().parents[2] / "bench" / "update.py"


@pytest.mark.parametrize("client", ["socket", "httpx"])
def test_update_benchmark_runs_both_phases_in_alternating_blocks(client: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--history",
            "60",
            "--rounds",
            "30",
            "--warmup",
            "5",
            "--population",
            "60",
            "--blocks",
            "2",
            "--client",
            client,
            "--model-rounds",
            # each model's pool once is enough: the client only changes how rounds are sent
            "10" if client == "socket" else "0",
            "--whr-history",
            "20",
            "--whr-days",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # the history really was rated, in a database of its own: 60 rounds of 24 players
    assert "database now: 60 rounds, 1,440 journal rows, 60 players" in out
    # two blocks a phase, alternating; 30 measured rounds split 15 + 15
    blocks = [line for line in out.splitlines() if line.strip().startswith("block ")]
    assert [line.split(":")[0].strip() for line in blocks] == ["block 1", "block 2"]
    assert "CPU the idle server used meanwhile" in out
    # every warm-up and measured round went to its own server's database: 5 + 30 each, and
    # the empty server's pools of each model 50 + 10 each, and whr's second pool 20 + 10
    per_model = len(pool_models()) * 60 + 30 if client == "socket" else 0
    assert (
        f"empty database after the run: {35 + per_model} rounds, "
        f"{24 * (35 + per_model):,} journal rows"
    ) in out
    rows = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert [r for r in rows if r in MODELS] == (pool_models() if client == "socket" else [])
    # whr's pool with days of history behind its measured rounds, and whr's target on both
    assert ("whr, 3 days of history" in rows) == (client == "socket")
    targets = [line for line in out.splitlines() if line.startswith("target: whr")]
    assert len(targets) == (2 if client == "socket" else 0)
    assert "history database after the run: 95 rounds, 2,280 journal rows" in out
    table = [line.split() for line in out.splitlines() if line.startswith(("empty ", "60 "))]
    assert [row[0] for row in table] == ["empty", "60"]
    for row in table:
        rounds_measured, rate = int(row[-6]), float(row[-5])
        assert rounds_measured == 30 and rate > 0
    assert "ratio throughput(history)/throughput(empty)" in out
