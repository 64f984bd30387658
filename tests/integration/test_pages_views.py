"""What players and operators look for on the pages, over real HTTP on SQLite and
PostgreSQL: a player's rounds with their map, date, server and the sides as the game names
them, their win/loss record, the leaderboard's trend explained and its histogram's axes,
the server view's figures against the rounds posted, and everything a report supplied
escaped."""

from __future__ import annotations

import html
import math
import re
import statistics
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from markupsafe import escape

from synelo.ratings.synelo import round_score
from tests.conftest import LiveServer, steam

NASTY = '<b onmouseover="x()">&amp;</b>'  # text a report may send, never markup on a page


@pytest.fixture
def anyone(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=30) as c:
        yield c


def new_pool(admin: httpx.Client) -> str:
    name = f"pv{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    return name


def report(
    server: httpx.Client, pool: str, a: int, b: int, winner: str, **extra: Any
) -> dict[str, Any]:
    body = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s1",
        "winner": winner,
        "teams": {"A": [steam(a)], "B": [steam(b)]},
        "names": {steam(a): f"Player {a}", steam(b): f"Player {b}"},
        **extra,
    }
    r = server.post(f"/v1/pools/{pool}/rounds", json=body)
    assert r.status_code == 201, r.text
    return {**r.json(), "server_id": body["server_id"]}


def rows(page: str, table: str) -> list[list[str]]:
    """The text of each body row's cells of the table of that id."""
    body = page.split(f'id="{table}"', 1)[1].split("</tbody>", 1)[0].split("<tbody>", 1)[1]
    return [
        [
            html.unescape(" ".join(re.sub(r"<[^>]+>", "", c).split()))
            for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)
        ]
        for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_a_players_rounds_show_map_date_server_and_sides(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin)
    red = report(server, pool, 1, 2, "A", map="koth_viaduct", sides={"A": "RED", "B": "BLU"})
    plain = report(server, pool, 2, 1, "A", map="", server_id="s2")  # no sides: A and B
    nasty = report(
        server, pool, 1, 3, "draw", map=NASTY, server_id=NASTY, sides={"A": NASTY, "B": "BLU"}
    )
    page = anyone.get(f"/pools/{pool}/players/{steam(1)}").text
    history = anyone.get(f"/v1/public/pools/{pool}/players/{steam(1)}/history").json()
    when = [e["at"][:16].replace("T", " ") for e in history["entries"]]
    listed = rows(page, "rounds")
    assert [r[:4] for r in listed] == [
        [when[0], NASTY, NASTY, NASTY],  # team A, as the report names it
        [when[1], "—", "s2", "B"],  # player 1 was team B; no map
        [when[2], "koth_viaduct", "s1", "RED"],
    ]
    assert [r[5] for r in listed] == ["draw", "lost", "won"]
    # each round's date links to it, its server to the server's page
    for round_ in (nasty, plain, red):
        assert f'href="/pools/{pool}/rounds/{round_["round_id"]}"' in page
    assert f'href="/pools/{pool}/servers/{quote(NASTY, safe="")}"' in page
    assert NASTY not in page and page.count(str(escape(NASTY))) == 3  # map, server, side
    # the record: won, lost and drawn over every round, a draw counting half
    record = " ".join(html.unescape(page.split('id="record">', 1)[1].split("</p>")[0]).split())
    assert re.sub(r"<[^>]+>", "", record) == (
        "Record: 1 won, 1 lost, 1 drawn (50 % won, a draw counting half)."
    )


