"""The public read endpoints over real HTTP on SQLite and PostgreSQL: who may read a pool
(public, or private with a token), the board's rules (shadow, stale, hidden), its order,
paging and search, a player's page, CORS and ETags, hiding players and opening a pool."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import SERVER, LiveServer, MovableClock, steam

Body = dict[str, Any]


def new_pool(admin: httpx.Client, **extra: Any) -> str:
    name = f"p{uuid.uuid4().hex[:12]}"
    body = {"name": name, "team_size": 2, "params": {"t_shadow": 3}, **extra}
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 201, r.text
    return name


def play(server: httpx.Client, pool: str, a: list[int], b: list[int], winner: str = "A") -> None:
    body = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": winner,
        "teams": {"A": [steam(n) for n in a], "B": [steam(n) for n in b]},
        "names": {steam(n): f"Player {n}" for n in a + b},
    }
    r = server.post(f"/v1/pools/{pool}/rounds", json=body)
    assert r.status_code == 201, r.text


def league(server: httpx.Client, pool: str) -> None:
    """Players 1–4 play 4 rounds each (past the shadow period of 3), 1 and 2 always winning;
    player 5 plays one (provisional)."""
    for _ in range(4):
        play(server, pool, [1, 2], [3, 4])
    play(server, pool, [5], [4], "B")


@pytest.fixture
def anyone(live: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=live.url, timeout=10)


def test_a_public_board_lists_the_visible_players_in_order(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    r = anyone.get(f"/v1/public/pools/{pool}/leaderboard")
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["cache-control"].startswith("public")
    board = r.json()
    assert board["shadow_rounds"] == 3 and board["total"] == 4
    listed = board["players"]
    assert [p["place"] for p in listed] == [1, 2, 3, 4]
    ratings = [p["rating"] for p in listed]
    assert ratings == sorted(ratings, reverse=True)
    assert {p["steam_id"] for p in listed[:2]} == {steam(1), steam(2)}  # the winners first
    assert all(not p["provisional"] and p["rounds_left"] == 0 for p in listed)
    assert steam(5) not in {p["steam_id"] for p in listed}  # provisional: not listed
    assert listed[0]["name"].startswith("Player ")

    # paging keeps the places; a search keeps the board's places too
    page = anyone.get(f"/v1/public/pools/{pool}/leaderboard?offset=2&limit=1").json()
    assert [p["place"] for p in page["players"]] == [3] and page["total"] == 4
    assert page["players"][0]["steam_id"] == listed[2]["steam_id"]
    found = anyone.get(f"/v1/public/pools/{pool}/leaderboard?search=player 4").json()
    assert found["total"] == 1 and found["players"][0]["steam_id"] == steam(4)
    assert found["players"][0]["place"] == next(
        p["place"] for p in listed if p["steam_id"] == steam(4)
    )
    by_id = anyone.get(f"/v1/public/pools/{pool}/leaderboard?search={steam(3)}").json()
    assert [p["steam_id"] for p in by_id["players"]] == [steam(3)]

    # the search's % and _ are characters: nobody's name or id has them
    for literal in ("%", "_", "\\"):
        none = anyone.get(f"/v1/public/pools/{pool}/leaderboard", params={"search": literal})
        assert none.status_code == 200 and none.json()["total"] == 0, literal
    for bad in ("limit=0", "limit=201", "offset=-1", "search=", "search=a%00"):
        r = anyone.get(f"/v1/public/pools/{pool}/leaderboard?{bad}")
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["detail"][0]["loc"][0] == "query"


def test_etags_answer_304_until_the_board_changes(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    url = f"/v1/public/pools/{pool}/leaderboard"
    first = anyone.get(url)
    tag = first.headers["etag"]
    again = anyone.get(url, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    weak = anyone.get(url, headers={"If-None-Match": f'"other", W/{tag}'})
    assert weak.status_code == 304  # a proxy may have weakened it
    assert first.headers["access-control-expose-headers"] == "ETag"
    play(server, pool, [1, 3], [2, 4])
    changed = anyone.get(url, headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag


@pytest.mark.usefixtures("threaded_jobs")  # its re-rate: what it does, not where
def test_a_private_pool_is_unknown_without_a_token(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client, live: LiveServer
) -> None:
    pool = new_pool(admin)  # private by default
    league(server, pool)
    missing = anyone.get(f"/v1/public/pools/nosuch{uuid.uuid4().hex[:6]}/leaderboard")
    hidden = anyone.get(f"/v1/public/pools/{pool}/leaderboard")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["detail"] == f"no public pool named {pool!r}"
    assert pool not in {p["name"] for p in anyone.get("/v1/public/pools").json()["pools"]}
    assert anyone.get(f"/v1/public/pools/{pool}/players/{steam(1)}").status_code == 404
    # a game server's token reads it (its !top), privately cached, no CORS
    r = server.get(f"/v1/public/pools/{pool}/leaderboard")
    assert r.status_code == 200 and r.json()["total"] == 4
    assert "access-control-allow-origin" not in r.headers
    assert r.headers["cache-control"] == "private, no-cache"
    # a bad token is refused before the pool is looked up: a 401 either way
    for name in (pool, f"nosuch{uuid.uuid4().hex[:6]}"):
        bad = anyone.get(
            f"/v1/public/pools/{name}/leaderboard", headers={"Authorization": "Bearer nope"}
        )
        assert bad.status_code == 401, name

    # opened at once, logged; closed again
    opened = admin.patch(f"/v1/pools/{pool}", json={"public": True, "reason": "league page"})
    assert opened.status_code == 200 and opened.json()["public"] is True
    assert anyone.get(f"/v1/public/pools/{pool}/leaderboard").status_code == 200
    listed = {p["name"]: p for p in anyone.get("/v1/public/pools").json()["pools"]}
    assert listed[pool]["rounds"] == 5 and listed[pool]["active_week"] == 5
    assert listed[pool]["model"] == "synelo"
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"]
    assert (log[-1]["kind"], log[-1]["value"], log[-1]["reason"]) == (
        "patch",
        {"public": True},
        "league page",
    )
    assert admin.patch(f"/v1/pools/{pool}", json={"public": False}).json()["public"] is False
    assert anyone.get(f"/v1/public/pools/{pool}/leaderboard").status_code == 404
    # with a re-rate that starts, visibility applies at once too
    both = admin.patch(f"/v1/pools/{pool}", json={"params": {"t_shadow": 2}, "public": True})
    assert both.status_code == 202, both.text
    assert admin.get(f"/v1/pools/{pool}").json()["public"] is True
    for _ in range(200):
        if admin.get(both.headers["location"]).json()["status"] != "running":
            break
        time.sleep(0.05)
    assert admin.get(both.headers["location"]).json()["status"] == "done"
    r = admin.patch(f"/v1/pools/{pool}", json={"public": None})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "public"]
    r = admin.patch(f"/v1/pools/{pool}", json={"public": "yes"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "public"]


def test_a_player_page_hides_a_provisional_rating(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    new = anyone.get(f"/v1/public/pools/{pool}/players/{steam(5)}").json()
    assert new["provisional"] and new["rounds_left"] == 2 and new["rating"] is None
    assert new["place"] is None and new["rounds_played"] == 1
    board = anyone.get(f"/v1/public/pools/{pool}/leaderboard").json()["players"]
    for listed in board:
        page = anyone.get(f"/v1/public/pools/{pool}/players/{listed['steam_id']}").json()
        assert page == listed  # the same player, the same place
    assert anyone.get(f"/v1/public/pools/{pool}/players/{steam(77)}").status_code == 404


def test_hidden_players_leave_every_public_list(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    top = anyone.get(f"/v1/public/pools/{pool}/leaderboard").json()["players"][0]["steam_id"]
    r = admin.put(
        f"/v1/pools/{pool}/players/{top}/hidden", json={"hidden": True, "reason": "cheater"}
    )
    assert r.status_code == 200 and r.json()["hidden"] is True
    board = anyone.get(f"/v1/public/pools/{pool}/leaderboard").json()
    assert board["total"] == 3 and top not in {p["steam_id"] for p in board["players"]}
    assert [p["place"] for p in board["players"]] == [1, 2, 3]
    assert anyone.get(f"/v1/public/pools/{pool}/players/{top}").status_code == 404
    # still rated: the lookup and the rounds see them
    looked = server.get(f"/v1/pools/{pool}/players/{top}").json()
    assert looked["hidden"] is True and looked["rounds_played"] == 4
    log = admin.get(f"/v1/pools/{pool}/changes").json()["changes"][-1]
    assert (log["kind"], log["steam_id"], log["value"]) == ("hide", top, {"hidden": True})
    shown = admin.put(f"/v1/pools/{pool}/players/{top}/hidden", json={"hidden": False})
    assert shown.json()["hidden"] is False
    assert anyone.get(f"/v1/public/pools/{pool}/leaderboard").json()["total"] == 4

    assert (
        admin.put(f"/v1/pools/{pool}/players/{steam(99)}/hidden", json={"hidden": True}).status_code
        == 404
    )
    for body, loc in (({}, ["body", "hidden"]), ({"hidden": 1}, ["body", "hidden"])):
        r = admin.put(f"/v1/pools/{pool}/players/{top}/hidden", json=body)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc
    assert (
        server.put(f"/v1/pools/{pool}/players/{top}/hidden", json={"hidden": True}).status_code
        == 403
    )


def test_stale_players_leave_the_board(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client, clock: MovableClock
) -> None:
    pool = new_pool(admin, public=True, params={"t_shadow": 3, "t_stale_days": 10})
    league(server, pool)
    clock.offset = timedelta(days=11)
    for _ in range(3):
        play(server, pool, [1, 6], [2, 7])  # 1 and 2 play on; 3 and 4 do not
    board = anyone.get(f"/v1/public/pools/{pool}/leaderboard").json()
    assert {p["steam_id"] for p in board["players"]} == {steam(n) for n in (1, 2, 6, 7)}
    stale = anyone.get(f"/v1/public/pools/{pool}/players/{steam(3)}").json()
    assert stale["place"] is None and stale["rating"] is not None


def test_a_public_history_has_no_rating_while_provisional(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    r = anyone.get(f"/v1/public/pools/{pool}/players/{steam(1)}/history", params={"limit": 3})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*"
    answer = r.json()
    private = admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"]
    assert [(e["before"], e["after"], e["round_id"]) for e in answer["entries"]] == [
        (e["before"], e["after"], e["round_id"]) for e in private[:3]
    ]
    assert answer["player"]["rating"] is not None and answer["voided"] == []
    newcomer = anyone.get(f"/v1/public/pools/{pool}/players/{steam(5)}/history").json()
    assert newcomer["player"]["provisional"] is True and len(newcomer["entries"]) == 1
    assert newcomer["entries"][0]["before"] is None and newcomer["entries"][0]["after"] is None
    assert newcomer["entries"][0]["s"] == 0.0  # the result (a loss) is shown, the rating not
    hide = admin.put(f"/v1/pools/{pool}/players/{steam(1)}/hidden", json={"hidden": True})
    assert hide.status_code == 200
    assert anyone.get(f"/v1/public/pools/{pool}/players/{steam(1)}/history").status_code == 404
    assert (
        anyone.get(f"/v1/public/pools/{pool}/players/{steam(1)}/history?limit=0").status_code == 422
    )


def test_a_public_round_shows_the_changes_the_round_page_shows(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    rounds = admin.get(f"/v1/pools/{pool}/players/{steam(5)}/history").json()["entries"]
    round_id = rounds[0]["round_id"]
    r = anyone.get(f"/v1/public/pools/{pool}/rounds/{round_id}")
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["winner"] == "B" and not answer["voided"]
    (newcomer,) = answer["A"]
    assert newcomer == {
        "steam_id": steam(5),
        "name": "Player 5",
        "provisional": True,
        "before": None,
        "after": None,
    }
    (veteran,) = answer["B"]
    history = admin.get(f"/v1/pools/{pool}/players/{steam(4)}/history").json()["entries"][0]
    assert (veteran["before"], veteran["after"]) == (history["before"], history["after"])
    assert anyone.get(f"/v1/public/pools/{pool}/rounds/nope").status_code == 404
    private = new_pool(admin)
    assert anyone.get(f"/v1/public/pools/{private}/rounds/{round_id}").status_code == 404


def test_the_board_json_has_the_pages_histogram_and_trends(
    live: LiveServer, admin: httpx.Client, anyone: httpx.Client
) -> None:
    """The leaderboard's JSON carries what its page draws: the whole board's ratings in 20
    equal ranges (the top rating in the last) and each listed player's trend."""
    pool = new_pool(admin, public=True, params={"t_shadow": 0})
    keys = [steam(n) for n in range(1, 41)]
    for n in range(1, 41, 2):
        play(live.client(SERVER), pool, [n], [n + 1])
    ratings = [700 + (n * 137) % 911 for n in range(40)]
    for key, rating in zip(keys, ratings, strict=True):
        assert (
            admin.put(f"/v1/pools/{pool}/players/{key}", json={"rating": rating}).status_code == 200
        )
    play(live.client(SERVER), pool, [1], [2])  # a round after the sets: the only trend
    board = anyone.get(f"/v1/public/pools/{pool}/leaderboard", params={"limit": 5}).json()
    listed = [
        p["rating"]
        for p in anyone.get(f"/v1/public/pools/{pool}/leaderboard", params={"limit": 200}).json()[
            "players"
        ]
    ]
    assert len(listed) == 40 and len(board["players"]) == 5
    histogram = board["histogram"]
    assert (histogram["low"], histogram["high"]) == (min(listed), max(listed))
    assert sum(histogram["counts"]) == 40 and len(histogram["counts"]) == 20
    width = (max(listed) - min(listed)) / 20
    assert histogram["counts"][-1] == sum(1 for r in listed if r >= min(listed) + 19 * width)
    shown = [p["steam_id"] for p in board["players"]]
    assert set(board["trends"]) == set(shown)
    for key in shown:
        entries = admin.get(f"/v1/pools/{pool}/players/{key}/history").json()["entries"]
        rounds = [e for e in entries if e["kind"] == "round"][:10]
        assert board["trends"][key] == sum(e["after"] - e["before"] for e in rounds)
    assert any(board["trends"].values())  # not all zero: the check above can fail


