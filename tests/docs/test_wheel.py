"""docs/client.md's wheel, built and installed as the page says (issue 37): `python -m build`
makes a wheel with the mypyc-compiled maths, which installs into a fresh venv and runs there.

The page's block runs as written in a copy of the clone (`shell_blocks.Sandbox`), with pip's
own cache, but not this checkout's PYTHONPATH: in the fresh venv only the wheel may answer.
Then the installed `synelo` replays an FRC slice through its compiled SynElo and must give
the figures the clone's own install gives. Slow (a compile and an install, minutes on a loaded
machine): marked `slow`, which `make test` runs and `-m "not slow"` leaves out.
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.docs.shell_blocks import ROOT, SYNELO, Sandbox, environment, shell_blocks

PAGE = "docs/client.md"
VENV = "synelo-client"  # the block's ~/synelo-client
COMPILED = re.findall(r'"src/(synelo/[a-z_/]+)\.py"', (ROOT / "setup.py").read_text())

pytestmark = pytest.mark.slow


def test_the_wheel_builds_installs_and_runs_compiled(tmp_path: Path) -> None:
    (block,) = (b for b in shell_blocks(PAGE) if b.run_by == "tests/docs/test_wheel.py")
    assert len(COMPILED) >= 3, "setup.py's list of compiled modules"
    sandbox = Sandbox(tmp_path).create()
    env = {k: v for k, v in sandbox.env().items() if k != "PYTHONPATH"}
    (printed,) = sandbox.run([block], env)
    assert "Usage: synelo" in printed  # the installed command's --help

    (wheel,) = (sandbox.clone / "dist").glob("synelo-*.whl")
    assert not wheel.name.endswith("-none-any.whl"), f"{wheel.name}: no compiled code"
    names = zipfile.ZipFile(wheel).namelist()
    for module in COMPILED:
        assert any(re.fullmatch(rf"{module}\.cpython-.*\.so", n) for n in names), module
    assert "synelo/service/pages/templates/base.html" in names  # package data came along

    venv = sandbox.home / VENV
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import synelo.ratings.synelo as m; print(m.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(venv)) and where.stdout.strip().endswith(".so")

    # a command that runs the compiled maths, against the clone's own install
    frc = ROOT / "tests" / "data" / "frc" / "2016.csv"
    installed = [str(venv / "bin" / "synelo")]
    scores = {}
    for name, synelo, run_env in (("wheel", installed, env), ("clone", SYNELO, environment())):
        for args in (
            ["import", "frc", str(frc), "-o", f"{name}.jsonl"],
            ["replay", f"{name}.jsonl", "--model", "synelo", "--json", f"{name}.json"],
        ):
            r = subprocess.run(
                [*synelo, *args],
                cwd=tmp_path,
                env=run_env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert r.returncode == 0, f"{name}: {r.stdout}{r.stderr}"
        scores[name] = json.loads((tmp_path / f"{name}.json").read_text())
    figures = ("matches", "accuracy", "log_loss", "brier", "ece")
    assert scores["wheel"]["matches"] == 164
    assert {k: scores["wheel"][k] for k in figures} == {k: scores["clone"][k] for k in figures}
