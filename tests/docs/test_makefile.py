"""README.md's two commands on a fresh clone: `make run` installs Python packages only, and
`make test` (with its setup) also installs Debian's Chromium, which the page tests drive.

`make -n -B` prints what each target would run on a machine where nothing was made yet (no
venv, no Chromium), without running any of it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(*targets: str) -> str:
    """The commands `make` would run for `targets` on a fresh clone."""
    done = subprocess.run(
        ["make", "-n", "-B", *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_no_browser() -> None:
    commands = dry_run("run")
    assert 'pip install --quiet -e ".[dev]"' in commands
    assert ".venv/bin/synelo init" in commands and ".venv/bin/synelo serve" in commands
    assert "apt-get" not in commands and "chromium" not in commands.lower()


@pytest.mark.parametrize("target", ["test", "check-tests"])
def test_make_test_installs_chromium(target: str) -> None:
    commands = dry_run(target)
    assert "apt-get install -y -qq chromium" in commands


def test_the_readme_says_what_each_command_installs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Two commands") : text.index("## A five-minute tour")]
    said = " ".join(section.split())
    assert re.search(r"`make run` installs Python packages only", said)
    assert re.search(r"`make test` also installs Debian's Chromium", said)