def test_a_search_keeps_every_match_at_its_board_place(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    """Matches spread over the board, ties of rating and of rounds among them: each one's
    place in a search is its place on the whole board."""
    pool = new_pool(admin, public=True, params={"t_shadow": 1})
    for n in range(1, 31, 2):
        play(server, pool, [n], [n + 1])
    play(server, pool, [1], [4])  # players 1 and 4 have two rounds
    for n in range(1, 31):  # ratings in tied groups of three
        r = admin.put(f"/v1/pools/{pool}/players/{steam(n)}", json={"rating": 900 + 10 * (n % 7)})
        assert r.status_code == 200
    board = anyone.get(f"/v1/public/pools/{pool}/leaderboard", params={"limit": 200}).json()
    place = {p["steam_id"]: p["place"] for p in board["players"]}
    assert sorted(place.values()) == list(range(1, 31))
    search = anyone.get(
        f"/v1/public/pools/{pool}/leaderboard", params={"search": "Player 1", "limit": 200}
    ).json()
    matches = search["players"]
    assert len(matches) == 11  # Player 1, 10…19
    assert [p["place"] for p in matches] == [place[p["steam_id"]] for p in matches]
    assert [p["place"] for p in matches] == sorted(p["place"] for p in matches)
    paged = anyone.get(
        f"/v1/public/pools/{pool}/leaderboard",
        params={"search": "Player 1", "offset": 4, "limit": 3},
    ).json()
    assert [p["place"] for p in paged["players"]] == [p["place"] for p in matches[4:7]]


def test_public_chances_are_given_to_the_percent(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    entries = admin.get(f"/v1/pools/{pool}/players/{steam(5)}/history").json()["entries"]
    exact = entries[0]["p"]
    answer = anyone.get(f"/v1/public/pools/{pool}/rounds/{entries[0]['round_id']}").json()
    assert answer["p_a"] == round(1 - exact, 2) or answer["p_a"] == round(exact, 2)
    assert answer["p_a"] * 100 == pytest.approx(round(answer["p_a"] * 100))
    mine = anyone.get(f"/v1/public/pools/{pool}/players/{steam(5)}/history").json()
    assert mine["entries"][0]["p"] == round(exact, 2)
    with_token = admin.get(f"/v1/public/pools/{pool}/players/{steam(5)}/history").json()
    assert with_token["entries"][0]["p"] == exact


def test_public_preflights_and_errors_carry_cors(anyone: httpx.Client) -> None:
    pre = anyone.options(
        "/v1/public/pools/any/leaderboard",
        headers={
            "Origin": "https://league.example",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "if-none-match",
        },
    )
    assert pre.status_code == 204
    assert pre.headers["access-control-allow-origin"] == "*"
    assert "If-None-Match" in pre.headers["access-control-allow-headers"]
    assert "Authorization" not in pre.headers["access-control-allow-headers"]
    missing = anyone.get("/v1/public/pools/nosuchpool/leaderboard")
    assert missing.status_code == 404
    assert missing.headers["access-control-allow-origin"] == "*"
    assert "Retry-After" in missing.headers["access-control-expose-headers"]
    bad = anyone.get("/v1/public/pools/nosuchpool/leaderboard", params={"limit": 0})
    assert bad.status_code == 422 and bad.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-origin" not in anyone.get("/v1/pools").headers


def test_a_board_search_takes_steam2_and_steam3_ids(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    account = int(steam(3)) - 76561197960265728  # 3
    for text in (f"STEAM_0:{account % 2}:{account // 2}", f"[U:1:{account}]", steam(3)):
        found = anyone.get(f"/v1/public/pools/{pool}/leaderboard", params={"search": text})
        assert [p["steam_id"] for p in found.json()["players"]] == [steam(3)], text


def test_the_public_health_answers_the_pages_figures(
    admin: httpx.Client, server: httpx.Client, anyone: httpx.Client
) -> None:
    pool = new_pool(admin, public=True)
    league(server, pool)
    r = anyone.get(f"/v1/public/pools/{pool}/health")
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*"
    answer = r.json()
    assert answer["rounds"] == 5 and answer["as_of_round"] == 5 and not answer["behind"]
    assert answer["blocks"] == []  # the first Brier block is whole at 400 rounds
    assert sum(b["rounds"] for b in answer["reliability"]) == 5
    assert sum(d["rounds"] for d in answer["rounds_per_day"]) == 5
    assert answer["brier_all"] == pytest.approx(
        admin.get(f"/v1/pools/{pool}/quality").json()["brier_all"]
    )
    assert answer["spread"]["name"] == "k" and answer["theta"]["status"] == "too few"
    private = new_pool(admin)
    assert anyone.get(f"/v1/public/pools/{private}/health").status_code == 404
    assert admin.get(f"/v1/public/pools/{private}/health").status_code == 200
