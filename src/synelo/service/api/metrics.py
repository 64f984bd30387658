"""`GET /metrics`: the Prometheus scrape of the figures `synelo.service.middleware.metrics`
keeps (every worker's under `serve --workers N`), behind an admin token unless public."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from synelo.service.auth import require
from synelo.service.middleware.metrics import QUEUE_DEPTH, registry


def router(public: bool, queued: Callable[[], int]) -> APIRouter:
    """`GET /metrics`, which needs an admin token unless `public`. Out of the OpenAPI
    document: it is for Prometheus, not for API clients."""
    metrics = APIRouter()
    dependencies = [] if public else [Depends(require("admin"))]

    @metrics.get("/metrics", include_in_schema=False, dependencies=dependencies)
    def scrape() -> Response:
        QUEUE_DEPTH.set(queued())  # this worker's, now
        return Response(generate_latest(registry()), media_type=CONTENT_TYPE_LATEST)

    return metrics
