"""`synelo advise`: which general model predicts a pool's own rounds best, or a history
file's (`synelo.evaluation.advise`). It reads the pool's journal export from the database
directly, as `synelo pool set` does: no running service, token or address is needed."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from synelo.cli.app import app, console, err_console, fail, load_settings, open_store, show

if TYPE_CHECKING:
    from synelo.evaluation.advise import Advice
    from synelo.evaluation.history import Match


@app.command("advise")
def advise_cmd(
    pool: Annotated[str | None, typer.Argument(help="the pool whose rounds to advise on")] = None,
    history: Annotated[
        Path | None,
        typer.Option(
            help="advise on a history file (JSON Lines) instead of a pool",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="write the advice as JSON", dir_okay=False, writable=True),
    ] = None,
) -> None:
    """Replay a pool's rounds through every general model (synelo, hive, whr, margin) and
    plain Elo, at their defaults and tuned on the older 70 %; score them on the newer 30 %
    and recommend the best, saying whether its lead is beyond the noise."""
    from synelo.evaluation.advise import advise
    from synelo.evaluation.report import advice_table

    if (pool is None) == (history is None):
        raise fail("give a pool, or --history FILE, but not both")
    if json_out is not None:
        _check_writable(json_out)
    matches, header, source, autotuned = _rounds(pool, history)
    with err_console.status("advising…") as status:
        try:
            advice = advise(
                matches,
                header,
                progress=lambda f: status.update(f"advising… {f:.0%}"),
                autotuned=autotuned,
            )
        except ValueError as exc:  # TooFewRounds among them
            raise fail(f"{source}: {exc}") from None
    show(advice_table(advice))
    if advice.skipped:
        console.print(
            f"Only the newest {advice.rounds:,} rounds were replayed: the oldest "
            f"{advice.skipped:,} were left out (MAX_ROUNDS).",
            markup=False,
        )
    console.print(advice.verdict(), markup=False, highlight=False, soft_wrap=True)
    if advice.current_model is not None and advice.over_current is not None:
        m = advice.over_current
        noise = "beyond" if m.beyond_noise else "within"
        console.print(
            f"Over the pool's current model ({m.other}, as set up): {m.difference:+.4f} ± "
            f"{m.se:.4f} nats a round, {noise} the noise.",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    _print_switch(advice, pool)
    for warning in advice.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, soft_wrap=True)
    if json_out is not None:
        import orjson

        try:
            json_out.write_bytes(
                orjson.dumps({"source": source, **advice.to_json()}, option=orjson.OPT_INDENT_2)
            )
        except OSError as exc:
            raise fail(f"cannot write {json_out}: {exc.strerror or exc}") from None
        console.print(f"wrote {json_out}")


def _print_switch(advice: Advice, pool: str | None) -> None:
    """The `synelo pool set` command that switches the pool to the pick, if there is one."""
    switch = advice.switch()
    if switch is not None and pool is not None:
        args = " ".join(
            [f"--model {switch['model']}"]
            + ([f"--theta {switch['theta']!r}"] if "theta" in switch else [])
            + [
                f"-p {shlex.quote(f'{k}={v!r}' if isinstance(v, float) else f'{k}={v}')}"
                for k, v in switch.get("params", {}).items()
            ]
        )
        console.print(
            f"To switch: synelo pool set {pool} {args}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    elif advice.keep:
        console.print("No switch: the pool's own setup is the pick.", markup=False)


def _check_writable(path: Path) -> None:
    """Stop before the long run, saying why, if `path` cannot be written: its folder must
    exist and be writable, and the path must not be a folder."""
    import os

    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise fail(f"--json {path}: is a folder")
    if not folder.is_dir():
        raise fail(f"--json {path}: no folder {folder}")
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK):
        raise fail(f"--json {path}: not writable")


def _rounds(
    pool: str | None, history: Path | None
) -> tuple[list[Match], dict[str, Any], str, bool]:
    """The rounds to advise on, their header, where they come from and whether the pool
    auto-tunes: the history file, else the pool's journal export (the command stops, saying
    why, if neither can be read)."""
    if history is not None:
        from synelo.evaluation.history import HistoryFormatError, read_history

        try:
            data = read_history(history)
        except (ValueError, HistoryFormatError) as exc:
            raise fail(str(exc)) from None
        return data.matches, dict(data.header), str(history), False
    from synelo.domain import UnknownPool
    from synelo.evaluation.journal import import_journal

    store = open_store(load_settings())
    try:
        exported = import_journal(store, pool or "")
        autotuned = bool(store.get_pool(pool or "").autotune)
    except UnknownPool:
        raise fail(f"unknown pool {pool!r}") from None
    return exported.matches, exported.header, f"pool {pool}", autotuned
