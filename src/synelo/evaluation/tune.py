"""Tuning: fit a model's parameters on the first part of a history, score them on the rest.

The objective is the log loss of a fresh replay of the training part (the first 70 % of the
matches by default; warm-up and unscored matches are not counted). Each parameter is fitted
by a golden-section search within its bounds (on a log scale for scale-like parameters),
one after another; with several parameters the round is repeated. The best point seen is
kept, and the defaults win if nothing beat them. Then the whole history is replayed twice,
with the defaults and with the fitted parameters, and both are scored on the matches after
the training part only: the gain is measured out of sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from synelo.evaluation.history import Match
from synelo.evaluation.metrics import Scores, outcome, score
from synelo.evaluation.models.base import MODELS, Bounds, HistoryInfo, create_model
from synelo.evaluation.replay import predict_all, replay, scored_mask

GOLDEN = (math.sqrt(5) - 1) / 2
WEIGHTS = ("w_vel", "w_wre", "w_vol")


@dataclass(slots=True)
class TuneResult:
    model: str
    fitted: dict[str, float]
    defaults: dict[str, float]
    train_matches: int
    test_matches: int
    train_log_loss_default: float | None
    train_log_loss_fitted: float | None
    test_default: Scores
    test_fitted: Scores
    evaluations: int
    trace: list[tuple[dict[str, float], float | None]] = field(default_factory=list)


def expand_fit(model: str, names: Sequence[str]) -> list[str]:
    """The parameter names to fit; "weights" stands for the three convergence weights."""
    tunable = MODELS[model].tunable
    out: list[str] = []
    for name in names:
        for n in WEIGHTS if name == "weights" else (name,):
            if n not in tunable:
                can = ", ".join(tunable) or "nothing"
                raise ValueError(f"model {model!r} cannot fit {n!r} (it can fit: {can})")
            if n not in out:
                out.append(n)
    if not out:
        raise ValueError("nothing to fit")
    return out


def _golden(f: Callable[[float], float], bounds: Bounds, iterations: int) -> None:
    """Golden-section search of f over the bounds (f records what it sees)."""
    to = (lambda x: math.log(x)) if bounds.log else (lambda x: x)
    back = math.exp if bounds.log else (lambda x: x)
    a, b = to(bounds.low), to(bounds.high)
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = f(back(c)), f(back(d))
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = f(back(c))
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = f(back(d))


def tune(
    model: str,
    matches: Sequence[Match],
    fit: Sequence[str],
    *,
    options: Mapping[str, float] | None = None,
    info: HistoryInfo | None = None,
    train_fraction: float = 0.7,
    warmup: int = 0,
    iterations: int = 16,
    rounds: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> TuneResult:
    """Fit `fit` (see `expand_fit`) by minimising the training log loss (see the module)."""
    if not 0 < train_fraction < 1:
        raise ValueError("train_fraction must be between 0 and 1")
    names = expand_fit(model, fit)
    info = info or HistoryInfo()
    n_train = int(len(matches) * train_fraction)
    train = matches[:n_train]
    train_mask = scored_mask(train, warmup)
    if not train_mask.any() or n_train >= len(matches):
        raise ValueError("the history is too short to split into training and test parts")
    train_o = np.fromiter((outcome(m.winner) for m in train), dtype=float, count=n_train)
    base = dict(options or {})
    defaults = create_model(model, base, info).parameters()
    start = {n: float(defaults[n]) for n in names}
    seen: dict[tuple[tuple[str, float], ...], float] = {}
    trace: list[tuple[dict[str, float], float | None]] = []

    def loss(point: Mapping[str, float]) -> float:
        key = tuple(sorted(point.items()))
        if key not in seen:
            predictions, _ = predict_all(create_model(model, {**base, **point}, info), train)
            p = np.frombuffer(predictions, dtype=float)
            s = score(p[train_mask], train_o[train_mask])
            seen[key] = math.inf if s.log_loss is None else s.log_loss
            trace.append((dict(point), s.log_loss))
            if progress is not None:
                progress(f"{_fmt(point)} → {s.log_loss}")
        return seen[key]

    best = dict(start)
    default_loss = loss(best)
    for _ in range(rounds or (2 if len(names) > 1 else 1)):
        for name in names:

            def along(x: float, name: str = name, at: dict[str, float] = best) -> float:
                return loss({**at, name: x})

            _golden(along, MODELS[model].tunable[name], iterations)
            best = dict(min(seen.items(), key=lambda point_loss: point_loss[1])[0])
    fitted_loss = seen[tuple(sorted(best.items()))]
    test_mask_of = scored_mask(matches, max(warmup, n_train))
    results = {}
    for label, point in (("default", start), ("fitted", best)):
        r = replay(create_model(model, {**base, **point}, info), matches)
        results[label] = score(r.predictions[test_mask_of], r.outcomes[test_mask_of])
    return TuneResult(
        model,
        best,
        start,
        int(train_mask.sum()),
        int(test_mask_of.sum()),
        default_loss,
        fitted_loss,
        results["default"],
        results["fitted"],
        len(seen),
        trace,
    )


def _fmt(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:.6g}" for k, v in point.items())
