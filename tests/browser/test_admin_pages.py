"""The admin side of the pages in a real browser: the login, private pools, a refused form
without its form token, an admin action, and the scramble viewer against /splits."""

from __future__ import annotations

import uuid

import httpx
import pytest
from playwright.sync_api import Page

from tests.conftest import ADMIN, LiveServer, post_round, steam


@pytest.fixture
def private(admin: httpx.Client, server: httpx.Client) -> str:
    """A private pool of 10 players with a spread of ratings (player 1 wins most)."""
    name = f"bp{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 5, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(20):
        a, b = [1, 3, 5, 7, 9], [2, 4, 6, 8, 10]
        if i % 4 == 3:
            a, b = [1, 2, 3, 4, 5], [6, 7, 8, 9, 10]
        post_round(server, name, a, b, "A" if i % 5 else "B")
    return name


def refused(console_errors: list[str], status: str) -> None:
    """The one console error a refused page leaves (its own status), then none."""
    assert len(console_errors) == 1 and status in console_errors[0], console_errors
    console_errors.clear()


def log_in(page: Page, live: LiveServer, path: str) -> None:
    page.goto(f"{live.url}/login?next={path}")
    page.fill("input[name=token]", ADMIN)
    page.click("#login button[type=submit]")
    page.wait_for_url(f"{live.url}{path}")


def test_a_private_pool_refuses_without_login_and_opens_with_it(
    page: Page, live: LiveServer, private: str, console_errors: list[str]
) -> None:
    answer = page.goto(f"{live.url}/pools/{private}")
    assert answer is not None and answer.status == 404
    refused(console_errors, "404")
    assert page.locator("#board").count() == 0
    page.click("text=Admin login")
    page.fill("input[name=token]", "wrong")
    page.click("#login button[type=submit]")
    assert "That is not an admin token." in page.inner_text("main")
    refused(console_errors, "401")
    page.fill("input[name=token]", ADMIN)
    page.click("#login button[type=submit]")
    page.wait_for_url(f"{live.url}/pools/{private}")
    assert page.locator("#board tbody tr").count() == 10
    assert ADMIN not in page.content()
    page.click("header button:has-text('Log out')")
    answer = page.goto(f"{live.url}/pools/{private}")
    assert answer is not None and answer.status == 404
    refused(console_errors, "404")


def test_a_form_without_its_token_is_refused_and_one_with_it_works(
    page: Page, live: LiveServer, private: str, admin: httpx.Client, console_errors: list[str]
) -> None:
    player = f"/pools/{private}/players/{steam(1)}"
    log_in(page, live, player)
    rating_form = page.locator(f"form[action='{player}/rating']")
    rating_form.locator("input[name=rating]").fill("1777")
    rating_form.locator("input[name=csrf]").evaluate("e => e.remove()")
    rating_form.locator("button").click()
    assert "not sent from one of this site's pages" in page.inner_text("main")
    refused(console_errors, "403")
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()["rating"] != 1777
    page.goto(live.url + player)
    rating_form = page.locator(f"form[action='{player}/rating']")
    rating_form.locator("input[name=rating]").fill("1777")
    rating_form.locator("input[name=reason]").fill("from the page")
    rating_form.locator("button").click()
    page.wait_for_url(f"{live.url}{player}?done=set")
    assert "Rating 1777" in page.inner_text("#standing")
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()["rating"] == 1777
    assert page.locator("svg.chart circle.mark").count() == 1  # the set, marked


def test_the_scramble_viewer_splits_as_the_api_does(
    page: Page, live: LiveServer, private: str, server: httpx.Client
) -> None:
    players = [steam(i) for i in range(1, 11)]
    current = {"A": players[:5], "B": players[5:]}
    expected = server.post(
        f"/v1/pools/{private}/splits",
        json={"players": players, "current": current, "min_k": 2},
    ).json()["splits"]
    log_in(page, live, f"/pools/{private}/scramble")
    pasted = "\n".join([*(f"A: {p}" for p in current["A"]), *(f"B: {p}" for p in current["B"])])
    page.fill("#players", pasted)
    page.click("#paste button[type=submit]")
    sections = page.locator("section.split")
    assert sections.count() == len(expected) == 4  # 2v2 … 5v5
    for i, split in enumerate(expected):
        shown = sections.nth(i)
        assert shown.get_attribute("data-k") == str(split["k"])
        for side in ("A", "B", "bench"):
            ids = shown.locator(f"ul.team-{side} li").evaluate_all(
                "items => items.map(i => i.dataset.id)"
            )
            assert ids == split[side], (split["k"], side)
        assert shown.locator(".gap").inner_text() == str(split["gap"])
        assert shown.locator(".p-a").inner_text() == f"{split['p_a'] * 100:.1f} %"
        assert shown.locator(".moved").inner_text() == str(split["moved"])


def test_the_scramble_viewer_picks_a_recent_rounds_players(
    page: Page, live: LiveServer, private: str
) -> None:
    log_in(page, live, f"/pools/{private}/scramble")
    page.click("#pick button[type=submit]")
    text = page.input_value("#players")
    assert text.count("A: ") == 5 and text.count("B: ") == 5
    assert page.locator("section.split").count() == 4


def test_the_scramble_viewer_names_a_bad_player(
    page: Page, live: LiveServer, private: str, console_errors: list[str]
) -> None:
    log_in(page, live, f"/pools/{private}/scramble")
    page.fill("#players", "\n".join([steam(1), steam(2), steam(3), "not-an-id"]))
    page.click("#paste button[type=submit]")
    assert "players.3" in page.inner_text("#split-error")
    refused(console_errors, "422")
