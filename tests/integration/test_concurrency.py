"""Several game servers feeding one pool at once never lose or interleave an update."""

from __future__ import annotations

import random
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx

from synelo.ratings import ConvergenceWindow, PlayerRecord, SynEloParams, apply_change, rate_round
from tests.conftest import SERVER, LiveServer, steam

THREADS = 4
ROUNDS_PER_THREAD = 15


def random_round(rng: random.Random) -> dict:
    """A 3v3 round among 10 players, so that concurrent rounds share players."""
    players = rng.sample([steam(i) for i in range(1, 11)], 6)
    return {"round_id": uuid.uuid4().hex, "server_id": f"srv{rng.randrange(4)}", "map": "m",
            "winner": rng.choice(["A", "B", "draw"]),
            "teams": {"A": players[:3], "B": players[3:]}}


def replay(rounds: list[dict], params: SynEloParams) -> dict[str, PlayerRecord]:
    """The same rounds rated one after another by the pure math, without any database."""
    records: dict[str, PlayerRecord] = {}

    def record(key: str) -> PlayerRecord:
        return records.setdefault(key, PlayerRecord(params.r0, 0, ConvergenceWindow(500)))

    for r in rounds:
        a, b = r["teams"]["A"], r["teams"]["B"]
        sides = [(k, "A", record(k)) for k in a] + [(k, "B", record(k)) for k in b]
        rated = rate_round([record(k).rating for k in a], [record(k).rating for k in b],
                           sides, r["winner"], params)
        for change in rated.changes:
            apply_change(records[change.player], change)
    return records


def test_parallel_submissions_equal_sequential_replay(live: LiveServer, pool: str,
                                                      admin: httpx.Client) -> None:
    rng = random.Random(7)
    batches = [[random_round(rng) for _ in range(ROUNDS_PER_THREAD)] for _ in range(THREADS)]

    def feed(batch: list[dict]) -> list[tuple[int, dict]]:
        out = []
        with live.client(SERVER) as c:
            for r in batch:
                resp = c.post(f"/v1/pools/{pool}/rounds", json=r)
                assert resp.status_code == 201, resp.text
                out.append((resp.json()["seq"], r))
        return out

    with ThreadPoolExecutor(THREADS) as ex:
        done = [item for part in ex.map(feed, batches) for item in part]
    seqs = sorted(seq for seq, _ in done)
    assert seqs == list(range(1, THREADS * ROUNDS_PER_THREAD + 1))  # no gap, no double

    expected = replay([r for _, r in sorted(done, key=lambda x: x[0])], SynEloParams())
    with live.client(SERVER) as c:
        stored = c.post(f"/v1/pools/{pool}/players/lookup",
                        json={"steam_ids": list(expected)}).json()["players"]
    assert {p["steam_id"]: (p["rating"], p["rounds_played"]) for p in stored} == {
        k: (rec.rating, rec.rounds_played) for k, rec in expected.items()}
    # The journal of every player chains: each entry starts where the previous ended.
    for key in expected:
        entries = admin.get(f"/v1/pools/{pool}/players/{key}/history").json()["entries"]
        assert len(entries) == expected[key].rounds_played
        assert all(x["before"] == y["after"] for x, y in zip(entries, entries[1:], strict=False))
        assert [e["seq"] for e in entries] == sorted((e["seq"] for e in entries), reverse=True)


def test_concurrent_retries_rate_once(live: LiveServer, pool: str, admin: httpx.Client) -> None:
    payload = {"round_id": "same", "server_id": "s", "map": "m", "winner": "A",
               "teams": {"A": [steam(1)], "B": [steam(2)]}}

    def send(_: int) -> tuple[int, dict]:
        with live.client(SERVER) as c:
            r = c.post(f"/v1/pools/{pool}/rounds", json=payload)
            return r.status_code, r.json()

    with ThreadPoolExecutor(6) as ex:
        results = list(ex.map(send, range(6)))
    assert sorted(code for code, _ in results) == [200] * 5 + [201]
    assert all(body == results[0][1] for _, body in results)
    assert admin.get(f"/v1/pools/{pool}/quality").json()["rounds"] == 1
