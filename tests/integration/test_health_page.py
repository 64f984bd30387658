"""The pool health page over real HTTP on SQLite and PostgreSQL: its figures for a small
known history (F6 per block, the reliability bins, rounds per day, K) against the rounds and
players as the API reports them, a voided round left out of all of them, the models without
a K, the auto-tune log, figures that follow the pool, and who may read the page."""

from __future__ import annotations

import html
import re
import statistics
import uuid
from contextlib import closing
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from synelo.ratings.brier import BRIER_TARGET
from synelo.ratings.synelo import round_score
from synelo.service.api import reports
from synelo.store import health as store_health
from tests.conftest import LiveServer, MovableClock, steam
from tests.integration.test_autotune import skilled_rounds
from tests.integration.test_pages_admin import log_in
from tests.integration.test_rerate import play as play_all
from tests.integration.test_rerate import wait

Body = dict[str, Any]
# the void's re-rate on a thread of the server (the same job; a spawn costs a second or two)
pytestmark = pytest.mark.usefixtures("threaded_jobs")
REAL_MIN_BLOCK = store_health.MIN_BLOCK


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Brier blocks as short as a history makes them (⌈rounds/50⌉), not 400 rounds and more:
    these short histories test the figures, and the server runs in this process.
    `test_the_brier_chart_waits_for_a_whole_block` checks the real size."""
    monkeypatch.setattr(store_health, "MIN_BLOCK", 1)


def new_pool(admin: httpx.Client, **extra: Any) -> str:
    name = f"h{uuid.uuid4().hex[:12]}"
    body = {"name": name, "team_size": 2, "public": True, "params": {"t_shadow": 1}, **extra}
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 201, r.text
    return name


def play(server: httpx.Client, pool: str, a: list[int], b: list[int], winner: str) -> str:
    round_id = uuid.uuid4().hex
    body = {
        "round_id": round_id,
        "server_id": "s",
        "winner": winner,
        "teams": {"A": [steam(n) for n in a], "B": [steam(n) for n in b]},
    }
    r = server.post(f"/v1/pools/{pool}/rounds", json=body)
    assert r.status_code == 201, r.text
    return round_id


def page(live: LiveServer, pool: str) -> str:
    r = httpx.get(f"{live.url}/pools/{pool}/health", timeout=30)
    assert r.status_code == 200, r.text
    return r.text


def section(text: str, element_id: str) -> str:
    """The element of that id, up to its closing tag (charts are in a div, tables alone)."""
    start = text.index(f'id="{element_id}"')
    tag = text.rfind("<", 0, start)
    name = text[tag + 1 : text.index(" ", tag)]
    return text[start : text.index(f"</{name}>", start)]


def titles(svg: str, cls: str) -> list[str]:
    """The tooltips of the chart's elements of class `cls` (also with further classes)."""
    found = re.findall(rf'<\w+ class="{cls}(?: [^"]*)?"[^>]*><title>(.*?)</title>', svg)
    return [html.unescape(t) for t in found]


def cells(table: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    return [
        [
            re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)
        ]
        for r in rows
    ]


@pytest.fixture
def history(
    admin: httpx.Client, server: httpx.Client, clock: MovableClock, live: LiveServer
) -> tuple[str, list[Body]]:
    """A public SynElo pool of 12 2v2 rounds over three days (4, 3 and 5), every result
    among them, the fourth round voided: the pool and its rounds as the public API tells
    them after the void's re-rate."""
    pool = new_pool(admin)
    games = [
        (2, [1, 2], [3, 4], "A"),
        (2, [1, 3], [2, 4], "B"),
        (2, [1, 4], [2, 3], "draw"),
        (2, [1, 2], [3, 4], "A"),  # voided below
        (1, [1, 2], [3, 4], "A"),
        (1, [1, 2], [3, 5], "A"),
        (1, [2, 5], [1, 4], "B"),
        (0, [1, 2], [3, 4], "B"),
        (0, [1, 5], [2, 3], "draw"),
        (0, [3, 4], [1, 2], "B"),
        (0, [1, 2], [4, 5], "A"),
        (0, [1, 3], [2, 5], "B"),
    ]
    ids = []
    for days_back, a, b, winner in games:
        clock.offset = -timedelta(days=days_back)
        ids.append(play(server, pool, a, b, winner))
    clock.offset = timedelta()
    voided = admin.post(f"/v1/pools/{pool}/rounds/{ids[3]}/void", json={"reason": "test"})
    wait(admin, pool, voided)
    # with a token: exact chances (anyone else gets them to the percent)
    told = [admin.get(f"/v1/public/pools/{pool}/rounds/{i}").json() for i in ids]
    assert [r["voided"] for r in told] == [i == 3 for i in range(12)]
    return pool, told


