"""The API's documents for people, `/docs` (Swagger UI) and `/redoc` (ReDoc), from the
assets the `fastapi-offline` package ships (Swagger UI 5, ReDoc 2.5), served by the app
under `/static/docs/`: no script from a CDN, unpinned and without SRI, in the admin pages'
origin, and documents that work on a server without internet. FastAPI's own pages would
load them from a CDN and start Swagger UI with an inline script, which the CSP forbids;
these start it from `/static/swagger-init.js`."""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter
from fastapi.responses import HTMLResponse

DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"
OWN_ASSETS = Path(__file__).parent / "static"

router = APIRouter(include_in_schema=False)

_SWAGGER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>synelo API: Swagger UI</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/docs/swagger-ui.css">
</head><body><div id="swagger-ui"></div>
<script src="/static/docs/swagger-ui-bundle.js"></script>
<script src="/static/swagger-init.js"></script>
</body></html>
"""
_REDOC = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>synelo API: ReDoc</title>
<link rel="icon" href="data:,">
</head><body><redoc spec-url="/openapi.json"></redoc>
<script src="/static/docs/redoc.standalone.js"></script>
</body></html>
"""


@router.get("/docs", response_class=HTMLResponse)
def swagger_ui() -> HTMLResponse:
    return HTMLResponse(_SWAGGER)


@router.get("/redoc", response_class=HTMLResponse)
def redoc() -> HTMLResponse:
    return HTMLResponse(_REDOC)
