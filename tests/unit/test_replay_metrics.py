"""Replay of a small hand-made history: every score worked out by hand (elo, Θ 400, K 32);
the warm-up's limit and the collector frozen around the timed loop."""

from __future__ import annotations

import gc
import math
from typing import Any

import pytest

from synelo.evaluation.adapters import RatingModel, create_replay
from synelo.evaluation.history import Match
from synelo.evaluation.metrics import score
from synelo.evaluation.replay import predict_all, replay


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


HISTORY = [
    Match("1", ("a", "b"), ("c", "d"), "A", type="qualification"),
    Match("2", ("a", "c"), ("b", "d"), "B", type="qualification"),
    Match("3", ("a", "b"), ("c", "d"), "draw", type="playoff"),
    Match("4", ("a", "b"), ("c", "d"), "B", type="playoff"),
]


def hand_predictions() -> list[float]:
    # 1: 2000 vs 2000 → P 0.5; A wins, δ = 32·(1 − 0.5) = 16: a, b 1016; c, d 984.
    # 2: a+c = 2000 vs b+d = 2000 → P 0.5; B wins, δ = 32·(0 − 0.5) = −16:
    #    a 1000, c 968; b 1032, d 1000.
    # 3: a+b = 2032 vs c+d = 1968 → P = σ(64/400); a draw: δ3 = 32·(0.5 − P3).
    p3 = sigmoid(64 / 400)
    d3 = 32 * (0.5 - p3)
    # 4: a+b = 2032 + 2·δ3 vs c+d = 1968 − 2·δ3 → P = σ((64 + 4·δ3)/400).
    p4 = sigmoid((64 + 4 * d3) / 400)
    return [0.5, 0.5, p3, p4]


def test_hand_made_history_scores() -> None:
    p1, p2, p3, p4 = hand_predictions()
    result = replay(create_replay("elo"), HISTORY)
    assert result.predictions.tolist() == pytest.approx([p1, p2, p3, p4], abs=1e-12)
    s = result.overall
    assert (s.matches, s.ties) == (4, 1)
    # accuracy, ties excluded: 1 and 2 were called 0.5 (half right each), 4 was called for A
    # (P4 > 0.5) but B won.
    assert p4 > 0.5
    assert s.accuracy == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert s.log_loss == pytest.approx((math.log(2) + math.log(2) - math.log(1 - p4)) / 3)
    assert s.brier == pytest.approx((0.25 + 0.25 + (p3 - 0.5) ** 2 + p4**2) / 4)
    # every P is within [0.5, 0.6): one bin, mean P against the observed A score 1, 0, ½, 0
    assert all(0.5 <= p < 0.6 for p in (p1, p2, p3, p4))
    mean_p = (p1 + p2 + p3 + p4) / 4
    assert s.ece == pytest.approx(abs(mean_p - 1.5 / 4))
    (only,) = [b for b in s.reliability if b.count]
    assert (only.low, only.count) == (0.5, 4)
    assert only.observed == pytest.approx(0.375)
    assert sum(b.count for b in s.reliability) == 4
    # by type: the two qualification matches, the two playoffs (one of them a tie)
    assert result.by_type["qualification"].accuracy == pytest.approx(0.5)
    assert result.by_type["playoff"].matches == 2
    assert result.by_type["playoff"].log_loss == pytest.approx(-math.log(1 - p4))
    assert list(result.by_size) == ["2v2"]
    assert result.matches_per_s > 0


def test_warmup_and_unscored_matches_learn_but_do_not_count() -> None:
    p1, p2, p3, p4 = hand_predictions()
    warm = replay(create_replay("elo"), HISTORY, warmup=2)
    assert warm.predictions.tolist() == pytest.approx([p1, p2, p3, p4], abs=1e-12)
    assert (warm.overall.matches, warm.overall.ties) == (2, 1)
    assert warm.overall.log_loss == pytest.approx(-math.log(1 - p4))
    assert warm.overall.brier == pytest.approx(((p3 - 0.5) ** 2 + p4**2) / 2)
    unscored = [Match(m.id, m.team_a, m.team_b, m.winner, scored=m.id != "1") for m in HISTORY]
    r = replay(create_replay("elo"), unscored)
    assert r.predictions.tolist() == pytest.approx([p1, p2, p3, p4], abs=1e-12)
    assert r.overall.matches == 3


def test_json_has_the_top_level_figures() -> None:
    data = replay(create_replay("elo"), HISTORY).to_json()
    for key in ("matches", "accuracy", "log_loss", "brier", "ece", "matches_per_s"):
        assert key in data
    assert data["matches"] == 4 and len(data["reliability"]) == 10


def test_scores_of_nothing_and_bad_input() -> None:
    empty = score([], [])
    assert (empty.matches, empty.accuracy, empty.log_loss, empty.brier) == (0, None, None, None)
    only_ties = score([0.7], [0.5])
    assert only_ties.accuracy is None and only_ties.brier == pytest.approx(0.04)
    # a certain miss is clipped to P = 1 − 1e-15: large but finite
    assert score([1.0], [0.0]).log_loss == pytest.approx(-math.log1p(-(1 - 1e-15)))
    with pytest.raises(ValueError):
        score([1.5], [1.0])
    with pytest.raises(ValueError):
        score([0.5], [0.25])
    with pytest.raises(ValueError):
        replay(create_replay("elo"), HISTORY, warmup=-1)


def test_a_warmup_over_every_match_is_an_error() -> None:
    """Not a table of empty scores: the warm-up must leave a match to score."""
    assert replay(create_replay("elo"), HISTORY, warmup=3).overall.matches == 1
    for warmup in (4, 5):
        with pytest.raises(ValueError, match=f"warmup {warmup} is at or above .* \\(4\\)"):
            replay(create_replay("elo"), HISTORY, warmup=warmup)


class FreezeWatch(RatingModel):
    """A model that notes, at each step, how many objects the collector has frozen."""

    name = "freeze-watch"
    summary = "records gc.get_freeze_count()"

    def __init__(self, fail_at: int | None = None) -> None:
        self.seen: list[int] = []
        self.fail_at = fail_at

    def predict(self, match: Match) -> float:
        self.seen.append(gc.get_freeze_count())
        if len(self.seen) == self.fail_at:
            raise RuntimeError("stop")
        return 0.5

    def update(self, match: Match) -> None:
        pass

    def ratings(self) -> dict[str, float]:
        return {}

    def parameters(self) -> dict[str, Any]:
        return {}


def test_the_timed_loop_runs_with_the_existing_objects_frozen() -> None:
    """matches/s must not depend on when a full collection falls: inside the loop the objects
    alive before it (the history above all) are frozen out of the collector's sight, and
    they are handed back afterwards, even when the model raises."""
    before = gc.get_freeze_count()  # Python 3.12 starts with some objects frozen
    model = FreezeWatch()
    predictions, seconds = predict_all(model, HISTORY)
    assert list(predictions) == [0.5] * 4 and seconds > 0
    assert min(model.seen) > 1000  # the interpreter's and this test's objects at least
    assert gc.get_freeze_count() <= before
    with pytest.raises(RuntimeError):
        predict_all(FreezeWatch(fail_at=2), HISTORY)
    assert gc.get_freeze_count() <= before
