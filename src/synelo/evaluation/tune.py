"""Tuning: fit a model's parameters on the first part of a history, score them on the rest.

The objective is the log loss of a fresh replay of the training part (the first 70 % of the
matches by default; warm-up and unscored matches are not counted). Each parameter is fitted
by a golden-section search within its `tune` range (on a log scale for scale-like ones),
one after another; with several parameters the round is repeated. The best point seen is
kept, and the defaults win if nothing beat them. Then the whole history is replayed twice,
with the defaults and with the fitted parameters, and both are scored on the matches after
the training part only: the gain is measured out of sample.

Two checks keep the answer honest. Of a set of parameters that only matter through their
ratios (a model's `scalings`, e.g. Elo's K and Θ), only the first is fitted and the others
are held at their values: fitting them all would search a line of equal losses. And a fit
whose last search never left a bound is reported: the optimum may lie beyond it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from synelo.evaluation.adapters import HistoryInfo, OptionValue, create_replay
from synelo.evaluation.history import Match
from synelo.evaluation.metrics import Scores, log_losses, outcome, score
from synelo.evaluation.replay import frozen_heap, predict_all, replay, scored_mask
from synelo.models import MODELS, Param, Scaling

GOLDEN = (math.sqrt(5) - 1) / 2
WEIGHTS = ("w_vel", "w_wre", "w_vol")


@dataclass(frozen=True, slots=True)
class Held:
    """A parameter asked for but not fitted: it scales with `fitted` (see `Scaling`)."""

    name: str
    value: float
    fitted: str
    scaling: Scaling

    def note(self) -> str:
        names = ", ".join(self.scaling.names)
        return (
            f"{self.name} held at {self.value:g}, not fitted: only the ratios of {names} "
            f"matter ({self.scaling.why}), so fitting {self.fitted} covers it"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "value": self.value,
            "fitted_instead": self.fitted,
            "scaling": list(self.scaling.names),
            "why": self.scaling.why,
        }


@dataclass(frozen=True, slots=True)
class OnBound:
    """A fitted parameter whose last search never moved off one end of its bounds."""

    name: str
    side: str  # "lower" or "upper"
    bound: float
    value: float

    def warning(self) -> str:
        beyond = "below" if self.side == "lower" else "above"
        return (
            f"{self.name} ended on its {self.side} search bound {self.bound:g} "
            f"(fitted {self.value:.4g}): the optimum may lie {beyond} it"
        )

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "side": self.side, "bound": self.bound, "value": self.value}


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
    held: list[Held] = field(default_factory=list)
    on_bound: list[OnBound] = field(default_factory=list)
    # per decided test match, the log loss of the defaults' and of the fit's prediction, in
    # the same order (a paired comparison: rerate.autotune)
    test_losses: dict[str, np.ndarray] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "fitted": self.fitted,
            "defaults": self.defaults,
            "held": [h.to_json() for h in self.held],
            "on_bound": [b.to_json() for b in self.on_bound],
            "warnings": [b.warning() for b in self.on_bound],
            "train_matches": self.train_matches,
            "test_matches": self.test_matches,
            "evaluations": self.evaluations,
            "train_log_loss": {
                "default": self.train_log_loss_default,
                "fitted": self.train_log_loss_fitted,
            },
            "test": {"default": self.test_default.to_json(), "fitted": self.test_fitted.to_json()},
        }


def expand_fit(model: str, names: Sequence[str]) -> list[str]:
    """The parameter names to fit; "weights" stands for the three convergence weights."""
    tunable = MODELS[model].tunable()
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


def redundant(
    model: str, names: Sequence[str], matches: Sequence[Match]
) -> list[tuple[str, str, Scaling]]:
    """(held, fitted instead, scaling) for each name of `names` that a scaling of the model,
    exact on `matches` and with every member in `names`, makes redundant: the scaling's first
    member is fitted, the others are held."""
    out: list[tuple[str, str, Scaling]] = []
    fitting = list(names)
    for scaling in MODELS[model].scalings:
        if set(scaling.names) <= set(fitting) and scaling.holds_on(matches):
            first, *rest = scaling.names
            out += [(name, first, scaling) for name in rest]
            fitting = [n for n in fitting if n not in rest]
    return out


def _search_range(spec: Param) -> tuple[float, float, bool]:
    """A tunable parameter's search: the ends of its `tune` range and whether on a log
    scale (`Param.log_search`)."""
    assert spec.tune is not None, "not a tunable parameter"
    low, high = spec.tune
    return low, high, spec.log_search


def _golden(f: Callable[[float], float], spec: Param, iterations: int) -> tuple[float, float]:
    """Golden-section search of f over the parameter's tune range (f records what it sees);
    returns the bracket of the minimum after the last comparison, on the search's scale (log
    for a log search): it still has a bound for an end if every step found lower losses
    towards it."""
    low, high, log = _search_range(spec)
    to = (lambda x: math.log(x)) if log else (lambda x: x)
    back = math.exp if log else (lambda x: x)
    a, b = to(low), to(high)
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
    return (a, d) if fc <= fd else (c, b)  # the bracket the last two points leave


@frozen_heap()  # one full collection for its hundred replays, not one each
def tune(  # noqa: C901
    model: str,
    matches: Sequence[Match],
    fit: Sequence[str],
    *,
    options: Mapping[str, OptionValue] | None = None,
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
    asked = expand_fit(model, fit)
    tunable = MODELS[model].tunable()
    info = info or HistoryInfo()
    n_train = int(len(matches) * train_fraction)
    if n_train < 1 or n_train >= len(matches):
        raise ValueError("the history is too short to split into training and test parts")
    if warmup >= n_train:
        raise ValueError(
            f"warmup {warmup:,} is at or above the number of training matches ({n_train:,} "
            f"of {len(matches):,}): no match would be fitted on"
        )
    train = matches[:n_train]
    train_mask = scored_mask(train, warmup)
    if not train_mask.any():
        raise ValueError("no match of the training part is scored")
    drop = redundant(model, asked, matches)
    names = [n for n in asked if n not in {held for held, _, _ in drop}]
    train_o = np.fromiter((outcome(m.winner) for m in train), dtype=float, count=n_train)
    base = dict(options or {})
    configured = create_replay(model, base, info)
    idle = {n: why for n, why in configured.inert().items() if n in names}
    if idle:
        raise ValueError("cannot fit " + "; ".join(f"{n}: {why}" for n, why in idle.items()))
    defaults = configured.parameters()
    start = {n: float(defaults[n]) for n in names}
    held = [Held(n, float(defaults[n]), fitted, scaling) for n, fitted, scaling in drop]
    seen: dict[tuple[tuple[str, float], ...], float] = {}
    trace: list[tuple[dict[str, float], float | None]] = []

    def loss(point: Mapping[str, float]) -> float:
        key = tuple(sorted(point.items()))
        if key not in seen:
            try:
                candidate = create_replay(model, {**base, **point}, info)
            except ValueError:  # outside the model's own invariants (e.g. k_min > k_max)
                seen[key] = math.inf
                return math.inf
            predictions, _ = predict_all(candidate, train)
            p = np.frombuffer(predictions, dtype=float)
            s = score(p[train_mask], train_o[train_mask])
            seen[key] = math.inf if s.log_loss is None else s.log_loss
            trace.append((dict(point), s.log_loss))
            if progress is not None:
                progress(f"{_fmt(point)} → {s.log_loss}")
        return seen[key]

    def winner() -> dict[str, float]:
        """The best point seen; {} when the model's own defaults are (they win ties)."""
        return dict(min(seen.items(), key=lambda point_loss: point_loss[1])[0])

    # The defaults are the model as `synelo replay` runs it without options: a default that
    # adapts as the history goes (synelo's Θ) is not the same as its first value held fixed.
    default_loss = loss({})
    best = dict(start)
    brackets: dict[str, tuple[float, float]] = {}
    for _ in range(rounds or (2 if len(names) > 1 else 1)):
        for name in names:

            def along(x: float, name: str = name, at: dict[str, float] = best) -> float:
                return loss({**at, name: x})

            brackets[name] = _golden(along, tunable[name], iterations)
            best = winner() or dict(start)
    fitted_point = winner()
    fitted_loss = seen[tuple(sorted(fitted_point.items()))]
    best = fitted_point or dict(start)
    on_bound = [
        b for name in names if (b := _on_bound(name, tunable[name], brackets[name], best[name]))
    ]
    test_mask_of = scored_mask(matches, max(warmup, n_train))
    results, losses = {}, {}
    for label, point in (("default", {}), ("fitted", fitted_point)):
        r = replay(create_replay(model, {**base, **point}, info), matches)
        results[label] = score(r.predictions[test_mask_of], r.outcomes[test_mask_of])
        losses[label] = log_losses(r.predictions[test_mask_of], r.outcomes[test_mask_of])
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
        held,
        on_bound,
        losses,
    )


def _on_bound(name: str, spec: Param, bracket: tuple[float, float], value: float) -> OnBound | None:
    """The bound that the last search of `name` never moved off, if the fit lies in its
    last bracket: every step found the lower losses towards that end."""
    lowest, highest, log = _search_range(spec)
    to = math.log if log else float
    low, high = to(lowest), to(highest)
    a, b = bracket
    if a == low and to(value) <= b:
        return OnBound(name, "lower", lowest, value)
    if b == high and to(value) >= a:
        return OnBound(name, "upper", highest, value)
    return None


def _fmt(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:.6g}" for k, v in point.items())
