"""Fixtures of the plugin's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugin import build


@pytest.fixture(scope="session")
def compiled_smx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """synelo.smx compiled from this checkout into a folder of the test session (each worker
    its own, so that no two compile into plugin/plugins/ at once)."""
    out = tmp_path_factory.mktemp("smx") / "synelo.smx"
    result = build.compile_sp(build.DEFAULT_SOURCE, out)
    assert result.ok, result.output
    return out


# The service matters here (reports stored, in order, on the database): SQLite in `make test`,
# PostgreSQL too in `make plugin-matrix` (the wide matrix, run before a release).
sqlite_and_matrix_postgresql = pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("postgresql", marks=pytest.mark.plugin_matrix)],
    indirect=True,
)
