"""Issue 16: SQLite's durability is a setting (SYNELO_SQLITE_SYNCHRONOUS), FULL by default.

FULL: a COMMIT returns once the WAL holds the transaction on disk, so an acknowledged round
survives a power cut. NORMAL: it may not (docs/storage.md). What a power cut does cannot be
tested here; what can: each connection of the service, the round writer's included, runs
with the setting it was given, and the default is FULL.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from synelo.config import Settings
from synelo.domain import RoundReport
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine, migrate
from tests.conftest import ADMIN, SERVER, steam

PRAGMA = {"NORMAL": 1, "FULL": 2}  # what PRAGMA synchronous answers


def test_an_engine_is_full_unless_told_otherwise(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'synelo.db'}"
    for engine, expected in (
        (create_store_engine(url), "FULL"),
        (create_store_engine(url, synchronous="NORMAL"), "NORMAL"),
        (create_store_engine(url, synchronous="FULL"), "FULL"),
    ):
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == PRAGMA[expected]
        engine.dispose()
    with pytest.raises(ValueError, match="synchronous"):
        create_store_engine(url, synchronous="OFF")  # type: ignore[arg-type]


def test_the_service_defaults_to_full() -> None:
    assert Settings(_env_file=None).sqlite_synchronous == "FULL"  # type: ignore[call-arg]


@pytest.mark.parametrize("setting", ["NORMAL", "FULL"])
def test_the_service_rates_rounds_with_the_configured_setting(tmp_path: Path, setting: str) -> None:
    """The app's engine, and the round writer's own connection, run with the setting."""
    settings = Settings(
        data_dir=tmp_path,
        admin_tokens=[ADMIN],
        server_tokens=[SERVER],
        sqlite_synchronous=setting,  # type: ignore[arg-type]
        autotune_check_s=0,
    )
    engine = create_store_engine(settings.sqlalchemy_url)
    migrate(engine)
    engine.dispose()
    app = create_app(settings)

    async def serve() -> None:  # the app's start and stop, with no server around it
        async with app.router.lifespan_context(app):
            store = app.state.store
            store.create_pool("p", 1, settings.rating_params(400.0))
            one = (steam(1),), (steam(2),)
            report = RoundReport("r1", "s", "m", "A", *one, *one)
            assert app.state.writer.submit("p", report).result(30).created
            writer_conn = app.state.writer._conn  # the connection it keeps for its rounds
            assert writer_conn is not None
            assert writer_conn.exec_driver_sql("PRAGMA synchronous").scalar() == PRAGMA[setting]
            with store.engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == PRAGMA[setting]

    asyncio.run(serve())
