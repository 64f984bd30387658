"""A pool's journal, exported and replayed, reproduces what the service stored; the quality
endpoint's theta_suggested. Over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
import random
import uuid

import httpx
import pytest

from synelo.evaluation.journal import import_journal
from synelo.evaluation.models import HistoryInfo, create_model
from synelo.evaluation.replay import replay
from synelo.ratings.theta import fit_theta
from synelo.store.typedefs import RatedRound, RoundReport
from tests.conftest import LiveServer, steam


def new_pool(admin: httpx.Client, **params: int) -> str:
    name = f"j{uuid.uuid4().hex[:12]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 3, "params": params})
    assert r.status_code == 201, r.text
    return name


def test_replaying_the_journal_reproduces_the_stored_ratings(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    # a small window and shadow period, so that eviction and graduation both happen
    pool = new_pool(admin, window=6, t_shadow=5)
    rng = random.Random(3)
    players = [steam(n) for n in range(1, 11)]
    answers = []
    for _ in range(60):
        size = rng.randint(1, 4)
        picked = rng.sample(players, 2 * size)
        body = {
            "round_id": uuid.uuid4().hex,
            "server_id": "s1",
            "map": "arena_well",
            "winner": rng.choice(["A", "B", "draw"]),
            "teams": {"A": picked[:size], "B": picked[size:]},
        }
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text
        answers.append(r.json())

    exported = import_journal(live.store, pool)
    assert (exported.roster_differs, exported.admin_changes) == (0, 0)
    assert [m.id for m in exported.matches] == [a["round_id"] for a in answers]
    assert exported.header["params"]["window"] == 6
    model = create_model("synelo", {}, HistoryInfo(4, exported.header))
    result = replay(model, exported.matches)
    assert result.predictions.tolist() == [a["p_a"] for a in answers]
    stored = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": players}).json()[
        "players"
    ]
    played = {p["steam_id"]: p["rating"] for p in stored if p["rounds_played"]}
    assert model.ratings() == played
    assert len(set(played.values())) > 3


def test_export_counts_what_it_cannot_replay(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    pool = new_pool(admin)
    a, b, late = steam(1), steam(2), steam(3)
    r = server.post(
        f"/v1/pools/{pool}/rounds",
        json={"round_id": "r1", "server_id": "s", "winner": "A", "teams": {"A": [a], "B": [b]}},
    )
    assert r.status_code == 201
    # a second round whose mid-round joiner was not in the round-start roster
    server.post(
        f"/v1/pools/{pool}/rounds",
        json={
            "round_id": "r2",
            "server_id": "s",
            "winner": "B",
            "teams": {"A": [a], "B": [b]},
            "participants": {"A": [a, late], "B": [b]},
        },
    )
    assert admin.put(f"/v1/pools/{pool}/players/{a}", json={"rating": 1500}).status_code == 200
    exported = import_journal(live.store, pool)
    assert [m.team_a for m in exported.matches] == [(a,), (a, late)]
    assert (exported.roster_differs, exported.admin_changes) == (1, 1)
    assert any("admin changes" in n for n in exported.header["notes"])


def test_quality_suggests_theta_from_500_rounds(live: LiveServer, admin: httpx.Client) -> None:
    pool = new_pool(admin)
    rng = random.Random(11)
    skill = {steam(n): rng.gauss(0, 300) for n in range(1, 31)}
    answered: list[RatedRound] = []

    def rounds(count: int) -> None:
        with live.store.write_transaction() as conn:
            for _ in range(count):
                picked = rng.sample(list(skill), 6)
                gap = sum(skill[p] for p in picked[:3]) - sum(skill[p] for p in picked[3:])
                winner = "A" if rng.random() < 1 / (1 + math.exp(-gap / 400)) else "B"
                answered.append(
                    live.store.submit_in(
                        conn,
                        pool,
                        RoundReport(
                            uuid.uuid4().hex,
                            "s",
                            "",
                            winner,
                            tuple(picked[:3]),
                            tuple(picked[3:]),
                            tuple(picked[:3]),
                            tuple(picked[3:]),
                        ),
                    ).round
                )

    rounds(499)
    q = admin.get(f"/v1/pools/{pool}/quality").json()
    assert q["rounds"] == 499
    assert (q["theta_suggested"], q["theta_suggested_rounds"]) == (None, 0)
    rounds(1)
    q = admin.get(f"/v1/pools/{pool}/quality").json()
    assert q["theta_suggested_rounds"] == 500
    # the MLE of the round-start gaps and outcomes the service answered with
    expected = fit_theta(
        [a.sum_a - a.sum_b for a in answered],
        [1.0 if a.winner == "A" else 0.0 for a in answered],
        800.0,
    )
    assert expected is not None and 50 < expected < 100_000
    assert q["theta_suggested"] == pytest.approx(expected, rel=1e-9)
