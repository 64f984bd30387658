"""`synelo import`, `synelo replay` and `synelo tune` as an operator runs them."""

from __future__ import annotations

import json
from pathlib import Path

from synelo.store.engine import create_store_engine
from synelo.store.repository import Store
from synelo.store.typedefs import RoundReport
from tests.integration.test_cli import run

DATA = Path(__file__).parents[1] / "data" / "frc"


def test_import_frc_replay_and_tune(tmp_path: Path) -> None:
    history = tmp_path / "frc.jsonl"
    r = run(
        [
            "import",
            "frc",
            str(DATA / "2016.csv"),
            str(DATA / "2015.csv"),
            str(DATA / "2004.csv"),
            "-o",
            str(history),
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "skipped 30: 2015 (not head-to-head)" in r.stdout
    lines = history.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["synelo_history"] == 1 and any("2015" in n for n in header["notes"])
    assert json.loads(lines[1])["id"] == "2004arc_qm1"  # 2004 first, whatever the order given

    out, png = tmp_path / "r.json", tmp_path / "r.png"
    r = run(
        [
            "replay",
            str(history),
            "--model",
            "openskill-pl",
            "--warmup",
            "20",
            "--json",
            str(out),
            "--plot",
            str(png),
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "openskill-pl" in r.stdout and "size 2v2" in r.stdout and "type playoff" in r.stdout
    data = json.loads(out.read_text())
    assert data["matches"] == len(lines) - 1 - 20
    for key in ("accuracy", "log_loss", "brier", "ece", "matches_per_s"):
        assert isinstance(data[key], float)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    r = run(
        ["tune", str(history), "--model", "synelo", "--iterations", "3", "--json", str(out)],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    tuned = json.loads(out.read_text())
    assert set(tuned["fitted"]) == {"theta"} and tuned["defaults"]["theta"] == 800.0
    assert tuned["test"]["fitted"]["matches"] == tuned["test_matches"]


def test_replay_reports_bad_lines_and_bad_options(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(
        '{"id": "1", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A"}\n'
        "oops\n"
        '{"id": "2", "teams": {"A": ["a"], "B": ["b"]}, "winner": "B"}\n'
    )
    r = run(["replay", str(history), "--model", "elo"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "line 2" in r.stderr
    strict = run(["replay", str(history), "--strict"], tmp_path)
    assert strict.returncode == 1 and "line 2" in strict.stderr
    assert run(["replay", str(history), "-m", "nope"], tmp_path).returncode == 1
    bad = run(["replay", str(history), "-p", "theta"], tmp_path)
    assert bad.returncode == 1 and "KEY=VALUE" in bad.stderr
    bad = run(["replay", str(history), "-p", "colour=1"], tmp_path)
    assert bad.returncode == 1 and "no parameter" in bad.stderr


def test_import_journal_from_the_database(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0
    store = Store(create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}"))
    rated = [
        store.submit_round(
            "default",
            RoundReport(
                f"r{i}", "s", "m", "AB"[i % 2], ("1", "2"), ("3", "4"), ("1", "2"), ("3", "4")
            ),
        ).round
        for i in range(5)
    ]
    out = tmp_path / "journal.jsonl"
    r = run(["import", "journal", "--pool", "default", "-o", str(out)], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["params"]["theta"] == 2400.0
    assert [x["id"] for x in lines[1:]] == [r.round_id for r in rated]
    replayed = tmp_path / "replay.json"
    assert run(["replay", str(out), "--json", str(replayed)], tmp_path).returncode == 0
    assert json.loads(replayed.read_text())["parameters"]["theta"] == 2400.0
    assert run(["import", "journal", "--pool", "nope", "-o", str(out)], tmp_path).returncode == 1
