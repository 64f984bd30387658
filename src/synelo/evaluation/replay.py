"""Replay: every match in order, predict P(A wins) from the current ratings, then update.

A match's admin events (sets, resets and seasons before it) are applied to the model
first; a voided match is neither rated nor scored (its prediction is recorded as 0.5 and
masked).

Scores are computed afterwards from the recorded predictions, so the throughput measured is
the model's alone (predict + update, plus one list append). The first `warmup` matches are
learned from but not scored; so are matches marked ``"scored": false``. A warm-up that leaves
no match to score is an error, not a table of empty scores.

The timed loop runs with the garbage collector's existing objects frozen (`gc.freeze`): a
full collection traverses every object alive, the history's hundreds of thousands included,
and one landing inside the loop cost up to 93 ms of a 160 ms replay of FRC 2009–2016. Frozen,
a collection only sees what the loop itself allocated, so matches/s no longer depends on
when one falls. `synelo tune` replays a hundred times inside one such freeze: a full
collection before each replay cost 90 % of a tune of 400 FRC matches.

Given a simulated world's truth, the loop also records every participant's strength after
each match (`synelo.evaluation.truth`); matches/s then includes that recording.
"""

from __future__ import annotations

import gc
import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synelo.evaluation.adapters.base import RatingModel
from synelo.evaluation.history import AdminEvent, Match
from synelo.evaluation.metrics import Scores, outcome, score
from synelo.evaluation.truth import Truth, TruthScores, record_strengths, score_truth

Progress = Callable[[int], None]  # called with the number of matches just replayed
CHUNK = 4096


@dataclass(slots=True)
class ReplayResult:
    """The predictions of one model over one history, the time it took and the scores."""

    model: str
    parameters: dict[str, Any]
    predictions: np.ndarray
    outcomes: np.ndarray
    scored: np.ndarray  # bool per match: counted in the scores
    seconds: float
    overall: Scores
    by_size: dict[str, Scores] = field(default_factory=dict)
    by_type: dict[str, Scores] = field(default_factory=dict)
    truth: TruthScores | None = None  # given a simulated world's truth

    @property
    def matches_per_s(self) -> float:
        return len(self.predictions) / self.seconds if self.seconds > 0 else float("inf")

    def to_json(self) -> dict[str, Any]:
        overall = self.overall.to_json()
        out: dict[str, Any] = {
            "model": self.model,
            "parameters": self.parameters,
            **{k: overall[k] for k in ("matches", "accuracy", "log_loss", "brier", "ece")},
            "ties": overall["ties"],
            "matches_per_s": self.matches_per_s,
            "replayed": len(self.predictions),
            "seconds": self.seconds,
            "reliability": overall["reliability"],
            "by_size": {k: v.to_json() for k, v in self.by_size.items()},
            "by_type": {k: v.to_json() for k, v in self.by_type.items()},
        }
        if self.truth is not None:
            out["truth"] = self.truth.to_json()
        return out


def predict_all(
    model: RatingModel,
    matches: Sequence[Match],
    progress: Progress | None = None,
    trajectories: dict[str, list[float]] | None = None,
) -> tuple[array[float], float]:
    """Each match's prediction before its update, and the seconds the loop took (with the
    objects alive before it frozen out of the collector's sight; see the module). Given
    `trajectories`, each participant's strength after each rated match is appended there."""
    predictions = array("d")
    append, step = predictions.append, model.step
    plain = not any(m.events or m.voided for m in matches)
    with frozen_heap():
        start = time.perf_counter()
        for at in range(0, len(matches), CHUNK):
            chunk = matches[at : at + CHUNK]
            if trajectories is not None:
                for match in chunk:
                    apply_events(model, match.events)
                    if match.voided:
                        append(0.5)
                        continue
                    append(step(match))
                    record_strengths(model, match, trajectories)
            elif plain:
                for match in chunk:
                    append(step(match))
            else:
                for match in chunk:
                    if match.events:
                        apply_events(model, match.events)
                    append(0.5 if match.voided else step(match))
            if progress is not None:
                progress(len(chunk))
        seconds = time.perf_counter() - start
    return predictions, seconds


