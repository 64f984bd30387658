"""The positional and sectors-edge models under `synelo replay` on their simulated worlds:
per-position Spearman against the hidden offense and defense, the calibration table of the
20 results, and a clear error for a history that lacks the fields a model needs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synelo.cli import app
from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import Match
from synelo.evaluation.replay import replay
from synelo.evaluation.results import ResultCalibration
from synelo.sim.foosball import FoosballConfig
from synelo.sim.foosball import generate as foosball


def test_the_result_calibration_by_hand() -> None:
    calibration = ResultCalibration(2)  # a game to 2: 0:2, 1:2, 2:1, 2:0
    calibration.add([0.1, 0.2, 0.3, 0.4], 3)
    calibration.add([0.4, 0.3, 0.2, 0.1], 1)
    assert calibration.matches == 2
    assert calibration.log_loss == pytest.approx(-(math.log(0.4) + math.log(0.3)) / 2)
    assert calibration.uniform_log_loss == pytest.approx(math.log(4))
    rows = calibration.to_json()["results"]
    assert [r["result"] for r in rows] == ["0:2", "1:2", "2:1", "2:0"]
    assert [r["predicted"] for r in rows] == pytest.approx([0.25, 0.25, 0.25, 0.25])
    assert [r["observed"] for r in rows] == [0.0, 0.5, 0.0, 0.5]


def test_a_replay_scores_each_position_and_every_result() -> None:
    lines, truth = foosball(FoosballConfig(players=16, matches=600, seed=4))
    matches = [
        Match(
            line["id"],
            tuple(line["teams"]["A"]),
            tuple(line["teams"]["B"]),
            line["winner"],
            scores=(line["scores"]["A"], line["scores"]["B"]),
            details={"positions": line["positions"]},
        )
        for line in lines[1:]
    ]
    model = create_replay("positional", {}, HistoryInfo(2))
    result = replay(model, matches)
    traits = model.traits()
    assert set(traits) == {"offense", "defense"}
    assert all(len(traits[q]) == 16 for q in traits)  # everyone played both
    calibration = model.result_calibration()
    assert calibration is not None and calibration.matches == 600
    assert sum(calibration.observed) == 600
    assert sum(calibration.predicted) == pytest.approx(600, abs=1e-9)  # each game sums to 1
    # the rated offense finds the hidden offense better than chance would
    hidden = {p: v["offense"] for p, v in truth["players"].items()}
    rated = traits["offense"]
    order = sorted(rated, key=rated.__getitem__)
    top, bottom = order[-4:], order[:4]
    assert sum(hidden[p] for p in top) > sum(hidden[p] for p in bottom)
    assert result.overall.matches == 600


def test_replay_prints_the_table_and_refuses_a_history_without_positions(
    tmp_path: Path,
) -> None:
    history, truth, out = tmp_path / "f.jsonl", tmp_path / "t.json", tmp_path / "r.json"
    runner = CliRunner()
    made = runner.invoke(
        app,
        ["simulate-history", str(history), "--truth", str(truth), "--world", "foosball"]
        + ["--matches", "300", "--players", "12"],
    )
    assert made.exit_code == 0, made.output
    scored = runner.invoke(
        app,
        ["replay", str(history), "--model", "positional", "--truth", str(truth)]
        + ["--json", str(out)],
    )
    assert scored.exit_code == 0, scored.output
    assert "predicted results over 300 scored matches" in scored.output
    assert "offense vs hidden offense" in scored.output
    written = json.loads(out.read_text())
    assert len(written["result_calibration"]["results"]) == 20
    assert written["truth"]["traits"]["defense"]["players"] == 12

    bare = tmp_path / "bare.jsonl"
    bare.write_text('{"id": "m1", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A"}\n')
    for model in ("positional", "sectors-edge"):
        refused = runner.invoke(app, ["replay", str(bare), "--model", model])
        assert refused.exit_code == 1
        assert "match 'm1'" in refused.output and "Traceback" not in refused.output
