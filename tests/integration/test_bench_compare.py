"""The side-by-side benchmark runs end to end at a tiny size, and its "changed" server runs
the given copy of the source (the figures themselves are not tested)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "compare_trees.py"


def test_each_server_runs_its_own_tree_in_alternating_blocks(tmp_path: Path) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(ROOT / "src", changed, ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "markers"
    marker.mkdir()
    init = changed / "synelo" / "__init__.py"
    # every process that imports the copy leaves a file named after its pid
    init.write_text(
        init.read_text()
        + "\nimport os as _os\n"
        + f"open({str(marker)!r} + '/' + str(_os.getpid()), 'w').close()\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--changed",
            str(changed),
            "--blocks",
            "2",
            "--size",
            "12",
            "--warmup",
            "2",
            "--workers",
            "1",
            "--population",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        # not under the suite's coverage, which would count the copy's files as the
        # package's (its subprocesses are measured through this variable)
        env={
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "COVERAGE_PROCESS_CONFIG")
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    blocks = [line.split(":")[0].strip() for line in done.stdout.splitlines() if "block " in line]
    assert blocks == ["block 1", "block 2"]
    totals = {line.split()[0]: line.split() for line in done.stdout.splitlines()[-3:-1]}
    assert set(totals) == {"base", "changed"}
    assert all(row[1] == "24" and float(row[3]) > 0 for row in totals.values())
    assert "changed/base:" in done.stdout
    # a process imported the copy: only the changed server has it on its path
    assert list(marker.iterdir())


def test_a_folder_without_the_package_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--changed", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--changed: no synelo package in" in done.stderr
