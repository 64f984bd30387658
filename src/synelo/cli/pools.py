"""`synelo pool`: create, list and change rating pools in the configured database."""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from synelo.cli.app import console, err_console, fail, load_settings, open_store, pool_app


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
    no_autotune: Annotated[
        bool,
        typer.Option(
            "--no-autotune",
            help="auto-tuning off (default: on, fitting the model's scale: SynElo's T)",
        ),
    ] = False,
) -> None:
    """Create a rating pool (the same rules as POST /v1/pools), auto-tuning on unless
    --no-autotune."""
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
    from synelo.rerate.autotune import default_autotune

    params = settings.rating_params(settings.pool_theta(team_size, theta))
    autotune = None if no_autotune else default_autotune("synelo")
    try:
        pool = open_store(settings).create_pool(
            name,
            team_size,
            params,
            "text" if text_ids else "steam",
            autotune=None if autotune is None else autotune.to_json(),
        )
    except PoolExists:
        console.print(f"[red]pool {name!r} exists already[/]")
        raise typer.Exit(1) from None
    console.print(
        f"created pool [bold]{pool.name}[/]: team size {pool.team_size}, Θ {pool.params.theta:g}, "
        f"auto-tuning {'on' if pool.autotune else 'off'}"
    )


@pool_app.command("list")
def pool_list() -> None:
    """List the pools."""
    for p in open_store(load_settings()).list_pools():
        console.print(f"{p.name}\tteam size {p.team_size}\tΘ {p.params.theta:g}\t{p.rounds} rounds")


@pool_app.command("set")
def pool_set(
    name: str,
    public: Annotated[
        bool | None,
        typer.Option(
            "--public/--private",
            help="open the pool's public pages and endpoints to anyone, or close them",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="a new rating model (`synelo models` lists them)")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help="a parameter over the pool's own, KEY=VALUE (repeatable), e.g. -p k_max=60",
        ),
    ] = None,
    theta: Annotated[float | None, typer.Option(help="SynElo's Θ")] = None,
    autotune_every: Annotated[
        int | None, typer.Option(help="auto-tune: rounds between fits, at most (default 5000)")
    ] = None,
    autotune_fit: Annotated[
        list[str] | None,
        typer.Option(
            help="auto-tune: a parameter to fit (repeatable; turns it on, the rest at a new "
            "pool's defaults)"
        ),
    ] = None,
    autotune_holdout: Annotated[
        float | None,
        typer.Option(help="auto-tune: share of the newest rounds held out (default 0.4)"),
    ] = None,
    autotune_margin: Annotated[
        float | None,
        typer.Option(help="auto-tune: held-out log-loss gain to adopt a fit (default 0.001)"),
    ] = None,
    autotune_first: Annotated[
        int | None,
        typer.Option(
            help="auto-tune: rounds at the first fit, then gaps doubling up to every "
            "(default 200, or every if smaller)"
        ),
    ] = None,
    autotune_noise: Annotated[
        float | None,
        typer.Option(
            help="auto-tune: standard errors the held-out gain must exceed too (default 2)"
        ),
    ] = None,
    no_autotune: Annotated[bool, typer.Option("--no-autotune", help="turn auto-tuning off")] = (
        False
    ),
    reason: Annotated[str | None, typer.Option(help="why, for the pool's admin log")] = None,
) -> None:
    """Change a pool's settings, as a PATCH of /v1/pools/NAME does (the same checks). The
    visibility and the auto-tuning alone are set at once; a new model, parameters or Θ
    re-rate every stored round, here, with the progress shown until done (safe while the
    service runs; an interruption leaves its ratings and those settings as they were, while
    --public/--private given with them was set when the job started, and stays)."""
    body: dict[str, object] = {}
    for key, value in (("public", public), ("model", model), ("theta", theta)):
        if value is not None:
            body[key] = value
    if param:
        body["params"] = _params(param)
    autotune = {
        key: value
        for key, value in (
            ("every", autotune_every),
            ("fit", autotune_fit),
            ("holdout", autotune_holdout),
            ("margin", autotune_margin),
            ("first", autotune_first),
            ("noise", autotune_noise),
        )
        if value is not None
    }
    if autotune and no_autotune:
        err_console.print("[red]--no-autotune: and --autotune-… options contradict[/]")
        raise typer.Exit(2)
    if autotune or no_autotune:
        body["autotune"] = autotune or None
    if not body:
        err_console.print(
            "[red]nothing to change: give --public/--private, --model, --param, --theta, "
            "--autotune-… or --no-autotune[/]"
        )
        raise typer.Exit(2)
    if reason is not None:
        body["reason"] = reason
    _set(name, body)


