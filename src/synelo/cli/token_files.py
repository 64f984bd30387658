"""The token files of the data folder (`tokens/admin.token`, `tokens/server.token`) that
`synelo init` writes, and what the configured database knows of them.

A database that has no stored token yet, such as a PostgreSQL database set up after `synelo
init` ran on SQLite, takes the files' tokens: `init` stores them and says so (a file others
could read, or with a token shorter than a generated one, gets a new token instead, and
`init` names that file and the reason on stderr: the old token stops working). A
database with tokens of its own never takes a token it does not know: that file is reported
(its token was revoked, or made for another database) and stays unused. So `init` never
brings a revoked token back, and never passes over a file in silence.
docs/operators/install.md says the same to operators.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from synelo.cli.app import console, err_console, make_private, new_token

if TYPE_CHECKING:
    from synelo.store.repository import Store

ROLES = ("admin", "server")
MIN_LENGTH = 43  # characters of a generated token (secrets.token_urlsafe(32))


def settle_token_files(store: Store, folder: Path, where: str) -> None:
    """Make each role's file in `folder` hold a token the database knows: a missing (or
    empty) file gets a new token; a file's token the database lacks is stored when the
    database has none, else reported on stderr. `where` names the database for people."""
    folder.mkdir(parents=True, exist_ok=True)
    make_private(folder, 0o700)
    empty_database = not store.list_tokens()
    generated: list[str] = []
    stored: list[str] = []
    unknown: list[Path] = []
    replaced: list[tuple[Path, str]] = []
    for role in ROLES:
        path = folder / f"{role}.token"
        token = path.read_text().strip() if path.exists() else ""
        holder = store.token_identity(token) if token else None
        distrust = _distrust(path, token) if token and holder is None and empty_database else None
        if not token or distrust:
            _write_secret(path, new_token(store, role, f"generated {role}"))
            generated.append(path.name)
            if distrust:
                replaced.append((path, distrust))
            continue
        make_private(path)
        if holder is None and empty_database:
            store.add_token(role, token, f"from {path.name}")
            stored.append(path.name)
        elif holder is None:
            unknown.append(path)
        elif holder.role != role:
            err_console.print(
                f"[red]{escape(str(path.resolve()))} holds a {holder.role} token, not the "
                f"{role} token its name says[/]"
            )
    _say(folder, where, generated, stored, replaced, unknown)


def _say(
    folder: Path,
    where: str,
    generated: list[str],
    stored: list[str],
    replaced: list[tuple[Path, str]],
    unknown: list[Path],
) -> None:
    """What `settle_token_files` did, told to people: the files it replaced or could not
    store in red on stderr, since a token that stopped working needs the operator."""
    if generated:
        console.print(
            f"generated {' and '.join(generated)} in [bold]{escape(str(folder.resolve()))}[/]"
            " (its owner's only; the database keeps their SHA-256)"
        )
    if stored:
        console.print(
            f"[yellow]stored the tokens of {' and '.join(stored)} in {escape(where)}, which had no "
            "token yet: they are valid there now[/]"
        )
    for path, reason in replaced:
        err_console.print(
            f"[red]{escape(str(path.resolve()))}: replaced its token, which was {reason}, "
            f"so {escape(where)} did not take it. A game server or script still using the old "
            "token gets 401 now: give it the new one from this file.[/]"
        )
    for path in unknown:
        err_console.print(
            f"[red]{escape(str(path.resolve()))}: {escape(where)} does not know this token "
            "(revoked, or made for "
            "another database) and has tokens of its own, so it was not stored and does "
            "not work. Delete the file and run `synelo init` for a new one, or use one "
            "from `synelo token create`.[/]"
        )
    if not generated and not unknown:
        console.print(f"tokens are in [bold]{escape(str(folder.resolve()))}[/]")


def _distrust(path: Path, token: str) -> str | None:
    """Why a file's token may not be stored, or None: only its owner may have read it
    (another user may have read a wider file's), and it is as long as a generated one."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        return f"readable by others (mode {mode:04o})"
    if len(token) < MIN_LENGTH:
        return f"too short ({len(token)} characters, under {MIN_LENGTH})"
    return None


def _write_secret(path: Path, text: str) -> None:
    """A token file readable by its owner only, also when it existed with a wider mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # O_CREAT's mode applies to a new file only
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
