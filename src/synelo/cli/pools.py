"""`synelo pool`: create and list rating pools in the configured database."""

from __future__ import annotations

from typing import Annotated

import typer

from synelo.cli.app import console, err_console, load_settings, open_store, pool_app


@pool_app.command("create")
def pool_create(
    name: str,
    team_size: Annotated[
        int | None,
        typer.Option(
            "--team-size",
            help="largest team size (Θ from it unless SYNELO_THETA or --theta); "
            "default SYNELO_TEAM_SIZE",
        ),
    ] = None,
    kmax: Annotated[
        int | None, typer.Option("--kmax", hidden=True, help="--team-size's old name")
    ] = None,
    theta: Annotated[float | None, typer.Option(help="override Θ")] = None,
    text_ids: Annotated[bool, typer.Option(help="ids are text, not SteamID64")] = False,
) -> None:
    """Create a rating pool (the same rules as POST /v1/pools)."""
    from pydantic import ValidationError

    from synelo.domain import PoolExists
    from synelo.schemas import PoolIn

    settings = load_settings()
    if kmax is not None:
        if team_size is not None and team_size != kmax:
            err_console.print(
                "[red]team_size: --kmax is the old name of --team-size and differs[/]"
            )
            raise typer.Exit(2)
        err_console.print("[yellow]--kmax is deprecated: it is --team-size now[/]")
        team_size = kmax
    team_size = settings.team_size if team_size is None else team_size
    try:
        PoolIn(
            name=name,
            team_size=team_size,
            theta=theta,
            player_ids="text" if text_ids else "steam",
        )
    except ValidationError as exc:
        for error in exc.errors():
            err_console.print(f"[red]{error['loc'][0]}: {error['msg']}[/]")
        raise typer.Exit(2) from None
    params = settings.rating_params(settings.pool_theta(team_size, theta))
    try:
        pool = open_store(settings).create_pool(
            name, team_size, params, "text" if text_ids else "steam"
        )
    except PoolExists:
        console.print(f"[red]pool {name!r} exists already[/]")
        raise typer.Exit(1) from None
    console.print(
        f"created pool [bold]{pool.name}[/]: team size {pool.team_size}, Θ {pool.params.theta:g}"
    )


@pool_app.command("list")
def pool_list() -> None:
    """List the pools."""
    for p in open_store(load_settings()).list_pools():
        console.print(f"{p.name}\tteam size {p.team_size}\tΘ {p.params.theta:g}\t{p.rounds} rounds")
