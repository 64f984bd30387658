"""`synelo advise`'s core (`synelo.evaluation.advise`): the calibration figures against
worlds whose answer is known, the paired margin by hand, the refusals, and the pick on a
world built to suit one model."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scripts.advise_worlds import team_world

from synelo.evaluation.advise import (
    MIN_ROUNDS,
    NOISE_SE,
    Calibration,
    NoDecidedRounds,
    Row,
    Setting,
    TooFewRounds,
    advise,
    calibration,
    general_models,
    paired_margin,
    recommend,
)
from synelo.evaluation.history import parse_match
from synelo.evaluation.metrics import Scores
from synelo.models import MODELS
from synelo.sim.history import HistoryWorldConfig, generate


def test_the_general_models_are_synelos_own_for_any_team_game() -> None:
    assert general_models() == ["synelo", "hive", "whr", "margin"]
    for peer in ("elo", "trueskill", "openskill-pl", "epa", "positional", "sectors-edge"):
        assert not MODELS[peer].general


def _draws(logits: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random(logits.size) < 1 / (1 + np.exp(-logits))).astype(float)


def test_calibration_slope_and_level_find_a_known_distortion() -> None:
    x = np.random.default_rng(1).normal(0, 1.5, 40_000)
    o = _draws(x, 2)
    honest = calibration(1 / (1 + np.exp(-x)), o)
    assert honest.slope is not None and abs(honest.slope - 1) < 0.05
    assert honest.in_the_large is not None and abs(honest.in_the_large) < 0.01
    # predictions twice as confident as the truth: the slope that undoes it is 1/2
    bold = calibration(1 / (1 + np.exp(-2 * x)), o)
    assert bold.slope is not None and abs(bold.slope - 0.5) < 0.03
    # predictions that favour A by 0.1 too much everywhere: A wins less than predicted
    shifted = np.clip(1 / (1 + np.exp(-x)) + 0.1, 0, 1)
    level = calibration(shifted, o).in_the_large
    assert level is not None and -0.11 < level < -0.08


def _row(
    losses: list[float],
    model: str = "m",
    setting: Setting = "defaults",
    general: bool = True,
    full: dict[str, object] | None = None,
) -> Row:
    empty = Scores(len(losses), 0, None, float(np.mean(losses)), None, None, ())
    return Row(
        model,
        setting,
        {},
        empty,
        Calibration(None, None),
        general,
        np.array(losses),
        full=dict(full or {}),
    )


def test_the_paired_margin_by_hand() -> None:
    best = _row([0.5, 0.6, 0.7, 0.4])
    other = _row([0.6, 0.6, 0.9, 0.5])  # d = 0.1, 0, 0.2, 0.1: mean 0.1
    margin = paired_margin(best, other)
    sd = math.sqrt(((0.0) ** 2 + 0.1**2 + 0.1**2 + 0.0**2) / 3)
    assert margin.difference == pytest.approx(0.1)
    assert margin.se == pytest.approx(sd / 2)
    assert margin.beyond_noise == (NOISE_SE * sd / 2 < 0.1)


def test_the_pick_its_margins_and_the_warning_against_elo() -> None:
    """The lowest general row wins, whatever a reference row scores; a general model more
    than 3 % worse than Elo at the same setting is named, one 2 % worse is not."""
    rows = [
        _row([0.50, 0.52, 0.48], "elo", general=False),
        _row([0.49, 0.53, 0.48], "synelo"),  # the pick: 0.5
        _row([0.51, 0.51, 0.49], "synelo", "tuned"),
        _row([0.53, 0.55, 0.50], "hive"),  # 0.5267: 5.3 % above Elo's 0.5
        _row([0.52, 0.50, 0.51], "whr"),  # 0.51: 2 %
        _row([0.60, 0.60, 0.60], "elo", "current", general=False),
    ]
    advice = recommend(rows, 10, 7, 3, "elo")
    assert (advice.best.model, advice.best.setting) == ("synelo", "defaults")
    assert advice.runner_up is not None and advice.runner_up.other == "whr"
    assert advice.over_current is not None and advice.over_current.difference == pytest.approx(0.1)
    assert len(advice.warnings) == 1 and advice.warnings[0].startswith("hive (defaults)")
    assert "5.3 % worse than plain Elo" in advice.warnings[0]
    assert advice.switch() == {"model": "synelo"}
    assert len(advice.gaps) == len(rows) - 1


def test_a_pool_whose_own_setup_predicts_best_is_told_to_keep_it() -> None:
    """The pool's own row beats every general row: the advice is to keep it (no switch), no
    lead is negative, and the best general row is the runner-up."""
    rows = [
        _row([0.50, 0.52, 0.48], "elo", general=False),
        _row([0.49, 0.53, 0.49], "margin"),  # the best general row: 0.5033
        _row([0.51, 0.55, 0.49], "synelo"),
        _row([0.50, 0.53, 0.47], "synelo", "current", general=False),  # 0.5
    ]
    advice = recommend(rows, 10, 7, 3, "synelo", autotuned=True)
    assert advice.keep and advice.best.setting == "current"
    assert advice.switch() is None
    assert advice.runner_up is not None and advice.runner_up.other == "margin"
    assert advice.runner_up.difference > 0
    assert all(m.difference >= 0 for m in advice.margins if m.other != "elo")
    assert advice.verdict().startswith("Keep the pool as it is")
    assert "-0." not in advice.verdict()
    assert any("auto-tunes" in w for w in advice.warnings)
    assert advice.to_json()["keep"] is True and advice.to_json()["switch"] is None


def test_the_switch_names_every_scored_parameter_and_is_none_for_no_change() -> None:
    """A switch sets the whole parameter set the pick was scored with (Θ apart for SynElo):
    nothing of the pool's old setup is merged in; the pool's own model at parameters equal
    to the pick's is no switch at all."""
    scored = {"theta": 400.0, "k_min": 12.0, "convergence": "revised"}
    rows = [
        _row([0.50, 0.52, 0.48], "synelo", full=scored),
        _row([0.51, 0.53, 0.49], "synelo", "current", general=False, full={**scored, "k_min": 2}),
    ]
    advice = recommend(rows, 10, 7, 3, "synelo")
    assert advice.switch() == {
        "model": "synelo",
        "theta": 400.0,
        "params": {"k_min": 12.0, "convergence": "revised"},
    }
    same = [rows[0], _row([0.51, 0.53, 0.49], "synelo", "current", general=False, full=scored)]
    assert recommend(same, 10, 7, 3, "synelo").switch() is None
    hive = [
        _row([0.50, 0.52, 0.48], "hive", "tuned", full={"c": 2.0, "a": 0.1}),
        _row([0.51, 0.53, 0.49], "hive", "current", general=False, full={"c": 1.0, "a": 0.5}),
    ]
    assert recommend(hive, 10, 7, 3, "hive").switch() == {
        "model": "hive",
        "params": {"c": 2.0, "a": 0.1},
    }


