"""The pages benchmark runs end to end at a tiny size (the figures themselves are not tested:
speed lives in the benchmark, not in tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "pages.py"
PAGES = ["leaderboard, page 1", "leaderboard, page 3", "leaderboard, search", "player", "round"]


def test_pages_benchmark_fills_serves_measures_and_profiles(tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--players",
            "200",
            "--rounds",
            "500",
            "--regular-every",
            "5",
            "--days",
            "7",
            "--requests",
            "3",
            "--warmup",
            "1",
            "--deep-page",
            "3",
            "--search",
            "otter",
            "--profile",
            "--profile-runs",
            "2",
            "--keep",
            str(keep),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # the pool was really filled through the write path: 500 rounds of 24 players, all named
    # in the reports, the regular in every 5th round (100) and in some others by chance
    summary = re.search(
        r"database now: 500 rounds \((\S+) to (\S+)\), 12,000 journal rows, 200 players, "
        r"(\d+) on the public board; the regular has played (\d+) rounds",
        out,
    )
    assert summary, out
    assert summary[1] != summary[2]  # the rounds are spread over days
    assert 0 < int(summary[3]) <= 200 and int(summary[4]) >= 100
    # one row a page: each measured page answered, or (the health page, until it exists)
    # says why it was not measured
    rows = {
        line.split("|")[1].strip(): line
        for line in out.splitlines()
        if line.startswith("| ") and not line.startswith("| page ")
    }
    for page in PAGES:
        assert any(name.startswith(page) for name in rows), (page, list(rows))
    assert {"index", "health", "health, after a new round"} <= set(rows)
    for name, line in rows.items():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if cells[1] == "0":
            assert name.startswith("health") and "not available" in cells[-1]
            continue
        assert cells[1] == "3", line
        assert all(float(c) > 0 for c in cells[2:8]), line
        assert cells[-1] in ("met", "MISSED")
    targets = [line for line in out.splitlines() if line.startswith("target: ")]
    assert len(targets) == len(rows)
    # --profile: every page measured is profiled, its store calls and SQL with their plans
    assert out.count("\nprofile: ") == len(rows)
    assert "store.public_board" in out and "store.history" in out
    assert "SQL " in out and "SEARCH players" in out
    # --keep: the database and the server's access log are kept
    assert (keep / "data" / "synelo.db").exists()
    assert '"GET /pools/default' in (keep / "server.log").read_text()
