"""The `synelo` command line: set-up, pools, tokens and the server."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console

from synelo.config import Settings
from synelo.ratings import theta_for_kmax
from synelo.store.engine import create_store_engine, migrate, pending_migrations
from synelo.store.repository import Store
from synelo.store.typedefs import PoolExists

app = typer.Typer(help="synelo: skill ratings and team balancing for team games.",
                  no_args_is_help=True)
pool_app = typer.Typer(help="Rating pools.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens.", no_args_is_help=True)
app.add_typer(pool_app, name="pool")
app.add_typer(token_app, name="token")
console = Console()
err_console = Console(stderr=True)


def _store(settings: Settings) -> Store:
    return Store(create_store_engine(settings.sqlalchemy_url, pool_size=1))


def _new_token(store: Store, role: str, label: str) -> str:
    token = secrets.token_urlsafe(32)
    store.add_token(role, token, label)
    return token


@app.command("migrate")
def migrate_cmd() -> None:
    """Apply the database migrations (safe to repeat)."""
    settings = Settings()
    migrate(create_store_engine(settings.sqlalchemy_url, pool_size=1))
    console.print(f"database at [bold]{_redact(settings.sqlalchemy_url)}[/] is up to date")


@app.command("init")
def init_cmd() -> None:
    """Everything a fresh machine needs: migrations, the `default` pool and, when no token
    is configured, one admin and one server token written to the data folder."""
    settings = Settings()
    engine = create_store_engine(settings.sqlalchemy_url, pool_size=1)
    migrate(engine)
    store = Store(engine)
    try:
        store.create_pool("default", settings.kmax, settings.rating_params(
            theta_for_kmax(settings.kmax)))
        console.print(f"created pool [bold]default[/] (kmax {settings.kmax})")
    except PoolExists:
        pass
    if settings.admin_tokens or settings.server_tokens:
        console.print("tokens come from SYNELO_ADMIN_TOKENS / SYNELO_SERVER_TOKENS")
        return
    folder = settings.data_dir / "tokens"
    if (folder / "admin.token").exists() and (folder / "server.token").exists():
        console.print(f"tokens are in [bold]{folder.resolve()}[/]")
        return
    folder.mkdir(parents=True, exist_ok=True)
    for role in ("admin", "server"):
        _write_secret(folder / f"{role}.token", _new_token(store, role, f"generated {role}"))
    console.print(f"generated an admin and a server token in [bold]{folder.resolve()}[/] "
                  "(admin.token, server.token)")


@app.command("serve")
def serve_cmd(host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
              port: Annotated[int, typer.Option(help="TCP port")] = 8000,
              workers: Annotated[int, typer.Option(help="processes (PostgreSQL for > 1)")] = 1,
              log_level: Annotated[str, typer.Option()] = "info") -> None:
    """Run the HTTP API with uvicorn."""
    import uvicorn

    settings = Settings()
    if pending_migrations(create_store_engine(settings.sqlalchemy_url, pool_size=1)):
        console.print(f"[red]the database at {_redact(settings.sqlalchemy_url)} needs its "
                      "migrations: run `synelo migrate` (or `synelo init`) first[/]")
        raise typer.Exit(1)

    uvicorn.run("synelo.service.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level=log_level, access_log=False)


@pool_app.command("create")
def pool_create(name: str,
                kmax: Annotated[int | None, typer.Option(
                    help="largest team size (Θ from it); default SYNELO_KMAX")] = None,
                theta: Annotated[float | None, typer.Option(help="override Θ")] = None,
                text_ids: Annotated[bool, typer.Option(help="ids are text, not SteamID64")]
                = False) -> None:
    """Create a rating pool."""
    settings = Settings()
    kmax = settings.kmax if kmax is None else kmax
    params = settings.rating_params(theta if theta is not None else theta_for_kmax(kmax))
    try:
        pool = _store(settings).create_pool(name, kmax, params, "text" if text_ids else "steam")
    except PoolExists:
        console.print(f"[red]pool {name!r} exists already[/]")
        raise typer.Exit(1) from None
    console.print(f"created pool [bold]{pool.name}[/]: kmax {pool.kmax}, Θ {pool.params.theta:g}")


@pool_app.command("list")
def pool_list() -> None:
    """List the pools."""
    for p in _store(Settings()).list_pools():
        console.print(f"{p.name}\tkmax {p.kmax}\tΘ {p.params.theta:g}\t{p.rounds} rounds")


@token_app.command("create")
def token_create(role: Annotated[Literal["server", "admin"], typer.Option()] = "server",
                 label: Annotated[str, typer.Option()] = "") -> None:
    """Create a token and print it (only its hash is stored). Stored tokens are not used
    while SYNELO_ADMIN_TOKENS or SYNELO_SERVER_TOKENS is set."""
    settings = Settings()
    if settings.admin_tokens or settings.server_tokens:
        err_console.print("[yellow]SYNELO_ADMIN_TOKENS/SYNELO_SERVER_TOKENS are set: they are "
                          "the only tokens, so this one is not accepted while they are[/]")
    print(_new_token(_store(settings), role, label or role))


def _write_secret(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
