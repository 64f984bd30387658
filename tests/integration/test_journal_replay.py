"""A pool's journal, exported and replayed, reproduces what the service stored; the quality
endpoint's theta_suggested. Over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import math
import random
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update

from synelo.domain import RatedRound, RoundReport
from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import read_history, write_history
from synelo.evaluation.journal import import_journal
from synelo.evaluation.replay import replay
from synelo.ratings import SynEloParams
from synelo.ratings.theta import fit_theta, fit_theta_interval
from synelo.store.tables import pools, rounds
from tests.conftest import LiveServer, steam


def new_pool(admin: httpx.Client, **params: int | str) -> str:
    name = f"j{uuid.uuid4().hex[:12]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 3, "params": params})
    assert r.status_code == 201, r.text
    return name


def play_random_rounds(server: httpx.Client, pool: str, rounds: int) -> list[dict]:
    """`rounds` random rounds of 1v1 to 4v4 among 10 players; the service's answers."""
    rng = random.Random(3)
    players = [steam(n) for n in range(1, 11)]
    answers = []
    for _ in range(rounds):
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
    return answers


def stored_ratings(server: httpx.Client, pool: str) -> dict[str, int]:
    players = [steam(n) for n in range(1, 11)]
    stored = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": players})
    return {p["steam_id"]: p["rating"] for p in stored.json()["players"] if p["rounds_played"]}


@pytest.mark.parametrize("convergence", ["revised", "seed"])
def test_replaying_a_journal_reproduces_either_f3(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, convergence: str
) -> None:
    """A pool's journal replays to the stored ratings with the pool's own F3, over ~200
    rounds a player: the revised F3's z-test sees the scales 25 to 200 fill."""
    pool = new_pool(admin, t_shadow=5, convergence=convergence)
    answers = play_random_rounds(server, pool, 400)
    exported = import_journal(live.store, pool)
    assert exported.header["params"]["convergence"] == convergence
    model = create_replay("synelo", {}, HistoryInfo(4, exported.header))
    assert replay(model, exported.matches).predictions.tolist() == [a["p_a"] for a in answers]
    assert model.ratings() == stored_ratings(server, pool)
    other = create_replay(
        "synelo", {"revised": int(convergence == "seed")}, HistoryInfo(4, exported.header)
    )
    replay(other, exported.matches)
    assert other.ratings() != model.ratings()  # the two F3s really differ here


