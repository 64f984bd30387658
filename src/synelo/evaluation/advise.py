"""`synelo advise`: which of synelo's general models predicts a pool's own rounds best.

A pool's rounds (its journal export) are split in order: the older part (the first
`TRAIN_FRACTION` of the matches) and the newer part (the rest). Every general model (the
models that suit any team game: `Model.general`) is replayed over the whole history twice,
at its defaults and with its main parameters (`FIT`) tuned on the older part
(`evaluation.tune.tune`), and each is scored on the newer part only: log loss, Brier, and
calibration (ECE over ten bins, the calibration-in-the-large and the calibration slope).
Plain Elo is replayed the same way as a reference row, and the pool's own model with its
own parameters as the "current" row.

The recommendation is the general row with the lowest newer-part log loss. Its margin over
another row is judged against the noise of the newer part's rounds: the paired difference
d_i = ℓ_other,i − ℓ_best,i of the two rows' log losses on each decided round i, its mean d̄
and standard error SE = sd(d)/√n; the margin is *beyond the noise* when d̄ > 2·SE (about a
one-sided 2.3 % chance that a model no better shows such a lead on these rounds). Pairing
removes what every model finds hard about a round (an upset costs them all), so the SE is
that of the difference, far smaller than either loss's own.

A general model whose newer-part log loss is more than `POOR` (3 %) above Elo's, at the same
setting (defaults against defaults, tuned against tuned), gets a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from synelo.domain import POOL_RULES
from synelo.evaluation.adapters import HistoryInfo, ModelReplay, RatingModel, create_replay
from synelo.evaluation.adapters.synelo import SynEloReplay
from synelo.evaluation.history import Match
from synelo.evaluation.metrics import EPS, Scores, log_losses, outcome, score
from synelo.evaluation.replay import frozen_heap, predict_all, scored_mask
from synelo.evaluation.tune import tune
from synelo.models import MODELS

TRAIN_FRACTION = 0.7  # the older part: what each model is tuned on
MIN_ROUNDS = 200  # below this, the newer part (60 rounds) says nothing: no advice
# Advise replays the newest this many rounds at most (every model starting afresh at the
# first of them), so that a job on a large pool holds the pool's one job slot for minutes,
# not hours: at the 22 s per 1,500 rounds of 6v6 measured on an idle core
# (docs/evaluation.md), 20,000 rounds take about 5 minutes; larger teams, longer.
MAX_ROUNDS = 20_000
NOISE_SE = 2.0  # a margin is beyond the noise above this many standard errors
POOR = 0.03  # a general model this much worse than Elo (log loss) is warned about
REFERENCE = "elo"
ITERATIONS = 10  # golden-section steps per tuned parameter: 0.8 % of its range is left
# Each model's main parameter(s), the ones advise tunes: its scale or its learning rate.
# A model not named fits its first tunable parameter.
FIT: Mapping[str, tuple[str, ...]] = {
    # F1's scale, F5's long-run step (the learning rate a pool keeps) and F1t's calibration
    "synelo": ("theta", "k_min", "temperature"),
    "hive": ("c",),  # the constant learning rate (H4)
    "whr": ("variance_scale",),  # how fast skills drift per day (W4)
    "margin": ("beta",),  # a side's score noise (M9)
    "elo": ("k",),  # K (Θ only matters through K/Θ)
}

# The parameters that schedule the service's work and that no replay follows: WHR's
# full-history refits, Hive's full solve at the end of a re-rate. A switch keeps the pool's.
SCHEDULES = ("refit_every", "solve")

Setting = Literal["defaults", "tuned", "current"]
Progress = Callable[[float], None]  # the fraction of the work done, 0…1


class TooFewRounds(ValueError):
    """The history is too short to advise on: `needed` rounds at least."""

    def __init__(self, rounds: int, needed: int) -> None:
        super().__init__(
            f"advise needs at least {needed:,} rounds to split into an older part to tune on "
            f"and a newer part to score on; this history has {rounds:,}"
        )
        self.rounds, self.needed = rounds, needed


class NoDecidedRounds(ValueError):
    """The newer part has rounds, but none decided (draws only): nothing to score on."""

    def __init__(self, newer: int) -> None:
        super().__init__(
            f"advise scores the newer part of the rounds, and none of its {newer:,} rounds "
            "has a winner (draws only): nothing to tell the models apart by"
        )
        self.newer = newer


def scored_params(replay: RatingModel) -> dict[str, Any]:
    """Every parameter `replay` rated with, as a pool of its model keeps them (SynElo's
    SynEloParams, another model's resolved parameters), but the pool's shadow and stale
    rules (`POOL_RULES`, the pool's own whatever its model) and what the service schedules
    but a replay never does (`SCHEDULES`): what a switch must set, explicitly."""
    if isinstance(replay, SynEloReplay):
        params: dict[str, Any] = replay.params.to_dict()
    elif isinstance(replay, ModelReplay):
        params = dict(replay.model.params)
    else:
        return {}
    return {k: v for k, v in params.items() if k not in (*POOL_RULES, *SCHEDULES)}


def general_models() -> list[str]:
    """The models that suit any team game (`Model.general`), in the registry's order."""
    return [name for name in MODELS if MODELS[name].general]


def fit_of(model: str) -> tuple[str, ...]:
    """The parameters advise tunes for `model` (`FIT`, else its first tunable one)."""
    if model in FIT:
        return FIT[model]
    tunable = MODELS[model].tunable()
    return (next(iter(tunable)),) if tunable else ()


@dataclass(frozen=True, slots=True)
class Calibration:
    """How far the predictions' level and spread are from the outcomes' (decided rounds)."""

    in_the_large: float | None  # mean outcome − mean p: > 0, A wins more than predicted
    slope: float | None  # 1: well spread; < 1: too confident; > 1: too timid

    def to_json(self) -> dict[str, float | None]:
        return {"in_the_large": self.in_the_large, "slope": self.slope}


def calibration(p: np.ndarray, o: np.ndarray) -> Calibration:
    """Calibration-in-the-large, mean(o) − mean(p), and the calibration slope b of the
    logistic recalibration o ~ σ(a + b·logit p), fitted by maximum likelihood (Cox 1958,
    "Two further applications of a model for binary regression"; Newton's method), over the
    decided rounds. None where there are none, or the fit does not converge (a separable
    set)."""
    decided = o != 0.5
    if not decided.any():
        return Calibration(None, None)
    pd, od = p[decided], o[decided]
    large = float(od.mean() - pd.mean())
    x = np.log(np.clip(pd, EPS, 1 - EPS)) - np.log1p(-np.clip(pd, EPS, 1 - EPS))
    design = np.column_stack([np.ones_like(x), x])
    beta = np.array([0.0, 1.0])
    for _ in range(50):
        q = 1 / (1 + np.exp(-(design @ beta)))
        w = q * (1 - q)
        hessian = design.T @ (design * w[:, None])
        if np.linalg.cond(hessian) > 1e12:
            return Calibration(large, None)
        step = np.linalg.solve(hessian, design.T @ (od - q))
        beta = beta + step
        if np.abs(step).max() < 1e-9:
            return Calibration(large, float(beta[1]))
    return Calibration(large, None)


@dataclass(frozen=True, slots=True)
class Row:
    """One model at one setting, scored on the newer part."""

    model: str
    setting: Setting
    params: dict[str, Any]  # what differs from its defaults (tuned), or the pool's own
    scores: Scores
    calibration: Calibration
    general: bool
    losses: np.ndarray = field(repr=False)  # per decided newer-part round
    warning: str | None = None
    # every parameter the replay rated with, as a pool keeps them (`scored_params`)
    full: dict[str, Any] = field(default_factory=dict)
    on_bound: tuple[str, ...] = ()  # a tuned value on the edge of its search range: why

    @property
    def label(self) -> str:
        return f"{self.model} ({self.setting})"

    def params_text(self) -> str:
        """The parameters as people read them ("theta 2748"; "—" for none)."""
        return (
            ", ".join(
                f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                for k, v in self.params.items()
            )
            or "—"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "setting": self.setting,
            "params": self.params,
            "general": self.general,
            "log_loss": self.scores.log_loss,
            "brier": self.scores.brier,
            "ece": self.scores.ece,
            "accuracy": self.scores.accuracy,
            "calibration": self.calibration.to_json(),
            "warning": self.warning,
            "scored_params": self.full,
            "on_bound": list(self.on_bound),
        }


@dataclass(frozen=True, slots=True)
class Margin:
    """How much better the recommended row predicts than `other`: the mean paired
    difference of log losses per round, its standard error, and the verdict (see the
    module)."""

    other: str  # its model
    setting: Setting
    difference: float
    se: float
    rounds: int

    @property
    def beyond_noise(self) -> bool:
        return self.difference > NOISE_SE * self.se

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.other,
            "setting": self.setting,
            "difference": self.difference,
            "se": self.se,
            "rounds": self.rounds,
            "beyond_noise": self.beyond_noise,
        }


def paired_margin(best: Row, other: Row) -> Margin:
    """d̄ and SE(d̄) = sd(d)/√n of d_i = ℓ_other,i − ℓ_best,i over the same rounds (the
    paired difference of per-round log losses; sd with n − 1)."""
    d = other.losses - best.losses
    n = int(d.size)
    se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return Margin(other.model, other.setting, float(d.mean()) if n else 0.0, se, n)


@dataclass(slots=True)
class Advice:
    """Every row, the recommendation and its margins (see the module)."""

    rounds: int
    older: int
    newer: int  # rounds scored in the newer part
    rows: list[Row]
    best: Row
    runner_up: Margin | None  # the best row of another general model
    over_current: Margin | None  # over the pool's own model as set up (None: no such row)
    over_reference: Margin | None
    margins: list[Margin]  # over the best row of every other model
    gaps: list[Margin]  # over every other row
    current_model: str | None
    warnings: list[str]
    autotuned: bool = False  # the pool auto-tunes: its own row has seen the newer rounds
    skipped: int = 0  # the oldest rounds left out (`MAX_ROUNDS`)

    @property
    def keep(self) -> bool:
        """The pool's own setup predicts the newer rounds best: keep it, switch nothing."""
        return self.best.setting == "current"

    @property
    def within_noise(self) -> list[str]:
        """The other general models whose gap behind the best is within the noise (from 0
        up to NOISE_SE standard errors; a row that beats the best is never listed)."""
        general = {r.model for r in self.rows if r.general}
        return [
            m.other
            for m in self.margins
            if m.other in general and m.difference >= 0 and not m.beyond_noise
        ]

    def switch(self) -> dict[str, Any] | None:
        """The PATCH body that makes the pool rate with the recommendation: its model and
        every parameter the replay scored it with, explicitly (`Row.full`: Θ apart for
        SynElo), so that nothing of the pool's old setup or the operator's settings is kept
        that advise did not score. None when the pool is to be kept (`keep`) or already
        rates with exactly that: a switch that would change nothing."""
        best = self.best
        if self.keep:
            return None
        now = next((r for r in self.rows if r.setting == "current"), None)
        if now is not None and now.model == best.model and now.full == best.full:
            return None
        body: dict[str, Any] = {"model": best.model}
        params = dict(best.full)
        if best.model == "synelo" and "theta" in params:
            body["theta"] = params.pop("theta")
        if params:
            body["params"] = params
        return body

    def verdict(self) -> str:
        """The recommendation in a sentence."""
        best, up = self.best, self.runner_up
        if self.keep:
            text = (
                f"Keep the pool as it is: its own setup ({best.model}, as set up) predicts "
                "the newer rounds best"
            )
        else:
            text = f"{best.model} ({best.setting}) predicts the newer rounds best"
        if up is None:
            return text + "."
        gap = f"{up.difference:.4f} ± {up.se:.4f} nats a round over {up.other} ({up.setting})"
        if up.beyond_noise:
            return f"{text}: {gap}, beyond the noise (more than {NOISE_SE:g} SE)."
        return f"{text}, but within the noise: {gap} (not more than {NOISE_SE:g} SE)."

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "skipped_rounds": self.skipped,
            "older_rounds": self.older,
            "newer_rounds": self.newer,
            "current_model": self.current_model,
            "keep": self.keep,
            "autotuned": self.autotuned,
            "recommended": {
                "model": self.best.model,
                "setting": self.best.setting,
                "params": self.best.params,
                "scored_params": self.best.full,
                "log_loss": self.best.scores.log_loss,
            },
            "verdict": self.verdict(),
            "runner_up": None if self.runner_up is None else self.runner_up.to_json(),
            "over_current": None if self.over_current is None else self.over_current.to_json(),
            "over_reference": (
                None if self.over_reference is None else self.over_reference.to_json()
            ),
            "margins": [m.to_json() for m in self.margins],
            "gaps": [m.to_json() for m in self.gaps],
            "within_noise": self.within_noise,
            "switch": self.switch(),
            "noise": f"paired per-round log-loss difference > {NOISE_SE:g} standard errors",
            "rows": [r.to_json() for r in self.rows],
            "warnings": self.warnings,
        }


