"""The rating models a pool can choose, with their parameters (public: nothing secret)."""

from __future__ import annotations

from fastapi import APIRouter

from synelo.domain import POOL_RULES
from synelo.models import MODELS, Param
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


@router.get("", response_model=ModelsOut)
def list_models() -> ModelsOut:
    """Every registered model, its parameters with their defaults and bounds, and the
    rules every pool takes besides (`POST /v1/pools` checks `params` against these)."""
    return ModelsOut(
        models=[
            ModelOut(
                name=name,
                summary=model.summary,
                rating=model.display,
                balance_by=model.balance_by,
                parameters=[_param(n, spec) for n, spec in model.parameters.items()],
            )
            for name, model in MODELS.items()
        ],
        pool_rules=[_param(name, SynElo.parameters[name]) for name in POOL_RULES],
    )
