"""The pool health page in a real browser: Debian's Chromium driven by Playwright, against a
real running service that rounds were posted to (the `live` server, SQLite and PostgreSQL):
its charts drawn, each point and bar where the history puts them, and no console error."""

from __future__ import annotations

import uuid

import httpx
import pytest
from playwright.sync_api import Page

from synelo.ratings.brier import BRIER_TARGET
from synelo.ratings.synelo import round_score
from synelo.store import health as store_health
from tests.conftest import LiveServer, steam


def test_the_health_page_draws_every_figure(
    page: Page,
    live: LiveServer,
    admin: httpx.Client,
    server: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """60 duels among 8 players: blocks of ⌈60/50⌉ = 2 rounds, so 30 Brier points (blocks
    this short here, not of 400 rounds and more: the figures are what is tested)."""
    monkeypatch.setattr(store_health, "MIN_BLOCK", 1)
    name = f"hb{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    answers = []
    for i in range(60):
        r = server.post(
            f"/v1/pools/{name}/rounds",
            json={
                "round_id": uuid.uuid4().hex,
                "server_id": "s",
                "winner": "A" if i % 3 else "B",
                "teams": {"A": [steam(1 + i % 4)], "B": [steam(5 + i % 4)]},
            },
        )
        assert r.status_code == 201, r.text
        answers.append(r.json())
    briers = [
        sum((r["p_a"] - round_score(r["winner"], "A")) ** 2 for r in answers[i : i + 2]) / 2
        for i in range(0, 60, 2)
    ]
    bins = {min(int(r["p_a"] * 10), 9) for r in answers}

    page.goto(f"{live.url}/pools/{name}/health")
    assert page.locator("h1").inner_text() == f"Health of {name}"
    assert page.locator("#brier .point").count() == 30
    assert page.locator("#brier .worse").count() == sum(1 for b in briers if b > BRIER_TARGET)
    assert page.locator("#brier .guide").count() == 1
    # its axes: round counts under the points (the block's last round), Brier values beside
    assert page.locator("#brier .tick-x").all_text_contents()[-1] == "60"
    assert page.locator("#brier .axis.label").all_text_contents() == [
        "Brier score",
        "rounds rated (a point at its block's last)",
    ]
    assert page.locator("#reliability-chart .bin").count() == len(bins)
    assert page.locator("#reliability tbody tr").count() == 10
    assert page.locator("#spread .bar").count() == 20
    spread = [
        int(t.rsplit(": ", 1)[1]) for t in page.locator("#spread .bar title").all_text_contents()
    ]
    assert sum(spread) == 8  # the eight players, each in one bar
    assert page.locator("#days .bar").count() == 1  # every round today
    assert (page.locator("#days .bar title").text_content() or "").endswith(": 60")
    # the charts are drawn at the page's width, also on a phone
    page.set_viewport_size({"width": 360, "height": 740})
    box = page.locator("#brier svg").bounding_box()
    assert box is not None and 300 <= box["width"] <= 360 and box["height"] > 100
    square = page.locator("#reliability-chart svg").bounding_box()
    assert square is not None and abs(square["width"] - square["height"]) < 2
