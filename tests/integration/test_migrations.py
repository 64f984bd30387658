"""The Alembic migrations build exactly the schema of synelo.store.tables, on both databases."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect

from synelo.store.engine import migrate
from synelo.store.tables import metadata


def test_migrations_match_tables(backend: Engine) -> None:
    migrate(backend)  # a second run is a no-op
    with backend.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    names = set(inspect(backend).get_table_names())
    assert {"pools", "players", "rounds", "journal", "api_tokens", "alembic_version"} <= names
