"""Back up the configured database and restore a back-up into it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from synelo.cli.app import app, console, fail, load_settings, make_private, redact


@app.command("backup")
def backup_cmd(
    dest: Annotated[Path, typer.Argument(help="the back-up file to write (must not exist)")],
) -> None:
    """Back up the database while the service runs: SQLite's online back-up (a database
    file), or pg_dump's custom format for PostgreSQL."""
    from synelo.store.backup import BackupError, backup

    settings = load_settings()
    try:
        backup(settings.sqlalchemy_url, dest)
    except BackupError as exc:
        raise fail(str(exc)) from None
    make_private(dest)
    console.print(f"backed up {redact(settings.sqlalchemy_url)} to [bold]{dest}[/]")


@app.command("restore")
def restore_cmd(
    src: Annotated[Path, typer.Argument(help="a file `synelo backup` wrote")],
    replace: Annotated[
        bool, typer.Option(help="overwrite the database there (its data is lost)")
    ] = False,
) -> None:
    """Restore a back-up into the configured database. Stop the service first; run
    `synelo migrate` afterwards if the back-up is from an older version."""
    from synelo.store.backup import BackupError, restore

    settings = load_settings()
    try:
        restore(src, settings.sqlalchemy_url, replace=replace)
    except BackupError as exc:
        raise fail(str(exc)) from None
    console.print(f"restored {src} into {redact(settings.sqlalchemy_url)}")
