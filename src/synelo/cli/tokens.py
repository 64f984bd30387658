"""`synelo token`: create, list and revoke the stored API tokens."""

from __future__ import annotations

import re
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
    pool: Annotated[
        list[str] | None,
        typer.Option(
            "--pool",
            help="a pool the server token may use (repeat for more); without it, every pool",
        ),
    ] = None,
) -> None:
    """Create a token and print it (only its hash is stored). A server token made with
    --pool may use those pools only; on any other it gets what a pool that does not exist
    gets. Stored tokens are not used while SYNELO_ADMIN_TOKENS or SYNELO_SERVER_TOKENS is
    set."""
    pools = _scope(role, pool or [])
    settings = load_settings()
    if settings.admin_tokens or settings.server_tokens:
        err_console.print(
            "[yellow]SYNELO_ADMIN_TOKENS/SYNELO_SERVER_TOKENS are set: they are "
            "the only tokens, so this one is not accepted while they are[/]"
        )
    store = open_store(settings)
    if pools:
        known = {p.name for p in store.list_pools()}
        for name in pools:
            if name not in known:
                err_console.print(f"[yellow]--pool: there is no pool {name!r} yet[/]")
    print(new_token(store, role, label or role, pools))


def _scope(role: str, pools: list[str]) -> list[str] | None:
    """The pools of --pool, checked (exit status 2 for a bad one); None: every pool."""
    from synelo.schemas import POOL_NAME

    if not pools:
        return None
    if role != "server":
        err_console.print("[red]--pool: only a server token is scoped to pools[/]")
        raise typer.Exit(2)
    for name in pools:
        if not re.fullmatch(POOL_NAME.strip("^$"), name):
            err_console.print(
                f"[red]--pool: {name!r} is not a pool name (1 to 64 of A-Z a-z 0-9 _ . -)[/]"
            )
            raise typer.Exit(2)
    return sorted(set(pools))


@token_app.command("list")
def token_list() -> None:
    """List the stored tokens: id, role, label, the pools a scoped one may use, when made
    and when last used, to the minute (never the token itself)."""
    from rich.table import Table

    table = Table("id", "role", "label", "pools", "created", "last used", title="stored tokens")
    for t in open_store(load_settings()).list_tokens():
        table.add_row(
            str(t.id),
            t.role,
            t.label,
            "(every pool)" if t.pools is None else ",".join(t.pools),
            t.created_at.isoformat(timespec="seconds"),
            "—" if t.last_used_at is None else t.last_used_at.isoformat(timespec="minutes"),
        )
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
