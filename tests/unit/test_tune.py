"""Tuning on the FRC slice (redundant pairs held, bounds reported, warm-ups checked), and F1's
maximum-likelihood Θ on rounds drawn with a known Θ."""

from __future__ import annotations

import gc
import math
import random
from pathlib import Path

import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.frc import import_frc
from synelo.evaluation.history import Match, Winner
from synelo.evaluation.metrics import score
from synelo.evaluation.replay import replay, scored_mask
from synelo.evaluation.tune import expand_fit, redundant, tune
from synelo.ratings.theta import fit_theta

DATA = Path(__file__).parents[1] / "data" / "frc"


def test_tune_theta_on_the_frc_slice() -> None:
    matches = import_frc([DATA / "2004.csv", DATA / "2016.csv"]).matches
    # 2004 is 2v2, then 2016 3v3: the default Θ starts at 100·2 and rises to 300 with the
    # first 3v3; the default row is that, not 200 held fixed
    info = HistoryInfo(3, first_team_size=2)
    result = tune("synelo", matches, ["theta"], info=info, iterations=8)
    assert result.defaults == {"theta": 200.0}
    default = replay(create_replay("synelo", {}, info), matches)
    test = scored_mask(matches, int(len(matches) * 0.7))
    assert result.test_default == score(default.predictions[test], default.outcomes[test])
    assert 50.0 <= result.fitted["theta"] <= 20_000.0
    # the fit is the best point it tried, the defaults included
    assert result.train_log_loss_fitted <= result.train_log_loss_default
    assert min(loss for _, loss in result.trace) == result.train_log_loss_fitted
    assert result.evaluations == len(result.trace) >= 10
    n_train = int(len(matches) * 0.7)
    assert result.test_matches == len(matches) - n_train
    assert result.test_fitted.matches == result.test_default.matches == result.test_matches
    assert result.on_bound == [] and result.held == []  # an inside optimum, nothing redundant


def test_elo_fits_k_and_holds_theta() -> None:
    """Elo's K and Θ matter only as K/Θ on FRC (every match has equal sides): fitting both
    is fitting K, with Θ held at its value, in as many evaluations."""
    matches = import_frc([DATA / "2004.csv", DATA / "2016.csv"]).matches
    both = tune("elo", matches, ["theta", "k"], iterations=6)
    alone = tune("elo", matches, ["k"], iterations=6)
    assert set(both.fitted) == {"k"} and both.fitted == alone.fitted
    assert both.evaluations == alone.evaluations
    (held,) = both.held
    assert (held.name, held.value, held.fitted) == ("theta", 400.0, "k")
    assert "theta held at 400" in held.note() and held.to_json()["scaling"] == ["k", "theta"]
    # with one match of unequal sides r0 no longer cancels: both are fitted
    odd = [*matches[:100], Match("odd", ("a", "b", "c"), ("d", "e"), "A"), *matches[100:]]
    assert redundant("elo", ["k", "theta"], odd) == []
    assert [(h, f) for h, f, _ in redundant("elo", ["k", "theta"], matches)] == [("theta", "k")]
    assert redundant("trueskill", ["beta", "tau"], matches) == []  # μ, σ are not fitted


def same_teams(winners: str) -> list[Match]:
    """The same two teams every match; `winners` one letter a match."""
    won: dict[str, Winner] = {"A": "A", "B": "B"}
    return [Match(str(i), ("a", "b"), ("c", "d"), won[w]) for i, w in enumerate(winners)]


def test_a_fit_on_a_search_bound_is_reported() -> None:
    """A always beats B: the surer the better, so Θ runs into its lower bound (50). The
    winner alternates: every lean is wrong, so Θ runs into its upper bound (20,000)."""
    low = tune("elo", same_teams("A" * 200), ["theta"], iterations=8)
    (bound,) = low.on_bound
    assert (bound.name, bound.side, bound.bound) == ("theta", "lower", 50.0)
    assert 50 < low.fitted["theta"] < 60
    assert bound.warning().startswith("theta ended on its lower search bound 50")
    assert "may lie below it" in bound.warning()
    high = tune("elo", same_teams("AB" * 100), ["theta"], iterations=8)
    (bound,) = high.on_bound
    assert (bound.side, bound.bound) == ("upper", 20_000.0) and "above" in bound.warning()
    assert high.to_json()["on_bound"] == [bound.to_json()]