def test_a_players_win_chance_is_the_rounds_shown_p_under_a_temperature(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    """F1t: with T = 4 the player's page gives each round the chance the round page shows,
    σ(x/4), as the public history does; the admin history keeps F2's σ(x), which explains
    the step."""
    pool = f"pt{uuid.uuid4().hex[:10]}"
    params = {"t_shadow": 1, "temperature": 4.0}
    body = {"name": pool, "team_size": 1, "public": True, "params": params}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for _ in range(6):
        report(server, pool, 1, 2, "A")
    last = report(server, pool, 2, 1, "B")  # player 1 on B, favoured
    page = anyone.get(f"/pools/{pool}/players/{steam(1)}").text
    shown = rows(page, "rounds")[0][4]
    assert shown == f"{(1 - last['p_a']) * 100:.0f} %"
    public = anyone.get(f"/v1/public/pools/{pool}/players/{steam(1)}/history").json()
    assert abs(public["entries"][0]["p"] - (1 - last["p_a"])) < 0.01  # rounded there
    step = admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"][0]
    x = math.log(last["p_a"] / (1 - last["p_a"])) * 4.0
    assert math.isclose(step["p"], 1 - 1 / (1 + math.exp(-x)), rel_tol=1e-9)  # F2's, σ(x)
    assert shown != f"{step['p'] * 100:.0f} %"  # the two differ here, so the page chose
    round_page = anyone.get(f"/pools/{pool}/rounds/{last['round_id']}").text
    assert f"{last['p_a'] * 100:.0f} %" in round_page


def test_the_record_counts_every_round_not_only_the_recent_ones(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin)
    for i in range(23):  # more than the 20 rounds listed
        report(server, pool, 1, 2 + i % 2, "A" if i % 4 else "B")
    page = anyone.get(f"/pools/{pool}/players/{steam(1)}").text
    assert len(rows(page, "rounds")) == 20
    text = re.sub(r"<[^>]+>", "", page.split('id="record">', 1)[1].split("</p>")[0])
    assert " ".join(text.split()) == "Record: 17 won, 6 lost (74 % won)."


def test_the_rating_chart_has_a_round_axis_and_round_ticks(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin)
    for i in range(12):
        report(server, pool, 1, 2, "AB"[i % 3 == 0])
    svg = anyone.get(f"/pools/{pool}/players/{steam(1)}").text.split("<svg", 1)[1]
    ticks = re.findall(r'<text class="axis tick-x" x="([\d.]+)"[^>]*>(\d+)</text>', svg)
    points = [float(x) for x in re.findall(r'<circle class="point" cx="([\d.]+)"', svg)]
    assert [t for _, t in ticks] == ["2", "4", "6", "8", "10", "12"]
    for x, tick in ticks:  # under the point of that round (the n-th round: point n − 1)
        assert float(x) == pytest.approx(points[int(tick) - 1], abs=0.1)
    labels = re.findall(r'<text class="axis label"[^>]*>([^<]+)</text>', svg)
    assert labels == ["rating", "rounds played"]
    ratings = [int(v) for v in re.findall(r'class="axis tick-y"[^>]*>(-?\d+)</text>', svg)]
    steps = {b - a for a, b in zip(ratings, ratings[1:], strict=False)}
    assert len(ratings) >= 2 and len(steps) == 1


def test_the_leaderboard_explains_its_trend_and_labels_its_histogram(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin)
    empty = anyone.get(f"/pools/{pool}").text  # no player yet: no heading over nothing
    assert "Rating distribution" not in empty and 'id="distribution"' not in empty
    for i in range(6):
        report(server, pool, 1 + i % 3, 4 + i % 2, "A")
    page = anyone.get(f"/pools/{pool}").text
    assert "<h2>Rating distribution</h2>" in page
    note = page.split('id="trend-note">')[1].split("</p>")[0]
    note = " ".join(html.unescape(re.sub(r"<[^>]+>", "", note)).split())
    assert note == (
        "* Trend: how much the player's rating rose (▲) or fell (▼) over their last 10 "
        "rounds; an admin's change of it does not count."
    )
    chart = page.split('id="distribution">', 1)[1].split("</svg>", 1)[0]
    assert re.findall(r'<text class="axis label"[^>]*>([^<]+)</text>', chart) == [
        "players",
        "rating",
    ]
    assert len(re.findall(r'class="axis tick-x"', chart)) >= 2
    assert f'href="/pools/{pool}/servers"' in page  # the server view, from the pool's page


def brier(answers: list[dict[str, Any]]) -> tuple[float, float]:
    """F6 of these rounds and its standard error."""
    terms = [(r["p_a"] - round_score(r["winner"], "A")) ** 2 for r in answers]
    return statistics.mean(terms), statistics.stdev(terms) / math.sqrt(len(terms))


@pytest.mark.usefixtures("threaded_jobs")  # its re-rate: what it does, not where
def test_the_server_view_shows_each_servers_rounds_calibration_and_newest_report(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    """Two servers: on "good" the favourite keeps winning; on "bad", reported later, the
    teams are reported the wrong way round, so the favourite loses every round: its Brier
    lies above a coin's by more than its margin of chance, and it is marked."""
    pool = new_pool(admin)
    good = [report(server, pool, 1, 2, "A", server_id="good") for _ in range(30)]
    bad = [report(server, pool, 1, 2, "B", server_id="bad") for _ in range(12)]
    voided = report(server, pool, 3, 4, "A", server_id="bad")
    job = admin.post(f"/v1/pools/{pool}/rounds/{voided['round_id']}/void", json={"reason": "t"})
    assert job.status_code == 202
    live.app.state.jobs.wait(timeout=60)
    bad = [  # after the void's re-rate: the chances as they stand
        admin.get(f"/v1/public/pools/{pool}/rounds/{r['round_id']}").json() for r in bad
    ]
    good = [admin.get(f"/v1/public/pools/{pool}/rounds/{r['round_id']}").json() for r in good]
    page = anyone.get(f"/pools/{pool}/servers").text
    listed = rows(page, "servers")
    assert [r[0].split()[0] for r in listed] == ["bad", "good"]  # the newest reporting first
    for row, answers, voids in ((listed[0], bad, 1), (listed[1], good, 0)):
        score, error = brier(answers)
        assert row[1:5] == [str(len(answers)), str(voids), f"{score:.4f}", f"{2 * error:.4f}"]
    assert "worse than a coin" in listed[0][0] and "worse than a coin" not in listed[1][0]
    assert re.search(r'<tr class="worse" data-server="bad">', page)
    newest = voided["round_id"]
    assert f'href="/pools/{pool}/rounds/{newest}"' in page  # its newest report, voided too
    # one server's page: its figures and newest rounds, newest first
    own = anyone.get(f"/pools/{pool}/servers/bad").text
    assert "Worse than a coin" in own
    shown = rows(own, "server-rounds")
    assert len(shown) == 13 and shown[0][3] == "voided" and shown[1][3] == "team B won"
    assert anyone.get(f"/pools/{pool}/servers/nosuch").status_code == 404


def test_a_server_id_is_text_on_every_page(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin)
    odd = "eu/1 " + NASTY  # a '/' too: one path segment, %2F
    report(server, pool, 1, 2, "A", server_id=odd)
    page = anyone.get(f"/pools/{pool}/servers").text
    assert NASTY not in page and str(escape(odd)) in page
    link = f"/pools/{pool}/servers/{quote(odd, safe='')}"
    assert f'href="{link}"' in page
    own = anyone.get(link)
    assert own.status_code == 200 and NASTY not in own.text
    assert rows(own.text, "server-rounds")[0][3] == "team A won"


def test_a_private_pools_servers_are_not_found(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    name = f"pp{uuid.uuid4().hex[:10]}"
    assert admin.post("/v1/pools", json={"name": name, "team_size": 1}).status_code == 201
    report(server, name, 1, 2, "A", server_id="srv-secret")
    for path in (f"/pools/{name}/servers", f"/pools/{name}/servers/srv-secret"):
        r = anyone.get(path)
        main = r.text.split("<main>", 1)[1]  # the header's login link holds the path
        assert r.status_code == 404 and "srv-secret" not in main


def test_a_round_page_names_the_sides_and_its_server(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin)
    sided = report(server, pool, 1, 2, "B", sides={"A": "BLU", "B": NASTY}, server_id="eu/2")
    plain = report(server, pool, 1, 2, "A")
    page = anyone.get(f"/pools/{pool}/rounds/{sided['round_id']}").text
    heads = [" ".join(html.unescape(h).split()) for h in re.findall(r"<h2>(.*?)</h2>", page)]
    assert heads == ["Team A · BLU", f"Team B · {NASTY} (won)"]
    assert NASTY not in page
    assert f'href="/pools/{pool}/servers/eu%2F2">eu/2</a>' in page
    page = anyone.get(f"/pools/{pool}/rounds/{plain['round_id']}").text
    assert re.findall(r"<h2>(.*?)</h2>", page) == ["Team A (won)", "Team B"]


def test_a_stale_period_of_one_day_is_one_day_on_every_page(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    """T_stale = 1 read "in the last 1 days" on the leaderboard and the health page; a
    fraction keeps its plural ("0.5 days")."""
    for stale, shown in ((1, "1 day"), (0.5, "0.5 days")):
        pool = f"pv{uuid.uuid4().hex[:10]}"
        params = {"t_shadow": 1, "t_stale_days": stale}
        body = {"name": pool, "team_size": 1, "public": True, "params": params}
        assert admin.post("/v1/pools", json=body).status_code == 201
        report(server, pool, 1, 2, "A")
        for path in (f"/pools/{pool}", f"/pools/{pool}/health"):
            text = " ".join(anyone.get(path).text.split())
            assert f"the last {shown}" in text and "1 days" not in text, path
