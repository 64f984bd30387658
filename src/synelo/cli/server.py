"""The commands that set up a database and run the service: migrate, init and serve."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from synelo.cli.app import app, console, load_settings, make_private, new_token, redact


@app.command("migrate")
def migrate_cmd() -> None:
    """Apply the database migrations (safe to repeat)."""
    from synelo.store.engine import create_store_engine, migrate

    settings = load_settings()
    migrate(create_store_engine(settings.sqlalchemy_url, pool_size=1))
    console.print(f"database at [bold]{redact(settings.sqlalchemy_url)}[/] is up to date")


@app.command("init")
def init_cmd() -> None:
    """Everything a fresh machine needs: migrations, the `default` pool and, when no token
    is configured, one admin and one server token written to the data folder."""
    from synelo.domain import PoolExists
    from synelo.store.engine import create_store_engine, migrate
    from synelo.store.repository import Store

    settings = load_settings()
    # the data folder holds the database and the tokens: its owner's only
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    make_private(settings.data_dir, 0o700)
    engine = create_store_engine(settings.sqlalchemy_url, pool_size=1)
    migrate(engine)
    store = Store(engine)
    try:
        pool = store.create_pool(
            "default",
            settings.team_size,
            settings.rating_params(settings.pool_theta(settings.team_size)),
        )
        console.print(
            f"created pool [bold]default[/] (team size {pool.team_size}, Θ {pool.params.theta:g})"
        )
    except PoolExists:
        pass
    if settings.admin_tokens or settings.server_tokens:
        console.print("tokens come from SYNELO_ADMIN_TOKENS / SYNELO_SERVER_TOKENS")
        return
    folder = settings.data_dir / "tokens"
    if (folder / "admin.token").exists() and (folder / "server.token").exists():
        for token_file in (folder / "admin.token", folder / "server.token"):
            make_private(token_file)
        make_private(folder, 0o700)
        console.print(f"tokens are in [bold]{folder.resolve()}[/]")
        return
    folder.mkdir(parents=True, exist_ok=True)
    make_private(folder, 0o700)
    for role in ("admin", "server"):
        _write_secret(folder / f"{role}.token", new_token(store, role, f"generated {role}"))
    console.print(
        f"generated an admin and a server token in [bold]{folder.resolve()}[/] "
        "(admin.token, server.token)"
    )


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
    from synelo.store.engine import create_store_engine, pending_migrations

    if access_log:
        os.environ["SYNELO_ACCESS_LOG"] = "true"  # for the workers, which read the settings
    settings = load_settings()
    if pending_migrations(create_store_engine(settings.sqlalchemy_url, pool_size=1)):
        console.print(
            f"[red]the database at {redact(settings.sqlalchemy_url)} needs its "
            "migrations: run `synelo migrate` (or `synelo init`) first[/]"
        )
        raise typer.Exit(1)

    if not serve(settings, host=host, port=port, workers=workers, log_level=log_level):
        raise typer.Exit(3)  # uvicorn's status when the server does not start


def _write_secret(path: Path, text: str) -> None:
    """A token file readable by its owner only, also when it existed with a wider mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # O_CREAT's mode applies to a new file only
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
