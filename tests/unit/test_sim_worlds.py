"""The foosball and scoreboard worlds of `synelo simulate-history --world`: the same files
for a seed, histories the reader accepts, the shapes each world promises (2v2 with one
striker and one keeper, play to G; even teams per mode with parties whole), and winners as
often as the stated formulas say, recomputed from the two files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

from synelo.cli import app
from synelo.evaluation.history import read_history
from synelo.evaluation.stats import spearman
from synelo.evaluation.truth import load_truth
from synelo.schemas import RoundIn
from synelo.sim import foosball, scoreboard
from synelo.sim.foosball import FoosballConfig, goal_logit, match_win_probability
from synelo.sim.scoreboard import (
    MODE_SIZES,
    ScoreboardConfig,
    draw_lobby,
    draw_population,
    split_at_random,
    win_probability,
)

FOOS = FoosballConfig(players=12, matches=400, seed=3)
BOARD = ScoreboardConfig(players=60, matches=300, seed=3)


def calibration(predicted: list[float], won: list[bool]) -> tuple[float, list[tuple[float, float]]]:
    """The z-score of the wins against Σ P, and (mean P, win rate) in five bins of P."""
    p, w = np.asarray(predicted), np.asarray(won, dtype=float)
    z = float((w - p).sum() / math.sqrt((p * (1 - p)).sum()))
    order = np.argsort(p)
    return z, [(float(p[b].mean()), float(w[b].mean())) for b in np.array_split(order, 5)]


# foosball


def test_foosball_is_the_same_for_a_seed_and_another_for_another() -> None:
    assert foosball.generate(FOOS) == foosball.generate(FOOS)
    lines, hidden = foosball.generate(FOOS)
    other_lines, other_hidden = foosball.generate(FoosballConfig(players=12, matches=400, seed=4))
    assert other_lines[1:] != lines[1:] and other_hidden["players"] != hidden["players"]


def test_foosball_reads_back_and_every_match_is_a_2v2_to_g(tmp_path: Path) -> None:
    out, truth_path = tmp_path / "f.jsonl", tmp_path / "t.json"
    assert foosball.write(FOOS, out, truth_path) == FOOS.matches
    history = read_history(out, strict=True)
    assert not history.errors and len(history.matches) == FOOS.matches
    assert history.header["source"] == "synelo foosball world"
    assert history.header["team_size"] == 2
    truth = load_truth(truth_path)
    assert set(truth.traits) == {"offense", "defense"} and len(truth.skill) == 12
    assert set(truth.arrival.values()) == {0}
    for player, skill in truth.skill.items():
        mean = (truth.traits["offense"][player] + truth.traits["defense"][player]) / 2
        assert skill == pytest.approx(mean)
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()[1:]]
    for line, match in zip(lines, history.matches, strict=True):
        assert match.size == "2v2" and match.mode == "2v2" and match.scores is not None
        positions = (match.details or {})["positions"]
        for side in (match.team_a, match.team_b):  # the striker listed first
            assert [positions[p] for p in side] == ["offense", "defense"]
        won, lost = match.scores if match.winner == "A" else match.scores[::-1]
        assert won == FOOS.goals and 0 <= lost < FOOS.goals
        body = {k: v for k, v in line.items() if k not in ("id", "time")}
        RoundIn(round_id=line["id"], server_id="sim", started_at=line["time"], **body)
    times = [m.time for m in history.matches]
    assert all(
        a is not None and b is not None and a < b for a, b in zip(times, times[1:], strict=False)
    )


def test_foosball_positions_follow_preference() -> None:
    """With no off-position play, a team whose two players prefer different positions puts
    each where their skill is higher; with off_position 1 always the other way round."""
    for off_position, expected in ((0.0, 1.0), (1.0, 0.0)):
        config = FoosballConfig(players=12, matches=300, off_position=off_position, seed=5)
        lines, hidden = foosball.generate(config)
        players = hidden["players"]
        prefers = {p: f["offense"] >= f["defense"] for p, f in players.items()}
        at_preferred = []
        for line in lines[1:]:
            for side in ("A", "B"):
                striker, keeper = line["teams"][side]
                if prefers[striker] != prefers[keeper]:
                    at_preferred.append(prefers[striker] and not prefers[keeper])
        assert len(at_preferred) > 100
        assert sum(at_preferred) / len(at_preferred) == expected


def test_match_win_probability_by_hand() -> None:
    assert match_win_probability(0.7, 1) == pytest.approx(0.7)
    # to 2: AA, or one B goal among the first two then A: p² + 2p²(1 − p)
    assert match_win_probability(0.7, 2) == pytest.approx(0.49 + 2 * 0.49 * 0.3)
    assert match_win_probability(0.5, 10) == pytest.approx(0.5)
    assert match_win_probability(0.6, 10) + match_win_probability(0.4, 10) == pytest.approx(1)
    assert goal_logit(1.0, 0.5, 0.2, 0.1) == pytest.approx((1.0 - 0.1) - (0.2 - 0.5))


def test_foosball_winners_as_often_as_the_goal_formula_says() -> None:
    """P(A wins) from the truth's skills at the positions played, σ per goal and first to
    G: over 3,000 matches the wins agree with Σ P (|z| < 4) and, in five bins of P, the
    win rate with the mean P within 0.05; the stronger side wins most matches. The goals
    themselves fall as the per-goal p says."""
    config = FoosballConfig(players=20, matches=3000, seed=11)
    lines, hidden = foosball.generate(config)
    skills = hidden["players"]
    predicted, won, goal_p = [], [], []
    for line in lines[1:]:
        (a_off, a_def), (b_off, b_def) = line["teams"]["A"], line["teams"]["B"]
        logit = goal_logit(
            skills[a_off]["offense"],
            skills[a_def]["defense"],
            skills[b_off]["offense"],
            skills[b_def]["defense"],
        )
        goal_p.append(1 / (1 + math.exp(-logit)))
        predicted.append(match_win_probability(goal_p[-1], config.goals))
        won.append(line["winner"] == "A")
    z, bins = calibration(predicted, won)
    assert abs(z) < 4
    for mean_p, rate in bins:
        assert rate == pytest.approx(mean_p, abs=0.05)
    assert bins[0][1] < 0.3 and bins[-1][1] > 0.7
    # each goal is A's with p: by Wald's identities Σ (goals_A − p·N) over the matches has
    # mean 0 and variance Σ p(1 − p)·N, N a match's goals, however the matches stop; signed
    # by the favourite (±1), it also catches a p too flat or too steep
    lead = favourite_lead = spread = 0.0
    for line, p in zip(lines[1:], goal_p, strict=True):
        n = line["scores"]["A"] + line["scores"]["B"]
        lead += line["scores"]["A"] - p * n
        favourite_lead += math.copysign(1, p - 0.5) * (line["scores"]["A"] - p * n)
        spread += p * (1 - p) * n
    assert abs(lead / math.sqrt(spread)) < 4
    assert abs(favourite_lead / math.sqrt(spread)) < 4


# scoreboard


def test_scoreboard_is_the_same_for_a_seed_and_another_for_another() -> None:
    assert scoreboard.generate(BOARD) == scoreboard.generate(BOARD)
    lines, hidden = scoreboard.generate(BOARD)
    other_lines, other_hidden = scoreboard.generate(ScoreboardConfig(players=60, matches=300))
    assert other_lines[1:] != lines[1:] and other_hidden["players"] != hidden["players"]


def test_scoreboard_reads_back_with_even_teams_whole_parties_and_scores(tmp_path: Path) -> None:
    out, truth_path = tmp_path / "s.jsonl", tmp_path / "t.json"
    assert scoreboard.write(BOARD, out, truth_path) == BOARD.matches
    history = read_history(out, strict=True)
    assert not history.errors and len(history.matches) == BOARD.matches
    assert history.header["team_size"] == 12 and history.header["modes"] == MODE_SIZES
    truth = load_truth(truth_path)
    assert len(truth.skill) == 60 and not truth.traits and set(truth.arrival.values()) == {0}
    groups = [frozenset(g) for g in json.loads(truth_path.read_text())["parties"]]
    assert sum(map(len, groups)) == 15 and all(2 <= len(g) <= 4 for g in groups)
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()[1:]]
    modes, parties, points = set(), 0, []
    for line, match in zip(lines, history.matches, strict=True):
        k = MODE_SIZES[line["mode"]]
        modes.add(line["mode"])
        assert match.mode == line["mode"] and match.size == f"{k}v{k}"
        scores = (match.details or {})["player_scores"]
        assert set(scores) == {*match.team_a, *match.team_b}
        assert all(isinstance(s, int) and s >= 0 for s in scores.values())
        for party in line["parties"]:
            assert 2 <= len(party) <= min(k, 4)
            assert set(party) <= set(match.team_a) or set(party) <= set(match.team_b)
            assert any(set(party) <= g for g in groups)  # friends of one group
            parties += 1
        for side, won in ((match.team_a, match.winner == "A"), (match.team_b, match.winner == "B")):
            points += [(truth.skill[p], scores[p], won) for p in side]
    assert modes == set(MODE_SIZES) and parties > 50
    # points grow with skill, and the winners score more than the losers
    assert spearman([s for s, _, _ in points], [x for _, x, _ in points]) > 0.3
    win_points = np.mean([x for _, x, w in points if w])
    assert win_points > 1.1 * np.mean([x for _, x, w in points if not w])


def test_scoreboard_winners_as_often_as_the_mean_skill_formula_says() -> None:
    """P(A wins) = σ(c·(s̄_A − s̄_B)) recomputed from the truth: over 3,000 matches the wins
    agree with Σ P (|z| < 4) and, in five bins of P, the win rate with the mean P within
    0.06; the stronger side wins most matches."""
    config = ScoreboardConfig(players=80, matches=3000, outcome_scale=3.0, seed=11)
    lines, hidden = scoreboard.generate(config)
    skill = {p: f["skill"] for p, f in hidden["players"].items()}
    predicted = [
        win_probability(
            [skill[p] for p in line["teams"]["A"]], [skill[p] for p in line["teams"]["B"]], 3.0
        )
        for line in lines[1:]
    ]
    z, bins = calibration(predicted, [line["winner"] == "A" for line in lines[1:]])
    assert abs(z) < 4
    for mean_p, rate in bins:
        assert rate == pytest.approx(mean_p, abs=0.05)
    assert bins[0][1] < 0.3 and bins[-1][1] > 0.7


def test_lobbies_split_evenly_with_parties_whole_even_when_parties_crowd() -> None:
    """Everyone in a group, every friend coming, 3v3 only: parties are cut to fit (never over
    3, always splittable), and `split_at_random` gives 3 and 3 with each party on one side."""
    config = ScoreboardConfig(
        players=40, mode_weights={"SPI": 1.0}, party_share=1.0, party_join=1.0, seed=2
    )
    rng = np.random.default_rng(config.seed)
    population = draw_population(config, rng)
    assert sum(map(len, population.groups)) == 40
    sizes = set()
    for _ in range(300):
        lobby = draw_lobby(config, rng, population)
        assert lobby.mode == "SPI" and len(set(lobby.players)) == len(lobby.players) == 6
        team_a, team_b = split_at_random(lobby, rng)
        assert len(team_a) == len(team_b) == 3 and set(team_a + team_b) == set(lobby.players)
        for party in lobby.parties:
            sizes.add(len(party))
            assert set(party) <= set(team_a) or set(party) <= set(team_b)
            assert len(set(population.group_of[list(party)].tolist())) == 1  # one group
    assert sizes == {2, 3}


def test_configs_name_what_cannot_make_a_world() -> None:
    bad: list[tuple[Any, str]] = [
        (FoosballConfig(players=3), "players"),
        (FoosballConfig(correlation=1.5), "correlation"),
        (FoosballConfig(goals=0), "goals"),
        (ScoreboardConfig(players=20), "players"),
        (ScoreboardConfig(mode_weights={"TDM": 1.0}), "mode_weights"),
        (ScoreboardConfig(mode_weights={"CTF": 0.0}), "mode_weights"),
        (ScoreboardConfig(party_join=2.0), "party_join"),
    ]
    for config, field in bad:
        with pytest.raises(ValueError, match=field):
            config.check()
    ScoreboardConfig(players=6, mode_weights={"SPI": 1.0}).check()  # 3v3 only: 6 will do


# the command


def test_simulate_history_writes_each_world_and_refuses_ns2_options(tmp_path: Path) -> None:
    runner = CliRunner()
    history, truth = tmp_path / "h.jsonl", tmp_path / "t.json"
    args = ["simulate-history", str(history), "--truth", str(truth)]
    made = runner.invoke(app, [*args, "--world", "foosball", "--matches", "200"])
    assert made.exit_code == 0, made.output
    assert "wrote 200 matches of 40 players (2v2 foosball to 10 goals, seed 1)" in made.output
    assert len(history.read_text().splitlines()) == 201
    assert len(json.loads(truth.read_text())["players"]) == 40
    assert read_history(history, strict=True).matches[0].mode == "2v2"

    made = runner.invoke(
        app, [*args, "--world", "scoreboard", "--matches", "50", "--players", "60"]
    )
    assert made.exit_code == 0, made.output
    assert "wrote 50 matches of 60 players (scoreboard" in made.output
    assert len(history.read_text().splitlines()) == 51

    for option, value in (("--team-size", "4"), ("--leave-rate", "0"), ("--uneven-share", "0.2")):
        refused = runner.invoke(app, [*args, "--world", "foosball", option, value])
        assert refused.exit_code == 1 and f"does not take {option}" in refused.output
    small = runner.invoke(app, [*args, "--world", "scoreboard", "--players", "20"])
    assert small.exit_code == 1 and "cannot fill a 12v12" in small.output
