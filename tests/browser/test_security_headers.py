"""The security headers in Chromium (issue 36, defects 1 and 2): a page framed from another
origin on the same host is not shown, and every page renders under its CSP with no
violation (the `page` fixture fails on any console error, a refused load included)."""

from __future__ import annotations

import uuid

import httpx
import pytest
from playwright.sync_api import Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.conftest import ADMIN, LiveServer, post_round, serving, steam

# the admin-only pages need a session: these are the public ones and the login
PAGES = [
    "/",
    "/login",
    "/pools/{pool}",
    "/pools/{pool}/health",
    "/pools/{pool}/players/{p1}",
    "/pools/{pool}/servers",
    "/pools/{pool}/servers/s",
]
ADMIN_PAGES = ["/pools/{pool}/scramble", "/pools/{pool}/settings", "/pools/{pool}/advice"]


@pytest.fixture
def league(admin: httpx.Client, server: httpx.Client) -> str:
    name = f"csp{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(6):
        post_round(server, name, [1], [2 + i % 3], "A" if i % 2 else "B")
    return name


def _framing_site(target: str) -> Starlette:
    """Another origin (another loopback port, so the same site) that frames `target`."""

    async def home(_: Request) -> HTMLResponse:
        return HTMLResponse(f'<!doctype html><iframe id="f" src="{target}"></iframe>')

    return Starlette(routes=[Route("/", home)])


def test_a_page_framed_from_another_port_is_not_shown(
    page: Page, live: LiveServer, league: str, console_errors: list[str]
) -> None:
    target = f"{live.url}/pools/{league}"
    with serving(_framing_site(target)) as other:
        assert other.split(":")[-1] != live.url.split(":")[-1]
        page.goto(other + "/")
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)
        framed = [f for f in page.frames if f != page.main_frame]
        assert len(framed) == 1
        assert framed[0].locator("#board").count() == 0  # Chromium's error page instead
    refusals = [e for e in console_errors if "frame-ancestors" in e or "X-Frame-Options" in e]
    assert refusals, console_errors
    console_errors.clear()  # the refusal is the one console error expected


@pytest.mark.parametrize("path", PAGES)
def test_the_pages_render_under_their_csp(
    page: Page, live: LiveServer, league: str, path: str
) -> None:
    answer = page.goto(live.url + path.format(pool=league, p1=steam(1)))
    assert answer is not None and answer.status == 200
    csp = answer.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    # the stylesheet, a file now, is applied: the body is 60rem wide at most
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "960px"


def test_the_admin_pages_render_under_their_csp(page: Page, live: LiveServer, league: str) -> None:
    """The scramble viewer, the settings form and the advice page, logged in: their CSP
    holds (the `page` fixture fails on a refused inline style or script) and the stylesheet
    applies."""
    first = ADMIN_PAGES[0].format(pool=league)
    page.goto(f"{live.url}/login?next={first}")
    page.fill("input[name=token]", ADMIN)
    page.click("#login button[type=submit]")
    page.wait_for_url(live.url + first)
    for path in ADMIN_PAGES:
        answer = page.goto(live.url + path.format(pool=league))
        assert answer is not None and answer.status == 200
        assert "unsafe-inline" not in answer.headers["content-security-policy"]
        assert page.evaluate("getComputedStyle(document.body).maxWidth") == "960px"


def test_a_round_page_renders_under_its_csp(page: Page, live: LiveServer, league: str) -> None:
    page.goto(f"{live.url}/pools/{league}")
    page.goto(f"{live.url}/pools/{league}/players/{steam(1)}")
    page.locator("#rounds tbody a").first.click()
    # the click starts a navigation: wait for the round page to load before reading its
    # body (read at once, the old document may already be gone: CI saw no body there)
    page.wait_for_url("**/rounds/**")
    expect(page.locator("body")).to_have_css("max-width", "960px")


def _outside(live: LiveServer, page: Page) -> list[str]:
    """The answers the page gets from anywhere but the server (a blob: is the page's own; a
    load the CSP blocks gets none)."""
    outside: list[str] = []
    page.on(
        "response",
        lambda r: None if r.url.startswith((live.url, "blob:", "data:")) else outside.append(r.url),
    )
    return outside


def test_swagger_ui_renders_from_packaged_assets(page: Page, live: LiveServer) -> None:
    """/docs runs the packaged Swagger UI under its CSP: the operations are listed, and no
    request leaves for a CDN."""
    outside = _outside(live, page)
    page.goto(f"{live.url}/docs")
    page.locator(".opblock-summary-path", has_text="/v1/pools/{pool}/rounds").first.wait_for()
    assert outside == []


def test_redoc_renders_from_packaged_assets(
    page: Page, live: LiveServer, console_errors: list[str]
) -> None:
    """/redoc likewise, its search worker included. ReDoc's one outside load, Redocly's logo
    at the foot of its menu, is blocked by the CSP (ReDoc then leaves the logo out): that
    refusal is the one console error."""
    outside = _outside(live, page)
    page.goto(f"{live.url}/redoc")
    page.get_by_text("Skill ratings and optimal team splits").first.wait_for(timeout=20000)
    page.get_by_role("textbox").first.fill("rounds")  # ReDoc's search, in a blob: worker
    page.get_by_role("menuitem", name="Submit Round").first.wait_for()
    assert outside == []
    logo = [e for e in console_errors if "cdn.redoc.ly/redoc/logo-mini.svg" in e]
    assert console_errors == logo
    console_errors.clear()
