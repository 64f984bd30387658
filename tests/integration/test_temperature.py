"""F1t through the service: a pool's T changes the P it shows, stores, predicts and scores
(F6), and no rating, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
from typing import Any

import httpx

from tests.integration.test_api_models import PLAYERS, new_pool
from tests.integration.test_rerate import everyone, wait

Body = dict[str, Any]


def _rounds(count: int) -> list[Body]:
    """2v2 rounds among the ten players, team A winning when its first player's number is
    the smaller (a skill order the ratings learn, so the logits move off 0)."""
    out = []
    for i in range(count):
        picked = [PLAYERS[(i * 3 + j * 7) % 10] for j in range(4)]
        if len(set(picked)) < 4:
            picked = PLAYERS[i % 7 : i % 7 + 4]
        a, b = picked[:2], picked[2:]
        out.append(
            {
                "round_id": f"t{i}",
                "server_id": "s1",
                "winner": "A" if PLAYERS.index(a[0]) < PLAYERS.index(b[0]) else "B",
                "teams": {"A": a, "B": b},
            }
        )
    return out


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_a_pools_temperature_tempers_its_p_and_moves_no_rating(
    admin: httpx.Client, server: httpx.Client
) -> None:
    plain = new_pool(admin, "synelo")
    cool = new_pool(admin, "synelo", temperature=2.5)
    assert admin.get(f"/v1/pools/{cool}").json()["params"]["temperature"] == 2.5
    shown: dict[str, list[float]] = {plain: [], cool: []}
    for body in _rounds(60):
        for pool in (plain, cool):
            r = server.post(f"/v1/pools/{pool}/rounds", json=body)
            assert r.status_code == 201, r.text
            shown[pool].append(r.json()["p_a"])
    assert everyone(server, plain, stamps=False) == everyone(server, cool, stamps=False)
    moved = [(a, b) for a, b in zip(shown[plain], shown[cool], strict=True) if abs(a - 0.5) > 0.01]
    assert len(moved) > 10
    for a, b in moved:  # the stored P is σ(x/T) of the same logit x
        assert math.isclose(_logit(b), _logit(a) / 2.5, rel_tol=1e-9)
    teams = {"A": PLAYERS[:2], "B": PLAYERS[2:4]}
    p = {pool: server.post(f"/v1/pools/{pool}/predict", json={"teams": teams}) for pool in shown}
    assert all(r.status_code == 200 for r in p.values())
    x = _logit(p[plain].json()["p_a"])
    assert abs(x) > 0.05
    assert math.isclose(_logit(p[cool].json()["p_a"]), x / 2.5, rel_tol=1e-9)
    # F6 scores the P the pool showed
    q = {pool: admin.get(f"/v1/pools/{pool}/quality").json() for pool in shown}
    for pool, ps in shown.items():
        rounds = _rounds(60)
        o = [1.0 if b["winner"] == "A" else 0.0 for b in rounds]
        want = sum((pi - oi) ** 2 for pi, oi in zip(ps, o, strict=True)) / len(ps)
        assert math.isclose(q[pool]["brier_all"], want, rel_tol=1e-9)
    assert q[plain]["brier_all"] != q[cool]["brier_all"]


def test_a_temperature_patch_re_rates_to_the_same_ratings(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Setting T re-rates the pool (its stored P's change) and leaves every rating; a T out
    of bounds is a 422 naming it and changes nothing."""
    pool = new_pool(admin, "synelo")
    for body in _rounds(30):
        assert server.post(f"/v1/pools/{pool}/rounds", json=body).status_code == 201
    before = everyone(server, pool, stamps=False)
    bad = admin.patch(f"/v1/pools/{pool}", json={"params": {"temperature": 50}})
    assert bad.status_code == 422 and "temperature" in bad.text
    wait(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"params": {"temperature": 3.0}}))
    assert admin.get(f"/v1/pools/{pool}").json()["params"]["temperature"] == 3.0
    assert everyone(server, pool, stamps=False) == before


def test_a_null_parameter_in_a_patch_is_a_422_naming_it(admin: httpx.Client) -> None:
    """`{"params": {"k_min": null}}` used to start a re-rate that changed nothing; it is
    refused, naming the parameter, and no job starts."""
    pool = new_pool(admin, "synelo")
    before = admin.get(f"/v1/pools/{pool}").json()
    for params in ({"k_min": None}, {"temperature": None, "k_max": 60}):
        r = admin.patch(f"/v1/pools/{pool}", json={"params": params})
        assert r.status_code == 422, r.text
        assert "null is no value" in r.text and next(iter(params)) in r.text
    assert admin.get(f"/v1/pools/{pool}").json() == before
