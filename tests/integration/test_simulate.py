"""`synelo simulate` end to end: the CI-size target run (fixed seed, in-process service, every
fault) and the command against a running service with --url and SYNELO_TOKEN."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from synelo.cli import app
from synelo.sim.plots import PLOTS
from synelo.sim.run import SimConfig, simulate, world_theta
from tests.conftest import ADMIN, LiveServer

SUMMARY_FIELDS = {
    "rounds",
    "rounds_applied",
    "journal_rows",
    "expected_journal_rows",
    "duplicate_rows",
    "spearman",
    "brier_recent",
    "brier_truth_recent",
    "pool_theta",
    "world_theta",
}


def test_ci_target_ranks_and_exactly_once_under_faults(tmp_path: Path) -> None:
    """Spearman ≥ 0.90 for players with ≥ 100 rounds, and every round applied exactly once
    while 10 % of reports fail at first, 2 % of answers are lost after apply, the service is
    unreachable for 8 rounds and restarted once. (2v2: ~670 rounds a player in 4,000 rounds;
    seeds 1–7 gave ρ 0.903–0.970 here.)"""
    config = SimConfig(
        players=24,
        servers=3,
        team_size=2,
        rounds=4000,
        seed=1,
        out=tmp_path,
        fail_first=0.10,
        lose_responses=0.02,
        outages=[(1333, 8)],
        restarts=[2666],
        progress=False,
    )
    s = simulate(config)
    assert set(s) >= SUMMARY_FIELDS
    # 2v2: 400·floor(3/2); Θ 100·2 throughout, T 1 at first, then what an adopted auto-tune
    # fitted (F1t; A1: at 200, 400, 800, 1600 and 3200 rounds, whatever the restart)
    adopted = [t["fitted"]["temperature"] for t in s["autotunes"] if t["adopted"]]
    assert (s["world_theta"], s["pool_theta"]) == (400, 200)
    assert s["pool_temperature"] == (adopted[-1] if adopted else 1.0)
    assert [t["after_round"] for t in s["autotunes"]] == [200, 400, 800, 1600, 3200]
    assert s["spearman_players"] == 24 and s["spearman"] >= 0.90
    # the whole-history MAP of the same rounds: the best any rating could rank them
    assert s["map_rounds"] == 4000 and s["map_spearman"] >= s["spearman"] - 0.05
    assert s["spearman_over_map"] == s["pool_spearman_same_players"] / s["map_spearman"]
    # the MAP refitted online (each block predicted from the rounds before it): no better
    # than the true P beyond the noise of 2,000 rounds
    assert s["map_brier_recent"] >= s["brier_truth_recent"] - 0.01
    assert s["rounds"] == s["rounds_applied"] == 4000
    assert s["journal_rows"] == s["expected_journal_rows"] and s["duplicate_rows"] == 0
    assert s["reports_dropped"] == 0 and s["reports_unanswered"] == 0
    faults = s["faults"]
    assert faults["restarts"] == 1
    assert faults["proxy"]["fail"] > 300 and faults["proxy"]["drop"] > 40
    assert faults["proxy"]["down"] > 0
    assert s["retries_already_applied"] > 40  # lost answers whose retry changed nothing
    assert json.loads((tmp_path / "summary.json").read_text())["journal_rows"] == s["journal_rows"]
    for name in PLOTS:
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_command_against_a_running_service(live: LiveServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "simulate",
            "--players",
            "12",
            "--servers",
            "2",
            "--team-size",
            "2",
            "--rounds",
            "60",
            "--seed",
            "2",
            "--mode",
            "arena",
            "--out",
            str(out),
            "--url",
            live.url,
            "--thrower",
            "--smurf",
            "--smurfs",
            "2",
            "--world-theta",
            "900",
            "--pool-theta",
            "500",
            "--no-progress",
        ],
        env={"SYNELO_TOKEN": ADMIN},
    )
    assert result.exit_code == 0, result.output
    s = json.loads((out / "summary.json").read_text())
    assert s["rounds"] == s["rounds_applied"] == 60
    assert s["journal_rows"] == s["expected_journal_rows"] and s["duplicate_rows"] == 0
    assert [a["role"] for a in s["adversaries"]] == ["thrower", "smurf", "smurf"]
    assert (s["world_theta"], s["pool_theta"]) == (900.0, 500.0)
    thrower = next(a for a in s["adversaries"] if a["role"] == "thrower")
    # from round 30 of 60 the thrower loses on purpose; it is always on its server
    assert thrower["thrown_rounds"] > 0 and thrower["throw_from"] >= 30
    smurf = next(a for a in s["adversaries"] if a["role"] == "smurf")
    assert smurf["skill"] == 1600.0  # R_0 + 600
    assert "rounds_applied" in result.output


def test_the_world_keeps_its_own_scale(tmp_path: Path) -> None:
    """The world's winners come from its own Θ, never the pool's: a pool Θ chosen smaller
    must not make the simulated game less random."""
    assert world_theta(SimConfig(team_size=12)) == 2400
    assert world_theta(SimConfig(team_size=6)) == 1200
    assert world_theta(SimConfig(team_size=6, world_theta=900.0)) == 900.0
    config = SimConfig(
        players=8, servers=1, team_size=2, rounds=20, seed=3, out=tmp_path, progress=False
    )
    config.world_theta = 5000.0
    s = simulate(config)
    assert (s["world_theta"], s["pool_theta"]) == (5000.0, 200.0)
    assert s["config"]["world_theta"] == 5000.0


def test_command_refuses_bad_options(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["simulate", "--mode", "deathmatch", "--out", str(tmp_path)])
    assert bad.exit_code == 1 and "unknown mode" in bad.output
    no_token = runner.invoke(
        app,
        ["simulate", "--url", "http://127.0.0.1:9", "--out", str(tmp_path), "--rounds", "1"],
        env={"SYNELO_TOKEN": ""},
    )
    assert no_token.exit_code == 1 and "admin token" in no_token.output
