"""The layout's rules that `lint-imports` (make lint) does not state: no import cycle between
any two modules, a package's own `__init__` included, and no module reaching for another
module's private names. The layers themselves are pyproject.toml's import contract."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import grimp
import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "synelo"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """synelo's import graph, function-local imports included (grimp reads every import)."""
    return grimp.build_graph("synelo", cache_dir=None)


def cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Each import a → b that closes a cycle: b leads back to a, directly or through others."""
    return sorted(
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if graph.chain_exists(importer=imported, imported=importer)
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check below could fail: a cycle added to a copy of the graph is found."""
    graph = grimp.ImportGraph()
    for name in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(name)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.d")
    assert cycles(graph) == []
    graph.add_import(importer="a.d", imported="a.b")
    assert cycles(graph) == [("a.b", "a.c"), ("a.c", "a.d"), ("a.d", "a.b")]


def test_no_import_cycle_between_any_two_modules(graph: grimp.ImportGraph) -> None:
    assert cycles(graph) == []


def private(name: str) -> bool:
    """An underscored name, dunders (``__all__``, ``__init__``) aside."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_names_imported(path: Path) -> list[str]:
    """`from synelo.x import _name` in one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(SRC.parent)}:{node.lineno} {node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("synelo")
        for alias in node.names
        if private(alias.name)
    ]


def test_no_module_imports_another_modules_private_name() -> None:
    found = [hit for path in sorted(SRC.rglob("*.py")) for hit in private_names_imported(path)]
    assert found == []


# namedtuple's own API, whose names start with an underscore so as not to clash with fields
NAMEDTUPLE_API = {"_make", "_asdict", "_replace", "_fields"}
# Private attributes reached on another object, each the module's own or a library's:
ALLOWED = {
    # Window.restore builds a Window of its own class from stored columns
    ("ratings/window.py", "_r"),
    ("ratings/window.py", "_es"),
    ("ratings/window.py", "_rebuild_scales"),
    ("ratings/window.py", "_fresh"),
    # the h11 protocol subclass stops uvicorn's request timer of a connection it evicts
    # (pyproject pins uvicorn to one minor release for this)
    ("service/server.py", "_stop_request_timer"),
}


def private_attributes(path: Path) -> list[tuple[str, str, int]]:
    """`thing._name` in one source file, `self` and `cls` aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(SRC).as_posix()
    return [
        (where, node.attr, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and private(node.attr)
        and node.attr not in NAMEDTUPLE_API
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]


def test_no_module_reaches_for_another_objects_private_attributes() -> None:
    hits = [hit for path in sorted(SRC.rglob("*.py")) for hit in private_attributes(path)]
    assert [hit for hit in hits if hit[:2] not in ALLOWED] == []
    assert {hit[:2] for hit in hits} >= ALLOWED, "an allowed exception no longer exists"


def contract(name: str) -> dict[str, list[str]]:
    """One of pyproject.toml's import contracts, by its name."""
    config = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    (found,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == name]
    return found


def test_the_contracts_name_every_route_module() -> None:
    """The pages' and the routes' contracts list the route modules by name: a new one must
    be added to both, or the pages could import it unchecked."""
    routes = sorted(
        f"synelo.service.api.{path.stem}"
        for path in (SRC / "service" / "api").glob("*.py")
        if "APIRouter(" in path.read_text(encoding="utf-8")
    )
    assert len(routes) >= 8
    pages = contract("The pages call what the API calls, never a route module")
    assert sorted(pages["forbidden_modules"]) == routes
    assert sorted(contract("No route module imports another")["modules"]) == routes
