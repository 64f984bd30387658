"""The `synelo` command line: set-up, pools, tokens, the server, and evaluation (import,
replay, tune) as thin wrappers over `synelo.evaluation`."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from pydantic import ValidationError
from rich.console import Console

from synelo.client import RequestRejected
from synelo.schemas import PoolIn

if TYPE_CHECKING:
    from rich.table import Table

    from synelo.config import Settings
    from synelo.evaluation.history import History
    from synelo.evaluation.models import HistoryInfo
    from synelo.store.repository import Store

# The base install has the client and the maths; commands that need more import it when
# they run, and `main` names the extra that brings it.
EXTRA_OF_MODULE = {
    "fastapi": "server",
    "uvicorn": "server",
    "pydantic_settings": "server",
    "sqlalchemy": "server",
    "alembic": "server",
    "psycopg": "server",
    "matplotlib": "eval",
}

app = typer.Typer(
    help="synelo: skill ratings and team balancing for team games.", no_args_is_help=True
)
pool_app = typer.Typer(help="Rating pools.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens.", no_args_is_help=True)
import_app = typer.Typer(
    help="Import match histories (JSON Lines) for replay and tune.", no_args_is_help=True
)
app.add_typer(pool_app, name="pool")
app.add_typer(token_app, name="token")
app.add_typer(import_app, name="import")
console = Console()
err_console = Console(stderr=True)


def main() -> None:
    """The `synelo` command. A command that needs an extra the install lacks stops with the
    pip command that adds it (exit status 2) instead of a traceback."""
    try:
        app(prog_name="synelo")
    except ModuleNotFoundError as exc:
        extra = EXTRA_OF_MODULE.get((exc.name or "").partition(".")[0])
        if extra is None:
            raise
        print(
            f"this command needs {exc.name}, which comes with the {extra!r} extra: "
            f"pip install 'synelo[{extra}]'",
            file=sys.stderr,
        )
        sys.exit(2)


def _settings() -> Settings:
    """The settings from SYNELO_*; a bad value stops the command here, named, before
    anything is touched (exit status 2)."""
    from synelo.config import Settings

    try:
        return Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = f"SYNELO_{'_'.join(map(str, error['loc'])).upper()}: " if error["loc"] else ""
            err_console.print(
                f"[red]configuration: {where}{error['msg'].removeprefix('Value error, ')}[/]"
            )
        raise typer.Exit(2) from None


def _store(settings: Settings) -> Store:
    from synelo.store.engine import create_store_engine
    from synelo.store.repository import Store

    return Store(create_store_engine(settings.sqlalchemy_url, pool_size=1))


def _new_token(store: Store, role: str, label: str) -> str:
    token = secrets.token_urlsafe(32)
    store.add_token(role, token, label)
    return token


@app.command("migrate")
def migrate_cmd() -> None:
    """Apply the database migrations (safe to repeat)."""
    from synelo.store.engine import create_store_engine, migrate

    settings = _settings()
    migrate(create_store_engine(settings.sqlalchemy_url, pool_size=1))
    console.print(f"database at [bold]{_redact(settings.sqlalchemy_url)}[/] is up to date")


@app.command("init")
def init_cmd() -> None:
    """Everything a fresh machine needs: migrations, the `default` pool and, when no token
    is configured, one admin and one server token written to the data folder."""
    from synelo.domain import PoolExists
    from synelo.store.engine import create_store_engine, migrate
    from synelo.store.repository import Store

    settings = _settings()
    # the data folder holds the database and the tokens: its owner's only
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    _private(settings.data_dir, 0o700)
    engine = create_store_engine(settings.sqlalchemy_url, pool_size=1)
    migrate(engine)
    store = Store(engine)
    try:
        pool = store.create_pool(
            "default",
            settings.team_size,
            settings.rating_params(settings.pool_theta(settings.team_size)),
        )
        console.print(
            f"created pool [bold]default[/] (team size {pool.team_size}, Θ {pool.params.theta:g})"
        )
    except PoolExists:
        pass
    if settings.admin_tokens or settings.server_tokens:
        console.print("tokens come from SYNELO_ADMIN_TOKENS / SYNELO_SERVER_TOKENS")
        return
    folder = settings.data_dir / "tokens"
    if (folder / "admin.token").exists() and (folder / "server.token").exists():
        for token_file in (folder / "admin.token", folder / "server.token"):
            _private(token_file)
        _private(folder, 0o700)
        console.print(f"tokens are in [bold]{folder.resolve()}[/]")
        return
    folder.mkdir(parents=True, exist_ok=True)
    _private(folder, 0o700)
    for role in ("admin", "server"):
        _write_secret(folder / f"{role}.token", _new_token(store, role, f"generated {role}"))
    console.print(
        f"generated an admin and a server token in [bold]{folder.resolve()}[/] "
        "(admin.token, server.token)"
    )


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8000,
    workers: Annotated[int, typer.Option(help="processes (PostgreSQL for > 1)")] = 1,
    log_level: Annotated[str, typer.Option()] = "info",
    access_log: Annotated[
        bool, typer.Option("--access-log", help="a line per request (SYNELO_ACCESS_LOG)")
    ] = False,
) -> None:
    """Run the HTTP API with uvicorn (its limits: synelo.service.server)."""
    from synelo.service.server import serve
    from synelo.store.engine import create_store_engine, pending_migrations

    if access_log:
        os.environ["SYNELO_ACCESS_LOG"] = "true"  # for the workers, which read the settings
    settings = _settings()
    if pending_migrations(create_store_engine(settings.sqlalchemy_url, pool_size=1)):
        console.print(
            f"[red]the database at {_redact(settings.sqlalchemy_url)} needs its "
            "migrations: run `synelo migrate` (or `synelo init`) first[/]"
        )
        raise typer.Exit(1)

    if not serve(settings, host=host, port=port, workers=workers, log_level=log_level):
        raise typer.Exit(3)  # uvicorn's status when the server does not start


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
    from synelo.domain import PoolExists

    settings = _settings()
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
        pool = _store(settings).create_pool(
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
    for p in _store(_settings()).list_pools():
        console.print(f"{p.name}\tteam size {p.team_size}\tΘ {p.params.theta:g}\t{p.rounds} rounds")


@token_app.command("create")
def token_create(
    role: Annotated[Literal["server", "admin"], typer.Option()] = "server",
    label: Annotated[str, typer.Option()] = "",
) -> None:
    """Create a token and print it (only its hash is stored). Stored tokens are not used
    while SYNELO_ADMIN_TOKENS or SYNELO_SERVER_TOKENS is set."""
    settings = _settings()
    if settings.admin_tokens or settings.server_tokens:
        err_console.print(
            "[yellow]SYNELO_ADMIN_TOKENS/SYNELO_SERVER_TOKENS are set: they are "
            "the only tokens, so this one is not accepted while they are[/]"
        )
    print(_new_token(_store(settings), role, label or role))


@token_app.command("list")
def token_list() -> None:
    """List the stored tokens: id, role, label and when made (never the token itself)."""
    from rich.table import Table

    table = Table("id", "role", "label", "created", title="stored tokens")
    for t in _store(_settings()).list_tokens():
        table.add_row(str(t.id), t.role, t.label, t.created_at.isoformat(timespec="seconds"))
    _show(table)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[int, typer.Argument(help="the id `token list` shows")],
) -> None:
    """Delete a stored token: every worker refuses it within a second."""
    gone = _store(_settings()).revoke_token(token_id)
    if gone is None:
        raise _fail(f"no stored token has id {token_id}")
    console.print(f"revoked token {gone.id} ({gone.role}, {gone.label!r})")


@app.command("backup")
def backup_cmd(
    dest: Annotated[Path, typer.Argument(help="the back-up file to write (must not exist)")],
) -> None:
    """Back up the database while the service runs: SQLite's online back-up (a database
    file), or pg_dump's custom format for PostgreSQL."""
    from synelo.store.backup import BackupError, backup

    settings = _settings()
    try:
        backup(settings.sqlalchemy_url, dest)
    except BackupError as exc:
        raise _fail(str(exc)) from None
    _private(dest)
    console.print(f"backed up {_redact(settings.sqlalchemy_url)} to [bold]{dest}[/]")


