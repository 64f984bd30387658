"""The commands that set up a database and run the service: migrate, init and serve."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from synelo.cli.app import (
    app,
    console,
    load_settings,
    make_private,
    migrated_database,
    ready_database,
    redact,
)


@app.command("migrate")
def migrate_cmd() -> None:
    """Apply the database migrations (safe to repeat)."""
    settings = load_settings()
    migrated_database(settings)
    console.print(f"database at [bold]{redact(settings.sqlalchemy_url)}[/] is up to date")


@app.command("init")
def init_cmd() -> None:
    """Everything a fresh machine needs, safe to repeat: migrations, the `default` pool in a
    database without pools and, when no token is configured, the data folder's admin and
    server token files, each known to the database (see docs/operators/install.md)."""
    from synelo.cli.token_files import settle_token_files
    from synelo.rerate.autotune import default_autotune
    from synelo.store.repository import Store

    settings = load_settings()
    # the data folder holds the database and the tokens: its owner's only
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    make_private(settings.data_dir, 0o700)
    store = Store(migrated_database(settings))
    if not store.list_pools():
        params = settings.rating_params(settings.pool_theta(settings.team_size))
        autotune = default_autotune("synelo")
        pool = store.create_pool(
            "default",
            settings.team_size,
            params,
            autotune=None if autotune is None else autotune.to_json(),
        )
        console.print(
            f"created pool [bold]default[/] (team size {pool.team_size}, Θ {pool.params.theta:g}, "
            f"auto-tuning {'on' if pool.autotune else 'off'})"
        )
    if settings.admin_tokens or settings.server_tokens:
        console.print("tokens come from SYNELO_ADMIN_TOKENS / SYNELO_SERVER_TOKENS")
        return
    settle_token_files(store, settings.data_dir / "tokens", redact(settings.sqlalchemy_url))


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8000,
    workers: Annotated[int, typer.Option(help="processes (PostgreSQL for > 1)")] = 1,
    log_level: Annotated[str, typer.Option()] = "info",
    access_log: Annotated[
        bool, typer.Option("--access-log", help="a line per request (SYNELO_ACCESS_LOG)")
    ] = False,
) -> None:
    """Run the HTTP API with uvicorn (its limits: synelo.service.server)."""
    from synelo.service.server import serve

    if access_log:
        os.environ["SYNELO_ACCESS_LOG"] = "true"  # for the workers, which read the settings
    settings = load_settings()
    ready_database(settings).dispose()  # it exists and is migrated, or a message

    if not serve(settings, host=host, port=port, workers=workers, log_level=log_level):
        raise typer.Exit(3)  # uvicorn's status when the server does not start
