"""POST /v1/pools/{pool}/rounds over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import httpx
import orjson
import pytest
from sqlalchemy import select, update

from synelo.store.tables import rounds
from tests.conftest import LiveServer, steam
from tests.unit.test_round_record import STORED

# A round's record as the releases before the store kept records of its own stored it: the
# HTTP answer, verbatim. A retry of that round must still be answered with exactly it.
LEGACY_RECORD = STORED.replace('"round_id":"r2"', '"round_id":"legacy-1"')


def report(a: list, b: list, winner: str = "A", round_id: str | None = None, **extra) -> dict:
    return {
        "round_id": round_id or uuid.uuid4().hex,
        "server_id": "srv1",
        "map": "arena_well",
        "winner": winner,
        "teams": {"A": a, "B": b},
        **extra,
    }


def test_first_round_rates_everyone(server: httpx.Client, pool: str) -> None:
    # 2v2 of new players: Σ_A = Σ_B = 2000 → P_A = 0.5; C = 1, G = 1 → K = 72;
    # winners 1000 + 72·(1 − 0.5) = 1036, losers 1000 + 72·(0 − 0.5) = 964.
    r = server.post(
        f"/v1/pools/{pool}/rounds", json=report([steam(1), int(steam(2))], [steam(3), steam(4)])
    )
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["p_a"] == 0.5 and body["sum_a"] == 2000 and body["sum_b"] == 2000
    assert body["seq"] == 1
    got = {
        p["steam_id"]: (p["team"], p["before"], p["after"], p["delta"], p["k"])
        for p in body["players"]
    }
    assert got == {
        steam(1): ("A", 1000, 1036, 36, 72.0),
        steam(2): ("A", 1000, 1036, 36, 72.0),
        steam(3): ("B", 1000, 964, -36, 72.0),
        steam(4): ("B", 1000, 964, -36, 72.0),
    }
    assert all(p["visible"] is False and p["rounds_played"] == 1 for p in body["players"])
    # Ids come back as strings even when sent as integers, and lookups see the new rating.
    assert isinstance(body["players"][1]["steam_id"], str)
    look = server.get(f"/v1/pools/{pool}/players/{steam(2)}").json()
    assert look["rating"] == 1036 and look["rounds_played"] == 1


def test_draw_between_equal_teams_changes_nothing(server: httpx.Client, pool: str) -> None:
    # P_A = 0.5 and S = 0.5 → K·(S − P) = 0 for everyone.
    body = server.post(
        f"/v1/pools/{pool}/rounds", json=report([steam(1)], [steam(2)], winner="draw")
    ).json()
    assert [p["delta"] for p in body["players"]] == [0, 0]


def test_p_uses_round_start_rosters_and_rates_participants(server: httpx.Client, pool: str) -> None:
    # Make player 1 strong (1036) with a first round, then play 1+2 vs 3+4 where only
    # 1 and 3 took part, and 9 joined team B mid-round.
    server.post(f"/v1/pools/{pool}/rounds", json=report([steam(1)], [steam(5)]))
    body = server.post(
        f"/v1/pools/{pool}/rounds",
        json=report(
            [steam(1), steam(2)],
            [steam(3), steam(4)],
            winner="B",
            participants={"A": [steam(1)], "B": [steam(3), steam(9)]},
        ),
    ).json()
    # Σ_A = 1036 + 1000 = 2036, Σ_B = 2000 (9 is not in the round-start rosters).
    assert (body["sum_a"], body["sum_b"]) == (2036, 2000)
    rated = {p["steam_id"]: p for p in body["players"]}
    assert set(rated) == {steam(1), steam(3), steam(9)}
    # The joiner shares B's P (a property of the match): same delta as 3 (both new, K = 72).
    assert rated[steam(9)]["delta"] == rated[steam(3)]["delta"] > 0
    assert rated[steam(9)]["team"] == "B"
    # Player 2 took no part: not rated, not stored.
    assert server.get(f"/v1/pools/{pool}/players/{steam(2)}").json()["rounds_played"] == 0


def test_retry_is_idempotent(server: httpx.Client, admin: httpx.Client, pool: str) -> None:
    payload = report([steam(1)], [steam(2)], round_id="retry-1")
    first = server.post(f"/v1/pools/{pool}/rounds", json=payload)
    assert first.status_code == 201
    # Same content, ids in another form and order → 200 with the stored answer.
    again = dict(payload, teams={"A": [int(steam(1))], "B": [steam(2)]})
    second = server.post(f"/v1/pools/{pool}/rounds", json=again)
    assert second.status_code == 200
    assert second.content == first.content  # byte for byte
    assert server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()["rounds_played"] == 1
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 1
    hist = admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"]
    assert len(hist) == 1


def test_a_retry_of_a_round_stored_by_an_older_release_gets_its_stored_answer(
    live: LiveServer, server: httpx.Client, pool: str
) -> None:
    """Rows written before the store kept its own record hold the HTTP answer itself; a
    retry decodes it and answers the very same bytes (nothing is rated again)."""
    payload = report([steam(1)], [steam(3), steam(4)], winner="draw", round_id="legacy-1")
    assert server.post(f"/v1/pools/{pool}/rounds", json=payload).status_code == 201
    pool_id = live.store.get_pool(pool).id
    with live.store.engine.begin() as conn:  # what an older release left in the row
        changed = conn.execute(
            update(rounds)
            .where(rounds.c.pool_id == pool_id, rounds.c.round_id == "legacy-1")
            .values(result=LEGACY_RECORD)
        ).rowcount
    assert changed == 1
    again = server.post(f"/v1/pools/{pool}/rounds", json=payload)
    assert again.status_code == 200
    assert again.content == LEGACY_RECORD.encode()


@pytest.mark.parametrize(
    ("field", "change"),
    [
        # Each changes one part of the content and nothing else (participants stay explicit).
        ("winner", {"winner": "B"}),
        ("map", {"map": "arena_lumberyard"}),
        ("server_id", {"server_id": "srv2"}),
        ("teams A", {"teams": {"A": [steam(4)], "B": [steam(2)]}}),
        ("teams B", {"teams": {"A": [steam(1)], "B": [steam(3)]}}),
        ("participants A", {"participants": {"A": [], "B": [steam(2)]}}),
        ("participants B", {"participants": {"A": [steam(1)], "B": []}}),
        ("an optional field added", {"mode": "koth"}),
        ("names", {"names": {steam(1): "Ann"}}),
        ("time_played", {"time_played": {steam(2): 0.5}}),
        ("started_at", {"started_at": "2026-11-25T10:00:00Z"}),
    ],
)
def test_same_round_id_other_content_is_409(
    server: httpx.Client, admin: httpx.Client, pool: str, field: str, change: dict
) -> None:
    payload = report(
        [steam(1)], [steam(2)], round_id="dup", participants={"A": [steam(1)], "B": [steam(2)]}
    )
    assert server.post(f"/v1/pools/{pool}/rounds", json=payload).status_code == 201
    r = server.post(f"/v1/pools/{pool}/rounds", json=dict(payload, **change))
    assert r.status_code == 409, field
    assert "dup" in r.json()["detail"]
    # Nothing changed: one round, player 1 at 1036 after one round, 3 and 4 never seen.
    assert server.get(f"/v1/pools/{pool}/players/{steam(1)}").json()["rating"] == 1036
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 1
    assert len(admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"]) == 1
    for n in (3, 4):
        assert server.get(f"/v1/pools/{pool}/players/{steam(n)}").json()["rounds_played"] == 0


def test_round_ids_are_per_pool(server: httpx.Client, admin: httpx.Client, pool: str) -> None:
    other = f"o{uuid.uuid4().hex[:12]}"
    assert admin.post("/v1/pools", json={"name": other, "team_size": 1}).status_code == 201
    payload = report([steam(1)], [steam(2)], round_id="shared-id")
    assert server.post(f"/v1/pools/{pool}/rounds", json=payload).status_code == 201
    r = server.post(f"/v1/pools/{other}/rounds", json=payload)
    # kmax 1 → Θ = 400, still a fresh round there.
    assert r.status_code == 201 and r.json()["seq"] == 1


BAD_CASES = [
    ("unknown winner", {"winner": "C"}, ["body", "winner"]),
    ("empty team", {"teams": {"A": [], "B": ["76561197960265730"]}}, ["body", "teams", "A"]),
    (
        "player twice",
        {"teams": {"A": ["76561197960265729", "76561197960265729"], "B": ["76561197960265730"]}},
        ["body", "teams", "A", 1],
    ),
    (
        "player on both sides",
        {"teams": {"A": ["76561197960265729"], "B": [76561197960265729]}},
        ["body", "teams", "B", 0],
    ),
    (
        "participant on the other side",
        {"participants": {"A": [], "B": ["76561197960265729"]}},
        ["body", "participants", "B", 0],
    ),
    (
        "participant twice",
        {"participants": {"A": ["76561197960265731"], "B": ["76561197960265731"]}},
        ["body", "participants", "B", 0],
    ),
    ("no participant", {"participants": {"A": [], "B": []}}, ["body", "participants"]),
    (
        "short id",
        {"teams": {"A": ["7656119796026572"], "B": ["76561197960265730"]}},
        ["body", "teams", "A", 0],
    ),
    (
        "id below range",
        {"teams": {"A": ["76561197960265728"], "B": ["76561197960265730"]}},
        ["body", "teams", "A", 0],
    ),
    (
        "id above range",
        {"teams": {"A": [76561202255233024], "B": ["76561197960265730"]}},
        ["body", "teams", "A", 0],
    ),
    (
        "non-digit id",
        {"teams": {"A": ["7656119796026573x"], "B": ["76561197960265730"]}},
        ["body", "teams", "A", 0],
    ),
    ("float id", {"teams": {"A": [7.6e16], "B": ["76561197960265730"]}}, ["body", "teams", "A", 0]),
    (
        "65 players a side",
        {
            "teams": {
                "A": [str(76561197960265800 + i) for i in range(65)],
                "B": ["76561197960265730"],
            }
        },
        ["body", "teams", "A"],
    ),
    ("unknown field", {"score": [10, 4]}, ["body", "score"]),
    (
        "unknown team",
        {
            "teams": {
                "A": ["76561197960265729"],
                "B": ["76561197960265730"],
                "C": ["76561197960265731"],
            }
        },
        ["body", "teams", "C"],
    ),
    (
        "time_played over 1",
        {"time_played": {"76561197960265729": 1.5}},
        ["body", "time_played", "76561197960265729"],
    ),
    (
        "time_played negative",
        {"time_played": {"76561197960265729": -0.1}},
        ["body", "time_played", "76561197960265729"],
    ),
    (
        "time_played span backwards",
        {"time_played": {"76561197960265729": {"from": 90, "to": 30}}},
        ["body", "time_played", "76561197960265729"],
    ),
    (
        "time_played span past the end",
        {"duration": 60, "time_played": {"76561197960265729": {"from": 0, "to": 90}}},
        ["body"],
    ),
    (
        "time_played span with an unknown key",
        {"time_played": {"76561197960265729": {"from": 0, "until": 30}}},
        ["body", "time_played", "76561197960265729"],
    ),
    (
        "time_played span spelled from_",
        {"time_played": {"76561197960265729": {"from_": 0, "to": 30}}},
        ["body", "time_played", "76561197960265729"],
    ),
    (
        "time_played of a stranger",
        {"time_played": {"76561197960265731": 0.5}},
        ["body", "time_played", "76561197960265731"],
    ),
    ("time_played bad id", {"time_played": {"17": 0.5}}, ["body", "time_played", "17"]),
    ("duration zero", {"duration": 0}, ["body", "duration"]),
    ("duration text", {"duration": "60"}, ["body", "duration"]),
    ("same sides", {"sides": {"A": "RED", "B": "RED"}}, ["body", "sides"]),
    ("one side", {"sides": {"A": "RED"}}, ["body", "sides", "B"]),
    (
        "commander on the other team",
        {"commanders": {"A": "76561197960265730", "B": "76561197960265730"}},
        ["body", "commanders", "A"],
    ),
    ("negative score", {"scores": {"A": -1, "B": 4}}, ["body", "scores", "A"]),
    ("score as a list", {"scores": [10, 4]}, ["body", "scores"]),
    (
        "empty position",
        {"positions": {"76561197960265729": ""}},
        ["body", "positions", "76561197960265729"],
    ),
    (
        "position of a stranger",
        {"positions": {"76561197960265731": "defense"}},
        ["body", "positions", "76561197960265731"],
    ),
    (
        "player score text",
        {"player_scores": {"76561197960265729": "ten"}},
        ["body", "player_scores", "76561197960265729"],
    ),
    (
        "name too long",
        {"names": {"76561197960265729": "x" * 65}},
        ["body", "names", "76561197960265729"],
    ),
    (
        "name of a stranger",
        {"names": {"76561197960265731": "Zed"}},
        ["body", "names", "76561197960265731"],
    ),
    ("empty mode", {"mode": ""}, ["body", "mode"]),
    ("naive started_at", {"started_at": "2026-11-25T10:00:00"}, ["body", "started_at"]),
    ("started_at not a time", {"started_at": "yesterday"}, ["body", "started_at"]),
    (
        "ended before started",
        {"started_at": "2026-11-25T10:00:00Z", "ended_at": "2026-11-25T09:00:00Z"},
        ["body"],
    ),
    ("missing round_id", {"round_id": None}, ["body", "round_id"]),
    ("numeric round_id", {"round_id": 17}, ["body", "round_id"]),
    ("missing teams", {"teams": None}, ["body", "teams"]),
]


@pytest.mark.parametrize(("case", "change", "loc"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_invalid_reports_are_422_and_store_nothing(
    server: httpx.Client, admin: httpx.Client, pool: str, case: str, change: dict, loc: list
) -> None:
    payload = report(["76561197960265729"], ["76561197960265730"])
    payload.update(change)
    payload = {k: v for k, v in payload.items() if v is not None}
    r = server.post(f"/v1/pools/{pool}/rounds", json=payload)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert [e["loc"] for e in r.json()["detail"]][0][: len(loc)] == loc
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 0
    assert admin.get(f"/v1/pools/{pool}/quality").json()["players"] == 0


def test_malformed_json_is_422(server: httpx.Client, pool: str) -> None:
    r = server.post(
        f"/v1/pools/{pool}/rounds",
        content=b'{"round_id": "x", ',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422
    assert r.json()["detail"][0]["type"] == "json_invalid"


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ('"winner": NaN', ["body", "winner"]),
        ('"round_id": Infinity', ["body", "round_id"]),
        ('"teams": {"A": [-Infinity], "B": ["76561197960265730"]}', ["body", "teams", "A", 0]),
    ],
)
def test_nan_and_infinity_are_a_422_not_a_500(
    server: httpx.Client, admin: httpx.Client, pool: str, change: str, loc: list
) -> None:
    """Python's JSON reader takes NaN and Infinity; the 422 that names the field echoes them
    as text, since JSON itself cannot carry them."""
    fields = {
        "round_id": '"nan-1"',
        "server_id": '"s"',
        "map": '"m"',
        "winner": '"A"',
        "teams": '{"A": ["76561197960265729"], "B": ["76561197960265730"]}',
    }
    key = change.split(":")[0].strip('"')
    fields[key] = change.split(":", 1)[1].strip()
    body = "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"
    r = server.post(
        f"/v1/pools/{pool}/rounds", content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][: len(loc)] == loc
    assert r.json()["detail"][0]["input"] in ("NaN", "Infinity", "-Infinity")
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 0


def test_body_over_64_kib_is_413(server: httpx.Client, admin: httpx.Client, pool: str) -> None:
    payload = report([steam(1)], [steam(2)], map="x" * (65 * 1024))
    r = server.post(f"/v1/pools/{pool}/rounds", json=payload)
    assert r.status_code == 413
    assert "65536" in r.json()["detail"]
    # Chunked upload without Content-Length is cut off the same way.
    body = httpx.Request("POST", "/", json=payload).read()

    def chunks():
        for i in range(0, len(body), 4096):
            yield body[i : i + 4096]

    r = server.post(
        f"/v1/pools/{pool}/rounds", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 0


def test_unknown_pool_is_404(server: httpx.Client) -> None:
    r = server.post("/v1/pools/nope-nope/rounds", json=report([steam(1)], [steam(2)]))
    assert r.status_code == 404 and "nope-nope" in r.json()["detail"]


def test_text_pool_takes_text_ids(server: httpx.Client, admin: httpx.Client) -> None:
    name = f"txt{uuid.uuid4().hex[:10]}"
    assert (
        admin.post(
            "/v1/pools", json={"name": name, "team_size": 2, "player_ids": "text"}
        ).status_code
        == 201
    )
    body = server.post(
        f"/v1/pools/{name}/rounds", json=report(["alice", "bob 2"], ["carol", "~dave~"])
    ).json()
    assert {p["steam_id"] for p in body["players"]} == {"alice", "bob 2", "carol", "~dave~"}
    for bad in ["", "x" * 65, "tab\there", "é", 17]:
        r = server.post(f"/v1/pools/{name}/rounds", json=report([bad], ["carol"]))
        assert r.status_code == 422, bad
        assert r.json()["detail"][0]["loc"] == ["body", "teams", "A", 0]


@pytest.mark.parametrize("model", ["synelo", "trueskill"])
def test_text_ids_that_array_literals_would_split_are_read_back(
    server: httpx.Client, admin: httpx.Client, model: str
) -> None:
    """PostgreSQL reads a round's players with their ids in an array literal: ids with
    quotes, backslashes, commas, braces, spaces or the word NULL must come back as
    themselves, so that a second round finds the players the first one stored."""
    name = f"txt{uuid.uuid4().hex[:10]}"
    made = admin.post(
        "/v1/pools",
        json={"name": name, "team_size": 3, "player_ids": "text", "model": model},
    )
    assert made.status_code == 201, made.text
    ids = ['a"b', "c\\d", "e,f", "{g}", " h ", "NULL"]
    first = server.post(f"/v1/pools/{name}/rounds", json=report(ids[:3], ids[3:], winner="A"))
    second = server.post(f"/v1/pools/{name}/rounds", json=report(ids[:3], ids[3:], winner="A"))
    assert first.status_code == second.status_code == 201, second.text
    after = {p["steam_id"]: p["after"] for p in first.json()["players"]}
    before = {p["steam_id"]: p["before"] for p in second.json()["players"]}
    assert set(after) == set(ids) and before == after
    assert {p["steam_id"]: p["rounds_played"] for p in second.json()["players"]} == dict.fromkeys(
        ids, 2
    )


def test_text_ids_with_slash_and_percent_are_reachable_by_url(
    server: httpx.Client, admin: httpx.Client
) -> None:
    """A text id may hold '/' and '%': sent percent-encoded in a path it names the player,
    for every per-player route (a '/' would otherwise split it into two path segments)."""
    name = f"txt{uuid.uuid4().hex[:10]}"
    assert (
        admin.post(
            "/v1/pools", json={"name": name, "team_size": 2, "player_ids": "text"}
        ).status_code
        == 201
    )
    ids = ["slash/id", "a/history", "x/50%", "50%off", "a"]
    body = server.post(f"/v1/pools/{name}/rounds", json=report(ids[:3], ids[3:], winner="A")).json()
    after = {p["steam_id"]: p["after"] for p in body["players"]}
    assert set(after) == set(ids)
    for key in ids:
        url = f"/v1/pools/{name}/players/{quote(key, safe='')}"
        got = server.get(url).json()
        assert (got["steam_id"], got["rating"], got["rounds_played"]) == (key, after[key], 1)
        entries = admin.get(f"{url}/history").json()
        assert entries["steam_id"] == key and len(entries["entries"]) == 1
    # lower-case percent-encoding names the same player
    assert server.get(f"/v1/pools/{name}/players/slash%2fid").json()["steam_id"] == "slash/id"
    # "a/history" is a player of its own, not the history of "a"
    assert "entries" not in server.get(f"/v1/pools/{name}/players/a%2Fhistory").json()
    slash = f"/v1/pools/{name}/players/{quote('slash/id', safe='')}"
    assert admin.put(slash, json={"rating": 1500}).json()["rating"] == 1500
    assert server.get(slash).json()["rating"] == 1500
    assert admin.delete(slash).json()["rating"] == 1000
    assert len(admin.get(f"{slash}/history").json()["entries"]) == 3  # round, set, reset
    assert server.get(f"/v1/pools/{name}/players/a").json()["rating"] == after["a"]


def test_the_whole_report_is_stored_as_sent(
    live: LiveServer, server: httpx.Client, admin: httpx.Client, pool: str
) -> None:
    """Every optional field is kept in rounds.report in canonical form (ids as strings,
    times in UTC), beside the rosters and the participants; a retry with the same fields in
    another order is the same round, and the rating is as without them (SynElo uses none)."""
    a, b, c = steam(1), steam(2), steam(3)
    extras = {
        "mode": "koth",
        "started_at": "2026-11-25T11:00:00+01:00",
        "ended_at": "2026-11-25T10:05:00Z",
        "duration": 300,
        "sides": {"A": "RED", "B": "BLU"},
        "commanders": {"A": int(a), "B": b},
        "scores": {"A": 10, "B": 4},
        "time_played": {a: 1.0, b: {"from": 30, "to": 300}, c: 0.25},
        "positions": {a: "offense", b: "defense"},
        "player_scores": {a: 12, b: 3.5},
        "names": {a: "Ann", b: "Bo"},
    }
    payload = report([a], [b], round_id="whole", participants={"A": [a, c], "B": [b]}, **extras)
    first = server.post(f"/v1/pools/{pool}/rounds", json=payload)
    assert first.status_code == 201, first.text
    plain = server.post(
        f"/v1/pools/{pool}/rounds",
        json=report([steam(4)], [steam(5)], participants={"A": [steam(4), steam(6)], "B": []}),
    )
    assert [p["delta"] for p in first.json()["players"]] == [36, 36, -36]
    reordered = dict(reversed(list(payload.items())))
    reordered["time_played"] = dict(reversed(list(extras["time_played"].items())))
    again = server.post(f"/v1/pools/{pool}/rounds", json=reordered)
    assert (again.status_code, again.content) == (200, first.content)
    pool_id = live.store.get_pool(pool).id
    with live.store.engine.connect() as conn:
        stored = dict(
            conn.execute(
                select(rounds.c.round_id, rounds.c.report).where(rounds.c.pool_id == pool_id)
            ).all()
        )
    assert orjson.loads(stored["whole"]) == {
        "round_id": "whole",
        "server_id": "srv1",
        "map": "arena_well",
        "winner": "A",
        "teams": {"A": [a], "B": [b]},
        "participants": {"A": [a, c], "B": [b]},
        **extras,
        "started_at": "2026-11-25T10:00:00Z",
        "commanders": {"A": a, "B": b},
    }
    assert plain.status_code == 201
    assert set(orjson.loads(stored[plain.json()["round_id"]])) == {
        "round_id",
        "server_id",
        "map",
        "winner",
        "teams",
        "participants",
    }
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 2
