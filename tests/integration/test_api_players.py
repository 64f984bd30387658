"""Lookups and admin routes over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest

from tests.conftest import MovableClock, steam


@pytest.fixture
def seed_pool(admin: httpx.Client) -> str:
    """A new pool rating with the seed's F3 (Θ 2400): the values worked by hand below are
    the seed's. (The revised F3's are in test_api_pools.py.)"""
    name = f"t{uuid.uuid4().hex[:16]}"
    body = {"name": name, "team_size": 12, "theta": 2400, "params": {"convergence": "seed"}}
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 201, r.text
    return name


def play(server: httpx.Client, pool: str, a: list, b: list, winner: str = "A") -> dict:
    r = server.post(
        f"/v1/pools/{pool}/rounds",
        json={
            "round_id": uuid.uuid4().hex,
            "server_id": "s",
            "map": "m",
            "winner": winner,
            "teams": {"A": a, "B": b},
        },
    )
    assert r.status_code == 201, r.text
    return r.json()


def test_unknown_player_lookup_is_default_and_not_stored(
    server: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    r = server.get(f"/v1/pools/{pool}/players/{steam(42)}")
    assert r.status_code == 200
    assert r.json() == {
        "steam_id": steam(42),
        "name": None,
        "rating": 1000,
        "visible": False,
        "rounds_played": 0,
        "stale": False,
        "last_played": None,
        "convergence": 1.0,
        "k": 72.0,
        "skill": {"convergence": 1.0, "k": 72.0},
        "hidden": False,
        "place": None,
    }
    assert admin.get(f"/v1/pools/{pool}/quality").json()["players"] == 0


def test_bulk_lookup_keeps_order_and_drops_duplicates(server: httpx.Client, pool: str) -> None:
    play(server, pool, [steam(1)], [steam(2)])
    r = server.post(
        f"/v1/pools/{pool}/players/lookup",
        json={"steam_ids": [steam(3), int(steam(1)), steam(2), steam(1)]},
    )
    assert r.status_code == 200
    got = [(p["steam_id"], p["rating"]) for p in r.json()["players"]]
    assert got == [(steam(3), 1000), (steam(1), 1036), (steam(2), 964)]
    bad = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": [steam(1), "12"]})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "steam_ids", 1]


def test_lookup_validates_path_id(server: httpx.Client, pool: str) -> None:
    r = server.get(f"/v1/pools/{pool}/players/123")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["path", "steam_id"]


def test_lookup_reports_k_and_convergence(server: httpx.Client, seed_pool: str) -> None:
    pool = seed_pool
    play(server, pool, [steam(1)], [steam(2)])
    # One round in the window → still C = 1; K = 2 + 70·1·G(1036) with
    # G = exp(−36²/(2·400²)) = exp(−0.00405) → K = 2 + 70·0.995958… = 71.7171…
    p = server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()
    assert p["convergence"] == 1.0
    assert abs(p["k"] - 71.71706) < 1e-4
    # Round 2 against a new player (1000): P = 1/(1+exp(−36/2400)) = 0.50375 (to 1e-7), a
    # loss: 1036 + 71.717·(0 − 0.50375) = 999.87 → 1000. Window w = [1036, 1000],
    # e = [0.5, 0.50375], o = [1, 0]; m = 1:
    #   v_vel = |1000 − 1036|/72 = 0.5; v_wre = |0.5 − 0.501875|/0.1 = 0.01875;
    #   v_vol = std([1036, 1000])/72 = 18/72 = 0.25
    #   C = 0.25·0.5 + 0.25·0.01875 + 0.5·0.25 = 0.2546875
    body = play(server, pool, [steam(3)], [steam(1)])
    assert [p["after"] for p in body["players"]] == [1036, 1000]
    p = server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()
    assert abs(p["convergence"] - 0.2546875) < 1e-6
    # K for the next round: G(1000) = 1 → K = 2 + 70·0.2546875 = 19.828125
    assert abs(p["k"] - 19.828125) < 1e-4


def test_shadow_graduation_caps_at_2200_and_makes_visible(
    server: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    # Put the player at 3000 by hand, then play 50 rounds: the 50th caps at 2200.
    assert (
        admin.put(f"/v1/pools/{pool}/players/{steam(1)}", json={"rating": 3000}).status_code == 200
    )
    for i in range(49):
        body = play(server, pool, [steam(1)], [steam(100 + i)])
    me = next(p for p in body["players"] if p["steam_id"] == steam(1))
    assert me["rounds_played"] == 49 and me["visible"] is False and me["after"] > 2200
    body = play(server, pool, [steam(1)], [steam(200)])
    me = next(p for p in body["players"] if p["steam_id"] == steam(1))
    assert me["rounds_played"] == 50 and me["visible"] is True and me["after"] == 2200
    board = admin.get(f"/v1/pools/{pool}/leaderboard").json()["players"]
    assert [(p["rank"], p["steam_id"], p["rating"]) for p in board] == [(1, steam(1), 2200)]


def test_set_rating_is_journaled_and_bounded(
    admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    play(server, pool, [steam(1)], [steam(2)])
    r = admin.put(f"/v1/pools/{pool}/players/{steam(1)}", json={"rating": 1500})
    assert r.status_code == 200
    assert r.json()["rating"] == 1500 and r.json()["rounds_played"] == 1
    assert r.json()["convergence"] == 1.0  # the window restarts after a manual rating
    for bad in (99, 10_001, "1500", 1500.5):
        r = admin.put(f"/v1/pools/{pool}/players/{steam(1)}", json={"rating": bad})
        assert r.status_code == 422, bad
        assert r.json()["detail"][0]["loc"] == ["body", "rating"]
    hist = admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"]
    assert [(e["kind"], e["before"], e["after"]) for e in hist] == [
        ("set", 1036, 1500),
        ("round", 1000, 1036),
    ]
    assert hist[1]["p"] == 0.5 and hist[1]["s"] == 1.0 and hist[1]["k"] == 72.0
    assert hist[1]["round_id"] and hist[0]["round_id"] is None


def test_reset_returns_player_to_shadow(
    admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    play(server, pool, [steam(1)], [steam(2)])
    r = admin.delete(f"/v1/pools/{pool}/players/{steam(1)}")
    assert r.status_code == 200
    assert (r.json()["rating"], r.json()["rounds_played"], r.json()["visible"]) == (1000, 0, False)
    hist = admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"]
    assert [(e["kind"], e["before"], e["after"]) for e in hist][0] == ("reset", 1036, 1000)
    # Resetting an unknown player stores nothing.
    assert admin.delete(f"/v1/pools/{pool}/players/{steam(77)}").json()["rating"] == 1000
    assert admin.get(f"/v1/pools/{pool}/quality").json()["players"] == 2


def test_history_pages_newest_first(admin: httpx.Client, server: httpx.Client, pool: str) -> None:
    for _ in range(3):
        play(server, pool, [steam(1)], [steam(2)])
    admin.put(f"/v1/pools/{pool}/players/{steam(1)}", json={"rating": 1200})
    play(server, pool, [steam(1)], [steam(3)])
    url = f"/v1/pools/{pool}/players/{steam(1)}/history"
    page1 = admin.get(url, params={"limit": 2}).json()["entries"]
    page2 = admin.get(url, params={"limit": 2, "before": page1[-1]["id"]}).json()["entries"]
    page3 = admin.get(url, params={"limit": 2, "before": page2[-1]["id"]}).json()["entries"]
    assert [len(page1), len(page2), len(page3)] == [2, 2, 1]
    chain = page1 + page2 + page3
    assert [e["kind"] for e in chain] == ["round", "set", "round", "round", "round"]
    assert [e["seq"] for e in chain] == [4, None, 3, 2, 1]
    # Each entry starts where the one before it in time ended.
    assert all(new["before"] == old["after"] for new, old in zip(chain, chain[1:], strict=False))
    # Another player's journal id is no cursor for this player.
    other = admin.get(f"/v1/pools/{pool}/players/{steam(2)}/history").json()["entries"]
    assert admin.get(url, params={"before": other[0]["id"]}).json()["entries"] == []
    assert admin.get(f"/v1/pools/{pool}/players/{steam(99)}/history").json()["entries"] == []


def test_stale_after_30_days(
    server: httpx.Client, admin: httpx.Client, pool: str, clock: MovableClock
) -> None:
    play(server, pool, [steam(1)], [steam(2)])
    clock.offset = timedelta(days=29, hours=23)
    assert server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()["stale"] is False
    clock.offset = timedelta(days=30, minutes=1)
    assert server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()["stale"] is True
    assert admin.get(f"/v1/pools/{pool}/quality").json()["stale"] == 2
    # Playing again clears it.
    play(server, pool, [steam(1)], [steam(3)])
    assert server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()["stale"] is False


def test_leaderboard_only_visible(admin: httpx.Client, server: httpx.Client, pool: str) -> None:
    play(server, pool, [steam(1)], [steam(2)])
    assert admin.get(f"/v1/pools/{pool}/leaderboard").json()["players"] == []
    assert admin.get(f"/v1/pools/{pool}/leaderboard?limit=0").status_code == 422


def test_leaderboard_order_and_limit(admin: httpx.Client, server: httpx.Client) -> None:
    # A pool whose players are visible after one round, so that six can be ranked quickly.
    pool = f"lb{uuid.uuid4().hex[:10]}"
    assert (
        admin.post(
            "/v1/pools", json={"name": pool, "team_size": 1, "params": {"t_shadow": 1}}
        ).status_code
        == 201
    )
    for n in range(1, 7):
        play(server, pool, [steam(n)], [steam(100 + n)])
    play(server, pool, [steam(5)], [steam(200)])  # player 5 has 2 rounds, player 6 one
    for n, rating in [(1, 1500), (2, 1200), (3, 1800), (4, 900), (5, 1200), (6, 1200)]:
        assert (
            admin.put(f"/v1/pools/{pool}/players/{steam(n)}", json={"rating": rating}).status_code
            == 200
        )
    board = admin.get(f"/v1/pools/{pool}/leaderboard?limit=100").json()["players"]
    ranked = [(p["rank"], p["steam_id"], p["rating"]) for p in board]
    # Highest rating first; a tie goes to more rounds played, then to the lower id. The
    # opponents lost once at P = 0.5 (964, or ~966 for player 5's second one), above 900.
    assert ranked[:5] == [
        (1, steam(3), 1800),
        (2, steam(1), 1500),
        (3, steam(5), 1200),
        (4, steam(2), 1200),
        (5, steam(6), 1200),
    ]
    assert ranked[-1] == (13, steam(4), 900)
    assert [p["rank"] for p in board] == list(range(1, len(board) + 1))
    assert [p["rating"] for p in board] == sorted((p["rating"] for p in board), reverse=True)
    assert len(board) == 13  # six ranked by hand, six opponents and player 5's second one
    limited = admin.get(f"/v1/pools/{pool}/leaderboard?limit=2").json()["players"]
    assert [p["steam_id"] for p in limited] == [steam(3), steam(1)]


def test_set_rating_restarts_the_window_the_writer_had(
    server: httpx.Client, admin: httpx.Client, seed_pool: str
) -> None:
    pool = seed_pool
    # As in test_lookup_reports_k_and_convergence: after two rounds player 1 is at 1000 with
    # C = 0.2546875 (its window is cached by the round writer).
    play(server, pool, [steam(1)], [steam(2)])
    play(server, pool, [steam(3)], [steam(1)])
    assert (
        abs(server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()["convergence"] - 0.2546875)
        < 1e-6
    )
    admin.put(f"/v1/pools/{pool}/players/{steam(1)}", json={"rating": 1500})
    body = play(server, pool, [steam(1)], [steam(4)])
    me = next(p for p in body["players"] if p["steam_id"] == steam(1))
    # The window restarted: C = 1, G(1500) = exp(−500²/(2·400²)) = exp(−0.78125) = 0.457833
    # → K = 2 + 70·0.457833 = 34.0483 (the old window would give 2 + 70·0.2547·0.4578 = 10.16).
    assert abs(me["k"] - 34.0483) < 1e-3


def test_a_players_name_is_the_latest_reported_and_shown_everywhere(
    server: httpx.Client, admin: httpx.Client
) -> None:
    pool = f"n{uuid.uuid4().hex[:12]}"
    made = admin.post("/v1/pools", json={"name": pool, "params": {"t_shadow": 1}})
    assert made.status_code == 201, made.text
    a, b, stranger = steam(71), steam(72), steam(73)
    body = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [a], "B": [b]},
        "names": {a: "Alice", b: "Bob"},
    }
    assert server.post(f"/v1/pools/{pool}/rounds", json=body).status_code == 201
    assert server.get(f"/v1/pools/{pool}/players/{a}").json()["name"] == "Alice"
    body = {**body, "round_id": uuid.uuid4().hex, "names": {a: "Alice [RED]"}}
    assert server.post(f"/v1/pools/{pool}/rounds", json=body).status_code == 201
    looked = server.post(
        f"/v1/pools/{pool}/players/lookup",
        json={"steam_ids": [a, b, stranger], "names": {b: "Robert", stranger: "Nobody"}},
    ).json()["players"]
    assert [p["name"] for p in looked] == ["Alice [RED]", "Robert", None]
    assert looked[2]["rounds_played"] == 0  # a name does not store a player
    assert admin.get(f"/v1/pools/{pool}/quality").json()["players"] == 2
    board = admin.get(f"/v1/pools/{pool}/leaderboard").json()["players"]
    assert [(p["steam_id"], p["name"]) for p in board] == [(a, "Alice [RED]"), (b, "Robert")]
    assert admin.get(f"/v1/pools/{pool}/players/{b}/history").json()["name"] == "Robert"
    bad = server.post(
        f"/v1/pools/{pool}/players/lookup", json={"steam_ids": [a], "names": {b: "Bob"}}
    )
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "names", b]
    assert server.get(f"/v1/pools/{pool}/players/{b}").json()["name"] == "Robert"
    long = server.post(
        f"/v1/pools/{pool}/players/lookup", json={"steam_ids": [a], "names": {a: "x" * 65}}
    )
    assert long.status_code == 422
    assert server.get(f"/v1/pools/{pool}/players/{a}").json()["name"] == "Alice [RED]"


def board_places(client: httpx.Client, pool: str) -> dict[str, int]:
    """Each listed player's place on the pool's public board (a token reads a private one)."""
    r = client.get(f"/v1/public/pools/{pool}/leaderboard", params={"limit": 200})
    assert r.status_code == 200, r.text
    return {p["steam_id"]: p["place"] for p in r.json()["players"]}


def lookup(server: httpx.Client, pool: str, ids: list[str]) -> dict:
    r = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": ids})
    assert r.status_code == 200, r.text
    return r.json()


def test_lookup_places_are_the_public_boards(
    admin: httpx.Client, server: httpx.Client, clock: MovableClock
) -> None:
    """A game server's `!rank`: each player's place is the public board's, ties and all
    (rating, then more rounds, then id); null in the shadow period, hidden or stale."""
    pool = f"r{uuid.uuid4().hex[:12]}"
    made = admin.post("/v1/pools", json={"name": pool, "team_size": 1, "params": {"t_shadow": 2}})
    assert made.status_code == 201, made.text
    for a, b in [(1, 2), (3, 4), (5, 6), (2, 1), (4, 3), (6, 5), (1, 7)]:
        play(server, pool, [steam(a)], [steam(b)])  # 1 has 3 rounds, 7 one (in the shadow)
    for n, rating in [(1, 1200), (2, 1200), (4, 1200), (5, 900), (6, 1200), (7, 1400)]:
        r = admin.put(f"/v1/pools/{pool}/players/{steam(n)}", json={"rating": rating})
        assert r.status_code == 200, r.text
    top = admin.put(f"/v1/pools/{pool}/players/{steam(3)}", json={"rating": 1500})
    assert top.json()["place"] == 1  # an admin's answer: the place the set left
    ids = [steam(n) for n in (7, 6, 1, 99, 3, 5, 2, 4)]  # 99: never rated

    got = lookup(server, pool, ids)
    assert got["shadow_rounds"] == 2
    places = {p["steam_id"]: p["place"] for p in got["players"]}
    expected = {steam(3): 1, steam(1): 2, steam(2): 3, steam(4): 4, steam(6): 5, steam(5): 6}
    assert board_places(server, pool) == expected
    assert places == {**expected, steam(7): None, steam(99): None}
    assert [p["steam_id"] for p in got["players"]] == ids  # the request's order kept
    one = server.get(f"/v1/pools/{pool}/players/{steam(4)}").json()
    assert one["place"] == 4
    assert server.get(f"/v1/pools/{pool}/players/{steam(7)}").json()["place"] is None

    hidden = admin.put(f"/v1/pools/{pool}/players/{steam(1)}/hidden", json={"hidden": True})
    assert hidden.status_code == 200 and hidden.json()["place"] is None
    places = {p["steam_id"]: p["place"] for p in lookup(server, pool, ids)["players"]}
    expected = {steam(3): 1, steam(2): 2, steam(4): 3, steam(6): 4, steam(5): 5}
    assert board_places(server, pool) == expected
    assert places == {**expected, steam(1): None, steam(7): None, steam(99): None}
    shown = admin.put(f"/v1/pools/{pool}/players/{steam(1)}/hidden", json={"hidden": False})
    assert shown.json()["place"] == 2

    clock.offset = timedelta(days=31)  # every player stale: the board lists no one
    got = lookup(server, pool, ids)
    assert all(p["stale"] for p in got["players"] if p["rounds_played"])
    assert [p["place"] for p in got["players"]] == [None] * len(ids)
    assert board_places(server, pool) == {}


def test_lookup_answers_the_pools_shadow_length(server: httpx.Client, pool: str) -> None:
    """A player in the shadow period has no place; `shadow_rounds` says how long it lasts
    (the default T here, 50; a pool's own t_shadow above)."""
    play(server, pool, [steam(1)], [steam(2)])
    got = lookup(server, pool, [steam(1)])
    assert got["shadow_rounds"] == 50
    (me,) = got["players"]
    assert (me["rounds_played"], me["visible"], me["place"]) == (1, False, None)