def _without_pool(header: Mapping[str, Any]) -> dict[str, Any]:
    """The header without the pool's model and parameters: a replay at the defaults."""
    return {k: v for k, v in header.items() if k not in ("model", "params")}


def advise(  # noqa: C901
    matches: Sequence[Match],
    header: Mapping[str, Any] | None = None,
    *,
    models: Sequence[str] | None = None,
    train_fraction: float = TRAIN_FRACTION,
    min_rounds: int = MIN_ROUNDS,
    iterations: int = ITERATIONS,
    progress: Progress | None = None,
    autotuned: bool = False,
    max_rounds: int = MAX_ROUNDS,
) -> Advice:
    """Replay and score every general model (or `models`), Elo and the pool's own (see the
    module); TooFewRounds below `min_rounds`, ValueError for an unknown model. `autotuned`:
    the pool auto-tunes, so its own parameters were fitted on rounds that include the newer
    part (its row is then said to be optimistic). Only the newest `max_rounds` are replayed
    (`MAX_ROUNDS`): `Advice.skipped` says how many older ones were left out."""
    header = dict(header or {})
    skipped = max(len(matches) - max_rounds, 0)
    matches = matches[skipped:]
    if len(matches) < min_rounds:
        raise TooFewRounds(len(matches), min_rounds)
    names = list(models) if models is not None else general_models()
    for name in names:
        if name not in MODELS:
            raise ValueError(f"unknown model {name!r} (known: {', '.join(MODELS)})")
    if not names:
        raise ValueError("no model to advise between")
    current = header.get("model") if header.get("model") in MODELS else None
    size = max((max(len(m.team_a), len(m.team_b)) for m in matches), default=1)
    first = max(len(matches[0].team_a), len(matches[0].team_b))
    plain = HistoryInfo(size, _without_pool(header), first)
    pooled = HistoryInfo(size, header, first)
    n_train = int(len(matches) * train_fraction)
    mask = scored_mask(matches, n_train)
    outcomes = np.fromiter((outcome(m.winner) for m in matches), dtype=float, count=len(matches))
    o = outcomes[mask]
    if not (o != 0.5).any():
        raise NoDecidedRounds(int(mask.sum()))
    order = [*names, *([REFERENCE] if REFERENCE not in names else [])]
    # the work: per model a tune (1 + iterations + 2 replays of the older part per
    # parameter, then its two full replays) and our two full replays, in full replays
    units = {n: (1 + len(fit_of(n)) * (iterations + 2)) * train_fraction + 4 for n in order}
    total = sum(units.values()) + (2 if current is not None else 0)
    done = 0.0

    def tick(amount: float) -> None:
        nonlocal done
        done += amount
        if progress is not None:
            progress(min(done / total, 0.999))

    stored = dict(header.get("params") or {})
    # the pool's shadow and stale rules stay the pool's whatever model it switches to
    # (`service.api.pool_settings.model_settings`), so SynElo's rows replay with them
    rules = {k: stored[k] for k in POOL_RULES if k in stored}

    def fixed(name: str) -> dict[str, Any]:
        return dict(rules) if name == "synelo" else {}

    def row(
        name: str,
        setting: Setting,
        info: HistoryInfo,
        point: Mapping[str, float],
        on_bound: tuple[str, ...] = (),
    ) -> Row:
        options = {} if setting == "current" else {**fixed(name), **point}
        replay = create_replay(name, options, info)
        predictions, _ = predict_all(replay, matches)
        p = np.frombuffer(predictions, dtype=float)[mask]
        shown = dict(point) if setting != "current" else stored
        return Row(
            name,
            setting,
            shown,
            score(p, o),
            calibration(p, o),
            MODELS[name].general,
            log_losses(p, o),
            full=scored_params(replay),
            on_bound=on_bound,
        )

    rows: list[Row] = []
    with frozen_heap():
        for name in order:
            rows.append(row(name, "defaults", plain, {}))
            tick(1)
            fit = fit_of(name)
            if fit:
                evaluated = 0

                def seen(_: str, name: str = name) -> None:
                    nonlocal evaluated
                    evaluated += 1
                    tick(train_fraction)

                fitted = tune(
                    name,
                    matches,
                    fit,
                    options=fixed(name),
                    info=plain,
                    train_fraction=train_fraction,
                    iterations=iterations,
                    progress=seen,
                )
                tick(max(units[name] - 2 - evaluated * train_fraction, 0))
                moved = {k: v for k, v in fitted.fitted.items() if v != fitted.defaults.get(k)}
                edges = tuple(b.warning() for b in fitted.on_bound)
                rows.append(row(name, "tuned", plain, moved, edges))
            tick(1)
        if current is not None:
            rows.append(row(current, "current", pooled, {}))
            tick(2)
    result = recommend(rows, len(matches), n_train, int(mask.sum()), current, autotuned)
    result.skipped = skipped
    if progress is not None:
        progress(1.0)
    return result


