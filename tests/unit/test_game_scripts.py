"""Every event script in tests/game_scripts/ replayed through synelo.game: the emitted actions
must be exactly the script's expected ones (the SourceMod plugin replays the same files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synelo.game import MODES, load_script, replay

SCRIPTS = sorted((Path(__file__).parent.parent / "game_scripts").glob("*.json"))


def test_there_is_a_script_for_every_mode() -> None:
    assert {load_script(p).mode for p in SCRIPTS} == set(MODES)


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script(path: Path) -> None:
    script = load_script(path)
    assert script.name == path.stem
    assert replay(script) == script.expect