@app.command("restore")
def restore_cmd(
    src: Annotated[Path, typer.Argument(help="a file `synelo backup` wrote")],
    replace: Annotated[
        bool, typer.Option(help="overwrite the database there (its data is lost)")
    ] = False,
) -> None:
    """Restore a back-up into the configured database. Stop the service first; run
    `synelo migrate` afterwards if the back-up is from an older version."""
    from synelo.store.backup import BackupError, restore

    settings = _settings()
    try:
        restore(src, settings.sqlalchemy_url, replace=replace)
    except BackupError as exc:
        raise _fail(str(exc)) from None
    console.print(f"restored {src} into {_redact(settings.sqlalchemy_url)}")


def _write_secret(path: Path, text: str) -> None:
    """A token file readable by its owner only, also when it existed with a wider mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # O_CREAT's mode applies to a new file only
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


def _private(path: Path, mode: int = 0o600) -> None:
    """Owner-only permissions on a file (or, with 0o700, a folder) that holds secrets."""
    path.chmod(mode)


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


# --- evaluation -----------------------------------------------------------------------------

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
        "hive, whr, positional, sectors-edge (`synelo models` lists them)",
    ),
]
WarmupOpt = Annotated[int, typer.Option(min=0, help="matches learned from but not scored")]
StrictOpt = Annotated[bool, typer.Option(help="stop at the first malformed line")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="write the results as JSON")]


def _fail(message: str) -> typer.Exit:
    err_console.print(f"[red]{message}[/]")
    return typer.Exit(1)


def _show(*tables: Table) -> None:
    """Print tables on stdout. When it is not a terminal (a pipe, a file), Rich would squeeze
    them into 80 columns; they get the width they need instead."""
    if console.is_terminal:
        for table in tables:
            console.print(table)
        return
    wide = console.options.update_width(1_000)
    for table in tables:
        width = max(console.measure(table, options=wide).maximum, 80)
        Console(width=width, file=sys.stdout).print(table)


def _write_json(path: Path, data: object) -> None:
    import orjson

    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    console.print(f"wrote {path}")


def _load(
    history: Path, model: str, params: list[str] | None, strict: bool
) -> tuple[History, HistoryInfo, dict[str, Any]]:
    """The history, the model class' HistoryInfo and the parsed -p options."""
    from synelo.evaluation.history import HistoryFormatError, read_history
    from synelo.evaluation.models import MODELS, HistoryInfo, parse_options

    if model not in MODELS:
        raise _fail(f"unknown model {model!r} (known: {', '.join(sorted(MODELS))})")
    pairs = {}
    for item in params or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise _fail(f"--param takes KEY=VALUE, not {item!r}")
        pairs[key.strip()] = value.strip()
    try:
        options = parse_options(MODELS[model], pairs)
        data = read_history(history, strict=strict)
    except (ValueError, HistoryFormatError) as exc:
        raise _fail(str(exc)) from None
    for error in data.errors[:10]:
        err_console.print(f"[yellow]{history}: {error} (skipped)[/]")
    if len(data.errors) > 10:
        err_console.print(f"[yellow]… {len(data.errors) - 10} more malformed lines skipped[/]")
    if not data.matches:
        raise _fail(f"{history} holds no match")
    first = data.matches[0]
    first_size = max(len(first.team_a), len(first.team_b))
    return data, HistoryInfo(data.max_team_size, data.header, first_size), options


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
) -> None:
    """FIRST Robotics Competition results (The Blue Alliance CSV) → a history. Replay order:
    year, event key, then qualifications before playoffs; ties are draws; unplayed matches
    are skipped (see docs/evaluation.md)."""
    from synelo.evaluation.frc import import_frc
    from synelo.evaluation.history import write_history

    result = import_frc(csv_files, season_2015)
    n = write_history(
        output,
        result.matches,
        {"source": "FRC (The Blue Alliance, MIT)", "notes": result.notes(season_2015)},
    )
    for error in result.errors[:10]:
        err_console.print(f"[yellow]{error} (skipped)[/]")
    ties = sum(m.winner == "draw" for m in result.matches)
    console.print(f"wrote {n:,} matches ({ties:,} ties) to {output}")
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
        result = import_journal(_store(_settings()), pool)
    except UnknownPool:
        raise _fail(f"unknown pool {pool!r}") from None
    n = write_history(output, result.matches, result.header, result.trailing)
    console.print(f"wrote {n:,} rounds of pool {pool} to {output}")
    for note in result.header["notes"][1:]:
        console.print(f"  [yellow]{note}[/]")