def test_the_figures_are_those_of_the_rounds_not_voided(
    live: LiveServer, server: httpx.Client, history: tuple[str, list[Body]]
) -> None:
    pool, told = history
    kept = [r for r in told if not r["voided"]]
    text = page(live, pool)
    assert "11 rounds rated, 1 voided" in section(text, "summary")

    # F6 per block: 12 rounds make blocks of one round; the voided round has none
    brier = section(text, "brier")
    points = titles(brier, "point")
    expected = [(r["p_a"] - round_score(r["winner"], "A")) ** 2 for r in kept]
    assert points == [
        f"rounds {r['seq']}–{r['seq']} (1 rated): Brier {b:.4f}"
        for r, b in zip(kept, expected, strict=True)
    ]
    assert brier.count('class="point worse"') == sum(1 for b in expected if b > BRIER_TARGET) > 0
    assert brier.count('class="guide"') == 1

    # the reliability bins: their counts, mean P_A and how often A won
    rows = cells(section(text, "reliability"))[1:]
    assert len(rows) == 10
    for i, row in enumerate(rows):
        inside = [r for r in kept if i / 10 <= r["p_a"] < (i + 1) / 10 or r["p_a"] == i == 9]
        assert row[0] == f"{i / 10:.1f}–{(i + 1) / 10:.1f}" and int(row[1]) == len(inside)
        if inside:
            assert float(row[2]) == pytest.approx(
                statistics.mean(r["p_a"] for r in inside), abs=5e-4
            )
            won = statistics.mean(round_score(r["winner"], "A") for r in inside)
            assert float(row[3]) == pytest.approx(won, abs=5e-4)
    chart = section(text, "reliability-chart")
    assert chart.count('class="bin"') == sum(1 for row in rows if int(row[1]) > 0)
    assert chart.count('class="diagonal"') == 1

    # rounds per day: 3, 3 and 5 (the voided round's day lost it)
    per_day: dict[str, int] = {}
    for r in kept:
        day = r["at"][:10]
        per_day[day] = per_day.get(day, 0) + 1
    first = date.fromisoformat(min(per_day))
    span = (date.fromisoformat(max(per_day)) - first).days + 1
    expected_days = [
        f"{d}: {per_day.get(d, 0)}"
        for d in ((first + timedelta(days=i)).isoformat() for i in range(span))
    ]
    assert titles(section(text, "days"), "bar") == expected_days
    assert sorted(per_day.values()) == [3, 3, 5]

    # K: the five players' F5 K as their lookups give it
    lookup = server.post(
        f"/v1/pools/{pool}/players/lookup", json={"steam_ids": [steam(n) for n in range(1, 6)]}
    ).json()["players"]
    ks = [p["k"] for p in lookup]
    spread = section(text, "spread")
    assert len(titles(spread, "bar")) == 20
    assert sum(int(t.rsplit(": ", 1)[1]) for t in titles(spread, "bar")) == 5
    summary = re.sub(r"\s+", " ", text[text.index("<h2>K</h2>") : text.index('id="spread"')])
    assert (
        f"Lowest {min(ks):.2f}, median {statistics.median(ks):.2f}, highest {max(ks):.2f}"
        in summary
    )

    # Θ: too few rounds for a suggestion
    theta = dict((row[0], row[1]) for row in cells(section(text, "theta")))
    assert theta["status"] == "too few" and theta["rounds fitted"] == "0"
    assert theta["Θ·T suggested"] == theta["p against a coin"] == "—"  # an empty cell, marked
    # F1t: a new pool shows P at T = 1 until auto-tune fits it, so Θ·T is Θ
    assert (
        theta["T in force (F1t)"] == "1"
        and theta["Θ·T, the shown P's scale"] == theta["Θ in force"]
    )


