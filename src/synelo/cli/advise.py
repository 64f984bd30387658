"""`synelo advise`: which general model predicts a pool's own rounds best, or a history
file's (`synelo.evaluation.advise`). It reads the pool's journal export from the database
directly, as `synelo pool set` does: no running service, token or address is needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from synelo.cli.app import app, console, err_console, fail, load_settings, open_store, show

if TYPE_CHECKING:
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
        Path | None, typer.Option("--json", help="write the advice as JSON")
    ] = None,
) -> None:
    """Replay a pool's rounds through every general model (synelo, hive, whr, margin) and
    plain Elo, at their defaults and tuned on the older 70 %; score them on the newer 30 %
    and recommend the best, saying whether its lead is beyond the noise."""
    from synelo.evaluation.advise import advise
    from synelo.evaluation.report import advice_table

    if (pool is None) == (history is None):
        raise fail("give a pool, or --history FILE, but not both")
    matches, header, source = _rounds(pool, history)
    with err_console.status("advising…") as status:
        try:
            advice = advise(matches, header, progress=lambda f: status.update(f"advising… {f:.0%}"))
        except ValueError as exc:  # TooFewRounds among them
            raise fail(f"{source}: {exc}") from None
    show(advice_table(advice))
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
    switch = advice.switch()
    if switch is not None and pool is not None:
        args = " ".join(
            [f"--model {switch['model']}"]
            + ([f"--theta {switch['theta']:.6g}"] if "theta" in switch else [])
            + [f"-p {k}={v:.6g}" for k, v in switch.get("params", {}).items()]
        )
        console.print(f"To switch: synelo pool set {pool} {args}", markup=False, highlight=False)
    for warning in advice.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, soft_wrap=True)
    if json_out is not None:
        import orjson

        json_out.write_bytes(
            orjson.dumps({"source": source, **advice.to_json()}, option=orjson.OPT_INDENT_2)
        )
        console.print(f"wrote {json_out}")


def _rounds(pool: str | None, history: Path | None) -> tuple[list[Match], dict[str, Any], str]:
    """The rounds to advise on, their header and where they come from: the history file,
    else the pool's journal export (the command stops, saying why, if neither can be read)."""
    if history is not None:
        from synelo.evaluation.history import HistoryFormatError, read_history

        try:
            data = read_history(history)
        except (ValueError, HistoryFormatError) as exc:
            raise fail(str(exc)) from None
        return data.matches, dict(data.header), str(history)
    from synelo.domain import UnknownPool
    from synelo.evaluation.journal import import_journal

    store = open_store(load_settings())
    try:
        exported = import_journal(store, pool or "")
    except UnknownPool:
        raise fail(f"unknown pool {pool!r}") from None
    return exported.matches, exported.header, f"pool {pool}"