@pool_app.command("season")
def pool_season(
    name: str,
    fraction: Annotated[
        float | None,
        typer.Option(
            help="the share of the way back toward the pool's mean, 0 to 1 (default: the "
            "model's, 0.3 unless it has a `season` parameter)"
        ),
    ] = None,
    reason: Annotated[str | None, typer.Option(help="why, for the pool's admin log")] = None,
) -> None:
    """Start a new season of a pool, as POST /v1/pools/NAME/season does: every rating is
    pulled part of the way back toward the pool's mean, at once (safe while the service
    runs), and logged with who and why (docs/maths/seasons.md)."""
    from fastapi import HTTPException
    from pydantic import ValidationError

    from synelo.domain import UnknownPool
    from synelo.schemas import SeasonIn
    from synelo.service.api.actions import start_season

    try:
        change = SeasonIn.model_validate({"fraction": fraction, "reason": reason})
    except ValidationError as exc:
        raise _refused(exc.errors()) from None
    store = open_store(load_settings())
    try:
        pool = store.get_pool(name)
        done = start_season(store, pool, change, _who())
    except UnknownPool:
        raise fail(f"unknown pool {name!r}") from None
    except HTTPException as exc:  # deleted since
        raise fail(f"pool {name!r}: {exc.detail}") from None
    default = " (the model's default)" if done.default else ""
    console.print(
        f"pool [bold]{done.pool}[/]: a new season after {done.seq:,} rounds; "
        f"{done.players:,} players pulled {done.fraction:g} of the way back toward the "
        f"mean{default}"
    )


def _params(items: list[str]) -> dict[str, object]:
    """-p KEY=VALUE options as a PATCH's params: each value as JSON (60, 0.5, true) or,
    failing that, as text (seed)."""
    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            err_console.print(f"[red]--param takes KEY=VALUE, not {item!r}[/]")
            raise typer.Exit(2)
        try:
            params[key.strip()] = json.loads(value)
        except ValueError:
            params[key.strip()] = value.strip()
    return params


def _set(name: str, body: dict[str, object]) -> None:
    """Plan the change as the API does, then make it here (exit status 2 for a refused
    one, naming its option)."""
    from fastapi.exceptions import RequestValidationError
    from pydantic import ValidationError

    from synelo.cli.rerating import rerate_here
    from synelo.domain import UnknownPool
    from synelo.schemas import PoolPatchIn
    from synelo.service.api.pool_settings import apply_at_once, plan_patch

    settings = load_settings()
    store = open_store(settings)
    try:
        current = store.get_pool(name)
    except UnknownPool:
        raise fail(f"unknown pool {name!r}") from None
    try:
        change = PoolPatchIn.model_validate(body)
        plan = plan_patch(settings, store, current, change)
    except ValidationError as exc:
        raise _refused(exc.errors()) from None
    except RequestValidationError as exc:
        raise _refused([{**e, "loc": e["loc"][1:]} for e in exc.errors()]) from None
    who = _who()
    if plan.rerate is None:
        changed = apply_at_once(store, current, plan, who)
    else:
        changed = rerate_here(
            store, current, plan.rerate, who, lambda: apply_at_once(store, current, plan, who)
        )
        console.print(f"re-rated pool [bold]{name}[/]: {changed.rated:,} rounds")
    theta = f", Θ {changed.params.theta:g}" if changed.is_synelo else ""
    if changed.is_synelo and changed.params.temperature != 1.0:  # F1t's T, once set
        theta += f", T {changed.params.temperature:g}"
    console.print(
        f"pool [bold]{name}[/]: {'public' if changed.public else 'private'}, "
        f"model {changed.model}{theta}, "
        f"auto-tuning {'off' if changed.autotune is None else changed.autotune}"
    )


OPTION_OF = {
    "fraction": "--fraction",
    "reason": "--reason",
    "public": "--public/--private",
    "model": "--model",
    "theta": "--theta",
    "params": "--param",
    "autotune": "--autotune-",
}


def _refused(errors: Sequence[Mapping[str, Any]]) -> typer.Exit:
    """Each error of a refused change, by the option that gave the field; exit status 2."""
    from rich.markup import escape

    for error in errors:
        loc = [str(part) for part in error["loc"]]
        if not loc:
            where = "pool set"
        elif loc[0] == "autotune":
            where = "--autotune-" + (loc[1] if len(loc) > 1 else "…")
        else:
            where = " ".join([OPTION_OF.get(loc[0], loc[0]), *loc[1:2]])
        message = str(error["msg"]).removeprefix("Value error, ")
        err_console.print(f"[red]{escape(where)}: {escape(message)}[/]")
    return typer.Exit(2)


def _who() -> str:
    """Whom the pool's admin log names for a change made here: the command and the user."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid
        user = str(os.getuid())
    return f"cli:{user}"[:64]
