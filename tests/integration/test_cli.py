"""The command line as an operator uses it: init, pools, tokens, and a real `synelo serve`."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import chdir, contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, inspect
from typer.testing import CliRunner

from synelo.cli import app
from synelo.cli.app import console, err_console
from synelo.ratings import SynEloParams
from synelo.store.engine import create_store_engine
from synelo.store.pools import delete_pool
from synelo.store.repository import Store
from tests.conftest import own_pg_schema

SYNELO = [sys.executable, "-m", "synelo"]


def run(args: list[str], data: Path, **env: str) -> subprocess.CompletedProcess:
    """A command on the data folder `data`, with `env` (SYNELO_* variables)."""
    return run_in(None, args, SYNELO_DATA_DIR=str(data), **env)


def run_in(folder: Path | None, args: list[str], **env: str) -> subprocess.CompletedProcess:
    """A command run in `folder` (None: here) with no SYNELO_* variable but `env`: without
    SYNELO_DATA_DIR, the data folder is ./data, as for an operator.

    In this process, through Typer's test runner: the same app, arguments, environment and
    working folder, and what a process gives back (its exit status, stdout and stderr, an
    uncaught exception's traceback on stderr, TimeoutExpired after 60 s). A process of its
    own would cost a Python start and synelo's imports, about a second under coverage, and
    check nothing more; the tests about the process itself (a signal, `serve`, a pipe) start
    one. `serve` always runs as a process here: it stays up."""
    if args[:1] == ["serve"]:
        return process_in(folder, args, **env)
    command = [*SYNELO, *args]
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SYNELO_")}
    with _wide_consoles(200), _at_most(60, command), chdir(folder or Path.cwd()):
        result = CliRunner().invoke(
            app, args, env={**unset, "COLUMNS": "200", **env}, prog_name="synelo"
        )
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(command, result.exit_code, result.stdout, stderr)


@contextmanager
def _wide_consoles(width: int) -> Iterator[None]:
    """synelo's consoles as wide as a process started with COLUMNS=`width` makes them (they
    read it when made: in an xdist worker, which sets COLUMNS to 80)."""
    widths = [(c, c._width) for c in (console, err_console)]
    try:
        for c, _ in widths:
            c.width = width
        yield
    finally:
        for c, old in widths:
            c._width = old


class _TimedOut(BaseException):
    """Raised in the command by `_at_most`'s alarm: past Typer's runner, which catches
    Exception."""


@contextmanager
def _at_most(seconds: float, command: list[str]) -> Iterator[None]:
    """subprocess.TimeoutExpired if the block takes over `seconds` (SIGALRM: the main
    thread, where pytest runs the tests; elsewhere, unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum: int, frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _TimedOut:
        raise subprocess.TimeoutExpired(command, seconds) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def process_in(folder: Path | None, args: list[str], **env: str) -> subprocess.CompletedProcess:
    """`run_in`, as a `python -m synelo` process of its own."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    full_env.update(COLUMNS="200", **env)
    return subprocess.run(
        [*SYNELO, *args],
        cwd=folder,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_init_generates_tokens_once(tmp_path: Path) -> None:
    first = run(["init"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "created pool default" in first.stdout
    tokens = tmp_path / "tokens"
    admin = (tokens / "admin.token").read_text().strip()
    server = (tokens / "server.token").read_text().strip()
    assert len(admin) >= 40 and admin != server
    assert (tokens / "admin.token").stat().st_mode & 0o077 == 0
    assert str(tokens.resolve()) in first.stdout.replace("\n", "")
    second = run(["init"], tmp_path)
    assert second.returncode == 0
    assert (tokens / "admin.token").read_text().strip() == admin


def test_init_makes_the_default_pool_only_in_a_database_without_pools(tmp_path: Path) -> None:
    """So that the systemd unit, which runs `synelo init` before every start, never brings
    back a `default` pool its operator deleted."""
    assert "created pool default" in run(["init"], tmp_path).stdout
    store = Store(create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}"))
    store.create_pool("arena", 3, SynEloParams(theta=300))
    delete_pool(store, "default")
    again = run(["init"], tmp_path)
    assert again.returncode == 0 and "created pool" not in again.stdout, again.stdout
    assert [p.name for p in store.list_pools()] == ["arena"]


def test_init_with_configured_tokens_generates_none(tmp_path: Path) -> None:
    r = run(["init"], tmp_path, SYNELO_ADMIN_TOKENS="a1,a2", SYNELO_SERVER_TOKENS="s1")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "tokens").exists()


def test_pool_and_token_commands(tmp_path: Path) -> None:
    assert run(["migrate"], tmp_path).returncode == 0
    r = run(["pool", "create", "arena", "--team-size", "3"], tmp_path)
    assert r.returncode == 0 and "team size 3, Θ 300, auto-tuning on" in r.stdout
    off = run(["pool", "create", "calm", "--no-autotune"], tmp_path)
    assert off.returncode == 0 and "auto-tuning off" in off.stdout
    assert run(["pool", "create", "arena", "--team-size", "3"], tmp_path).returncode == 1
    listed = run(["pool", "list"], tmp_path).stdout.split()
    assert listed[:4] == ["arena", "team", "size", "3"]
    # --kmax, the option's old name, still sets the team size.
    old = run(["pool", "create", "old", "--kmax", "2"], tmp_path)
    assert "team size 2, Θ 200" in old.stdout and "deprecated" in old.stderr
    both = run(["pool", "create", "both", "--team-size", "4", "--kmax", "5"], tmp_path)
    assert both.returncode == 2 and "team_size" in both.stderr
    # Without --team-size the pool takes SYNELO_TEAM_SIZE: 5 → Θ = 100·5 = 500;
    # SYNELO_KMAX is its old name.
    assert "Θ 500" in run(["pool", "create", "five"], tmp_path, SYNELO_TEAM_SIZE="5").stdout
    assert "Θ 800" in run(["pool", "create", "eight"], tmp_path, SYNELO_KMAX="8").stdout
    # SYNELO_THETA_RULE=seed: the design's 400·floor((5+1)/2) = 1200
    seeded = run(["pool", "create", "s5"], tmp_path, SYNELO_TEAM_SIZE="5", SYNELO_THETA_RULE="seed")
    assert "Θ 1200" in seeded.stdout
    # SYNELO_THETA replaces the Θ of the team size; a pool's own --theta wins over both.
    assert (
        "Θ 1000"
        in run(["pool", "create", "six", "--team-size", "3"], tmp_path, SYNELO_THETA="1000").stdout
    )
    assert (
        "Θ 500"
        in run(["pool", "create", "seven", "--theta", "500"], tmp_path, SYNELO_THETA="1000").stdout
    )
    token = run(["token", "create", "--role", "server"], tmp_path).stdout.strip()
    assert len(token) >= 40


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder after `synelo migrate`, for tests to copy: the same empty database
    each time, for one `synelo migrate` rather than one a test."""
    folder = tmp_path_factory.mktemp("migrated")
    assert run(["migrate"], folder).returncode == 0
    return folder


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bad/name"], "name:"),
        (["x" * 65], "name:"),
        (["ok", "--team-size", "0"], "team_size:"),
        (["ok", "--team-size", "65"], "team_size:"),
        (["ok", "--kmax", "65"], "team_size:"),
        (["ok", "--theta", "-5"], "theta:"),
    ],
)
def test_pool_create_follows_the_api_rules(
    migrated: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    """A pool the API could not reach (a '/' in its name, 65 characters) is not created."""
    shutil.copytree(migrated, tmp_path, dirs_exist_ok=True)
    r = run(["pool", "create", *args], tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert run(["pool", "list"], tmp_path).stdout.strip() == ""


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SYNELO_K_MAX", "1e308"),
        ("SYNELO_T_SHADOW", "100000000000000000000"),
        ("SYNELO_T_STALE_DAYS", "1e300"),
        ("SYNELO_TEAM_SIZE", "0"),
        ("SYNELO_KMAX", "0"),
        ("SYNELO_SIGMA", "nan"),
        ("SYNELO_WINDOW", "1"),
        ("SYNELO_THETA", "-400"),
    ],
)
def test_bad_setting_stops_every_command_by_name(tmp_path: Path, variable: str, value: str) -> None:
    r = run(["init"], tmp_path, **{variable: value})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "configuration:" in r.stderr and "Traceback" not in r.stderr
    assert variable in r.stderr  # named as the operator set it
    assert not (tmp_path / "synelo.db").exists()  # nothing was touched
    # Help never needs the settings.
    assert run(["pool", "create", "--help"], tmp_path, **{variable: value}).returncode == 0


