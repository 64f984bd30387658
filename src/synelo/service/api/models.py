"""The rating models a pool can choose, with their parameters (public: nothing secret)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from synelo.domain import POOL_RULES
from synelo.models import MODELS, Model, Param, pool_models
from synelo.models.synelo import SynElo
from synelo.schemas import ModelOut, ModelParamOut, ModelsOut
from synelo.service.api.responses import COMMON

router = APIRouter(prefix="/v1/models", tags=["models"], responses=COMMON)


def _param(name: str, spec: Param) -> ModelParamOut:
    return ModelParamOut(
        name=name,
        default=spec.default,
        low=spec.low,
        high=spec.high,
        above=spec.above,
        integer=spec.integer,
        log=spec.log,
        choices=list(spec.choices),
        doc=spec.doc,
    )


def _model(name: str, model: type[Model[Any]]) -> ModelOut:
    return ModelOut(
        name=name,
        summary=model.summary,
        rating=model.display,
        balance_by=model.balance_by,
        parameters=[_param(n, spec) for n, spec in model.parameters.items()],
    )


@router.get("", response_model=ModelsOut)
def list_models() -> ModelsOut:
    """Every model a pool may choose (the replay-only peers are `synelo replay`'s alone),
    its parameters with their defaults and bounds, and the rules every pool takes besides
    (`POST /v1/pools` checks `params` against these)."""
    return ModelsOut(
        models=[_model(name, MODELS[name]) for name in pool_models()],
        pool_rules=[_param(name, SynElo.parameters[name]) for name in POOL_RULES],
    )
