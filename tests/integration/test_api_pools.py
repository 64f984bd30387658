"""Pools, quality (F6) and auth over real HTTP."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from sqlalchemy import update

from synelo.ratings import SynEloParams
from synelo.store.tables import pools
from tests.conftest import SERVER, LiveServer, steam
from tests.integration.test_api_players import play


def test_create_and_show_pool(admin: httpx.Client) -> None:
    name = f"p{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 6})
    assert r.status_code == 201
    # Θ = 100·max(6, 2) = 600
    assert r.json()["theta"] == 600 and r.json()["team_size"] == 6
    shown = admin.get(f"/v1/pools/{name}").json()
    assert shown["params"]["theta"] == 600 and shown["params"]["r0"] == 1000
    assert admin.post("/v1/pools", json={"name": name, "team_size": 6}).status_code == 409
    assert admin.get("/v1/pools/unknown-pool").status_code == 404


def test_kmax_is_the_team_sizes_old_name(admin: httpx.Client) -> None:
    """A request may still say kmax (not the K-factor cap params.k_max); answers carry both
    names for one release; two names that disagree are a 422 on kmax, and create nothing."""
    name = f"p{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "kmax": 6})
    assert r.status_code == 201, r.text
    # Θ = 100·max(6, 2) = 600
    assert (r.json()["team_size"], r.json()["kmax"], r.json()["theta"]) == (6, 6, 600)
    quality = admin.get(f"/v1/pools/{name}/quality").json()
    assert (quality["team_size"], quality["kmax"]) == (6, 6)
    null = {"name": f"p{uuid.uuid4().hex[:10]}", "team_size": None, "kmax": 3}
    assert admin.post("/v1/pools", json=null).json()["team_size"] == 3
    same = {"name": f"p{uuid.uuid4().hex[:10]}", "team_size": 4, "kmax": 4}
    assert admin.post("/v1/pools", json=same).json()["theta"] == 400
    other = f"p{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": other, "team_size": 4, "kmax": 6})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "kmax"]
    assert admin.get(f"/v1/pools/{other}").status_code == 404
    # A misspelt name is not dropped silently either.
    r = admin.post("/v1/pools", json={"name": other, "teamsize": 4})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "teamsize"]
    assert admin.get(f"/v1/pools/{other}").status_code == 404


def test_synelo_theta_replaces_the_theta_of_team_size(
    live: LiveServer, admin: httpx.Client
) -> None:
    live.settings.theta = 1000.0
    try:
        by_setting = admin.post(
            "/v1/pools", json={"name": f"s{uuid.uuid4().hex[:10]}", "team_size": 3}
        ).json()
        own = admin.post(
            "/v1/pools", json={"name": f"s{uuid.uuid4().hex[:10]}", "team_size": 3, "theta": 500}
        ).json()
    finally:
        live.settings.theta = None
    assert (by_setting["team_size"], by_setting["theta"]) == (3, 1000)
    assert own["theta"] == 500


@pytest.mark.parametrize(
    ("team_size", "theta", "seed"),
    [(1, 200, 400), (2, 200, 400), (3, 300, 800), (12, 1200, 2400), (13, 1300, 2800)],
)
def test_theta_from_team_size(
    live: LiveServer, admin: httpx.Client, team_size: int, theta: int, seed: int
) -> None:
    """Θ = 100·max(k, 2) by default; SYNELO_THETA_RULE=seed gives the design's
    400·floor((k+1)/2)."""
    body = {"name": f"k{uuid.uuid4().hex[:10]}", "team_size": team_size}
    assert admin.post("/v1/pools", json=body).json()["theta"] == theta
    live.settings.theta_rule = "seed"
    try:
        body = {"name": f"k{uuid.uuid4().hex[:10]}", "team_size": team_size}
        assert admin.post("/v1/pools", json=body).json()["theta"] == seed
    finally:
        live.settings.theta_rule = "linear"


def test_theta_override_and_params(admin: httpx.Client, server: httpx.Client) -> None:
    name = f"o{uuid.uuid4().hex[:10]}"
    r = admin.post(
        "/v1/pools", json={"name": name, "theta": 1000, "params": {"k_max": 40, "r0": 1500}}
    )
    assert r.status_code == 201, r.text
    assert r.json()["theta"] == 1000 and r.json()["params"]["k_max"] == 40
    body = play(server, name, [steam(1)], [steam(2)])
    # New players at r0 1500, K = K_max = 40: 1500 + 40·0.5 = 1520.
    assert [p["after"] for p in body["players"]] == [1520, 1480]


def test_convergence_is_a_pool_parameter(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """New pools get F3 (revised) unless SYNELO_CONVERGENCE or params.convergence says
    "seed"; GET shows it. Two rounds for player 1 (a win against a new player, then a loss
    to one), as in test_api_players.test_lookup_reports_k_and_convergence: 1036, then 1000;
    window e = [0.5, 0.50375], o = [1, 0], 2 rounds played.
    - revised: |Σ(o − e)| = 0.00375 over √(0.25 + 0.24999) ≈ 0.0075 < 2.5, so v_z = 0 and
      C = c_prior = 1/(1 + 2/300) = 150/151 = 0.9933775; K = 12 + 60·150/151 = 71.6026490
      (K_min 12: the revised F3's default)
    - seed: C = 0.2546875, K = 19.828125 (worked in that test)."""
    made = {}
    for label, params in (("revised", {}), ("seed", {"convergence": "seed"})):
        name = f"c{uuid.uuid4().hex[:10]}"
        body = {"name": name, "team_size": 12, "theta": 2400, "params": params}
        r = admin.post("/v1/pools", json=body)
        assert r.status_code == 201, r.text
        assert r.json()["params"]["convergence"] == label
        assert r.json()["params"]["k_min"] == {"revised": 12, "seed": 2}[label]  # default_k_min
        assert admin.get(f"/v1/pools/{name}").json()["params"]["convergence"] == label
        play(server, name, [steam(1)], [steam(2)])
        play(server, name, [steam(3)], [steam(1)])
        made[label] = server.get(f"/v1/pools/{name}/players/{steam(1)}").json()
    assert made["revised"]["rating"] == made["seed"]["rating"] == 1000
    assert made["revised"]["convergence"] == pytest.approx(150 / 151, abs=1e-12)
    assert made["revised"]["k"] == pytest.approx(71.6026490, abs=1e-6)
    assert made["seed"]["convergence"] == pytest.approx(0.2546875, abs=1e-6)
    live.settings.convergence = "seed"
    try:
        by_setting = admin.post("/v1/pools", json={"name": f"s{uuid.uuid4().hex[:10]}"}).json()
        own = admin.post(
            "/v1/pools",
            json={"name": f"s{uuid.uuid4().hex[:10]}", "params": {"convergence": "revised"}},
        ).json()
    finally:
        live.settings.convergence = "revised"
    assert (by_setting["params"]["convergence"], own["params"]["convergence"]) == (
        "seed",
        "revised",
    )
    assert (by_setting["params"]["k_min"], own["params"]["k_min"]) == (2, 12)  # follow F3


@pytest.mark.parametrize("value", ["bayes", "", 1, None, ["seed"]])
def test_convergence_must_name_a_version(admin: httpx.Client, value: object) -> None:
    name = f"v{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "params": {"convergence": value}})
    if value is None:  # null: not given, the default
        assert r.status_code == 201 and r.json()["params"]["convergence"] == "revised"
        return
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "params", "convergence"]
    assert admin.get(f"/v1/pools/{name}").status_code == 404


def test_pool_stored_without_convergence_is_the_seeds(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """A pool created before F3 had versions stored parameters without the field: it shows
    and rates with the seed's F3."""
    name = f"old{uuid.uuid4().hex[:10]}"
    live.store.create_pool(name, 12, SynEloParams(theta=2400.0))
    old = {k: v for k, v in SynEloParams(theta=2400.0).to_dict().items() if k != "convergence"}
    with live.store.engine.begin() as conn:
        conn.execute(update(pools).where(pools.c.name == name).values(params=json.dumps(old)))
    assert admin.get(f"/v1/pools/{name}").json()["params"]["convergence"] == "seed"
    listed = {p["name"]: p["params"] for p in admin.get("/v1/pools").json()}
    assert listed[name]["convergence"] == "seed"
    play(server, name, [steam(1)], [steam(2)])
    play(server, name, [steam(3)], [steam(1)])
    me = server.get(f"/v1/pools/{name}/players/{steam(1)}").json()
    assert me["convergence"] == pytest.approx(0.2546875, abs=1e-6)  # the seed's (see above)


@pytest.mark.parametrize(
    "body",
    [
        {"name": "bad name", "team_size": 2},
        {"name": "x", "team_size": 0},
        {"name": "x", "theta": -1},
        {"name": "x", "player_ids": "email"},
        {"name": "x", "params": {"k_min": 100}},
        {"name": "x", "params": {"nonsense": 1}},
        {"name": "x", "teamsize": 2},
        {"name": "x", "params": {"r_max": 5_000_000_000}},
    ],
)
def test_create_pool_validation(admin: httpx.Client, body: dict) -> None:
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][0] == "body"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"t_shadow": 100000000000000000000}', "t_shadow"),
        ('{"t_stale_days": 1e300}', "t_stale_days"),
        ('{"k_max": 1e308, "k_min": 0}', "k_max"),
        ('{"sigma": NaN}', "sigma"),
        ('{"w_vol": Infinity}', "w_vol"),
        ('{"window": 5001}', "window"),
    ],
)
def test_pool_params_out_of_bounds_are_refused_by_name(
    admin: httpx.Client, raw: str, field: str
) -> None:
    """Values that would break every later round of the pool (an overflowing column, a date
    before year 1, an infinite K) are a 422 at creation, and no pool is made."""
    name = f"b{uuid.uuid4().hex[:10]}"
    r = admin.post(
        "/v1/pools",
        content=f'{{"name": "{name}", "team_size": 2, "params": {raw}}}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "params", field]
    assert admin.get(f"/v1/pools/{name}").status_code == 404


def test_pool_stored_with_params_past_the_bounds_still_works(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """Bounds apply to new values only: a pool an older release created with K_max 2,000,000
    and σ 10^9 (accepted then) is still listed, shown and rated."""
    name = f"old{uuid.uuid4().hex[:10]}"
    # What an older release stored: construction checks only the model's invariants.
    live.store.create_pool(name, 1, SynEloParams(theta=400, k_max=2_000_000.0, sigma=1e9))
    assert admin.get("/v1/pools").status_code == 200
    assert admin.get(f"/v1/pools/{name}").json()["params"]["k_max"] == 2_000_000
    body = play(server, name, [steam(1)], [steam(2)])
    # C = 1, G = exp(−0/…) = 1 → K = K_max: 1000 + 2,000,000·0.5 = 1,001,000.
    assert [p["after"] for p in body["players"]] == [1_001_000, 100]


def test_quality_brier(admin: httpx.Client, server: httpx.Client, pool: str) -> None:
    q = admin.get(f"/v1/pools/{pool}/quality").json()
    assert q["rounds"] == 0 and q["brier_all"] is None and q["theta"] == 2400
    # Round 1: equal teams, P_A = 0.5, A wins: (0.5 − 1)² = 0.25.
    first = play(server, pool, [steam(1)], [steam(2)], "A")
    # Round 2: 1036 vs 964 → P_A = 1/(1+exp(−72/2400)); B wins: (P_A − 0)².
    second = play(server, pool, [steam(1)], [steam(2)], "B")
    p2 = second["p_a"]
    assert abs(p2 - 1 / (1 + 2.718281828459045 ** (-72 / 2400))) < 1e-12
    q = admin.get(f"/v1/pools/{pool}/quality").json()
    expected = (0.25 + p2**2) / 2
    assert first["p_a"] == 0.5
    assert abs(q["brier_all"] - expected) < 1e-12
    assert abs(q["brier_recent"] - expected) < 1e-12
    assert abs(q["brier_all_distance"] - (expected - 0.25)) < 1e-12
    assert q["brier_recent_rounds"] == 2
    assert (q["players"], q["shadow"], q["stale"], q["team_size"]) == (2, 2, 0, 12)
    assert 0 <= q["mean_convergence"] <= 1


def test_quality_brier_distance_is_signed(admin: httpx.Client, server: httpx.Client) -> None:
    """Better than a coin is below 0.25: the distance says which side it is on."""
    name = f"q{uuid.uuid4().hex[:10]}"
    assert admin.post("/v1/pools", json={"name": name, "theta": 10}).status_code == 201
    play(server, name, [steam(1)], [steam(2)], "A")  # P_A = 0.5: (0.5 − 1)² = 0.25
    # 1036 v 964 at Θ 10: P_A = 1/(1+exp(−7.2)) ≈ 0.99925; A wins again: (P_A − 1)² ≈ 6e-7.
    second = play(server, name, [steam(1)], [steam(2)], "A")
    q = admin.get(f"/v1/pools/{name}/quality").json()
    expected = (0.25 + (second["p_a"] - 1) ** 2) / 2
    assert second["p_a"] > 0.999
    assert abs(q["brier_all"] - expected) < 1e-12
    assert abs(q["brier_all_distance"] - (expected - 0.25)) < 1e-12
    assert q["brier_all_distance"] < -0.12  # better than a coin, and says so
    assert abs(q["brier_recent_distance"] - (expected - 0.25)) < 1e-12


def test_quality_recent_window_and_mean_convergence(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    """brier_recent covers only the newest SYNELO_BRIER_RECENT rounds (3 here, 500 by
    default); mean_convergence is the mean of the players' C."""
    live.settings.brier_recent = 3
    try:
        # Three players with 5, 3 and 2 rounds: their C differ (F3 revised: the prior's).
        played = [
            play(server, pool, [steam(a)], [steam(b)], w)
            for (a, b), w in zip([(1, 2), (1, 3), (1, 2), (2, 1), (1, 3)], "AABAB", strict=True)
        ]
        q = admin.get(f"/v1/pools/{pool}/quality").json()
    finally:
        live.settings.brier_recent = 500
    terms = [
        (r["p_a"] - (1.0 if w == "A" else 0.0)) ** 2 for r, w in zip(played, "AABAB", strict=True)
    ]
    assert q["rounds"] == 5 and q["brier_recent_rounds"] == 3
    assert abs(q["brier_all"] - sum(terms) / 5) < 1e-12
    assert abs(q["brier_recent"] - sum(terms[2:]) / 3) < 1e-12
    assert abs(q["brier_recent"] - q["brier_all"]) > 1e-3  # the two really differ here
    assert abs(q["brier_recent_distance"] - (sum(terms[2:]) / 3 - 0.25)) < 1e-12
    assert abs(q["brier_all_distance"] - (sum(terms) / 5 - 0.25)) < 1e-12
    cs = [
        server.get(f"/v1/pools/{pool}/players/{steam(n)}").json()["convergence"] for n in (1, 2, 3)
    ]
    assert len(set(cs)) == 3  # a mean of three different values
    assert abs(q["mean_convergence"] - sum(cs) / 3) < 1e-12


def test_auth(live: LiveServer, pool: str) -> None:
    with live.client(None) as anon, live.client("wrong") as wrong, live.client(SERVER) as srv:
        assert anon.get("/healthz").status_code == 200
        for c in (anon, wrong):
            r = c.get(f"/v1/pools/{pool}/players/{steam(1)}")
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
            assert "detail" in r.json()
        # Server tokens: lookups and rounds yes, admin routes no.
        assert srv.get(f"/v1/pools/{pool}/players/{steam(1)}").status_code == 200
        for method, path, body in [
            ("GET", f"/v1/pools/{pool}/quality", None),
            ("GET", f"/v1/pools/{pool}/leaderboard", None),
            ("GET", f"/v1/pools/{pool}", None),
            ("POST", "/v1/pools", {"name": "zz", "team_size": 2}),
            ("PUT", f"/v1/pools/{pool}/players/{steam(1)}", {"rating": 1200}),
            ("DELETE", f"/v1/pools/{pool}/players/{steam(1)}", None),
            ("GET", f"/v1/pools/{pool}/players/{steam(1)}/history", None),
        ]:
            r = srv.request(method, path, json=body)
            assert r.status_code == 403, (method, path, r.text)


def test_configured_tokens_are_the_only_tokens(live: LiveServer, pool: str) -> None:
    # The live server runs with SYNELO_*_TOKENS set: a token of the token table (generated
    # by `synelo init` or made by `synelo token create`) is not accepted. Stored tokens are
    # accepted when none is configured: tests/integration/test_cli.py serves with them.
    live.store.add_token("admin", "db-made-token", "test")
    with live.client("db-made-token") as c:
        assert c.get(f"/v1/pools/{pool}/players/{steam(1)}").status_code == 401


def test_every_error_is_json(live: LiveServer) -> None:
    with live.client(None) as c:
        for r in (c.get("/v1/nowhere"), c.put("/healthz"), c.delete("/v1/pools")):
            assert r.status_code in (404, 405)
            assert r.headers["content-type"] == "application/json"
        # a path outside the API is a page's: its 404 is the not-found page
        page = c.get("/nowhere")
        assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    with live.client() as c:
        assert c.get("/docs").status_code == 200
        assert "/v1/pools/{pool}/rounds" in c.get("/openapi.json").json()["paths"]
