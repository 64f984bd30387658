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
    """The split for the team size played now (5 v 5) first, the smaller ones folded away
    until opened; each as `POST …/splits` answers it."""
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
    order = [sections.nth(i).get_attribute("data-k") for i in range(4)]
    assert order == ["5", "2", "3", "4"]  # now first, then the others in order
    folded = page.locator("#other-sizes section.split")
    assert folded.count() == 3 and not folded.first.is_visible()
    assert sections.first.is_visible()
    page.click("#other-sizes summary")
    assert folded.first.is_visible()
    for split in expected:
        shown = page.locator(f"section.split[data-k='{split['k']}']")
        for side in ("A", "B", "bench"):
            ids = shown.locator(f"ul.team-{side} li").evaluate_all(
                "items => items.map(i => i.dataset.id)"
            )
            assert ids == split[side], (split["k"], side)
        assert shown.locator(".gap").inner_text() == str(split["gap"])
        assert shown.locator(".p-a").inner_text() == f"{split['p_a'] * 100:.1f} %"
        assert shown.locator(".moved").inner_text() == str(split["moved"])


def test_the_scramble_viewer_picks_a_recent_rounds_players_by_name(
    page: Page, live: LiveServer, private: str, server: httpx.Client, console_errors: list[str]
) -> None:
    log_in(page, live, f"/pools/{private}/scramble")
    page.click("#pick button[type=submit]")
    lines = page.input_value("#players").splitlines()
    # the newest round: players 1…5 against 6…10, named as the rounds named them
    assert lines == [f"A: Player {i}" for i in range(1, 6)] + [
        f"B: Player {i}" for i in range(6, 11)
    ]
    assert "7656" not in page.input_value("#players")  # names, not SteamIDs
    assert page.locator("section.split").count() == 4
    assert page.locator("section.split").first.get_attribute("data-k") == "5"
    players = [steam(i) for i in range(1, 11)]
    expected = server.post(
        f"/v1/pools/{private}/splits",
        json={"players": players, "current": {"A": players[:5], "B": players[5:]}},
    ).json()["splits"]
    shown = page.locator("section.split[data-k='5'] ul.team-A li")
    assert shown.evaluate_all("items => items.map(i => i.dataset.id)") == expected[-1]["A"]
    # a name two players go by is refused, naming it; an id still picks the one meant
    twin = {
        "round_id": "twin",
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(11)], "B": [steam(12)]},
        "names": {steam(11): "Player 3", steam(12): "Player 12"},
    }
    assert server.post(f"/v1/pools/{private}/rounds", json=twin).status_code == 201
    page.fill("#players", "\n".join(["Player 3", "Player 4", "Player 5", "Player 6"]))
    page.click("#paste button[type=submit]")
    assert "'Player 3': 2 players go by this name" in page.inner_text("#split-error")
    assert page.locator("section.split").count() == 0
    refused(console_errors, "422")
    page.fill("#players", "\n".join([steam(3), "Player 4", "Player 5", "Player 6"]))
    page.click("#paste button[type=submit]")
    assert page.locator("section.split[data-k='2'] li").count() == 4


def test_the_scramble_viewer_names_a_bad_player(
    page: Page, live: LiveServer, private: str, console_errors: list[str]
) -> None:
    log_in(page, live, f"/pools/{private}/scramble")
    page.fill("#players", "\n".join([steam(1), steam(2), steam(3), "not-an-id"]))
    page.click("#paste button[type=submit]")
    assert "players.3" in page.inner_text("#split-error")
    refused(console_errors, "422")


def test_the_settings_form_opens_a_pool_and_follows_a_re_rate(
    page: Page,
    live: LiveServer,
    private: str,
    admin: httpx.Client,
    console_errors: list[str],
    threaded_jobs: None,
) -> None:
    settings = f"/pools/{private}/settings"
    log_in(page, live, f"/pools/{private}")
    page.click("nav.pages >> text=Settings")
    page.check("input[name=public][value=true]")
    page.fill("#settings input[name=reason]", "open to the players")
    page.click("#settings button[type=submit]")
    page.wait_for_url(f"{live.url}{settings}?done=settings")
    assert page.locator("p.notice").inner_text() == "The pool's settings are saved."
    assert admin.get(f"/v1/pools/{private}").json()["public"] is True
    # a bad value: the form again, the field named, nothing changed
    page.fill("input[name='params.k_min']", "lots")
    page.click("#settings button[type=submit]")
    assert "params.k_min" in page.inner_text("#settings-error")
    refused(console_errors, "422")
    assert page.input_value("input[name='params.k_min']") == "lots"
    assert admin.get(f"/v1/pools/{private}/changes").json()["changes"][-1]["kind"] == "patch"
    # a change that re-rates: the job's page, reloading itself until the job is done
    page.fill("input[name='params.k_min']", "16")
    page.click("#settings button[type=submit]")
    page.wait_for_url(f"{live.url}/pools/{private}/jobs/*")
    page.wait_for_selector("#job-status[data-status=done]", timeout=60_000)
    assert page.locator("#job-progress").get_attribute("value") == "20"
    pool = admin.get(f"/v1/pools/{private}").json()
    assert pool["params"]["k_min"] == 16
    for size in ({"width": 360, "height": 740}, {"width": 1200, "height": 900}):
        page.set_viewport_size(size)
        page.goto(live.url + settings)
        assert page.input_value("input[name='params.k_min']") == "16"
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_settings_page_starts_a_new_season(
    page: Page, live: LiveServer, private: str, admin: httpx.Client, console_errors: list[str]
) -> None:
    """The season form under the settings: a bad fraction is the page again with the field
    named and nothing changed; a good one pulls every rating and says so."""
    settings = f"/pools/{private}/settings"
    log_in(page, live, settings)
    before = admin.get(f"/v1/pools/{private}/leaderboard").json()
    form = page.locator("#season-form")
    assert form.locator("input[name=fraction]").get_attribute("placeholder") == "0.3"
    form.locator("input[name=fraction]").fill("1.5")
    form.locator("button").click()
    assert "fraction" in page.inner_text("#settings-error")
    refused(console_errors, "422")
    assert page.input_value("#season-form input[name=fraction]") == "1.5"
    assert admin.get(f"/v1/pools/{private}/changes").json()["changes"] == []
    page.fill("#season-form input[name=fraction]", "0.5")
    page.fill("#season-form input[name=season_reason]", "from the page")
    page.click("#season-form button")
    page.wait_for_url(f"{live.url}{settings}?done=season#season")
    assert page.locator("p.notice").inner_text().startswith("A new season has begun")
    logged = admin.get(f"/v1/pools/{private}/changes").json()["changes"][-1]
    assert (logged["kind"], logged["value"], logged["reason"]) == (
        "season",
        {"fraction": 0.5},
        "from the page",
    )
    after = admin.get(f"/v1/pools/{private}/leaderboard").json()
    assert after != before
