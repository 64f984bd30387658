"""Auto-tuning: re-fit some of the pool's parameters on its own rounds from time to time,
and adopt the fit (by re-rating the pool) only when it predicts the rounds it was not fitted
on better, beyond the noise. A new pool has it on by default (`default_autotune`: the
model's scale, the one parameter that makes its predictions calibrated); a pool created
before kept its setting.

When: the first fit once `first` rounds are rated, then each after twice the rounds of the
one before, until the gaps reach `every` (A1: the k-th start is at F·2^(k−1) while that is
below `every`, then `every` apart). The rounds before the first change most, and a pool
gets its scale right early without refitting a large history often.

The fit is `synelo tune`'s (`evaluation.tune.tune`): the first 1 − holdout of the pool's
rounds, in order, are the training part, on which each parameter is searched to minimise the
log loss of a fresh replay; then the whole history is replayed with the pool's parameters and
with the fitted ones, and both are scored on the held-out rounds only (after the training
part). A2, the adoption rule, is a paired test on the held-out rounds: with d_r the pool's
log loss minus the fit's on held-out round r, d̄ their mean and SE = sd(d)/√n its standard
error, the fit is adopted when d̄ ≥ `margin` and d̄ > `noise`·SE (two standard errors by
default: a gain the rounds' own noise would make about one time in forty-four).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# The evaluation layer and numpy load when a fit or a check runs, not with the settings:
# `synelo pool create` takes a new pool's default from here and loads no maths
# (tests/unit/test_cli_startup.py).
if TYPE_CHECKING:
    import numpy as np

    from synelo.evaluation.history import Match

from synelo.schemas.pools import (
    DEFAULT_EVERY,
    DEFAULT_FIRST,
    DEFAULT_NEW_HOLDOUT,
    DEFAULT_NEW_MARGIN,
    DEFAULT_NOISE,
)

MIN_EVERY = 100  # rounds between fits, at least
# A setting stored before auto-tuning was on by default had these (its holdout and margin
# are always stored, so they are only `AutoTune`'s defaults). A new pool's setting, and
# what the API, `synelo pool set` and the settings form fill in for what is not given, are
# the DEFAULT_* of `schemas.pools` (the wire's defaults, which live below this layer).
DEFAULT_HOLDOUT = 0.2
DEFAULT_MARGIN = 0.002  # nats of held-out log loss per round
# Each model's scale, fitted by default: the parameter that divides the rating gap in its
# win probability, which a pool's rounds pin down soonest and which calibrates it. SynElo's
# is F1t's temperature T, which scales the P it shows and leaves F2's steps alone: fitting
# Θ there calibrated the P's by slowing the learning, and cost ranking (docs/maths/rating.md).
SCALE = {
    "synelo": "temperature",
    "elo": "theta",
    "hive": "theta",
    "trueskill": "beta",
    "openskill-pl": "beta",
    "openskill-bt": "beta",
    "openskill-tm": "beta",
}
# What a new pool of a model fitted by default before F1t: a stored setting that fits it is
# still "the model's scale" to a model switch.
EARLIER_SCALE = {"synelo": "theta"}


def fits_scale(model: str, fit: Sequence[str]) -> bool:
    """Whether `fit` is the model's scale alone, as a new pool fits now or fitted before."""
    return len(fit) == 1 and fit[0] in (SCALE.get(model), EARLIER_SCALE.get(model))


@dataclass(frozen=True, slots=True)
class AutoTune:
    """A pool's auto-tuning: fit `fit` first at `first` rounds (None: at `every`), then at
    growing gaps up to `every` rounds (A1), hold out the newest `holdout` of the rounds,
    adopt when the held-out log loss improves by `margin` or more and by more than `noise`
    standard errors (A2; 0: the margin alone, the rule before auto-tuning was on by
    default)."""

    every: int
    fit: tuple[str, ...]
    holdout: float = DEFAULT_HOLDOUT
    margin: float = DEFAULT_MARGIN
    first: int | None = None
    noise: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "every": self.every,
            "fit": list(self.fit),
            "holdout": self.holdout,
            "margin": self.margin,
            "first": self.first,
            "noise": self.noise,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AutoTune:
        return cls(
            data["every"],
            tuple(data["fit"]),
            data["holdout"],
            data["margin"],
            data.get("first"),
            data.get("noise", 0.0),
        )


def new_pool_setting(fit: tuple[str, ...]) -> AutoTune:
    """A new pool's auto-tuning rules (the DEFAULT_* above), fitting `fit`."""
    return AutoTune(
        DEFAULT_EVERY, fit, DEFAULT_NEW_HOLDOUT, DEFAULT_NEW_MARGIN, DEFAULT_FIRST, DEFAULT_NOISE
    )