@app.command("models")
def models_cmd() -> None:
    """Print the rating models a pool can choose and `synelo replay` runs, one per line."""
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

    from synelo.evaluation.models import create_model
    from synelo.evaluation.replay import replay
    from synelo.evaluation.report import reliability_table, results_table, scores_table
    from synelo.evaluation.truth import load_truth, truth_table

    data, info, options = _load(history, model, param, strict)
    try:
        hidden = None if truth is None else load_truth(truth)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    try:
        rating_model = create_model(model, options, info)
    except (TypeError, ValueError) as exc:
        raise _fail(f"model {model}: {exc}") from None
    if warmup >= len(data.matches):
        raise _fail(
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
            raise _fail(f"model {model}: {exc}") from None
    _show(scores_table(result), reliability_table(result.overall))
    if result.truth is not None:
        _show(truth_table(result.truth))
    calibration = rating_model.result_calibration()
    if calibration is not None and calibration.matches:
        _show(results_table(calibration))
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
            raise _fail(str(exc)) from None
    _show(tune_table(result))
    for held in result.held:
        console.print(held.note(), markup=False, highlight=False, soft_wrap=True)
    for bound in result.on_bound:
        err_console.print(f"[yellow]warning: {bound.warning()}[/]", soft_wrap=True)
    if json_out is not None:
        _write_json(json_out, {**result.to_json(), "history": str(history), "warmup": warmup})


def _outage(value: str) -> tuple[int, int]:
    start, sep, length = value.partition(":")
    if not sep or not start.isdigit() or not length.isdigit():
        raise typer.BadParameter(f"--outage takes ROUND:ROUNDS, not {value!r}")
    return int(start), int(length)


@app.command("simulate")
def simulate_cmd(
    players: Annotated[int, typer.Option(min=4, help="population size")] = 200,
    servers: Annotated[int, typer.Option(min=1, help="game servers feeding the pool")] = 4,
    team_size: Annotated[int, typer.Option(min=2, max=32, help="players a team (12: 12v12)")] = 12,
    rounds: Annotated[int, typer.Option(min=1, help="rounds, over all servers")] = 20_000,
    seed: Annotated[int, typer.Option(help="random seed")] = 1,
    out: Annotated[Path, typer.Option(help="folder for summary.json and the plots")] = Path(
        "sim-out"
    ),
    url: Annotated[
        str | None, typer.Option(help="a running service (default: in-process on loopback)")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(envvar="SYNELO_TOKEN", help="admin token for --url (or SYNELO_TOKEN)"),
    ] = None,
    mode: Annotated[str, typer.Option(help="arena, koth, cp, ctf, payload, attack_defend")] = (
        "koth"
    ),
    skill_mean: Annotated[float, typer.Option(help="true skill: normal mean")] = 1000.0,
    skill_sd: Annotated[float, typer.Option(help="true skill: standard deviation")] = 300.0,
    skill_dist: Annotated[str, typer.Option(help="true skill: normal or uniform")] = "normal",
    churn: Annotated[
        float, typer.Option(min=0, max=1, help="chance a player leaves during a round")
    ] = 0.02,
    autobalance: Annotated[str, typer.Option(help="f11 or sectors_edge")] = "f11",
    fail_first: Annotated[
        float,
        typer.Option(min=0, max=1, help="share of round reports whose first attempt fails (503)"),
    ] = 0.0,
    lose_responses: Annotated[
        float, typer.Option(min=0, max=1, help="share of report answers lost after apply")
    ] = 0.0,
    outage: Annotated[
        list[str] | None, typer.Option(help="ROUND:ROUNDS the service is unreachable (repeatable)")
    ] = None,
    restart_at: Annotated[
        list[int] | None,
        typer.Option(help="restart the in-process service before this round (repeatable)"),
    ] = None,
    thrower: Annotated[
        bool,
        typer.Option(help="from round R/2 a player near mean + 1 sd loses 200 of their rounds"),
    ] = False,
    throwers: Annotated[int, typer.Option(min=1, help="how many throwers, with --thrower")] = 1,
    smurf: Annotated[
        bool, typer.Option(help="a new account R_0 + 600 strong joins at round R/4")
    ] = False,
    smurfs: Annotated[int, typer.Option(min=1, help="how many smurfs, with --smurf")] = 1,
    world_theta: Annotated[
        float | None,
        typer.Option(
            min=1e-9, help="the world's scale for true skills (default 400·floor((k+1)/2))"
        ),
    ] = None,
    pool_theta: Annotated[
        float | None, typer.Option(min=1e-9, help="the new pool's Θ (default: the service's)")
    ] = None,
    pool_param: Annotated[
        list[str] | None,
        typer.Option(
            help="a rating parameter of the new pool, KEY=VALUE (repeatable), e.g. sigma=400 "
            "or convergence=seed"
        ),
    ] = None,
    progress: Annotated[bool, typer.Option(help="show the progress bar")] = True,
) -> None:
    """A closed loop: players with hidden skill on game servers (synelo.game + synelo.client)
    against the service; writes summary.json and PNG plots to OUT."""
    from synelo.game import MODES
    from synelo.sim.run import SimConfig, simulate

    if mode not in MODES:
        raise _fail(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
    if autobalance not in ("f11", "sectors_edge"):
        raise _fail("--autobalance is f11 or sectors_edge")
    if players < 2 * team_size:
        raise _fail(f"{players} players cannot fill a {team_size}v{team_size}")
    params: dict[str, float | str] = {}
    for item in pool_param or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _fail(f"--pool-param takes KEY=VALUE, not {item!r}")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            params[key.strip()] = value.strip()  # a name, e.g. convergence=seed
    config = SimConfig(
        players=players,
        servers=servers,
        team_size=team_size,
        rounds=rounds,
        seed=seed,
        out=out,
        url=url,
        token=token,
        mode=mode,
        skill_mean=skill_mean,
        skill_sd=skill_sd,
        skill_dist=skill_dist,
        churn=churn,
        autobalance=autobalance,
        fail_first=fail_first,
        lose_responses=lose_responses,
        outages=[_outage(v) for v in outage or []],
        restarts=restart_at or [],
        thrower=thrower,
        throwers=throwers,
        smurf=smurf,
        smurfs=smurfs,
        world_theta=world_theta,
        pool_theta=pool_theta,
        pool_params=params,
        progress=progress,
    )
    try:
        simulate(config, console)
    except (ValueError, RequestRejected) as exc:  # e.g. a --pool-param the service refuses
        raise _fail(str(exc)) from None
    console.print(f"wrote {out / 'summary.json'} and the plots in {out}")


@app.command("simulate-history")
def simulate_history_cmd(
    out: Annotated[Path, typer.Argument(help="the history to write (JSON Lines)", dir_okay=False)],
    truth: Annotated[
        Path, typer.Option(help="where to write the hidden truth (JSON)", dir_okay=False)
    ],
    world: Annotated[
        Literal["ns2", "foosball", "scoreboard"],
        typer.Option(
            help="ns2: side offsets, maps, commanders; foosball: 2v2 with offense and "
            "defense; scoreboard: modes of 3v3–12v12, parties and points"
        ),
    ] = "ns2",
    matches: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="rounds to play [default: ns2 20,000, foosball 5,000, scoreboard 10,000]",
            show_default=False,
        ),
    ] = None,
    players: Annotated[
        int | None,
        typer.Option(
            min=4,
            help="population size [default: ns2 300, foosball 40, scoreboard 400]",
            show_default=False,
        ),
    ] = None,
    team_size: Annotated[
        int, typer.Option(min=2, max=32, help="players a team (8: 8v8; ns2 only)")
    ] = 8,
    seed: Annotated[int, typer.Option(help="random seed")] = 1,
    uneven_share: Annotated[
        float,
        typer.Option(
            min=0, max=1, help="share of rounds that start k + 1 against k (0: none; ns2 only)"
        ),
    ] = 0.0,
    extra_player_bonus: Annotated[
        float,
        typer.Option(help="logit the larger side of an uneven round gains beyond L (ns2 only)"),
    ] = 0.0,
    leave_rate: Annotated[
        float,
        typer.Option(min=0, max=1, help="a non-commander's chance to leave mid-round (ns2 only)"),
    ] = 0.15,
) -> None:
    """An open-loop simulated world: write its history and the hidden truth for `synelo
    replay --truth`. ns2 (the default): side offsets, maps, commanders, late joiners and
    leavers, optionally k + 1 against k rounds; foosball: 2v2 to 10 goals with offense and
    defense skills; scoreboard: Sector's Edge-like modes with parties and points."""
    import time
    from dataclasses import replace

    start = time.perf_counter()
    if world != "ns2":
        ns2_only = {
            "--team-size": team_size != 8,
            "--uneven-share": uneven_share != 0.0,
            "--extra-player-bonus": extra_player_bonus != 0.0,
            "--leave-rate": leave_rate != 0.15,
        }
        if given := [name for name, changed in ns2_only.items() if changed]:
            raise _fail(f"--world {world} does not take {', '.join(given)} (ns2 only)")
        try:
            if world == "foosball":
                from synelo.sim import foosball

                base_f = foosball.FoosballConfig(seed=seed)
                config_f = replace(
                    base_f,
                    players=base_f.players if players is None else players,
                    matches=base_f.matches if matches is None else matches,
                )
                n, n_players = foosball.write(config_f, out, truth), config_f.players
                shape = f"2v2 foosball to {config_f.goals} goals"
            else:
                from synelo.sim import scoreboard

                base_s = scoreboard.ScoreboardConfig(seed=seed)
                config_s = replace(
                    base_s,
                    players=base_s.players if players is None else players,
                    matches=base_s.matches if matches is None else matches,
                )
                n, n_players = scoreboard.write(config_s, out, truth), config_s.players
                shape = "scoreboard: " + ", ".join(config_s.modes)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        console.print(
            f"wrote {n:,} matches of {n_players:,} players ({shape}, seed {seed}) "
            f"to [bold]{out}[/] and the truth to [bold]{truth}[/] in "
            f"{time.perf_counter() - start:.1f} s"
        )
        return

    from synelo.sim.history import HistoryWorldConfig, write

    players = 300 if players is None else players
    config = HistoryWorldConfig(
        players=players,
        matches=20_000 if matches is None else matches,
        team_size=team_size,
        seed=seed,
        uneven_share=uneven_share,
        extra_player_bonus=extra_player_bonus,
        leave_rate=leave_rate,
    )
    try:
        n = write(config, out, truth)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    shape = f"{team_size}v{team_size}" + (
        f", {uneven_share:.0%} {team_size + 1}v{team_size}" if uneven_share > 0 else ""
    )
    console.print(
        f"wrote {n:,} matches of {players:,} players ({shape}, seed {seed}) "
        f"to [bold]{out}[/] and the truth to [bold]{truth}[/] in "
        f"{time.perf_counter() - start:.1f} s"
    )
