"""Every answer's security headers (issue 36, defects 1 and 2), over real HTTP on both
databases: pages, the API's answers and errors, the API documents and the static files.
tests/browser/test_security_headers.py checks what Chromium makes of them."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.service.middleware.headers import DOCS_POLICY, PAGE_POLICY
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store
from tests.conftest import LiveServer, serving, steam


def _directives(policy: str) -> dict[str, list[str]]:
    return {
        name: values
        for name, *values in (part.split() for part in policy.split(";") if part.strip())
    }


def _check(answer: httpx.Response) -> dict[str, list[str]]:
    """The common headers are there; the CSP's directives."""
    assert answer.headers["x-frame-options"] == "DENY", answer.request.url
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "same-origin"
    csp = _directives(answer.headers["content-security-policy"])
    assert csp["frame-ancestors"] == ["'none'"] and csp["default-src"] == ["'none'"]
    assert "unsafe-eval" not in answer.headers["content-security-policy"]
    return csp


def test_every_kind_of_answer_has_the_headers(live: LiveServer, admin: httpx.Client) -> None:
    name = f"sh{uuid.uuid4().hex[:10]}"
    assert admin.post("/v1/pools", json={"name": name, "public": True}).status_code == 201
    with live.client(None) as anyone:
        answers = [
            anyone.get("/"),
            anyone.get("/login"),
            anyone.get(f"/pools/{name}"),
            anyone.get("/pools/nosuchpool"),  # the not-found page
            anyone.get("/healthz"),
            anyone.get("/openapi.json"),
            anyone.get("/static/synelo.css"),
            anyone.get("/static/docs/swagger-ui-bundle.js"),
            anyone.get(f"/v1/public/pools/{name}/leaderboard"),
            anyone.get("/v1/pools"),  # 401
            admin.get(f"/v1/pools/{name}/players/{steam(1)}"),
            admin.post("/v1/pools", json={"name": "bad name"}),  # 422
            admin.post("/v1/pools", content=b"x" * (live.settings.max_body_bytes + 1)),  # 413
        ]
    statuses = [a.status_code for a in answers]
    assert statuses == [200, 200, 200, 404, 200, 200, 200, 200, 200, 401, 200, 422, 413]
    for answer in answers:
        csp = _check(answer)
        assert "script-src" not in csp  # no script at all: default-src 'none'
        assert csp["style-src"] == ["'self'"]  # the stylesheet file, nothing inline
    page = answers[2].text
    assert "<style" not in page and "style=" not in page and "<script" not in page
    assert '<link rel="stylesheet" href="/static/synelo.css">' in page
    assert answers[6].headers["content-type"].startswith("text/css")


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_api_documents_load_packaged_scripts_only(admin: httpx.Client, path: str) -> None:
    """No script from a CDN: every script and stylesheet is the server's own, pinned by
    the package that ships it; and no inline script (only inline styles, which Swagger UI
    and ReDoc inject)."""
    answer = admin.get(path)
    assert answer.status_code == 200
    csp = _check(answer)
    assert csp["script-src"] == ["'self'"]
    assert answer.headers["content-security-policy"] == DOCS_POLICY
    html = answer.text
    assert "http:" not in html and "https:" not in html and "//" not in html
    assert re.findall(r"<script>", html) == []  # every script has a src
    for src in re.findall(r'(?:src|href)="(/[^"]+)"', html):
        loaded = admin.get(src)
        assert loaded.status_code == 200 and loaded.content, src
        _check(loaded)


def test_the_page_policy_allows_no_inline_script_or_style() -> None:
    csp = _directives(PAGE_POLICY)
    assert "'unsafe-inline'" not in PAGE_POLICY and "script-src" not in csp
    assert csp["form-action"] == ["'self'"] and csp["base-uri"] == ["'none'"]


def test_an_unhandled_errors_500_has_the_headers(tmp_path: Path) -> None:
    """Starlette answers an unhandled error's 500 from ServerErrorMiddleware, outside every
    middleware the app adds, so the 500 had none of the headers. The app as create_app
    builds it, under uvicorn, with a route added that raises."""
    engine = create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}")
    migrate(engine)
    app = create_app(Settings(data_dir=tmp_path, admin_tokens=["a" * 43]), store=Store(engine))

    def broken() -> None:
        raise RuntimeError("a bug, on purpose")

    app.add_api_route("/broken", broken)
    try:
        with serving(app) as url, httpx.Client(base_url=url) as anyone:
            answer = anyone.get("/broken")
    finally:
        engine.dispose()
    assert answer.status_code == 500 and answer.json() == {"detail": "internal server error"}
    assert answer.headers["content-security-policy"] == PAGE_POLICY
    _check(answer)
    assert answer.headers.get_list("x-frame-options") == ["DENY"]  # once, not twice
