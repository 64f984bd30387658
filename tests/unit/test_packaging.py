"""What synelo without extras gives: the client and the pure maths, without the server stack.

Each check runs in a fresh interpreter, because this test process has the server loaded."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
SERVER_STACK = (
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "alembic",
    "psycopg",
    "pydantic_settings",
    "matplotlib",
)
BASE_MODULES = (
    "synelo.client",
    "synelo.schemas",
    "synelo.ratings",
    "synelo.balance",
    "synelo.game",
    "synelo.evaluation.adapters",
    "synelo.evaluation.replay",
)

# A finder that makes the server stack missing, as in an install without extras.
BLOCK = f"""
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {SERVER_STACK!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Missing())
"""


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def test_importing_the_client_loads_no_server_module() -> None:
    code = (
        "import sys, synelo.client\n"
        "print(sorted({m.partition('.')[0] for m in sys.modules}))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('synelo.service', 'synelo.store'))))"
    )
    result = run(code)
    assert result.returncode == 0, result.stderr
    top, ours = (eval(line) for line in result.stdout.splitlines())
    assert "httpx" in top and "pydantic" in top  # the check sees what the client does load
    assert not set(SERVER_STACK) & set(top)
    assert ours == []


def test_the_base_modules_work_with_the_server_stack_missing() -> None:
    code = BLOCK + (
        "import importlib\n"
        f"for name in {BASE_MODULES!r}: importlib.import_module(name)\n"
        "from synelo.balance import best_splits\n"
        "from synelo.ratings import win_probability\n"
        "print(best_splits([1200, 1000, 1000, 800], theta=800).splits[0].gap)\n"
        "print(round(win_probability(2200, 1800, 800), 6))\n"
        "try:\n"
        "    import sqlalchemy\n"
        "except ModuleNotFoundError:\n"
        "    print('blocked')\n"
    )
    result = run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "0.622459", "blocked"]


def test_a_server_command_without_the_extra_names_it() -> None:
    code = BLOCK + (
        "import sys\nsys.argv = ['synelo', 'pool', 'list']\nfrom synelo.cli import main\nmain()\n"
    )
    result = run(code)
    assert result.returncode == 2
    # synelo is not on PyPI: the hint installs from a clone (or a wheel built from one)
    assert "in a clone of synelo, pip install '.[server]'" in result.stderr
    assert "pip install 'synelo[server]'" not in result.stderr
    assert "Traceback" not in result.stderr


def test_the_extras_split_the_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(requirements: list[str]) -> set[str]:
        return {r.split(">")[0].split("[")[0].split("<")[0].strip().lower() for r in requirements}

    base = names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert set(extras) == {"server", "eval", "dev"}
    assert not base & {"fastapi", "uvicorn", "sqlalchemy", "alembic", "psycopg", "matplotlib"}
    # every third-party module a base module imports is a base dependency
    assert {"pydantic", "httpx", "numpy", "openskill", "trueskill", "orjson"} <= base
    assert {"fastapi", "uvicorn", "sqlalchemy", "alembic", "psycopg"} <= names(extras["server"])
    assert "matplotlib" in names(extras["eval"])
    assert "synelo[server,eval]" in extras["dev"]


def test_the_base_modules_need_only_base_dependencies() -> None:
    """With every installed package that is not a base dependency (or one of theirs) made
    unimportable, the base modules still import and work: a base module that started to
    import an extra's package fails here. (httpx's optional CLI, for one, then does without
    click.)"""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    allowed = _closure({_requirement_name(r) for r in project["dependencies"]})
    providers = importlib.metadata.packages_distributions()
    blocked = sorted(
        module
        for module, dists in providers.items()
        if not module.startswith("_")
        and module not in sys.stdlib_module_names
        and "synelo" not in dists
        and not {_canonical(d) for d in dists} & allowed
    )
    assert {"fastapi", "sqlalchemy", "matplotlib", "click"} <= set(blocked)
    assert "numpy" not in blocked and "orjson" not in blocked
    code = (
        "import importlib.abc, sys\n"
        "class Missing(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.partition('.')[0] in {set(blocked)!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Missing())\n"
        "import importlib\n"
        f"for name in {BASE_MODULES!r}: importlib.import_module(name)\n"
        "from synelo.evaluation.adapters import create_replay, HistoryInfo\n"
        "print(type(create_replay('elo', {}, HistoryInfo())).__name__)\n"
    )
    result = run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ModelReplay"]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _canonical(re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0])


def _closure(names: set[str]) -> set[str]:
    """The distributions `names` need, transitively (extras' requirements left out)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        todo += [_requirement_name(r) for r in requires if "extra ==" not in r]
    return seen


def test_the_build_requires_a_setuptools_that_reads_the_licence() -> None:
    """`license = "MIT"` is an SPDX expression (PEP 639), which setuptools reads from 77 on;
    an older one stops `python -m build --no-build-isolation` (and `pip install
    --no-build-isolation .`) with "`project.license` must be valid exactly by one
    definition" (tried with 76.1.0)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert isinstance(pyproject["project"]["license"], str)
    (setuptools,) = (
        Requirement(r)
        for r in pyproject["build-system"]["requires"]
        if Requirement(r).name == "setuptools"
    )
    assert not setuptools.specifier.contains("76.1.0")
    assert setuptools.specifier.contains("77.0.3")
