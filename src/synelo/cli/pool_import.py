"""`synelo pool import`: rate a history file into a pool, beside a running service."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from synelo.cli.app import console, err_console, fail, load_settings, open_store, pool_app, redact

if TYPE_CHECKING:
    from synelo.evaluation.history import HistoryError
    from synelo.service.history_import import ImportOutcome, ImportPlan

SHOWN_ERRORS = 10  # bad lines listed; the rest are counted


@pool_app.command("import")
def pool_import_cmd(
    name: Annotated[str, typer.Argument(help="the pool to rate the rounds into")],
    history: Annotated[
        Path,
        typer.Argument(
            help="a history (JSON Lines, as `synelo import` writes)",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    server_id: Annotated[
        str, typer.Option(help="the server_id the rounds are stored with (1–128 characters)")
    ] = "import",
) -> None:
    """Rate a history's rounds into a pool, beside the running service.

    The rounds are rated in the file's order, as the service rates reports and at its
    speed, on the same database. A round whose id the pool has already is not rated again,
    so a second run adds nothing. The history's seasons are started at their places (after
    a round this run rated). A bad line stops the import before any round is rated. The
    bulk path: the API lets a server token report 50 rounds a second."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )
    from sqlalchemy.exc import SQLAlchemyError

    from synelo.domain import UnknownPool
    from synelo.schemas.fields import SERVER_ID_MAX, addressable
    from synelo.service.history_import import plan_import, rate_reports
    from synelo.store.engine import pending_migrations

    if not 1 <= len(server_id) <= SERVER_ID_MAX:
        err_console.print(f"[red]--server-id: 1 to {SERVER_ID_MAX} characters[/]")
        raise typer.Exit(2)
    try:
        addressable(server_id)
    except ValueError as exc:
        err_console.print(f"[red]--server-id: {exc}[/]")
        raise typer.Exit(2) from None
    settings = load_settings()
    try:
        store = open_store(settings)
        if pending_migrations(store.engine):
            raise fail(
                f"the database at {redact(settings.sqlalchemy_url)} needs its migrations: "
                "run `synelo migrate` first"
            )
        pool = store.get_pool(name)
        with err_console.status(f"checking {history}"):
            plan = plan_import(history, pool, server_id)
        if plan.errors:
            _show(history, plan.errors[:SHOWN_ERRORS])
            if len(plan.errors) > SHOWN_ERRORS:
                err_console.print(f"[red]… and {len(plan.errors) - SHOWN_ERRORS} more[/]")
            raise fail(f"nothing imported: fix the {len(plan.errors)} error(s) above")
        _notes(plan, sum(len(s) for s in plan.seasons.values()))
        started = time.perf_counter()
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
        ) as bar:
            task = bar.add_task(f"rating into {name}", total=len(plan.reports))
            outcome = rate_reports(
                store, name, plan.reports, lambda: bar.advance(task), plan.seasons
            )
    except UnknownPool:
        raise fail(f"unknown pool {name!r}: create it first (`synelo pool create`)") from None
    except SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc
        raise fail(f"database error: {str(cause).strip().splitlines()[0]}") from None
    _show(history, outcome.refused, " (not rated)")
    _summary(outcome, time.perf_counter() - started, name, history)
    if outcome.refused:
        raise typer.Exit(1)


def _show(history: Path, errors: list[HistoryError], suffix: str = "") -> None:
    """Each error as `FILE: line N: field: message`, as written (a player id may hold
    brackets, which Rich would read as markup)."""
    from rich.markup import escape

    for error in errors:
        err_console.print(
            f"[red]{escape(f'{history}: {error}{suffix}')}[/]", highlight=False, soft_wrap=True
        )


def _summary(outcome: ImportOutcome, elapsed: float, pool: str, history: Path) -> None:
    """What the import did: the rounds it rated, and those the pool had already."""
    if outcome.new:
        rate = outcome.new / elapsed if elapsed > 0 else 0.0
        seasons = f", and started {outcome.seasons:,} seasons" if outcome.seasons else ""
        console.print(
            f"rated {outcome.new:,} new rounds into pool {pool} in {elapsed:.1f} s "
            f"({rate:,.0f} a second){seasons}; {outcome.known:,} were there already",
            soft_wrap=True,
        )
    elif outcome.known:
        console.print(
            f"nothing new: pool {pool} had all {outcome.known:,} rounds already", soft_wrap=True
        )
    else:
        console.print(f"{history} holds no round to rate")


def _notes(plan: ImportPlan, seasons: int) -> None:
    """What of the history is not rated, said before the rating starts, and its seasons."""
    if plan.voided:
        console.print(f"[yellow]{plan.voided:,} rounds the history voids are left out[/]")
    if plan.events:
        console.print(
            f"[yellow]{plan.events:,} admin events (set, reset, void, unvoid) are not applied: "
            "make them through the API or the pages[/]"
        )
    if plan.leading:
        console.print(
            f"[yellow]{plan.leading:,} season lines before the first round are left out: "
            "start a season through the API, the pages or `synelo pool season`[/]"
        )
    if seasons:
        console.print(f"{seasons:,} seasons are started at their places among the rounds")
