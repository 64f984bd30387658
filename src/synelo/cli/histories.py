"""`synelo import`: match histories (JSON Lines) from FRC results or from a pool's
rounds in the database, for replay and tune."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from synelo.cli.app import console, err_console, fail, import_app, load_settings, open_store


@import_app.command("frc")
def import_frc_cmd(
    csv_files: Annotated[
        list[Path], typer.Argument(help="FRC CSV files (<year>.csv)", exists=True, dir_okay=False)
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="history to write")],
    season_2015: Annotated[
        Literal["skip", "learn"],
        typer.Option(
            help="2015 was not head-to-head: skip it, or learn from it unscored "
            "(higher score = winner)"
        ),
    ] = "skip",
    seasons: Annotated[
        bool,
        typer.Option(
            help="each year after the first is a new season (a bare season event before its "
            "first match); --no-seasons: the years run on as one"
        ),
    ] = True,
) -> None:
    """FIRST Robotics Competition results (The Blue Alliance CSV) → a history. Replay order:
    year, event key, then qualifications before playoffs; ties are draws; unplayed matches
    are skipped; each year after the first is a season (see docs/evaluation.md)."""
    from synelo.evaluation.frc import import_frc
    from synelo.evaluation.history import write_history

    result = import_frc(csv_files, season_2015, seasons)
    n = write_history(
        output,
        result.matches,
        {"source": "FRC (The Blue Alliance, MIT)", "notes": result.notes(season_2015, seasons)},
    )
    for error in result.errors[:10]:
        err_console.print(f"[yellow]{error} (skipped)[/]")
    ties = sum(m.winner == "draw" for m in result.matches)
    starts = sum(len(m.events) for m in result.matches)
    news = f"{starts:,} new season{'' if starts == 1 else 's'}"
    console.print(f"wrote {n:,} matches ({ties:,} ties, {news}) to {output}")
    for why, count in sorted(result.skipped.items()):
        console.print(f"  skipped {count:,}: {why}")


@import_app.command("journal")
def import_journal_cmd(
    pool: Annotated[str, typer.Option(help="the pool whose rounds to export")],
    output: Annotated[Path, typer.Option("--output", "-o", help="history to write")],
) -> None:
    """A pool's rated rounds from the service's database (SYNELO_DATABASE_URL) → a history,
    with the pool's parameters in its header."""
    from synelo.domain import UnknownPool
    from synelo.evaluation.history import write_history
    from synelo.evaluation.journal import import_journal

    try:
        result = import_journal(open_store(load_settings()), pool)
    except UnknownPool:
        raise fail(f"unknown pool {pool!r}") from None
    n = write_history(output, result.matches, result.header, result.trailing)
    console.print(f"wrote {n:,} rounds of pool {pool} to {output}")
    for note in result.header["notes"][1:]:
        console.print(f"  [yellow]{note}[/]")
