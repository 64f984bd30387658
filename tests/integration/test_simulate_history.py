"""`synelo simulate-history` then `synelo replay --truth`, as an evaluator runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synelo.cli import app


def test_simulate_a_history_then_score_a_replay_against_its_truth(tmp_path: Path) -> None:
    history, truth, out = tmp_path / "h.jsonl", tmp_path / "truth.json", tmp_path / "r.json"
    runner = CliRunner()
    made = runner.invoke(
        app,
        [
            "simulate-history",
            str(history),
            "--truth",
            str(truth),
            "--matches",
            "1500",
            "--players",
            "40",
            "--team-size",
            "4",
            "--seed",
            "3",
        ],
    )
    assert made.exit_code == 0, made.output
    assert "wrote 1,500 matches of 40 players (4v4, seed 3)" in made.output
    assert len(history.read_text().splitlines()) == 1501
    assert len(json.loads(truth.read_text())["players"]) == 40

    scored = runner.invoke(
        app,
        ["replay", str(history), "--model", "elo", "--truth", str(truth), "--json", str(out)],
    )
    assert scored.exit_code == 0, scored.output
    assert "against the hidden truth" in scored.output and "Spearman" in scored.output
    data = json.loads(out.read_text())
    assert data["matches"] == 1500 and 0.3 < data["truth"]["spearman_skill"] <= 1
    assert data["truth"]["skill_players"] == 40
    assert set(data["truth"]["rounds_to_within"]) >= {"median", "p75", "by_tercile", "never"}

    plain = runner.invoke(app, ["replay", str(history), "--model", "elo", "--json", str(out)])
    assert plain.exit_code == 0 and "against the hidden truth" not in plain.output
    assert "truth" not in json.loads(out.read_text())


def test_bad_truth_and_impossible_worlds_are_refused(tmp_path: Path) -> None:
    runner = CliRunner()
    history, truth = tmp_path / "h.jsonl", tmp_path / "t.json"
    small = runner.invoke(
        app, ["simulate-history", str(history), "--truth", str(truth), "--players", "10"]
    )
    assert small.exit_code == 1 and "cannot fill a 8v8" in small.output
    history.write_text('{"id": "1", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A"}\n')
    truth.write_text('{"players": {"a": {"offset": 1}}}')
    bad = runner.invoke(app, ["replay", str(history), "--model", "elo", "--truth", str(truth)])
    assert bad.exit_code == 1 and "needs a numeric skill" in bad.output


def test_hive_learns_the_worlds_offsets_and_commanders_and_tunes(tmp_path: Path) -> None:
    """`hive` on the extended world: better than a coin and than SynElo, offsets and
    commanding skills recovered in the right direction (the header's reference side), and
    `synelo tune` fits c, a, ε and the prior (k, θ)."""
    history, truth = tmp_path / "h.jsonl", tmp_path / "truth.json"
    runner = CliRunner()
    made = runner.invoke(
        app,
        ["simulate-history", str(history), "--truth", str(truth), "--matches", "4000",
         "--players", "40", "--team-size", "4", "--seed", "5"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    scores = {}
    for model in ("hive", "synelo"):
        out = tmp_path / f"{model}.json"
        args = ["replay", str(history), "--model", model, "--truth", str(truth)]
        done = runner.invoke(app, [*args, "--json", str(out)])
        assert done.exit_code == 0, done.output
        scores[model] = json.loads(out.read_text())
    hive = scores["hive"]
    assert hive["log_loss"] < min(0.693, scores["synelo"]["log_loss"])
    assert hive["truth"]["traits"]["offset"]["spearman"] > 0.5
    assert hive["truth"]["traits"]["command"]["spearman"] > 0.5

    short = tmp_path / "short.jsonl"  # the first 800 rounds: tuning replays it ~40 times
    short.write_text("".join(history.read_text().splitlines(keepends=True)[:801]))
    fitted = tmp_path / "tune.json"
    fit = ["--fit", "c", "--fit", "a", "--fit", "eps", "--fit", "k", "--fit", "theta"]
    tuned = runner.invoke(
        app,
        ["tune", str(short), "--model", "hive", *fit, "--iterations", "2", "--json",
         str(fitted)],
    )  # fmt: skip
    assert tuned.exit_code == 0, tuned.output
    assert set(json.loads(fitted.read_text())["fitted"]) == {"c", "a", "eps", "k", "theta"}


def test_an_uneven_world_shows_what_whrs_epad_learns(tmp_path: Path) -> None:
    """`--uneven-share` makes 3v2 rounds whose larger side is ahead (here by a stated bonus
    of 2 in logit on top of its extra fighter); `whr` with its epad predicts those rounds far
    better than without, and as well on the even ones."""
    history, truth = tmp_path / "h.jsonl", tmp_path / "truth.json"
    runner = CliRunner()
    made = runner.invoke(
        app,
        ["simulate-history", str(history), "--truth", str(truth), "--matches", "800"]
        + ["--players", "30", "--team-size", "2", "--seed", "3", "--uneven-share", "0.4"]
        + ["--extra-player-bonus", "2", "--leave-rate", "0"],
    )
    assert made.exit_code == 0, made.output
    assert "(2v2, 40% 3v2, seed 3)" in made.output
    scores = {}
    for epad in ("none", "simple"):
        out = tmp_path / f"{epad}.json"
        r = runner.invoke(
            app, ["replay", str(history), "-m", "whr", "-p", f"epad={epad}", "--json", str(out)]
        )
        assert r.exit_code == 0, r.output
        scores[epad] = json.loads(out.read_text())["by_size"]
    assert set(scores["none"]) == {"2v2", "2v3", "3v2"}
    for size in ("2v3", "3v2"):
        assert scores["simple"][size]["log_loss"] < scores["none"][size]["log_loss"] - 0.2
    assert scores["simple"]["2v2"]["log_loss"] == pytest.approx(
        scores["none"]["2v2"]["log_loss"], abs=0.02
    )


def test_the_shape_switches_write_a_1v1_without_times_sides_or_commanders(
    tmp_path: Path,
) -> None:
    """--team-size 1 --no-commanders --no-sides --no-times: rows without `time`, `sides`
    and `commanders`, one player a side, which a replay reads; a 1v1 with commanders and a
    switch another world does not have are refused with a message."""
    history, truth = tmp_path / "h.jsonl", tmp_path / "t.json"
    runner = CliRunner()
    base = ["simulate-history", str(history), "--truth", str(truth), "--matches", "300"]
    made = runner.invoke(
        app,
        [*base, "--players", "12", "--team-size", "1", "--no-commanders", "--no-sides"]
        + ["--no-times", "--scores"],
    )
    assert made.exit_code == 0, made.output
    said = " ".join(made.output.split())
    assert "(1v1, with scores, no sides, no commanders, no times, seed 1)" in said
    rows = [json.loads(line) for line in history.read_text().splitlines()[1:]]
    assert len(rows) == 300
    assert all(len(r["teams"]["A"]) == len(r["teams"]["B"]) == 1 for r in rows)
    assert not any({"time", "sides", "commanders"} & set(r) for r in rows)
    assert all("scores" in r for r in rows)
    replayed = runner.invoke(app, ["replay", str(history), "--model", "whr"])
    assert replayed.exit_code == 0, replayed.output

    chair = runner.invoke(app, [*base, "--team-size", "1"])
    assert chair.exit_code == 1 and "--no-commanders" in " ".join(chair.output.split())
    assert "Traceback" not in chair.output
    for switch in ("--no-times", "--no-sides", "--no-commanders"):
        other = runner.invoke(app, [*base, "--world", "foosball", switch])
        assert other.exit_code == 1 and f"does not take {switch}" in other.output
    zero = runner.invoke(app, [*base, "--team-size", "0"])
    assert zero.exit_code == 2 and "--team-size" in zero.output