def test_empty_synelo_theta_is_unset(tmp_path: Path) -> None:
    r = run(["init"], tmp_path, SYNELO_THETA="")
    assert r.returncode == 0, r.stderr
    assert "Θ 1200" in r.stdout  # 100·12, from the team size 12


def test_the_team_size_and_its_old_name_must_agree(tmp_path: Path) -> None:
    r = run(["init"], tmp_path, SYNELO_TEAM_SIZE="6", SYNELO_KMAX="8")
    assert r.returncode == 2 and "SYNELO_KMAX" in r.stderr, r.stderr
    r = run(["init"], tmp_path, SYNELO_TEAM_SIZE="6", SYNELO_KMAX="6")
    assert r.returncode == 0 and "team size 6, Θ 600" in r.stdout, r.stdout + r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_answers_with_generated_tokens(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env["SYNELO_DATA_DIR"] = str(tmp_path)
    proc = subprocess.Popen(
        [*SYNELO, "serve", "--port", str(port), "--log-level", "warning"], env=env
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            pytest.fail("synelo serve did not come up")
        server = (tmp_path / "tokens" / "server.token").read_text().strip()
        admin = (tmp_path / "tokens" / "admin.token").read_text().strip()
        r = httpx.post(
            f"{url}/v1/pools/default/rounds",
            headers={"Authorization": f"Bearer {server}"},
            json={
                "round_id": "1",
                "server_id": "s",
                "winner": "B",
                "teams": {"A": ["76561197960265729"], "B": ["76561197960265730"]},
            },
        )
        assert r.status_code == 201, r.text
        q = httpx.get(
            f"{url}/v1/pools/default/quality", headers={"Authorization": f"Bearer {admin}"}
        ).json()
        assert q["rounds"] == 1 and q["theta"] == 1200
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_refuses_an_unmigrated_database(tmp_path: Path) -> None:
    (tmp_path / "synelo.db").touch(0o600)  # there, but never migrated
    r = run(["serve", "--port", str(_free_port())], tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "needs its migrations: run `synelo migrate`" in r.stderr
    with sqlite3.connect(tmp_path / "synelo.db") as db:  # nothing was made in it
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == []


# Every command that reads or changes a database (or copies it); only init, migrate and
# restore make one.
NEEDS_A_DATABASE = [
    ["token", "list"],
    ["token", "create"],
    ["token", "revoke", "1"],
    ["pool", "list"],
    ["pool", "create", "arena"],
    ["pool", "set", "default", "--public"],
    ["import", "journal", "--pool", "default", "-o", "h.jsonl"],
    ["serve", "--port", "1"],
    ["backup", "b.db"],  # it said only "no database at …"
]


@pytest.mark.parametrize("args", NEEDS_A_DATABASE, ids=" ".join)
def test_outside_the_data_folder_a_command_says_so_and_makes_nothing(
    tmp_path: Path, args: list[str]
) -> None:
    """Run where `synelo init` never ran: a message that says what to do, no traceback,
    and no empty database (nor data folder) left behind."""
    r = run_in(tmp_path, args)
    assert r.returncode == 1, r.stdout + r.stderr
    said = " ".join(r.stderr.split())
    assert f"no database at {tmp_path.resolve() / 'data' / 'synelo.db'}" in said, said
    assert "run `synelo init` first" in said and "SYNELO_DATA_DIR" in said
    assert "Traceback" not in r.stdout + r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["pool", "list"], ["token", "list"], ["migrate"], ["init"]])
def test_a_database_that_does_not_answer_is_named_without_a_traceback(
    tmp_path: Path, args: list[str]
) -> None:
    url = f"postgresql+psycopg://synelo:secret@127.0.0.1:{_free_port()}/nowhere"
    r = run_in(tmp_path, args, SYNELO_DATABASE_URL=url)
    assert r.returncode == 1, r.stdout + r.stderr
    said = " ".join(r.stderr.split())
    assert "cannot use the database at postgresql+psycopg://synelo:***@127.0.0.1" in said, said
    assert "secret" not in said and "Traceback" not in said


@pytest.mark.postgres
@pytest.mark.parametrize("args", [["pool", "list"], ["token", "create"], ["serve"]])
def test_an_unmigrated_postgresql_database_is_left_as_it_is(
    pg_schema_url: str, tmp_path: Path, args: list[str]
) -> None:
    with own_pg_schema() as url:
        r = run_in(tmp_path, args, SYNELO_DATABASE_URL=url)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "needs its migrations: run `synelo migrate`" in " ".join(r.stderr.split())
        with create_engine(url).connect() as conn:
            assert inspect(conn).get_table_names() == []
