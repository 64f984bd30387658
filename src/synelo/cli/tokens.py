"""`synelo token`: create, list and revoke the stored API tokens."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from synelo.cli.app import (
    console,
    err_console,
    fail,
    load_settings,
    new_token,
    open_store,
    show,
    token_app,
)


@token_app.command("create")
def token_create(
    role: Annotated[Literal["server", "admin"], typer.Option()] = "server",
    label: Annotated[str, typer.Option()] = "",
) -> None:
    """Create a token and print it (only its hash is stored). Stored tokens are not used
    while SYNELO_ADMIN_TOKENS or SYNELO_SERVER_TOKENS is set."""
    settings = load_settings()
    if settings.admin_tokens or settings.server_tokens:
        err_console.print(
            "[yellow]SYNELO_ADMIN_TOKENS/SYNELO_SERVER_TOKENS are set: they are "
            "the only tokens, so this one is not accepted while they are[/]"
        )
    print(new_token(open_store(settings), role, label or role))


@token_app.command("list")
def token_list() -> None:
    """List the stored tokens: id, role, label and when made (never the token itself)."""
    from rich.table import Table

    table = Table("id", "role", "label", "created", title="stored tokens")
    for t in open_store(load_settings()).list_tokens():
        table.add_row(str(t.id), t.role, t.label, t.created_at.isoformat(timespec="seconds"))
    show(table)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[int, typer.Argument(help="the id `token list` shows")],
) -> None:
    """Delete a stored token: every worker refuses it within a second."""
    gone = open_store(load_settings()).revoke_token(token_id)
    if gone is None:
        raise fail(f"no stored token has id {token_id}")
    console.print(f"revoked token {gone.id} ({gone.role}, {gone.label!r})")
