"""The frame every command shares: the Typer app and its groups, the consoles, `main`
(which names a missing extra), and the helpers the command modules use: the settings,
the store, new tokens, owner-only files, redacted URLs, failures and tables."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

if TYPE_CHECKING:
    from rich.table import Table
    from sqlalchemy import Engine

    from synelo.config import Settings
    from synelo.store.repository import Store


# The base install has the client and the maths; commands that need more import it when
# they run, and `main` names the extra that brings it.
EXTRA_OF_MODULE = {
    "fastapi": "server",
    "uvicorn": "server",
    "pydantic_settings": "server",
    "sqlalchemy": "server",
    "alembic": "server",
    "psycopg": "server",
    "matplotlib": "eval",
}

app = typer.Typer(
    help="synelo: skill ratings and team balancing for team games.", no_args_is_help=True
)
pool_app = typer.Typer(help="Rating pools.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens.", no_args_is_help=True)
import_app = typer.Typer(
    help="Import match histories (JSON Lines) for replay and tune.", no_args_is_help=True
)
app.add_typer(pool_app, name="pool")
app.add_typer(token_app, name="token")
app.add_typer(import_app, name="import")
console = Console()
err_console = Console(stderr=True)


def main() -> None:
    """The `synelo` command. A command that needs an extra the install lacks stops with the
    pip command that adds it (exit status 2) instead of a traceback. synelo is not on PyPI:
    the command installs from a clone, or from a wheel built from one (docs/client.md)."""
    try:
        app(prog_name="synelo")
    except ModuleNotFoundError as exc:
        extra = EXTRA_OF_MODULE.get((exc.name or "").partition(".")[0])
        if extra is None:
            raise
        print(
            f"this command needs {exc.name}, which comes with the {extra!r} extra: in a "
            f"clone of synelo, pip install '.[{extra}]' (or pip install "
            f"'synelo-VERSION-….whl[{extra}]' for a wheel built from one)",
            file=sys.stderr,
        )
        sys.exit(2)


def load_settings() -> Settings:
    """The settings from SYNELO_*; a bad value stops the command here, named, before
    anything is touched (exit status 2)."""
    from pydantic import ValidationError

    from synelo.config import Settings

    try:
        return Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = f"SYNELO_{'_'.join(map(str, error['loc'])).upper()}: " if error["loc"] else ""
            err_console.print(
                f"[red]configuration: {where}{error['msg'].removeprefix('Value error, ')}[/]"
            )
        raise typer.Exit(2) from None


def open_store(settings: Settings) -> Store:
    """The store on the configured database, which must exist and be migrated: otherwise
    the command stops here with what to run (exit status 1), and nothing is created."""
    from synelo.store.repository import Store

    return Store(ready_database(settings))


def ready_database(settings: Settings) -> Engine:
    """An engine on the configured database as it is (`store.engine.ready_engine`), or the
    command stops, saying why."""
    from synelo.store.engine import DatabaseNotReady, ready_engine

    try:
        return ready_engine(settings.sqlalchemy_url)
    except DatabaseNotReady as exc:
        raise fail(str(exc)) from None


def migrated_database(settings: Settings) -> Engine:
    """An engine on the configured database, made if need be and migrated, or the command
    stops, saying why it could not be (init, migrate)."""
    from synelo.store.engine import DatabaseNotReady, migrated_engine

    try:
        return migrated_engine(settings.sqlalchemy_url)
    except DatabaseNotReady as exc:
        raise fail(str(exc)) from None


def new_token(store: Store, role: str, label: str, pools: list[str] | None = None) -> str:
    token = secrets.token_urlsafe(32)
    store.add_token(role, token, label, pools)
    return token


def fail(message: str) -> typer.Exit:
    """Print `message` (as text: brackets in it are not markup) and give the exit status 1
    to raise."""
    from rich.markup import escape

    err_console.print(f"[red]{escape(message)}[/]")
    return typer.Exit(1)


def show(*tables: Table) -> None:
    """Print tables on stdout. When it is not a terminal (a pipe, a file), Rich would squeeze
    them into 80 columns; they get the width they need instead."""
    if console.is_terminal:
        for table in tables:
            console.print(table)
        return
    wide = console.options.update_width(1_000)
    for table in tables:
        width = max(console.measure(table, options=wide).maximum, 80)
        Console(width=width, file=sys.stdout).print(table)


def make_private(path: Path, mode: int = 0o600) -> None:
    """Owner-only permissions on a file (or, with 0o700, a folder) that holds secrets."""
    path.chmod(mode)


def redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
