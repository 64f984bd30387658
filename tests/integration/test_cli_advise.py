"""`synelo advise` on the command line: on a pool of the database (rated in by `synelo pool
import`) and on a history file, with its table, verdict, switch command and JSON; too few
rounds, no such pool and a wrong choice of arguments are messages, never tracebacks."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import orjson
from scripts.advise_worlds import team_world

from synelo.evaluation.advise import MIN_ROUNDS, general_models
from tests.integration.test_cli import run


def _history(path: Path, rounds: int) -> Path:
    header, matches = team_world(players=20, rounds=rounds, team_size=2, drift_sd=0.1)
    lines = [{"synelo_history": 1, **header}]
    lines += [
        {
            "id": m.id,
            "teams": {"A": list(m.team_a), "B": list(m.team_b)},
            "winner": m.winner,
            "time": m.time.isoformat() if m.time else None,
        }
        for m in matches
    ]
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    return path


def test_advise_on_a_pool_and_on_a_history_file(tmp_path: Path) -> None:
    history = _history(tmp_path / "drift.jsonl", MIN_ROUNDS + 40)
    assert run(["init"], tmp_path).returncode == 0
    made = run(["pool", "create", "ladder", "--team-size", "2", "--text-ids"], tmp_path)
    assert made.returncode == 0, made.stderr
    imported = run(["pool", "import", "ladder", str(history)], tmp_path)
    assert imported.returncode == 0, imported.stderr
    out = tmp_path / "advice.json"
    done = run(["advise", "ladder", "--json", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    advice = orjson.loads(out.read_bytes())
    assert advice["source"] == "pool ladder" and advice["current_model"] == "synelo"
    assert advice["rounds"] == MIN_ROUNDS + 40
    assert advice["recommended"]["model"] in general_models()
    assert advice["verdict"] in " ".join(done.stdout.split())
    for model in [*general_models(), "elo"]:
        assert model in done.stdout
    if advice["switch"] is not None:  # the command it prints is one `pool set` takes
        line = next(x for x in done.stdout.splitlines() if x.startswith("To switch: "))
        command = shlex.split(line.removeprefix("To switch: "))
        assert command[:4] == ["synelo", "pool", "set", "ladder"]
        switched = run(command[1:], tmp_path)
        assert switched.returncode == 0, switched.stderr
    else:
        assert advice["keep"] or advice["recommended"]["setting"] != "current"
    # the same rounds from the file: the same rows at the defaults (no pool: no current row)
    from_file = tmp_path / "file.json"
    again = run(["advise", "--history", str(history), "--json", str(from_file)], tmp_path)
    assert again.returncode == 0, again.stderr
    rows = orjson.loads(from_file.read_bytes())["rows"]
    assert {r["setting"] for r in rows} == {"defaults", "tuned"}
    pooled = {(r["model"], r["setting"]): r["log_loss"] for r in advice["rows"]}
    for r in rows:
        if r["setting"] == "defaults":
            assert r["log_loss"] == pooled[(r["model"], "defaults")]


def test_advise_refuses_with_a_message(tmp_path: Path) -> None:
    short = _history(tmp_path / "short.jsonl", MIN_ROUNDS - 50)
    few = run(["advise", "--history", str(short)], tmp_path)
    assert few.returncode == 1
    assert f"needs at least {MIN_ROUNDS} rounds" in few.stderr
    assert "Traceback" not in few.stderr
    assert run(["init"], tmp_path).returncode == 0
    unknown = run(["advise", "no-such-pool"], tmp_path)
    assert unknown.returncode == 1 and "unknown pool 'no-such-pool'" in unknown.stderr
    both = run(["advise", "default", "--history", str(short)], tmp_path)
    assert both.returncode == 1 and "not both" in both.stderr
    assert run(["advise"], tmp_path).returncode == 1


def test_advise_checks_its_json_path_before_it_runs(tmp_path: Path) -> None:
    """A --json path that cannot be written stops the command at once, with a message."""
    history = _history(tmp_path / "h.jsonl", MIN_ROUNDS + 10)
    missing = run(["advise", "--history", str(history), "--json", "no/such/a.json"], tmp_path)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "no/such/a.json" in missing.stderr and "advising" not in missing.stdout
    folder = run(["advise", "--history", str(history), "--json", str(tmp_path)], tmp_path)
    assert folder.returncode != 0 and "Traceback" not in folder.stderr
    if os.geteuid() == 0:  # root writes into any folder: no folder it may not write
        return
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        denied = run(
            ["advise", "--history", str(history), "--json", str(locked / "a.json")], tmp_path
        )
    finally:
        locked.chmod(0o700)
    assert denied.returncode != 0 and "not writable" in denied.stderr
