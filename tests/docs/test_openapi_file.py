"""docs/api/openapi.json is what the app serves: regenerate it when the API changes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _exporter() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "export_openapi", ROOT / "scripts" / "export_openapi.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_openapi_matches_the_app() -> None:
    exporter = _exporter()
    committed = (ROOT / "docs" / "api" / "openapi.json").read_text(encoding="utf-8")
    produced = exporter.render(exporter.openapi_document())
    assert json.loads(committed) == json.loads(produced), (
        "docs/api/openapi.json differs from the app: run .venv/bin/python scripts/export_openapi.py"
    )
    assert committed == produced  # and byte for byte, so the diff of a change is readable


def test_openapi_names_every_route_the_docs_describe() -> None:
    paths = json.loads((ROOT / "docs" / "api" / "openapi.json").read_text(encoding="utf-8"))[
        "paths"
    ]
    routes = {(method.upper(), path) for path, ops in paths.items() for method in ops}
    api_page = (ROOT / "docs" / "api" / "index.md").read_text(encoding="utf-8")
    for method, path in routes:
        assert f"`{method} {path}" in api_page, f"{method} {path} is not in docs/api/index.md"
