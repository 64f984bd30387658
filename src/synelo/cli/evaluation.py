"""The evaluation commands: list the rating models, replay a history and tune a
model's parameters on one, as thin wrappers over `synelo.evaluation`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from synelo.cli.app import app, console, err_console, fail, show

if TYPE_CHECKING:
    from synelo.evaluation.adapters import HistoryInfo
    from synelo.evaluation.history import History


ParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--param", "-p", help="a model parameter, KEY=VALUE (repeatable), e.g. -p theta=800"
    ),
]
HistoryArg = Annotated[
    Path, typer.Argument(help="history file (JSON Lines)", exists=True, dir_okay=False)
]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="rating model: synelo, elo, trueskill, openskill-pl, openskill-bt, openskill-tm, "
        "hive, whr, margin, positional, sectors-edge, and the peer epa (`synelo models` lists "
        "them)",
    ),
]
WarmupOpt = Annotated[int, typer.Option(min=0, help="matches learned from but not scored")]
StrictOpt = Annotated[bool, typer.Option(help="stop at the first malformed line")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="write the results as JSON")]


def _write_json(path: Path, data: object) -> None:
    import orjson

    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    console.print(f"wrote {path}")


def _load(
    history: Path, model: str, params: list[str] | None, strict: bool
) -> tuple[History, HistoryInfo, dict[str, Any]]:
    """The history, the model class' HistoryInfo and the parsed -p options."""
    from synelo.evaluation.adapters import HistoryInfo, parse_options
    from synelo.evaluation.history import HistoryFormatError, read_history
    from synelo.models import MODELS

    if model not in MODELS:
        raise fail(f"unknown model {model!r} (known: {', '.join(sorted(MODELS))})")
    pairs = {}
    for item in params or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise fail(f"--param takes KEY=VALUE, not {item!r}")
        pairs[key.strip()] = value.strip()
    try:
        options = parse_options(MODELS[model], pairs)
        data = read_history(history, strict=strict)
    except (ValueError, HistoryFormatError) as exc:
        raise fail(str(exc)) from None
    for error in data.errors[:10]:
        err_console.print(f"[yellow]{history}: {error} (skipped)[/]")
    if len(data.errors) > 10:
        err_console.print(f"[yellow]… {len(data.errors) - 10} more malformed lines skipped[/]")
    if not data.matches:
        raise fail(f"{history} holds no match")
    first = data.matches[0]
    first_size = max(len(first.team_a), len(first.team_b))
    return data, HistoryInfo(data.max_team_size, data.header, first_size), options


@app.command("models")
def models_cmd() -> None:
    """Print the rating models `synelo replay` runs, one per line: those a pool can choose,
    and the replay-only peers (`epa`) it compares them with."""
    from synelo.models import MODELS

    for name in MODELS:
        print(name)


@app.command("replay")
def replay_cmd(
    history: HistoryArg,
    model: ModelOpt = "synelo",
    param: ParamOpt = None,
    warmup: WarmupOpt = 0,
    json_out: JsonOpt = None,
    plot: Annotated[
        Path | None, typer.Option(help="write a PNG: reliability diagram and log loss over time")
    ] = None,
    strict: StrictOpt = False,
    truth: Annotated[
        Path | None,
        typer.Option(
            help="a simulated world's truth (`synelo simulate-history --truth`): score the "
            "strengths against the hidden skills too",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    ratings_out: Annotated[
        Path | None,
        typer.Option(
            help='write each player\'s final display rating as JSON {"player": rating}: what '
            "a pool of the model shows, i.e. SynElo's and Elo's rating, μ − 3σ for trueskill "
            "and openskill, display_scale·s for hive, the Elo of the last day played for whr",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Replay a history: for each match predict P(A wins), then update. Scores overall, per
    team size and per match type; throughput in matches/s; with --truth, how well the
    strengths find a simulated world's hidden skills."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from synelo.evaluation.adapters import create_replay
    from synelo.evaluation.replay import replay
    from synelo.evaluation.report import reliability_table, results_table, scores_table
    from synelo.evaluation.truth import load_truth, truth_table

    data, info, options = _load(history, model, param, strict)
    try:
        hidden = None if truth is None else load_truth(truth)
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        rating_model = create_replay(model, options, info)
    except (TypeError, ValueError) as exc:
        raise fail(f"model {model}: {exc}") from None
    if warmup >= len(data.matches):
        raise fail(
            f"--warmup {warmup:,} is at or above the {len(data.matches):,} matches of "
            f"{history}: no match would be scored"
        )
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(f"replaying with {model}", total=len(data.matches))
        try:
            result = replay(
                rating_model,
                data.matches,
                warmup=warmup,
                progress=lambda n: bar.advance(task, n),
                trailing=data.trailing,
                truth=hidden,
            )
        except ValueError as exc:  # a match the model cannot rate (no positions…)
            raise fail(f"model {model}: {exc}") from None
    show(scores_table(result), reliability_table(result.overall))
    if result.truth is not None:
        show(truth_table(result.truth))
    calibration = rating_model.result_calibration()
    if calibration is not None and calibration.matches:
        show(results_table(calibration))
    if json_out is not None:
        extra = {} if calibration is None else {"result_calibration": calibration.to_json()}
        _write_json(
            json_out, {**result.to_json(), "history": str(history), "warmup": warmup, **extra}
        )
    if ratings_out is not None:
        _write_json(ratings_out, rating_model.display_ratings())
    if plot is not None:
        from synelo.evaluation.plots import plot_replay

        console.print(f"wrote {plot_replay(result, plot, f'{model} on {history.name}')}")


@app.command("tune")
def tune_cmd(
    history: HistoryArg,
    model: ModelOpt = "synelo",
    param: ParamOpt = None,
    fit: Annotated[
        list[str] | None,
        typer.Option(
            help="parameter to fit (repeatable): theta (default), k_min, k_max, sigma, "
            "weights (w_vel, w_wre, w_vol), …"
        ),
    ] = None,
    train: Annotated[float, typer.Option(help="share of the history to fit on")] = 0.7,
    warmup: WarmupOpt = 0,
    iterations: Annotated[int, typer.Option(min=2, help="golden-section steps per parameter")] = 16,
    json_out: JsonOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Fit parameters by minimising log loss on the first part of a history; report the
    scores on the rest, fitted beside the defaults."""
    from synelo.evaluation.report import tune_table
    from synelo.evaluation.tune import tune

    data, info, options = _load(history, model, param, strict)
    with err_console.status("fitting…") as status:
        try:
            result = tune(
                model,
                data.matches,
                fit or ["theta"],
                options=options,
                info=info,
                train_fraction=train,
                warmup=warmup,
                iterations=iterations,
                progress=lambda line: status.update(f"fitting… {line}"),
            )
        except ValueError as exc:
            raise fail(str(exc)) from None
    show(tune_table(result))
    for held in result.held:
        console.print(held.note(), markup=False, highlight=False, soft_wrap=True)
    for bound in result.on_bound:
        err_console.print(f"[yellow]warning: {bound.warning()}[/]", soft_wrap=True)
    if json_out is not None:
        _write_json(json_out, {**result.to_json(), "history": str(history), "warmup": warmup})
