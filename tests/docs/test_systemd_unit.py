"""deploy/synelo.service passes `systemd-analyze verify` (the unit the operator's guide shows)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "synelo.service"
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
