"""`synelo` starts with what its command needs. The help and the model list load no maths,
database or web library, and the commands that only read or write rows load neither NumPy,
SciPy, Alembic nor the web stack: each of them cost an operator's command, and each CLI
test, a second or more of start (bench/cli_start.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from synelo.models import MODELS

MATHS = {"numpy", "scipy", "openskill", "trueskill", "matplotlib"}
WEB = {"fastapi", "starlette", "uvicorn"}
DATABASE = {"sqlalchemy", "alembic", "psycopg"}


def import_report(code: list[str], env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The modules `python -X importtime CODE` imports, read from its report, and its
    output."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    modules = {
        line.rpartition("|")[2].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    return modules, result.stdout


def imported(args: list[str], data: Path) -> tuple[set[str], str]:
    """The modules `python -m synelo ARGS` imports, and its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env["SYNELO_DATA_DIR"] = str(data)
    modules, out = import_report(["-m", "synelo", *args], env)
    assert "typer" in modules  # the report is read: the command's own frame is in it
    return modules, out


def packages(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def test_help_loads_no_library_beyond_its_frame(tmp_path: Path) -> None:
    modules, out = imported(["--help"], tmp_path)
    assert "simulate-history" in out and "pool" in out
    assert packages(modules) & (MATHS | WEB | DATABASE | {"pydantic", "httpx"}) == set()


def test_models_lists_every_model_without_importing_one(tmp_path: Path) -> None:
    modules, out = imported(["models"], tmp_path)
    assert out.split() == list(MODELS)
    assert packages(modules) & (MATHS | WEB | DATABASE) == set()
    assert {m for m in modules if m.startswith("synelo.models.")} == {"synelo.models.base"}


def test_commands_on_rows_load_no_maths_nor_web(tmp_path: Path) -> None:
    """They may load alembic: a command on an existing database first checks that its schema
    is current, so that it refuses a database it was not asked to make or migrate."""
    imported(["migrate"], tmp_path)
    for args in (["pool", "create", "arena", "--team-size", "3"], ["token", "create"]):
        modules, _ = imported(args, tmp_path)
        assert "sqlalchemy" in packages(modules)
        assert packages(modules) & (MATHS | WEB) == set(), args
    listed, out = imported(["pool", "list"], tmp_path)
    assert out.split()[:4] == ["arena", "team", "size", "3"]
    assert packages(listed) & (MATHS | WEB) == set()


def test_the_service_starts_without_scipy_or_the_evaluation() -> None:
    """Every worker of `synelo serve` and every re-rate job's process imports the app: the
    models' solvers (SciPy) and advise's replays load only when a job needs them, which
    took the app's import from 1.2 s to 0.75 s of CPU."""
    modules, _ = import_report(["-c", "import synelo.service.app"])
    assert {"fastapi", "synelo.rerate.job", "synelo.ratings.synelo"} <= modules
    assert "scipy" not in packages(modules)
    assert not {m for m in modules if m.split(".")[:2] == ["synelo", "evaluation"]}