def test_the_figures_follow_new_rounds(
    live: LiveServer,
    server: httpx.Client,
    history: tuple[str, list[Body]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Figures that took SLOW_S to make are served while newer ones are made: on a loaded
    # machine even these few rounds can, and this test reads the page right after a round.
    monkeypatch.setattr(reports, "SLOW_S", float("inf"))
    pool, told = history
    assert len(titles(section(page(live, pool), "brier"), "point")) == 11
    play(server, pool, [1, 2], [3, 4], "A")
    text = page(live, pool)
    assert "12 rounds rated, 1 voided" in section(text, "summary")
    assert len(titles(section(text, "brier"), "point")) == 12
    today = [t for t in titles(section(text, "days"), "bar") if t.endswith(": 6")]
    assert len(today) == 1


def test_blocks_hold_several_rounds_in_a_long_history(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    pool = new_pool(admin)
    results = []
    for i in range(103):  # blocks of ⌈103/50⌉ = 3 rounds: 34 whole ones back from round 103
        r = server.post(
            f"/v1/pools/{pool}/rounds",
            json={
                "round_id": f"r{i}",
                "server_id": "s",
                "winner": "AB"[i % 3 == 0],
                "teams": {"A": [steam(1 + i % 4)], "B": [steam(5 + i % 3)]},
            },
        )
        assert r.status_code == 201, r.text
        results.append(r.json())
    points = titles(section(page(live, pool), "brier"), "point")
    assert len(points) == 34  # round 1 is in no block: too few for one
    for n, title in enumerate(points):
        block = results[1 + 3 * n : 4 + 3 * n]
        brier = statistics.mean((r["p_a"] - round_score(r["winner"], "A")) ** 2 for r in block)
        first, last = block[0]["seq"], block[-1]["seq"]
        assert title == f"rounds {first}–{last} ({len(block)} rated): Brier {brier:.4f}"
    assert points[0].startswith("rounds 2–4 (3 rated)")  # whole blocks back from the newest


def test_models_without_k_show_their_uncertainty_or_say_they_have_none(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    elo = new_pool(admin, model="elo")
    trueskill = new_pool(admin, model="trueskill")
    for pool in (elo, trueskill):
        for i in range(3):
            play(server, pool, [1, 2], [3, 4 + i], "AB"[i % 2])
    text = page(live, elo)
    assert "keeps no uncertainty figure" in section(text, "spread-none")
    assert 'id="spread"' not in text and "model elo has none" in section(text, "theta-none")
    assert len(titles(section(text, "brier"), "point")) == 3

    text = page(live, trueskill)
    lookup = server.post(
        f"/v1/pools/{trueskill}/players/lookup",
        json={"steam_ids": [steam(n) for n in range(1, 7)]},
    ).json()["players"]
    sigmas = [p["skill"]["sigma"] for p in lookup]
    summary = re.sub(
        r"\s+", " ", text[text.index("<h2>Uncertainty</h2>") : text.index('id="spread"')]
    )
    assert "sigma" in summary and f"highest {max(sigmas):.2f}" in summary
    assert f"Lowest {min(sigmas):.2f}" in summary
    assert sum(int(t.rsplit(": ", 1)[1]) for t in titles(section(text, "spread"), "bar")) == 6


def test_the_autotune_log_is_listed_newest_first(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    pool = new_pool(admin, model="elo", autotune={"every": 100, "fit": ["k"]})
    for i in range(6):
        play(server, pool, [1 + i % 3, 4], [5, 6 + i % 2], "AB"[i % 2])
    text = page(live, pool)
    assert "No auto-tune yet" in text
    assert "every 100 rounds, fitting k " in " ".join(section(text, "autotune").split())
    for _ in range(2):
        wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
        play(server, pool, [1, 2], [3, 4], "A")
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    tunes = [c for c in log if c["kind"] == "tune"]
    assert len(tunes) == 2
    rows = cells(section(page(live, pool), "tunes"))[1:]
    assert [int(row[1]) for row in rows] == [c["seq"] for c in reversed(tunes)] == [7, 6]
    for row, change in zip(rows, reversed(tunes), strict=True):
        value = change["value"]
        if value.get("error"):
            assert row[2] == f"failed: {value['error']}"
        else:  # the parameter before → fitted, and the paired gain with its error
            assert row[2] == f"k {value['before']['k']:.4g} → {value['fitted']['k']:.4g}"
            assert row[4] == f"{value['gain']:.4f} ± {value['standard_error']:.4f}"
        assert row[5] == ("yes" if value["adopted"] else "no")


def test_the_latest_autotune_shows_at_once(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """An auto-tune that is only logged changes no round: the page must not keep showing
    the figures from before it."""
    pool = new_pool(admin, model="elo", autotune={"every": 100, "fit": ["k"]})
    play(server, pool, [1], [2], "A")
    assert 'id="tunes"' not in page(live, pool)
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
    assert len(cells(section(page(live, pool), "tunes"))) == 2  # the head and the one tune


def test_the_last_change_says_what_moved_and_why(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """An adopted auto-tune: the page's sentence names the parameter old → new, after which
    round, and the held-out figures and the rule it passed; a later check that is not
    adopted becomes the last check, and the last change stays."""
    pool = new_pool(
        admin,
        model="elo",
        player_ids="text",
        params={"k": 1},
        autotune={"every": 100, "fit": ["k"], "holdout": 0.3, "margin": 0.001},
    )
    play_all(server, pool, skilled_rounds(400))
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
    fit = admin.get(f"/v1/pools/{pool}/quality").json()["last_fit"]
    assert fit["adopted"] is True  # K = 1 barely learns (test_autotune)
    said = " ".join(html.unescape(section(page(live, pool), "autotune-last")).split())
    k = fit["fitted"]["k"]
    assert f"Last auto-tune change: k 1 → {k:.4g}, after round 400" in said
    before = fit["heldout_log_loss_current"]
    assert f"on the 120 held-out rounds the log loss fell from {before:.4f}" in said
    assert f"a gain of {fit['gain']:.4f} ± {fit['standard_error']:.4f} a round" in said
    assert "against a margin of 0.001 and 2.0 standard errors" in said
    assert "Last check: after round 400" in said and said.endswith("adopted.")
    # a check that is not adopted: the last check, while the last change stays
    strict = {"every": 100, "fit": ["k"], "margin": 1.0}
    r = admin.patch(f"/v1/pools/{pool}", json={"autotune": strict})
    assert r.status_code == 200, r.text
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/autotune"))
    said = " ".join(html.unescape(section(page(live, pool), "autotune-last")).split())
    assert f"Last auto-tune change: k 1 → {k:.4g}, after round 400" in said
    assert said.endswith("not adopted.")
    said = " ".join(html.unescape(section(page(live, pool), "params-last")).split())
    lead = 'id="params-last">Last change of the model or its parameters'
    assert said.startswith(f"{lead}: k 1 → {k:.4g}, by auto-tune")
    assert "by auto-tune, after round 400" in said


def test_the_last_parameter_change_says_who_changed_what(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """A PATCH of Θ, then a switch to WHR (which turns the auto-tuning off): the page names
    the newest, old → new, when, and (to an admin) who and why, beside the auto-tuning."""
    pool = new_pool(admin)
    for i in range(4):
        play(server, pool, [1 + i % 2, 3], [4, 5], "AB"[i % 2])
    assert 'id="params-last"' not in page(live, pool)  # nothing changed yet
    body = {"theta": 300, "reason": "fits the servers"}
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json=body))
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    said = " ".join(html.unescape(section(page(live, pool), "params-last")).split())
    at = log[-1]["at"][:16].replace("T", " ")
    assert said == (
        'id="params-last">Last change of the model or its parameters: Θ 200 → 300, by '
        f"PATCH, after round 4 ({at} UTC)."
    )
    with closing(log_in(live.url)) as browser:  # an admin sees who, and why
        shown = browser.get(f"/pools/{pool}/health").text
    said = " ".join(html.unescape(section(shown, "params-last")).split())
    assert f"by PATCH ({log[-1]['actor']}), after round 4" in said
    assert said.endswith("Reason: fits the servers.")
    play(server, pool, [1], [2], "A")
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"model": "whr"}))
    text = page(live, pool)
    said = " ".join(html.unescape(section(text, "params-last")).split())
    assert said.startswith('id="params-last">Last change of the model or its parameters: ')
    assert "model synelo → whr" in said and "after round 5" in said
    assert "autotune fitting temperature → off" in said  # said in what changed, and after it
    assert said.endswith("; it turned auto-tuning off.")
    assert "Auto-tuning: off." in " ".join(section(text, "autotune").split())


def test_an_empty_pool_has_a_page_without_charts(live: LiveServer, admin: httpx.Client) -> None:
    text = page(live, new_pool(admin))
    assert "0 rounds rated" in text and "<svg" not in text and "No round rated yet" in text


def test_a_private_or_unknown_pool_has_no_health_page(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    private = new_pool(admin, public=False)
    play(server, private, [1], [2], "A")
    for name in (private, f"none{uuid.uuid4().hex[:8]}"):
        r = httpx.get(f"{live.url}/pools/{name}/health")
        assert r.status_code == 404 and "text/html" in r.headers["content-type"]
        assert "Brier" not in r.text


def test_the_brier_chart_waits_for_a_whole_block(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A young pool: no Brier point before its first block of 400 rounds, but a sentence
    saying when it comes and why blocks are that large; counts of one in the singular,
    empty cells marked "—"."""
    monkeypatch.setattr(store_health, "MIN_BLOCK", REAL_MIN_BLOCK)
    monkeypatch.setattr(reports, "SLOW_S", float("inf"))  # figures made anew after a round
    pool = new_pool(admin)
    play(server, pool, [1, 2], [3, 4], "A")
    text = page(live, pool)
    assert "1 round rated" in section(text, "summary")
    assert 'id="brier"' not in text
    wait = " ".join(section(text, "brier-wait").split())
    assert "starts once 400 rounds are rated (1 so far)" in wait
    why = " ".join(section(text, "brier-blocks").split())
    assert "a block of 400 rounds stays within ±0.025 of the pool's own Brier" in why
    assert "1 round on " in " ".join(section(text, "days-note").split())
    rows = cells(section(text, "reliability"))[1:]
    empty = [row for row in rows if row[1] == "0"]
    assert len(empty) == 9 and all(row[2:] == ["—", "—"] for row in empty)
    for _ in range(2):
        play(server, pool, [1, 3], [2, 4], "B")
    text = page(live, pool)
    assert "3 rounds rated" in section(text, "summary")
    assert "3 rounds on " in " ".join(section(text, "days-note").split())
