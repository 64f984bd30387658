"""python -m plugin.emulate on bad input: a clear message and a non-zero exit, never a
traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def emulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plugin.emulate", "--token", "t", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "notaurl"], "--url must be an http:// or https:// address"),
        (["--url", "http://127.0.0.1:9", "--max-clients", "200"], "--max-clients must be 1..101"),
        (["--url", "http://127.0.0.1:9", "--outage", "0:-3"], "--outage FIRST:ROUNDS"),
        (["--url", "http://127.0.0.1:9", "--json", "/nonexistent/x.json"], "--json: no folder"),
        (["--url", "http://127.0.0.1:9", "--mode", "foo"], "invalid choice: 'foo'"),
    ],
)
def test_bad_arguments_are_refused_before_the_run(args: list[str], message: str) -> None:
    done = emulate(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_convar_is_refused() -> None:
    done = emulate(
        "--url", "http://127.0.0.1:9", "--set", "sm_synelo_nonexistent=1", "--rounds", "0"
    )
    assert done.returncode == 1, done.stderr
    assert "no such ConVar" in done.stderr and "sm_synelo_nonexistent" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_service_that_never_answers_is_said_and_fails_the_run() -> None:
    done = emulate("--url", "http://127.0.0.1:9", "--players", "4", "--rounds", "1")
    assert done.returncode == 2, done.stderr
    assert "the service never answered" in done.stderr and "Traceback" not in done.stderr