# frozen_heap blocks open in this process, under a lock: the collector's freeze is per
# process, and re-rate jobs replay on threads. (The freeze count cannot tell: Python 3.12
# starts with objects frozen already.)
_open_blocks = 0
_blocks_lock = threading.Lock()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Every object alive now frozen out of the collector's sight until the block ends, after
    one full collection (see the module). Inside another such block it does nothing: the
    collection is paid once, not once a replay."""
    global _open_blocks
    with _blocks_lock:
        _open_blocks += 1
        if _open_blocks == 1:
            gc.collect()
            gc.freeze()
    try:
        yield
    finally:
        with _blocks_lock:
            _open_blocks -= 1
            if _open_blocks == 0:
                gc.unfreeze()


def apply_events(model: RatingModel, events: Sequence[AdminEvent]) -> None:
    """Apply admin sets, resets and seasons to the model's ratings, in order (voids and
    unvoids are already in the matches' `voided`)."""
    for event in events:
        if event.kind == "set":
            assert event.player is not None and event.rating is not None
            model.set_rating(event.player, event.rating)
        elif event.kind == "reset":
            assert event.player is not None
            model.reset(event.player)
        elif event.kind == "season":
            model.new_season(event.fraction)


def scored_mask(matches: Sequence[Match], warmup: int = 0) -> np.ndarray:
    """True for the matches the scores count: after the warm-up and not marked unscored.
    ValueError if the warm-up is negative or covers every match (nothing would be scored)."""
    if warmup < 0:
        raise ValueError("warmup must be >= 0")
    if warmup >= len(matches):
        raise ValueError(
            f"warmup {warmup:,} is at or above the number of matches ({len(matches):,}): "
            "no match would be scored"
        )
    mask = np.fromiter((m.scored and not m.voided for m in matches), dtype=bool, count=len(matches))
    mask[:warmup] = False
    return mask


def _groups(
    matches: Sequence[Match],
    mask: np.ndarray,
    key: Callable[[Match], str | None],
    p: np.ndarray,
    o: np.ndarray,
) -> dict[str, Scores]:
    labels = [key(m) for m in matches]
    out = {}
    for label in sorted({x for x in labels if x is not None}):
        inside = mask & np.fromiter((x == label for x in labels), dtype=bool, count=len(labels))
        if inside.any():
            out[label] = score(p[inside], o[inside])
    return out


def replay(
    model: RatingModel,
    matches: Sequence[Match],
    *,
    warmup: int = 0,
    progress: Progress | None = None,
    trailing: Sequence[AdminEvent] = (),
    truth: Truth | None = None,
) -> ReplayResult:
    """Replay `matches` through `model` and score its predictions (see the module); the
    `trailing` admin events (a history's after its last match) are applied at the end, so
    that the model's ratings end where the pool's did. Given a simulated world's `truth`,
    the model's strengths are scored against it too (`synelo.evaluation.truth`)."""
    mask = scored_mask(matches, warmup)
    trajectories: dict[str, list[float]] = {}
    predictions, seconds = predict_all(
        model, matches, progress, None if truth is None else trajectories
    )
    apply_events(model, trailing)
    p = np.frombuffer(predictions, dtype=float)
    o = np.fromiter((outcome(m.winner) for m in matches), dtype=float, count=len(matches))
    return ReplayResult(
        model.name,
        model.parameters(),
        p,
        o,
        mask,
        seconds,
        score(p[mask], o[mask]),
        by_size=_groups(matches, mask, lambda m: m.size, p, o),
        by_type=_groups(matches, mask, lambda m: m.type, p, o),
        truth=None if truth is None else score_truth(model, matches, trajectories, truth),
    )
