"""`synelo pool set`: a pool's settings changed from the command line with the API's checks.
The visibility and the auto-tuning are set at once; a change that re-rates runs its job in
the command, beside a running service, shows its progress until done, equals the API's
re-rate, and leaves the pool as it was when the command is killed or interrupted (issue 37).
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, text

from synelo.rerate.autotune import default_autotune
from synelo.store.engine import create_store_engine
from synelo.store.repository import Store
from tests.conftest import own_pg_schema, synelo_serve
from tests.integration.test_api_models import PLAYERS, new_pool, random_rounds
from tests.integration.test_cli import SYNELO, run
from tests.integration.test_crash import NO_LIMITS, SwapLock, _clients
from tests.integration.test_rerate import everyone, play, wait

WHO = f"cli:{getpass.getuser()}"


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder after `synelo init`, for tests to copy (one init for the module)."""
    folder = tmp_path_factory.mktemp("initialised")
    assert run(["init"], folder).returncode == 0
    return folder


def _store(folder: Path) -> Store:
    return Store(create_store_engine(f"sqlite:///{folder / 'synelo.db'}"))


def test_visibility_and_autotuning_are_set_at_once(initialised: Path, tmp_path: Path) -> None:
    shutil.copytree(initialised, tmp_path, dirs_exist_ok=True)
    opened = run(["pool", "set", "default", "--public", "--reason", "open day"], tmp_path)
    assert opened.returncode == 0, opened.stderr
    # `synelo init` made `default` with auto-tuning on (F1t's temperature), as any new pool
    assert (
        "pool default: public, model synelo, Θ 1200, auto-tuning {'every': 5000, 'fit': "
        "['temperature']" in opened.stdout
    )
    assert "re-rat" not in opened.stdout + opened.stderr  # nothing to re-rate
    store = _store(tmp_path)
    pool = store.get_pool("default")
    assert pool.public
    logged = store.changes(pool, ["patch"])[-1]
    assert (logged.value, logged.actor, logged.reason) == ({"public": True}, WHO, "open day")

    tuned = run(
        ["pool", "set", "default", "--autotune-every", "200", "--autotune-fit", "theta"]
        + ["--autotune-first", "150", "--autotune-noise", "1.5"],
        tmp_path,
    )
    assert tuned.returncode == 0, tuned.stderr
    assert store.get_pool("default").autotune == {
        "every": 200,
        "fit": ["theta"],
        "holdout": 0.4,  # a new pool's, as the rest left out
        "margin": 0.001,
        "first": 150,
        "noise": 1.5,
    }
    closed = run(["pool", "set", "default", "--private", "--no-autotune"], tmp_path)
    assert closed.returncode == 0, closed.stderr
    pool = store.get_pool("default")
    assert not pool.public and pool.autotune is None
    # turned on again by naming the scale (or as the upgrade note says): a new pool's setting
    new = default_autotune("synelo")
    assert new is not None
    for args in (
        ["--autotune-fit", "temperature"],
        ["--autotune-every", "5000", "--autotune-fit", "temperature", "--autotune-first", "200"],
    ):
        assert run(["pool", "set", "default", "--no-autotune"], tmp_path).returncode == 0
        assert run(["pool", "set", "default", *args], tmp_path).returncode == 0
        assert store.get_pool("default").autotune == new.to_json(), args
    store.engine.dispose()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "nothing to change: give --public/--private"),
        (["--theta", "-5"], "--theta: Input should be greater than or equal to"),
        (["-p", "k_max=1e9"], "--param k_max: Input should be less than or equal to"),
        (["-p", "k_max"], "--param takes KEY=VALUE, not 'k_max'"),
        (["--model", "nope"], "--model: unknown model (known: synelo,"),
        (["--model", "epa"], "--model: epa is a replay-only peer"),
        (["--autotune-every", "50", "--autotune-fit", "theta"], "--autotune-every: Input"),
        (["--autotune-every", "500"], "--autotune-fit: Field required"),
        (["--autotune-every", "500", "--no-autotune"], "--no-autotune: and --autotune-"),
    ],
)
def test_a_refused_change_names_its_option_and_changes_nothing(
    initialised: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    shutil.copytree(initialised, tmp_path, dirs_exist_ok=True)
    before = _store(tmp_path).get_pool("default")
    r = run(["pool", "set", "default", *args], tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in " ".join(r.stderr.split()) and "Traceback" not in r.stderr
    store = _store(tmp_path)
    assert store.get_pool("default") == before
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM jobs")).scalar_one() == 0
    store.engine.dispose()


def test_an_unknown_pool_is_named(initialised: Path, tmp_path: Path) -> None:
    shutil.copytree(initialised, tmp_path, dirs_exist_ok=True)
    r = run(["pool", "set", "nope", "--public"], tmp_path)
    assert r.returncode == 1 and "unknown pool 'nope'" in r.stderr


CHANGE = ["--theta", "900", "-p", "k_max=60", "--reason", "retune"]
PATCH = {"theta": 900, "params": {"k_max": 60}, "reason": "retune"}


def _the_same_as_the_apis(admin: httpx.Client, server: httpx.Client, pool: str, twin: str) -> None:
    """The pool as `synelo pool set` left it equals its twin, fed the same rounds and
    re-rated by the API's PATCH, as the running service shows both."""
    wait(admin, twin, admin.patch(f"/v1/pools/{twin}", json=PATCH))
    shown, expected = admin.get(f"/v1/pools/{pool}").json(), admin.get(f"/v1/pools/{twin}").json()
    for key in ("model", "theta", "params", "rounds", "autotune", "public"):
        assert shown[key] == expected[key], key
    assert everyone(server, pool, stamps=False, players=PLAYERS) == everyone(
        server, twin, stamps=False, players=PLAYERS
    )


def test_a_rerate_runs_in_the_command_beside_the_running_service(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0
    bodies = random_rounds(120, seed=71)
    with synelo_serve(tmp_path, **NO_LIMITS) as served:
        admin, server = _clients(served.url)
        pool, twin = new_pool(admin, "synelo"), new_pool(admin, "synelo")
        for name in (pool, twin):
            play(server, name, bodies)
        r = run(["pool", "set", pool, "--public", *CHANGE], tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        shown = [" ".join(line.split()) for line in r.stderr.splitlines()]
        assert shown[0] == f"re-rating pool {pool}: rating, 0 of 120 rounds"
        assert shown[-1] == f"re-rating pool {pool}: swapping, 120 of 120 rounds"
        said = " ".join(r.stdout.split())
        assert f"re-rated pool {pool}: 120 rounds" in said
        # a pool made by the API without a word on it auto-tunes its Θ (as its twin does)
        assert f"pool {pool}: public, model synelo, Θ 900, auto-tuning {{'every': 5000" in said
        admin.patch(f"/v1/pools/{twin}", json={"public": True})
        _the_same_as_the_apis(admin, server, pool, twin)
        job = admin.get(f"/v1/pools/{pool}/jobs/1")
        assert job.status_code == 200 and job.json()["actor"] == WHO
        assert (job.json()["status"], job.json()["kind"]) == ("done", "patch")


def _jobs(engine: Engine, pool: str) -> list[tuple[str, str | None]]:
    with engine.connect() as conn:
        return [
            (status, error)
            for status, error in conn.execute(
                text(
                    "SELECT j.status, j.error FROM jobs j JOIN pools p ON p.id = j.pool_id"
                    " WHERE p.name = :n ORDER BY j.id"
                ),
                {"n": pool},
            )
        ]


@pytest.mark.postgres
def test_a_killed_or_interrupted_rerate_leaves_the_pool_as_it_was(
    pg_schema_url: str, tmp_path: Path
) -> None:
    """The job is held inside its swap's transaction (the test locks one of the pool's
    players), then its command is killed (SIGKILL); the next one is interrupted (SIGINT),
    and the one after that stopped (SIGTERM), that one with --public too. Each time the
    running service shows the pool as it was, but for the visibility set when the job
    started; an interrupted command says so; the next `pool set` takes the killed job for
    dead at once, and the last, not held, re-rates the pool as the API does."""
    with own_pg_schema() as url:
        env = {"SYNELO_DATABASE_URL": url}
        assert run(["init"], tmp_path, **env).returncode == 0
        bodies = random_rounds(120, seed=72)
        engine = create_store_engine(url, pool_size=1)
        full = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
        with synelo_serve(tmp_path, **env, **NO_LIMITS) as served:
            admin, server = _clients(served.url)
            pool, twin = new_pool(admin, "synelo"), new_pool(admin, "synelo")
            for name in (pool, twin):
                play(server, name, bodies)
            shown = admin.get(f"/v1/pools/{pool}").json()
            rated = everyone(server, pool, players=PLAYERS)
            for stop in (signal.SIGKILL, signal.SIGINT, signal.SIGTERM):
                hold = SwapLock(url, pool)
                opened = ["--public"] if stop == signal.SIGTERM else []  # set at once
                try:
                    command = subprocess.Popen(
                        [*SYNELO, "pool", "set", pool, *CHANGE, *opened],
                        env={**full, **env, "SYNELO_DATA_DIR": str(tmp_path)},
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                    hold.waited_on()  # the swap waits, inside it
                    command.send_signal(stop)
                    out, err = command.communicate(timeout=60)
                finally:
                    hold.release()
                if stop != signal.SIGKILL:  # Ctrl-C, or SIGTERM (systemd's, kill's)
                    assert command.returncode == 130, out + err
                    said = " ".join(err.split())
                    if opened:  # it said the pool "keeps its settings as they were"
                        assert (
                            f"interrupted: pool '{pool}' is public now (set at once, when the "
                            "job started), but keeps its ratings and its other settings" in said
                        )
                        shown["public"] = True
                    else:
                        assert f"interrupted: pool '{pool}' keeps its ratings and settings" in said
                else:
                    assert command.returncode == -signal.SIGKILL
                assert admin.get(f"/v1/pools/{pool}").json() == shown
                assert everyone(server, pool, players=PLAYERS) == rated
            killed, *interrupted = _jobs(engine, pool)
            assert killed[0] == "failed" and "abandoned: its process" in str(killed[1])
            stopped = ("failed", "interrupted: the command that ran it was stopped")
            assert interrupted == [stopped, stopped]
            done = run(["pool", "set", pool, *CHANGE], tmp_path, **env)
            assert done.returncode == 0, done.stdout + done.stderr
            admin.patch(f"/v1/pools/{twin}", json={"public": True})
            _the_same_as_the_apis(admin, server, pool, twin)
        engine.dispose()


def test_a_temperature_set_is_named_and_a_bad_one_changes_nothing(
    initialised: Path, tmp_path: Path
) -> None:
    """`-p temperature=…` (F1t's T): the line that confirms the change names T; a T out of
    bounds, not finite or not a number is refused naming the option, the pool unchanged."""
    shutil.copytree(initialised, tmp_path, dirs_exist_ok=True)
    for bad, said in (
        ("0", "greater than or equal to 0.05"),
        ("1e9", "less than or equal to 20"),
        ("NaN", "finite number"),
        ("warm", "valid number"),
    ):
        refused = run(["pool", "set", "default", "-p", f"temperature={bad}"], tmp_path)
        assert refused.returncode == 2, refused.stdout
        assert "--param temperature" in refused.stderr and said in refused.stderr
        assert _store(tmp_path).get_pool("default").params.temperature == 1.0
    done = run(["pool", "set", "default", "-p", "temperature=2.5"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Θ 1200, T 2.5, auto-tuning" in " ".join(done.stdout.split())
    assert _store(tmp_path).get_pool("default").params.temperature == 2.5