def default_autotune(model: str) -> AutoTune | None:
    """A new pool's auto-tuning: its model's scale (`SCALE`) with the defaults above; None
    for a model without one."""
    scale = SCALE.get(model)
    if scale is None:
        return None
    # No `check_autotune` here: a scale divides the rating gap in the win probability, so no
    # parameter leaves it inert (tests/unit/test_autotune_rules.py checks each is tunable),
    # and the check would load the evaluation layer into `synelo pool create`.
    return new_pool_setting((scale,))


class AutoTuneError(ValueError):
    """An auto-tuning setting that cannot work; `field` names the part at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_autotune(model: str, params: Mapping[str, Any], setting: AutoTune) -> AutoTune:
    """The setting, if a pool of `model` with `params` can fit its parameters (AutoTuneError
    naming the field otherwise): each must be tunable, and not inert as the pool is set up
    (SynElo's F3 weights under the revised F3)."""
    from synelo.evaluation.adapters import HistoryInfo, create_replay
    from synelo.evaluation.tune import expand_fit

    try:
        names = expand_fit(model, setting.fit)
    except ValueError as exc:
        raise AutoTuneError("fit", str(exc)) from None
    configured = create_replay(model, {}, HistoryInfo(1, {"model": model, "params": dict(params)}))
    idle = {name: why for name, why in configured.inert().items() if name in names}
    if idle:
        raise AutoTuneError(
            "fit", "cannot fit " + "; ".join(f"{n}: {why}" for n, why in idle.items())
        )
    return setting


@dataclass(frozen=True, slots=True)
class Fit:
    """The outcome of one auto-tune: the parameters fitted and what they were, the held-out
    log loss of the pool's parameters and of the fitted ones, the rounds each part had, the
    paired gain and its standard error (A2), the rule's margin and noise, and the
    verdict."""

    fitted: dict[str, float]
    heldout_current: float | None
    heldout_fitted: float | None
    train_rounds: int
    heldout_rounds: int
    margin: float
    adopted: bool
    before: dict[str, float] | None = None
    gain: float | None = None
    standard_error: float | None = None
    noise: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "fitted": self.fitted,
            "before": self.before,
            "heldout_log_loss_current": self.heldout_current,
            "heldout_log_loss_fitted": self.heldout_fitted,
            "train_rounds": self.train_rounds,
            "heldout_rounds": self.heldout_rounds,
            "gain": self.gain,
            "standard_error": self.standard_error,
            "margin": self.margin,
            "noise": self.noise,
            "adopted": self.adopted,
        }


def paired_gain(current: np.ndarray, fitted: np.ndarray) -> tuple[float | None, float | None]:
    """A2's d̄ and SE: the mean of the per-round differences d_r = current_r − fitted_r and
    its standard error sd(d)/√n (sample sd, n − 1); None for what fewer rounds leave
    undefined (no round: both; one round: the SE)."""
    import numpy as np

    d = np.asarray(current, dtype=float) - np.asarray(fitted, dtype=float)
    if d.size == 0:
        return None, None
    if d.size == 1:
        return float(d[0]), None
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def adopts(gain: float | None, se: float | None, setting: AutoTune) -> bool:
    """A2: d̄ ≥ margin and, when the setting asks for it, d̄ > noise·SE."""
    if gain is None or gain < setting.margin:
        return False
    if setting.noise <= 0:
        return True
    return se is not None and gain > setting.noise * se


def fit_pool(
    model: str, matches: Sequence[Match], header: Mapping[str, Any], setting: AutoTune
) -> Fit:
    """Fit the setting's parameters on a pool's export (its header carries the pool's model
    and parameters, the starting point) and decide whether to adopt them."""
    import numpy as np

    from synelo.evaluation.adapters import HistoryInfo
    from synelo.evaluation.tune import tune

    info = HistoryInfo(max((max(len(m.team_a), len(m.team_b)) for m in matches), default=1), header)
    result = tune(model, matches, setting.fit, info=info, train_fraction=1 - setting.holdout)
    current, fitted = result.test_default.log_loss, result.test_fitted.log_loss
    moved = any(result.fitted[name] != result.defaults[name] for name in result.fitted)
    gain, se = paired_gain(
        result.test_losses.get("default", np.empty(0)),
        result.test_losses.get("fitted", np.empty(0)),
    )
    # the pool's own values won: nothing to adopt, whatever the margin
    adopted = moved and current is not None and fitted is not None and adopts(gain, se, setting)
    return Fit(
        dict(result.fitted),
        current,
        fitted,
        result.train_matches,
        result.test_matches,
        setting.margin,
        adopted,
        dict(result.defaults),
        gain,
        se,
        setting.noise,
    )
