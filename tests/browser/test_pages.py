"""The public pages in a real browser: Debian's Chromium driven by Playwright, against a
real running service that rounds were posted to (the `live` server, SQLite and PostgreSQL).
Every page is checked for what it shows and for console errors."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from synelo.config import Settings
from synelo.ratings import SynEloParams
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store
from tests.conftest import SERVER, LiveServer, serving, steam
from tests.integration.test_cli import run


def play(server: httpx.Client, pool: str, a: int, b: int, winner: str = "A") -> None:
    body: dict[str, Any] = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": winner,
        "teams": {"A": [steam(a)], "B": [steam(b)]},
        "names": {steam(a): f"Player {a}", steam(b): f"Player {b}"},
    }
    assert server.post(f"/v1/pools/{pool}/rounds", json=body).status_code == 201


@pytest.fixture
def league(admin: httpx.Client, server: httpx.Client) -> str:
    """A public pool of 60 players (a shadow period of 1 round): 30 duels, then player 1
    plays 5 more, with an admin set among them."""
    name = f"web{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(30):
        play(server, name, 2 * i + 1, 2 * i + 2)
    for i in range(5):
        play(server, name, 1, 3 + 2 * i)
        if i == 2:
            assert admin.put(f"/v1/pools/{name}/players/{steam(1)}", json={"rating": 1100})
    return name


def test_the_index_lists_public_pools_only(
    page: Page, live: LiveServer, admin: httpx.Client, league: str
) -> None:
    private = f"priv{uuid.uuid4().hex[:8]}"
    assert admin.post("/v1/pools", json={"name": private}).status_code == 201
    page.goto(live.url + "/")
    names = page.locator("#pools tbody td:first-child a").all_inner_texts()
    assert league in names and private not in names
    page.click(f"text={league}")
    assert page.url.endswith(f"/pools/{league}")


def test_the_leaderboard_orders_pages_and_searches(
    page: Page, live: LiveServer, league: str, admin: httpx.Client
) -> None:
    board = httpx.get(f"{live.url}/v1/public/pools/{league}/leaderboard?limit=200").json()
    page.goto(f"{live.url}/pools/{league}")
    rows = page.locator("#board tbody tr")
    assert rows.count() == 50
    places = [int(t) for t in page.locator("#board tbody td:nth-child(1)").all_inner_texts()]
    assert places == list(range(1, 51))
    ratings = [int(t) for t in page.locator("#board tbody td:nth-child(3)").all_inner_texts()]
    assert ratings == [p["rating"] for p in board["players"][:50]]
    assert ratings == sorted(ratings, reverse=True)
    assert page.locator(".chart .bar").count() == 20
    tips = page.locator(".chart .bar title").all_text_contents()
    counts = [int(t.rsplit(": ", 1)[1]) for t in tips]
    assert sum(counts) == board["total"]  # every listed rating in one bar
    every = [p["rating"] for p in board["players"]]
    low, high = min(every), max(every)
    width = (high - low) / 20
    expected = [0] * 20
    for rating in every:
        expected[min(int((rating - low) / width), 19)] += 1
    assert counts == expected
    page.click("a[rel=next]")
    assert "page=2" in page.url
    rest = page.locator("#board tbody td:nth-child(1)").all_inner_texts()
    assert [int(t) for t in rest] == list(range(51, board["total"] + 1))
    page.fill("input[name=q]", "Player 7")
    page.click("button[type=submit]")
    found = page.locator("#board tbody td:nth-child(2)").all_inner_texts()
    assert found and all("Player 7" in t for t in found)


def test_a_player_page_charts_every_rating_and_marks_the_set(
    page: Page, live: LiveServer, league: str
) -> None:
    page.goto(f"{live.url}/pools/{league}/players/{steam(1)}")
    assert "Rating" in page.locator("#standing").inner_text()
    # 6 rounds and 1 admin set: 7 points, 1 of them marked
    assert page.locator(".chart .point").count() == 7
    assert page.locator(".chart .mark").count() == 1
    assert page.locator("#rounds tbody tr").count() == 6
    changes = page.locator("#rounds tbody td.change").all_inner_texts()
    assert all(t.startswith(("+", "-")) for t in changes)


def test_a_provisional_player_shows_no_rating(
    page: Page, live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    name = f"new{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 3}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    play(server, name, 200, 201)
    page.goto(f"{live.url}/pools/{name}/players/{steam(200)}")
    assert "Provisional: 2 more rounds" in page.locator("#standing").inner_text()
    assert page.locator(".chart").count() == 0
    rating = server.get(f"/v1/pools/{name}/players/{steam(200)}").json()["rating"]
    assert rating != 1000 and str(rating) not in page.locator("main").inner_text()
    page.goto(f"{live.url}/pools/{name}")
    assert page.locator("#board tbody tr").count() == 0  # nobody listed yet


def test_an_empty_index_says_how_to_make_a_pool_public(page: Page, tmp_path: Path) -> None:
    """What `make run` leaves: one private pool, `default`. A visitor sees no pool and how
    an admin makes one public (not the private pool's name); done as it says, with `synelo
    pool set`, the pool is listed."""
    engine = create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}")
    migrate(engine)
    store = Store(engine)
    store.create_pool("default", 12, SynEloParams(theta=1200))
    app = create_app(Settings(data_dir=tmp_path, admin_tokens=["a" * 43]), store=store)
    try:
        with serving(app) as url:
            page.goto(url + "/")
            hint = " ".join(page.locator("#empty").inner_text().split())
            assert hint.startswith("No public pool yet. Pools are private until an admin")
            assert "synelo pool set NAME --public" in hint
            assert 'PATCH /v1/pools/NAME with {"public": true}' in hint
            assert "default" not in page.content()
            made = run(["pool", "set", "default", "--public"], tmp_path)
            assert made.returncode == 0, made.stderr
            page.goto(url + "/")
            assert page.locator("#pools tbody td:first-child a").all_inner_texts() == ["default"]
            assert page.locator("#empty").count() == 0
    finally:
        engine.dispose()


def test_private_pools_and_hidden_players_are_not_found(
    page: Page, live: LiveServer, admin: httpx.Client, league: str, console_errors: list[str]
) -> None:
    private = f"priv{uuid.uuid4().hex[:8]}"
    assert admin.post("/v1/pools", json={"name": private}).status_code == 201
    assert page.goto(f"{live.url}/pools/{private}").status == 404  # type: ignore[union-attr]
    admin.put(f"/v1/pools/{league}/players/{steam(2)}/hidden", json={"hidden": True})
    gone = page.goto(f"{live.url}/pools/{league}/players/{steam(2)}")
    assert gone is not None and gone.status == 404
    # the two pages' own 404s are the only errors the browser saw
    assert len(console_errors) == 2 and all("404" in e for e in console_errors)
    console_errors.clear()
    # on the roster but not rated (left before the end): named nowhere either
    round_id = uuid.uuid4().hex
    body = {
        "round_id": round_id,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(2), steam(3)], "B": [steam(4)]},
        "participants": {"A": [steam(3)], "B": [steam(4)]},
    }
    assert httpx.post(
        f"{live.url}/v1/pools/{league}/rounds",
        json=body,
        headers={"Authorization": f"Bearer {SERVER}"},
    ).is_success
    page.goto(f"{live.url}/pools/{league}/rounds/{round_id}")
    team_a = page.locator("#team-A").inner_text()
    assert "a hidden player" in team_a and "Player 2" not in team_a
    assert steam(2) not in page.content()


def test_a_round_page_shows_both_teams_the_chance_and_the_changes(
    page: Page,
    live: LiveServer,
    admin: httpx.Client,
    server: httpx.Client,
    console_errors: list[str],
) -> None:
    name = f"rnd{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 2, "public": True, "params": {"t_shadow": 2}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for _ in range(2):
        play(server, name, 1, 2)
    round_id = uuid.uuid4().hex
    answer = server.post(
        f"/v1/pools/{name}/rounds",
        json={
            "round_id": round_id,
            "server_id": "s",
            "winner": "B",
            "teams": {"A": [steam(1)], "B": [steam(2), steam(9)]},
            "names": {steam(1): "Ann", steam(2): "Bo", steam(9): "<i>Cy</i>"},
            "ended_at": "2026-03-14T21:05:00+01:00",  # dated so, not by when it came
        },
    ).json()
    page.goto(f"{live.url}/pools/{name}/players/{steam(1)}")
    page.locator(f"#rounds tr[data-round='{round_id}'] a").first.click()  # its date links it
    assert page.url.endswith(f"/pools/{name}/rounds/{round_id}")
    summary = page.locator("#summary").inner_text()
    assert f"{answer['p_a'] * 100:.0f} %" in summary and "Team B won" in summary
    assert summary.startswith("2026-03-14 20:05 UTC")
    team_b = page.locator("#team-B tbody tr")
    assert team_b.count() == 2
    changes = {c["steam_id"]: c for c in answer["players"]}
    bo = team_b.filter(has_text="Bo").locator("td").all_inner_texts()
    assert bo[1:] == [
        str(changes[steam(2)]["before"]),
        str(changes[steam(2)]["after"]),
        f"{changes[steam(2)]['delta']:+d}",
    ]
    cy = team_b.filter(has_text="Cy").locator("td").all_inner_texts()
    assert "provisional" in cy[0] and cy[1:] == ["", "", ""]  # one round of two: no rating
    assert "<i>Cy</i>" in cy[0] and page.locator("#team-B i").count() == 0  # text, not markup
    assert console_errors == []
    assert page.goto(f"{live.url}/pools/{name}/rounds/nosuch").status == 404  # type: ignore[union-attr]
    assert len(console_errors) == 1 and "404" in console_errors[0]  # that page's own 404
    console_errors.clear()


def test_a_round_id_with_slashes_links_from_the_player_page(
    page: Page, live: LiveServer, admin: httpx.Client
) -> None:
    """A round id with '/' (as a server's "srv1/2026-11-28/1") is reached from the player
    page's link, as one path segment with its '/' kept as %2F."""
    name = f"sl{uuid.uuid4().hex[:10]}"
    made = admin.post("/v1/pools", json={"name": name, "team_size": 1, "public": True})
    assert made.status_code == 201, made.text
    round_id = f"srv1/{uuid.uuid4().hex[:6]}/1"
    body = {
        "round_id": round_id,
        "server_id": "srv1",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }
    assert admin.post(f"/v1/pools/{name}/rounds", json=body).status_code == 201
    page.goto(f"{live.url}/pools/{name}/players/{steam(1)}")
    page.locator(f"#rounds tr[data-round='{round_id}'] a").first.click()
    assert page.url.endswith(f"/pools/{name}/rounds/{round_id.replace('/', '%2F')}")
    assert round_id in page.locator("main").inner_text()


def test_a_text_player_id_with_slashes_links_from_the_round_page(
    page: Page, live: LiveServer, admin: httpx.Client
) -> None:
    """A text pool's player id with '/' (as "clan/alice") is reached from the round page's
    link, as one path segment with its '/' kept as %2F, and opens that player's page."""
    name = f"tx{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "player_ids": "text"}
    made = admin.post("/v1/pools", json=body)
    assert made.status_code == 201, made.text
    player = f"clan/{uuid.uuid4().hex[:6]}/alice"
    report = {
        "round_id": "r1",
        "server_id": "srv1",
        "winner": "A",
        "teams": {"A": [player], "B": ["bob"]},
    }
    assert admin.post(f"/v1/pools/{name}/rounds", json=report).status_code == 201
    page.goto(f"{live.url}/pools/{name}/rounds/r1")
    segment = player.replace("/", "%2F")
    page.locator(f"main a[href='/pools/{name}/players/{segment}']").click()
    assert page.url.endswith(f"/pools/{name}/players/{segment}")
    assert player in page.locator("h1").inner_text()
    assert page.locator("#rounds tr[data-round='r1']").count() == 1  # their page, not a 404


PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1200, "height": 900}


def fits(page: Page) -> bool:
    """Whether the page is no wider than the window (a wide table scrolls in its own box)."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_a_players_page_reads_on_a_phone_and_a_desktop(
    page: Page, live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """Their rounds with the map, the date, the server and the side as the game names it,
    their record, the chart's axes; on a phone the rounds scroll inside their box."""
    name = f"pp{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(8):
        round_body = {
            "round_id": f"r{i}",
            "server_id": "eu-1" if i % 2 else "us-2",
            "map": "koth_viaduct",
            "winner": "AB"[i % 3 == 0],
            "teams": {"A": [steam(1)], "B": [steam(2)]},
            "names": {steam(1): "Ann", steam(2): "Bo"},
            "sides": {"A": "RED", "B": "BLU"},
        }
        assert server.post(f"/v1/pools/{name}/rounds", json=round_body).status_code == 201
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        page.goto(f"{live.url}/pools/{name}/players/{steam(1)}")
        assert page.locator("#record").inner_text() == "Record: 5 won, 3 lost (62 % won)."
        newest = page.locator("#rounds tbody tr").first.locator("td").all_inner_texts()
        assert newest[1:4] == ["koth_viaduct", "eu-1", "RED"] and newest[5] == "won"
        assert page.locator("svg.chart .axis.label").all_text_contents() == [
            "rating",
            "rounds played",
        ]
        assert page.locator("svg.chart .tick-x").count() >= 2
        assert fits(page)
    page.locator("#rounds tbody tr").first.locator("a", has_text="eu-1").click()
    assert page.url.endswith(f"/pools/{name}/servers/eu-1")
    assert page.locator("#server-rounds tbody tr").count() == 4


def test_the_server_view_reads_on_a_phone_and_a_desktop(
    page: Page, live: LiveServer, league: str
) -> None:
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        page.goto(f"{live.url}/pools/{league}")
        page.click("nav.pages >> text=Servers")
        rows = page.locator("#servers tbody tr")
        assert rows.count() == 1
        cells = rows.first.locator("td").all_inner_texts()
        assert cells[0] == "s" and cells[1] == "35" and cells[2] == "0"
        assert fits(page)