def test_a_tuned_value_on_its_search_bound_is_warned_about() -> None:
    edge = "variance_scale ended on its lower search bound 1000 (fitted 1027)"
    rows = [
        _row([0.50, 0.52, 0.48], "synelo"),
        Row(
            "whr",
            "tuned",
            {"variance_scale": 1027.0},
            Scores(3, 0, None, 0.6, None, None, ()),
            Calibration(None, None),
            True,
            np.array([0.6, 0.6, 0.6]),
            on_bound=(edge,),
        ),
    ]
    advice = recommend(rows, 10, 7, 3, None)
    assert advice.warnings == [f"whr (tuned): {edge}"]
    assert advice.to_json()["rows"][1]["on_bound"] == [edge]


def test_too_few_rounds_is_an_answer_not_a_crash() -> None:
    header, matches = team_world(rounds=MIN_ROUNDS - 1)
    with pytest.raises(TooFewRounds, match=f"at least {MIN_ROUNDS}"):
        advise(matches, header)
    with pytest.raises(ValueError, match="unknown model"):
        advise(team_world(rounds=MIN_ROUNDS)[1], models=["nope"])
    # enough rounds, but the newer part is all draws: said so, not "this history has 0"
    header, matches = team_world(rounds=MIN_ROUNDS)
    older = int(len(matches) * 0.7)
    drawn = [*matches[:older], *(dataclasses.replace(m, winner="draw") for m in matches[older:])]
    with pytest.raises(NoDecidedRounds, match="none of its 60 rounds has a winner"):
        advise(drawn, header)


def test_only_the_newest_rounds_are_replayed_on_a_large_pool() -> None:
    header, matches = team_world(rounds=MIN_ROUNDS + 30)
    capped = advise(matches, header, models=["synelo"], max_rounds=MIN_ROUNDS + 10)
    assert (capped.rounds, capped.skipped) == (MIN_ROUNDS + 10, 20)
    assert capped.to_json()["skipped_rounds"] == 20
    newest = advise(matches[20:], header, models=["synelo"])
    assert capped.best.scores.log_loss == newest.best.scores.log_loss


def test_side_offsets_and_commanders_pick_hive() -> None:
    """An NS2-like world (`synelo simulate-history`'s) with strong side offsets and
    commanders: Hive, the one model that learns both, is picked, or is within the noise of
    the pick; every general model and Elo get both settings, and the pool's own its row."""
    lines, _ = generate(
        HistoryWorldConfig(
            players=60, matches=400, team_size=3, offset_sd=2.5, command_weight=0.5, seed=1
        )
    )
    header = {**lines[0], "model": "elo", "params": {"k": 24}}
    matches = [parse_match(line) for line in lines[1:]]
    seen: list[float] = []
    advice = advise(matches, header, progress=seen.append)
    assert advice.best.model == "hive" or "hive" in advice.within_noise
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) > 10
    labels = {(r.model, r.setting) for r in advice.rows}
    assert labels == {
        *((m, s) for m in [*general_models(), "elo"] for s in ("defaults", "tuned")),
        ("elo", "current"),
    }
    assert advice.older == 280 and advice.newer == 120
    assert advice.over_current is not None and advice.over_current.other == "elo"
    switch = advice.switch()
    assert switch is not None and switch["model"] == advice.best.model
    best_loss = advice.best.scores.log_loss
    assert best_loss == min(r.scores.log_loss or 9 for r in advice.rows if r.general)
    for r in advice.rows:  # every tuned value on its search bound is in the warnings
        assert r.setting == "tuned" or not r.on_bound
        for why in r.on_bound:
            assert f"{r.model} (tuned): {why}" in advice.warnings
