"""`synelo import`, `synelo replay` and `synelo tune` as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from synelo.domain import RoundReport
from synelo.store.engine import create_store_engine
from synelo.store.repository import Store
from tests.integration.test_cli import SYNELO, run

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
    seasons = [line for line in lines if json.loads(line).get("event") == "season"]
    assert len(seasons) == 1  # 2016 is a new season after 2004 (2015 is skipped)
    assert data["matches"] == len(lines) - 1 - len(seasons) - 20
    for key in ("accuracy", "log_loss", "brier", "ece", "matches_per_s"):
        assert isinstance(data[key], float)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    r = run(
        ["tune", str(history), "--model", "synelo", "--iterations", "3", "--json", str(out)],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    tuned = json.loads(out.read_text())
    # 2004 (2v2) comes first: the default starts at 100·2 and rises with the first 3v3
    assert set(tuned["fitted"]) == {"theta"} and tuned["defaults"]["theta"] == 200.0
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
    assert lines[0]["params"]["theta"] == 1200.0  # the default pool: team size 12
    assert [x["id"] for x in lines[1:]] == [r.round_id for r in rated]
    replayed = tmp_path / "replay.json"
    assert run(["replay", str(out), "--json", str(replayed)], tmp_path).returncode == 0
    assert json.loads(replayed.read_text())["parameters"]["theta"] == 1200.0
    assert run(["import", "journal", "--pool", "nope", "-o", str(out)], tmp_path).returncode == 1


def piped(args: list[str], data: Path) -> subprocess.CompletedProcess[str]:
    """The command with stdout a pipe and no COLUMNS: what `synelo … | cat` gets."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS" and not k.startswith("SYNELO_")}
    env["SYNELO_DATA_DIR"] = str(data)
    return subprocess.run(
        [*SYNELO, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_tables_keep_their_width_when_piped(tmp_path: Path) -> None:
    """Rich would squeeze the tune table into 80 columns, wrapping every header; piped or
    written to a file, each table gets the width it needs: one line per header and row."""
    history = tmp_path / "frc.jsonl"
    assert (
        run(["import", "frc", str(DATA / "2016.csv"), "-o", str(history)], tmp_path).returncode == 0
    )
    r = piped(["tune", str(history), "-m", "elo", "--fit", "k", "--iterations", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    (header,) = [x for x in lines if "parameters" in x]
    assert all(
        c in header for c in ("train log loss", "test accuracy", "test log loss", "test ECE")
    )
    assert max(map(len, lines)) > 80
    (fitted,) = [x for x in lines if "fitted: k " in x]
    assert fitted.count("0.") >= 5  # the train log loss and the test scores on the same line
    r = piped(["replay", str(history), "-m", "elo"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert any("scored matches" in x and "ECE" in x for x in r.stdout.splitlines())
    assert any("predicted P(A)" in x and "observed (tie = 0.5)" in x for x in r.stdout.splitlines())


def test_tune_holds_theta_of_elo_and_warns_on_a_bound(tmp_path: Path) -> None:
    """`--fit k --fit theta` fits K alone and says why; a Θ fitted onto its bound is a
    warning naming the parameter and the bound."""
    history = tmp_path / "frc.jsonl"
    assert (
        run(["import", "frc", str(DATA / "2016.csv"), "-o", str(history)], tmp_path).returncode == 0
    )
    out = tmp_path / "t.json"
    r = run(
        ["tune", str(history), "-m", "elo", "--fit", "k", "--fit", "theta", "--iterations", "3"]
        + ["--json", str(out)],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "theta held at 400, not fitted" in r.stdout and "warning" not in r.stderr
    tuned = json.loads(out.read_text())
    assert set(tuned["fitted"]) == {"k"} and tuned["held"][0]["name"] == "theta"
    assert tuned["held"][0]["fitted_instead"] == "k" and tuned["on_bound"] == []

    one_sided = tmp_path / "a.jsonl"
    one_sided.write_text(
        "".join(
            json.dumps({"id": str(i), "teams": {"A": ["a", "b"], "B": ["c", "d"]}, "winner": "A"})
            + "\n"
            for i in range(200)
        )
    )
    r = run(
        ["tune", str(one_sided), "-m", "elo", "--iterations", "6", "--json", str(out)], tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert "warning: theta ended on its lower search bound 50" in r.stderr
    assert "the optimum may lie below it" in r.stderr
    assert json.loads(out.read_text())["on_bound"][0]["side"] == "lower"


def test_a_warmup_over_the_history_is_an_error(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(
        "".join(
            json.dumps({"id": str(i), "teams": {"A": ["a"], "B": ["b"]}, "winner": "AB"[i % 2]})
            + "\n"
            for i in range(10)
        )
    )
    for warmup in ("10", "11"):
        r = run(["replay", str(history), "-m", "elo", "--warmup", warmup], tmp_path)
        assert r.returncode == 1 and r.stdout == ""
        assert f"--warmup {warmup} is at or above the 10 matches" in r.stderr
    assert run(["replay", str(history), "-m", "elo", "--warmup", "9"], tmp_path).returncode == 0
    r = run(["tune", str(history), "-m", "elo", "--warmup", "7"], tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert "warmup 7 is at or above the number of training matches (7 of 10)" in r.stderr


def test_replay_writes_each_players_display_rating(tmp_path: Path) -> None:
    """`--ratings-out` writes {player: rating} as a pool of the model shows it: SynElo's whole
    rating, Elo's zero-sum rating, WHR's Elo of the last day (what the replay in process
    gives), for every team of the history. In process (CliRunner), to spare three starts."""
    from typer.testing import CliRunner

    from synelo.cli import app
    from synelo.evaluation.adapters import create_replay
    from synelo.evaluation.history import read_history
    from synelo.evaluation.replay import predict_all

    history = tmp_path / "frc.jsonl"
    runner = CliRunner()
    made = runner.invoke(app, ["import", "frc", str(DATA / "2016.csv"), "-o", str(history)])
    assert made.exit_code == 0, made.output
    matches = read_history(history).matches
    teams = {p for m in matches for p in (*m.team_a, *m.team_b)}
    shown = {}
    for model in ("synelo", "elo", "whr"):
        out = tmp_path / f"{model}.json"
        r = runner.invoke(app, ["replay", str(history), "-m", model, "--ratings-out", str(out)])
        assert r.exit_code == 0, r.output
        assert f"wrote {out}" in r.output.replace("\n", "")
        shown[model] = json.loads(out.read_text())
        assert set(shown[model]) == teams
    synelo = shown["synelo"]
    assert all(isinstance(r, int) for r in synelo.values()) and len(set(synelo.values())) > 20
    # Elo moves both sides by K·(S − P): with even sides the ratings sum to where they began
    assert sum(shown["elo"].values()) == pytest.approx(1000.0 * len(teams))
    whr = create_replay("whr")
    predict_all(whr, matches)
    assert shown["whr"] == pytest.approx(whr.display_ratings())
    best = max(shown["whr"], key=shown["whr"].__getitem__)
    won = [m.team_a if m.winner == "A" else m.team_b for m in matches if m.winner != "draw"]
    wins = {p: sum(p in side for side in won) for p in teams}
    assert wins[best] > sorted(wins.values())[len(wins) // 2]  # won more than most teams
