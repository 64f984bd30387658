"""Auto-tuning, opt-in per pool: re-fit some of the pool's parameters on its own rounds every
N rounds, and adopt the fit (by re-rating the pool) only when it predicts the rounds it was
not fitted on better by a stated margin.

The fit is `synelo tune`'s (`evaluation.tune.tune`): the first 1 − holdout of the pool's
rounds, in order, are the training part, on which each parameter is searched to minimise the
log loss of a fresh replay; then the whole history is replayed with the pool's parameters and
with the fitted ones, and both are scored on the held-out rounds only (after the training
part). The fit is adopted when the held-out log loss falls by at least `margin`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import Match
from synelo.evaluation.tune import expand_fit, tune

MIN_EVERY = 100  # rounds between fits, at least
DEFAULT_HOLDOUT = 0.2
DEFAULT_MARGIN = 0.002  # nats of held-out log loss per round


@dataclass(frozen=True, slots=True)
class AutoTune:
    """A pool's auto-tuning: fit `fit` every `every` rounds, hold out the newest `holdout`
    of the rounds, adopt when the held-out log loss improves by `margin` or more."""

    every: int
    fit: tuple[str, ...]
    holdout: float = DEFAULT_HOLDOUT
    margin: float = DEFAULT_MARGIN

    def to_json(self) -> dict[str, Any]:
        return {
            "every": self.every,
            "fit": list(self.fit),
            "holdout": self.holdout,
            "margin": self.margin,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AutoTune:
        return cls(data["every"], tuple(data["fit"]), data["holdout"], data["margin"])


class AutoTuneError(ValueError):
    """An auto-tuning setting that cannot work; `field` names the part at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_autotune(model: str, params: Mapping[str, Any], setting: AutoTune) -> AutoTune:
    """The setting, if a pool of `model` with `params` can fit its parameters (AutoTuneError
    naming the field otherwise): each must be tunable, and not inert as the pool is set up
    (SynElo's F3 weights under the revised F3)."""
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
    """The outcome of one auto-tune: the parameters fitted, the held-out log loss of the
    pool's parameters and of the fitted ones, the rounds each part had, and the verdict."""

    fitted: dict[str, float]
    heldout_current: float | None
    heldout_fitted: float | None
    train_rounds: int
    heldout_rounds: int
    margin: float
    adopted: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "fitted": self.fitted,
            "heldout_log_loss_current": self.heldout_current,
            "heldout_log_loss_fitted": self.heldout_fitted,
            "train_rounds": self.train_rounds,
            "heldout_rounds": self.heldout_rounds,
            "margin": self.margin,
            "adopted": self.adopted,
        }


def fit_pool(
    model: str, matches: Sequence[Match], header: Mapping[str, Any], setting: AutoTune
) -> Fit:
    """Fit the setting's parameters on a pool's export (its header carries the pool's model
    and parameters, the starting point) and decide whether to adopt them."""
    info = HistoryInfo(max((max(len(m.team_a), len(m.team_b)) for m in matches), default=1), header)
    result = tune(model, matches, setting.fit, info=info, train_fraction=1 - setting.holdout)
    current, fitted = result.test_default.log_loss, result.test_fitted.log_loss
    moved = any(result.fitted[name] != result.defaults[name] for name in result.fitted)
    adopted = (
        moved  # the pool's own values won: nothing to adopt, whatever the margin
        and current is not None
        and fitted is not None
        and current - fitted >= setting.margin
    )
    return Fit(
        dict(result.fitted),
        current,
        fitted,
        result.train_matches,
        result.test_matches,
        setting.margin,
        adopted,
    )