def test_a_warmup_that_leaves_nothing_to_fit_is_an_error() -> None:
    matches = same_teams("AB" * 50)  # 70 training matches
    with pytest.raises(ValueError, match="warmup 70 is at or above the number of training"):
        tune("elo", matches, ["theta"], warmup=70)
    assert tune("elo", matches, ["theta"], warmup=69, iterations=2).train_matches == 1


def test_fit_names() -> None:
    assert expand_fit("synelo", ["theta", "weights", "k_max"]) == [
        "theta",
        "w_vel",
        "w_wre",
        "w_vol",
        "k_max",
    ]
    with pytest.raises(ValueError, match="cannot fit"):
        expand_fit("elo", ["sigma"])
    with pytest.raises(ValueError, match="too short"):
        tune("elo", import_frc([DATA / "2016.csv"]).matches[:1], ["theta"])


def test_fit_theta_recovers_the_theta_that_drew_the_rounds() -> None:
    rng = random.Random(7)
    gaps, outcomes = [], []
    for _ in range(20_000):
        gap = rng.uniform(-3000, 3000)
        gaps.append(gap)
        p = 1 / (1 + math.exp(-gap / 1000))
        u = rng.random()
        outcomes.append(0.5 if u < 0.02 else float(u < 0.02 + 0.98 * p))
    theta = fit_theta(gaps, outcomes)
    assert theta is not None and abs(theta - 1000) < 60


def test_fit_theta_without_a_finite_answer() -> None:
    assert fit_theta([], []) is None
    assert fit_theta([0, 0], [1, 0]) is None  # no gap: nothing to learn
    assert fit_theta([100, -100], [0, 1]) is None  # the favourite always lost
    assert fit_theta([100, -100, 50], [1, 0, 1]) is None  # separated: Θ → 0
    with pytest.raises(ValueError):
        fit_theta([1, 2], [1])


def test_tune_refuses_what_the_revised_f3_ignores() -> None:
    """The weights of C act only in the seed's F3: fitting them under the revised one would
    spend the search on a flat loss and report the defaults as a fit."""
    matches = import_frc([DATA / "2016.csv"]).matches
    with pytest.raises(ValueError, match="w_vel: only the seed's F3 uses it"):
        tune("synelo", matches, ["weights"], iterations=2)
    seeded = tune("synelo", matches, ["w_vol"], options={"revised": 0}, iterations=2)
    assert set(seeded.fitted) == {"w_vol"}


def test_k_min_fit_stays_inside_k_max() -> None:
    """K_min's search reaches 64; with K_max 20 every point above 20 breaks SynElo's own
    invariant (K_min ≤ K_max). Those points lose (infinite loss) instead of stopping the fit."""
    matches = import_frc([DATA / "2016.csv"]).matches[:600]
    result = tune("synelo", matches, ["k_min"], options={"k_max": 20.0}, iterations=6)
    assert 0.0 <= result.fitted["k_min"] <= 20.0


def test_tune_pays_for_one_full_collection_not_one_a_replay() -> None:
    """Each replay freezes the objects alive before its loop after a full collection; a
    tune's hundred replays run inside one freeze, so it collects once (a collection before
    each replay cost 90 % of `synelo tune` on 400 FRC matches)."""
    matches = import_frc([DATA / "2004.csv"]).matches
    full: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    before = gc.get_freeze_count()  # Python 3.12 starts with some objects frozen
    gc.callbacks.append(count)
    try:
        result = tune("elo", matches, ["k"], iterations=12)
    finally:
        gc.callbacks.remove(count)
    assert result.evaluations >= 12
    assert len(full) <= 2  # the one before the search (and one the interpreter may start)
    assert gc.get_freeze_count() <= before  # handed back
