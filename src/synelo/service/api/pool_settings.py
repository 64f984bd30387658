"""A pool's settings as a request gives them, checked: the model and its parameters over
the settings' defaults or the pool's own, the auto-tuning, and the ratings an admin may set
a player to. Pool creation and a pool's change (a re-rate) check alike, every refusal a 422
naming its field. A change (`plan_patch`) is planned here for both the API's PATCH and
`synelo pool set`, so that the two take and refuse the same changes."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from synelo.config import Settings
from synelo.domain import POOL_RULES, Pool, encode_params, pool_model
from synelo.models import MODELS, Model, ParameterError, pool_models, resolve_params
from synelo.models.synelo import SynElo
from synelo.ratings import SynEloParams
from synelo.rerate.autotune import (
    SCALE,
    AutoTune,
    AutoTuneError,
    check_autotune,
    default_autotune,
    fits_scale,
)
from synelo.schemas import AutoTuneIn, ParamsIn, PoolPatchIn
from synelo.service.ids import invalid
from synelo.store.repository import Store

SET_LIMIT = 1_000_000  # the display ratings an admin may set outside SynElo pools


def model_settings(
    settings: Settings,
    team_size: int,
    model: str,
    theta: float | None,
    given: dict[str, Any],
    base: Pool | None = None,
) -> tuple[SynEloParams, dict[str, Any]]:
    """A pool's SynEloParams and its model's own parameters: `given` over `base`'s (a pool
    that keeps its model) or over the settings' and the model's defaults; every error a
    422 naming its field under body.params (body.model, body.theta)."""
    if model not in MODELS:
        known = ", ".join(pool_models())
        raise invalid(("body", "model"), f"unknown model (known: {known})", value=model)
    if MODELS[model].replay_only:
        raise invalid(("body", "model"), replay_only_message(model), value=model)
    keep = base is not None and base.model == model
    if model == "synelo":
        current = base.params.to_dict() if keep and base is not None else None
        if base is not None and not keep:  # the pool's shadow and stale rules stay
            given = {**{name: getattr(base.params, name) for name in POOL_RULES}, **given}
        return _synelo_params(settings, team_size, theta, given, current), {}
    if theta is not None:
        raise invalid(("body", "theta"), f"Θ is SynElo's; model {model!r} has none")
    rules = {name: value for name, value in given.items() if name in POOL_RULES}
    own = {k: v for k, v in given.items() if k not in POOL_RULES}
    if base is not None:  # a pool's shadow and stale rules stay unless given
        rules = {**{name: getattr(base.params, name) for name in POOL_RULES}, **rules}
        if keep:
            own = {**base.model_params, **own}
    try:
        return pool_rules(settings, rules), resolve_params(MODELS[model], own)
    except ParameterError as exc:
        raise invalid(("body", "params", exc.name), str(exc), value=given.get(exc.name)) from None


def replay_only_message(model: str) -> str:
    """Why a pool cannot choose a replay-only peer, naming the models it can."""
    return (
        f"{model} is a replay-only peer (a reimplementation of another system, for `synelo "
        f"replay` to compare with): a pool cannot choose it (known: {', '.join(pool_models())})"
    )


def autotune_setting(
    model: str,
    params: SynEloParams,
    model_params: dict[str, Any],
    given: AutoTuneIn | None,
    loc: tuple[str, ...] | None = None,
) -> dict[str, Any] | None:
    """A pool's auto-tuning setting (None: off), if the pool can fit its parameters: a 422
    at body.autotune.fit otherwise (at `loc`, for a pool's own setting the body left as
    it was)."""
    if given is None:
        return None
    setting = AutoTune(
        given.every, tuple(given.fit), given.holdout, given.margin, given.first, given.noise
    )
    own = params.to_dict() if model == "synelo" else model_params
    try:
        return check_autotune(model, own, setting).to_json()
    except AutoTuneError as exc:
        where = loc or ("body", "autotune", exc.field)
        raise invalid(where, f"the pool's auto-tuning: {exc}", value=given.fit) from None


def default_setting(model: str) -> dict[str, Any] | None:
    """A new pool's auto-tuning when the body leaves it out (`rerate.autotune.
    default_autotune`): on, fitting the model's scale; None for a model without one."""
    setting = default_autotune(model)
    return None if setting is None else setting.to_json()


def pool_rules(settings: Settings, given: dict[str, Any]) -> SynEloParams:
    """The shadow and stale rules of a pool whose model is not SynElo: the settings', with
    `given` over them (ParameterError naming a bad one), in a SynEloParams (its other
    fields are unused)."""
    rules = {name: getattr(settings, name) for name in POOL_RULES}
    rules.update({name: SynElo.parameters[name].check(name, v) for name, v in given.items()})
    return SynEloParams(**rules)


def _synelo_params(
    settings: Settings,
    team_size: int,
    theta: float | None,
    given: dict[str, Any],
    current: dict[str, Any] | None = None,
) -> SynEloParams:
    """A SynElo pool's parameters: `given` (checked as ParamsIn, every error named under
    body.params) and its Θ over `current` (a pool's own) or the settings'."""
    try:
        overrides = ParamsIn.model_validate(given).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", "params", *e["loc"])} for e in exc.errors()]
        ) from None
    try:
        if current is not None:
            if theta is not None:
                overrides["theta"] = theta
            return SynEloParams.from_dict({**current, **overrides}).within_bounds()
        return settings.rating_params(
            settings.pool_theta(team_size, theta), **overrides
        ).within_bounds()
    except ValueError as exc:
        raise invalid(("body", "params"), str(exc)) from None


def ratable(model: Model[Any], rating: int) -> bool:
    """Whether `model` can still predict and rate rounds of a player set to `rating`: within
    the model's `set_span` of a new player (a Gaussian model's package overflows when one
    skill lies too many β from the other), and rated against a new player, won or lost."""
    span = model.set_span()
    if span is not None and abs(rating - model.rating(model.new_state())) > span:
        return False
    try:
        state = model.with_rating(model.new_state(), rating)
        for winner in ("A", "B"):
            rated = model.rate({"set": state}, model.duel("set", "new", winner))
            if not all(math.isfinite(model.rating(s)) for s in rated.states.values()):
                return False
    except (ArithmeticError, ValueError):
        return False
    return True


def settable(pool: Pool, rating: int) -> bool:
    """Whether an admin may set a player of `pool` to `rating`: within SynElo's R_min…R_max,
    or for another model within ±SET_LIMIT and one it can still rate from (`ratable`)."""
    if pool.is_synelo:
        return pool.params.r_min <= rating <= pool.params.r_max
    return -SET_LIMIT <= rating <= SET_LIMIT and ratable(pool_model(pool), rating)


def check_logged_sets(
    store: Store,
    pool: Pool,
    model: str,
    params: SynEloParams,
    model_params: dict[str, Any],
) -> None:
    """A re-rate replays the pool's admin sets through the new model: each must be one a
    pool of it would take (422 at body.model naming the first that is not)."""
    target = Pool(
        pool.id,
        pool.name,
        pool.team_size,
        pool.player_ids,
        params,
        0,
        0.0,
        pool.created_at,
        model,
        model_params,
    )
    for change in store.changes(pool, ["set"]):
        rating = (change.value or {}).get("rating")
        if rating is not None and not settable(target, rating):
            raise invalid(
                ("body", "model"),
                f"the admin set of {change.player_key} to {rating} (change {change.id}) is "
                f"outside what a {model} pool with these parameters takes",
                value=model,
            )


@dataclass(frozen=True, slots=True)
class PatchPlan:
    """What a pool's change does: `rerate` is the spec of the re-rate job it needs (None:
    nothing to re-rate); `autotune` and `public`, when `sets_autotune` and `public` is not
    None, are set at once (beside the job, if there is one)."""

    rerate: dict[str, object] | None
    sets_autotune: bool
    autotune: dict[str, Any] | None
    public: bool | None
    reason: str | None


def _refuse_nulls(params: dict[str, Any]) -> None:
    """A 422 for a parameter given as null, which would "change" it to itself and re-rate
    the pool for nothing."""
    for name, value in params.items():
        if value is None:
            raise invalid(
                ("body", "params", name), "null is no value: leave the parameter out to keep it"
            )


def plan_patch(settings: Settings, store: Store, current: Pool, body: PoolPatchIn) -> PatchPlan:
    """Check a change of `current` (a 422 naming the field for a bad one, or for a body
    with nothing to change) and say what it does."""
    changes_ratings = {"model", "params", "theta"} & body.model_fields_set
    _refuse_nulls(body.params or {})
    model = body.model if body.model is not None else current.model
    params, model_params = model_settings(
        settings, current.team_size, model, body.theta, body.params or {}, base=current
    )
    sets_autotune = "autotune" in body.model_fields_set
    if sets_autotune:
        follows, autotune = False, autotune_setting(model, params, model_params, body.autotune)
    else:
        follows, autotune = _kept_autotune(current, model, params, model_params)
    check_logged_sets(store, current, model, params, model_params)
    if "public" in body.model_fields_set and body.public is None:
        raise invalid(("body", "public"), "true or false", value=None)
    if not changes_ratings:  # auto-tuning or visibility alone: at once, nothing to re-rate
        if not sets_autotune and body.public is None:
            raise invalid(
                ("body",), "nothing to change: give model, params, theta, autotune or public"
            )
        return PatchPlan(None, sets_autotune, autotune, body.public, body.reason)
    new_params = json.loads(encode_params(model, params, model_params))
    changed = _changed(current, model, new_params)
    if (sets_autotune or follows) and autotune != current.autotune:  # set at the swap
        changed["autotune"] = [current.autotune, autotune]
    spec: dict[str, object] = {"model": model, "params": new_params, "changed": changed}
    if body.public is not None and body.public != current.public:  # set at once: said so
        spec["public"] = body.public
    if sets_autotune or follows:  # set with the new model, at the swap, and said so
        spec["autotune"] = autotune
    if body.reason is not None:
        spec["reason"] = body.reason
    return PatchPlan(spec, False, autotune, body.public, body.reason)


def _kept_autotune(
    current: Pool, model: str, params: SynEloParams, model_params: dict[str, Any]
) -> tuple[bool, dict[str, Any] | None]:
    """The auto-tuning of a change whose body leaves it out, and whether the change sets it
    (a model switch that moves it, True) or the pool keeps its own. A switch moves a setting
    that fits the old model's scale (a new pool's default) to the new model's, or turns it
    off if that has none; and turns a new pool's default on when the pool's auto-tuning is
    off and the switch is from a model without a scale to one with (WHR back to SynElo).
    Any other setting is the pool's own, which must still work with the new model."""
    switch = model != current.model
    if current.autotune is None:
        if switch and SCALE.get(current.model) is None and model in SCALE:
            return True, default_setting(model)
        return False, None
    own = {"first": None, "noise": 0.0, **current.autotune}  # as stored, however old
    follows = switch and fits_scale(current.model, own["fit"])
    if follows:
        own["fit"] = [SCALE.get(model)]
    given = None if own["fit"] == [None] else AutoTuneIn.model_validate(own)
    return follows, autotune_setting(model, params, model_params, given, loc=("body", "autotune"))


def _changed(current: Pool, model: str, params: dict[str, Any]) -> dict[str, list[Any]]:
    """What a re-rate changes, for people ({name: [was, becomes]}): the model, and each
    parameter whose value differs (None where the old model had no such parameter)."""
    was = json.loads(encode_params(current.model, current.params, current.model_params))
    changed: dict[str, list[Any]] = {}
    if model != current.model:
        changed["model"] = [current.model, model]
    changed.update({k: [was.get(k), v] for k, v in params.items() if was.get(k) != v})
    return changed


def apply_at_once(store: Store, pool: Pool, plan: PatchPlan, who: str) -> Pool:
    """Set what the plan sets at once (the auto-tuning without a re-rate, the visibility),
    logged as `who`'s; the pool as it then stands."""
    changed = pool
    if plan.sets_autotune:
        changed = store.set_autotune(pool.name, plan.autotune, who, plan.reason)
    if plan.public is not None:
        changed = store.set_public(pool.name, plan.public, who, plan.reason)
    return changed