def _loss(r: Row) -> float:
    return math.inf if r.scores.log_loss is None else r.scores.log_loss


def recommend(
    rows: list[Row],
    rounds: int,
    older: int,
    newer: int,
    current: str | None,
    autotuned: bool = False,
) -> Advice:
    """The best general row of `rows` (`older` rounds tuned on, `newer` scored; the pool's
    model `current`), its margins over the rest and the warnings (see the module). When
    the pool's own row beats every general row, the pool's own setup is the pick: keep it
    (a lead never shows as negative, nor a switch to something worse). `autotuned`: the
    pool auto-tunes, so its own row's parameters have seen the newer rounds (a warning)."""
    general = [r for r in rows if r.general and r.setting != "current"] or rows
    best = min(general, key=_loss)
    now = next((r for r in rows if r.setting == "current"), None)
    if now is not None and _loss(now) < _loss(best):
        best = now
    per_model: dict[str, Row] = {}
    for r in rows:
        if r is best or (r.model == best.model and not (best is now and r.general)):
            continue
        if r.model not in per_model or _loss(r) < _loss(per_model[r.model]):
            per_model[r.model] = r
    margins = sorted(
        (paired_margin(best, r) for r in per_model.values()), key=lambda m: m.difference
    )
    general_names = {r.model for r in general}
    runner = next((m for m in margins if m.other in general_names), None)
    over_current = None if now is None or now is best else paired_margin(best, now)
    reference = per_model.get(REFERENCE)
    over_reference = None if reference is None else paired_margin(best, reference)
    warnings = []
    elo: dict[str, Row] = {
        r.setting: r for r in rows if r.model == REFERENCE and r.setting != "current"
    }
    for r in rows:
        against = elo.get(r.setting)
        if not r.general or r.setting == "current" or against is None:
            continue
        mine, theirs = r.scores.log_loss, against.scores.log_loss
        if mine is not None and theirs is not None and mine > theirs * (1 + POOR):
            warnings.append(
                f"{r.model} ({r.setting}) predicts this pool's newer rounds "
                f"{(mine / theirs - 1) * 100:.1f} % worse than plain Elo ({r.setting}): "
                f"log loss {mine:.4f} against {theirs:.4f}"
            )
    for r in rows:
        warnings.extend(f"{r.model} ({r.setting}): {why}" for why in r.on_bound)
    if autotuned and now is not None:
        warnings.append(
            f"the pool auto-tunes: its own parameters ({now.model}, as set up) were fitted "
            "on rounds that include the newer part advise scores on, so its row is "
            "optimistic against the others, tuned on the older part only"
        )
    gaps = [paired_margin(best, r) for r in rows if r is not best]
    return Advice(
        rounds,
        older,
        newer,
        rows,
        best,
        runner,
        over_current,
        over_reference,
        margins,
        gaps,
        current,
        warnings,
        autotuned,
    )