def test_a_seed_pool_from_before_f3_had_versions_replays_the_same(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """A pool stored without params.convergence (created before there was a choice) rates
    with the seed's F3, and so does the replay of its journal, exported now (the header
    names "seed") or by an earlier release (the header's params without the field)."""
    pool = f"j{uuid.uuid4().hex[:12]}"
    params = SynEloParams(theta=1200.0, window=40, t_shadow=5)
    live.store.create_pool(pool, 3, params)
    old = {k: v for k, v in params.to_dict().items() if k != "convergence"}
    with live.store.engine.begin() as conn:
        conn.execute(update(pools).where(pools.c.name == pool).values(params=json.dumps(old)))
    answers = play_random_rounds(server, pool, 400)
    exported = import_journal(live.store, pool)
    assert exported.header["params"]["convergence"] == "seed"
    stored = stored_ratings(server, pool)
    earlier = {**exported.header, "params": old}  # what an earlier release exported
    for header in (exported.header, earlier):
        model = create_replay("synelo", {}, HistoryInfo(4, header))
        assert model.parameters()["convergence"] == "seed"
        assert replay(model, exported.matches).predictions.tolist() == [a["p_a"] for a in answers]
        assert model.ratings() == stored
    # the replay's default for a history without a pool's parameters is the revised F3
    revised = create_replay("synelo", {"theta": 1200.0, "window": 40}, HistoryInfo(4))
    replay(revised, exported.matches)
    assert revised.ratings() != stored


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
    model = create_replay("synelo", {}, HistoryInfo(4, exported.header))
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
    assert [(m.team_a, m.participants) for m in exported.matches] == [
        ((a,), None),
        ((a,), ((a, late), (b,))),
    ]
    assert (exported.roster_differs, exported.admin_changes) == (0, 1)
    assert any("admin changes" in n for n in exported.header["notes"])
    # the same rounds as a release before migration 0004 stored them: no report
    pool_id = live.store.get_pool(pool).id
    with live.store.engine.begin() as conn:
        conn.execute(update(rounds).where(rounds.c.pool_id == pool_id).values(report=None))
    legacy = import_journal(live.store, pool)
    assert [m.team_a for m in legacy.matches] == [(a,), (a, late)]
    assert all(m.details == {"rosters_known": False} for m in legacy.matches)
    assert (legacy.roster_differs, legacy.admin_changes) == (1, 1)
    assert any("rosters_known: false" in n for n in legacy.header["notes"])


def test_an_export_with_joiners_and_every_field_replays_exactly(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    """Rounds whose participants differ from their rosters (joiners, leavers) and carry
    optional fields: the export keeps them all, survives a write and read of the history file,
    and its replay gives every P and every rating the service stored."""
    pool = new_pool(admin, window=8)
    rng = random.Random(11)
    players = [steam(n) for n in range(1, 13)]
    answers = []
    for i in range(80):
        size = rng.randint(1, 4)
        picked = rng.sample(players, 2 * size + 2)
        team_a, team_b, extra = picked[:size], picked[size : 2 * size], picked[2 * size :]
        part_a = team_a[1:] + [extra[0]] if rng.random() < 0.5 else team_a
        part_b = team_b + [extra[1]] if rng.random() < 0.5 else team_b
        body = {
            "round_id": f"r{i}",
            "server_id": "s1",
            "map": "koth_harvest",
            "winner": rng.choice(["A", "B", "draw"]),
            "teams": {"A": team_a, "B": team_b},
            "participants": {"A": part_a, "B": part_b},
            "mode": "koth",
            "started_at": f"2026-11-{1 + i // 10:02d}T10:{i % 60:02d}:00Z",
            "sides": {"A": "RED", "B": "BLU"},
            "time_played": {p: 0.5 for p in part_a},
            "names": {team_a[0]: f"player {i}"},
        }
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text
        answers.append(r.json())
    exported = import_journal(live.store, pool)
    assert exported.roster_differs == 0
    assert sum(m.participants is not None for m in exported.matches) > 30
    path = tmp_path / "export.jsonl"
    write_history(path, exported.matches, exported.header)
    history = read_history(path, strict=True)
    assert history.matches == exported.matches
    first = history.matches[0]
    assert (first.mode, first.details["sides"], first.time.isoformat()) == (
        "koth",
        {"A": "RED", "B": "BLU"},
        "2026-11-01T10:00:00+00:00",
    )
    model = create_replay("synelo", {}, HistoryInfo(4, history.header))
    result = replay(model, history.matches)
    assert result.predictions.tolist() == [a["p_a"] for a in answers]
    stored = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": players})
    played = {p["steam_id"]: p["rating"] for p in stored.json()["players"] if p["rounds_played"]}
    assert model.ratings() == played
    assert len(set(played.values())) > 5


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
    assert q["theta_suggested_status"] == "too few"
    rounds(1)
    q = admin.get(f"/v1/pools/{pool}/quality").json()
    assert q["theta_suggested_rounds"] == 500
    # the MLE of the round-start gaps and outcomes the service answered with
    gaps = [a.sum_a - a.sum_b for a in answered]
    outcomes = [1.0 if a.winner == "A" else 0.0 for a in answered]
    expected = fit_theta_interval(gaps, outcomes, 800.0)
    assert q["theta_suggested_status"] == expected.status
    assert q["theta_suggested_low"] == pytest.approx(expected.theta_low, rel=1e-9)
    assert q["theta_suggested_p_value"] == pytest.approx(expected.p_value_vs_coin, rel=1e-9)
    if expected.status == "fit":
        point = fit_theta(gaps, outcomes, 800.0)
        assert point is not None and 50 < point < 100_000
        assert q["theta_suggested"] == pytest.approx(point, rel=1e-9)
        assert q["theta_suggested_high"] == pytest.approx(expected.theta_high, rel=1e-9)
    else:
        assert q["theta_suggested"] is None and expected.status == "no signal"
