"""What a re-rate job rates with: the model and parameters it targets (a patch's, an adopted
auto-tune's, or the pool's own), and the pure recompute made of them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from synelo.domain import Pool, encode_params, pool_params, stored_model
from synelo.models import MODELS, resolve_params
from synelo.models.recompute import Recompute
from synelo.ratings import SynEloParams


def target_model(pool: Pool, spec: Mapping[str, Any]) -> tuple[str, str]:
    """The model and parameters' JSON a job re-rates with: a patch's, else the pool's."""
    if "model" in spec:
        return spec["model"], json.dumps(spec["params"])
    return pool.model, encode_params(pool.model, pool.params, pool.model_params)


def adopted_params(pool: Pool, fitted: Mapping[str, float]) -> str:
    """The pool's parameters' JSON with `fitted` over them (an adopted auto-tune)."""
    if pool.is_synelo:
        params = SynEloParams.from_dict({**pool.params.to_dict(), **fitted}).within_bounds()
        return encode_params("synelo", params, {})
    own = resolve_params(MODELS[pool.model], {**pool.model_params, **fitted})
    return encode_params(pool.model, pool.params, own)


def recompute_for(model_name: str, params_text: str, refit: bool = False) -> Recompute:
    """The pure recompute for a model and its parameters' JSON; `refit`: it ends with the
    model's full-history fit even when the model only refits when asked (a refit job)."""
    synelo, _ = pool_params(model_name, params_text)
    return Recompute(
        stored_model(model_name, params_text),
        synelo if model_name == "synelo" else None,
        refit,
    )
