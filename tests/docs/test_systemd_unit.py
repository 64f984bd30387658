"""deploy/synelo.service and the nightly back-up's units pass `systemd-analyze verify` (the
units the operator's guide shows), and the back-up's commands do what the guide says."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "synelo.service"
BACKUP = ROOT / "deploy" / "synelo-backup.service"
TIMER = ROOT / "deploy" / "synelo-backup.timer"
BACKUPS = "/var/backups/synelo"  # where the guide keeps the nightly back-ups
INSTALLED = "/opt/synelo/.venv/bin/synelo"  # where the guide installs synelo
ANALYZE = shutil.which("systemd-analyze")


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_unit_verifies_without_warnings(tmp_path: Path) -> None:
    text = UNIT.read_text(encoding="utf-8")
    assert f"ExecStart={INSTALLED} serve" in text
    # init, not migrate alone: a PostgreSQL database set in synelo.env gets its `default`
    # pool and the token files' tokens before the first start (issue 37)
    assert f"ExecStartPre={INSTALLED} init\n" in text
    # verify checks that every Exec* binary exists: point them at this venv's synelo
    synelo = Path(sys.executable).with_name("synelo")
    assert synelo.exists(), synelo
    copy = tmp_path / "synelo.service"
    copy.write_text(text.replace(INSTALLED, str(synelo)), encoding="utf-8")
    r = subprocess.run(
        [ANALYZE, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    output = r.stdout + r.stderr
    assert r.returncode == 0, output
    # unknown keys or bad values are only warnings (exit 0): any line about the unit fails
    assert "synelo.service" not in output, output


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_verify_catches_a_broken_unit(tmp_path: Path) -> None:
    """The check above can fail: a misspelt key in the same unit is reported."""
    synelo = Path(sys.executable).with_name("synelo")
    text = UNIT.read_text(encoding="utf-8").replace(INSTALLED, str(synelo))
    copy = tmp_path / "synelo.service"
    copy.write_text(text.replace("Restart=on-failure", "Restrat=on-failure"), encoding="utf-8")
    r = subprocess.run(
        [ANALYZE, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    assert "Unknown key" in r.stdout + r.stderr


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_the_backup_units_verify_without_warnings(tmp_path: Path) -> None:
    synelo = Path(sys.executable).with_name("synelo")
    for unit in (BACKUP, TIMER):
        text = unit.read_text(encoding="utf-8").replace(INSTALLED, str(synelo))
        (tmp_path / unit.name).write_text(text, encoding="utf-8")
    r = subprocess.run(
        [ANALYZE, "verify", str(tmp_path / BACKUP.name), str(tmp_path / TIMER.name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = r.stdout + r.stderr
    assert r.returncode == 0, output
    assert "synelo-backup" not in output, output


def _command(key: str, folder: Path) -> list[str]:
    """The unit's `key=` command line as systemd runs it (`%%` is `%`, `$$` is `$`), with
    the installed synelo and the back-up folder moved to this venv's and `folder`."""
    line = re.search(rf"^{key}=(.*)$", BACKUP.read_text(encoding="utf-8"), re.M)
    assert line, key
    text = line.group(1).replace("%%", "%").replace("$$", "$")
    text = text.replace(INSTALLED, str(Path(sys.executable).with_name("synelo")))
    return shlex.split(text.replace(BACKUPS, str(folder)))


def test_the_backup_service_backs_up_and_keeps_14_days(tmp_path: Path) -> None:
    """ExecStart, as written, writes a new back-up of the data folder the unit names; then
    ExecStartPost deletes the back-ups older than 14 days, and nothing else."""
    data, backups = tmp_path / "data", tmp_path / "backups"
    backups.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env["SYNELO_DATA_DIR"] = str(data)
    assert "Environment=SYNELO_DATA_DIR=/var/lib/synelo" in BACKUP.read_text()
    init = subprocess.run(
        [sys.executable, "-m", "synelo", "init"], env=env, capture_output=True, timeout=120
    )
    assert init.returncode == 0, init.stderr
    old, notes = backups / "synelo-20200101T031700Z.backup", backups / "notes.txt"
    for kept in (old, notes):
        kept.write_text("x")
        month_ago = time.time() - 30 * 86400
        os.utime(kept, (month_ago, month_ago))
    for key in ("ExecStart", "ExecStartPost"):
        done = subprocess.run(
            _command(key, backups), cwd=data, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
    made = sorted(p.name for p in backups.iterdir())
    assert len(made) == 2 and "notes.txt" in made, made
    new = backups / next(name for name in made if name != "notes.txt")
    assert re.fullmatch(r"synelo-\d{8}T\d{6}Z\.backup", new.name)
    assert new.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(new) as copy:
        assert copy.execute("SELECT name FROM pools").fetchall() == [("default",)]
