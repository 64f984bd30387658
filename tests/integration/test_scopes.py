"""Tokens scoped to pools (issue 36, defect 7), over real HTTP on both databases: a server
token made with `--pool` uses those pools only, on every route that takes a pool; tokens
made without one, and tokens given in the environment, use every pool; a lookup's renames
are in the admin log; public metrics do not name private pools."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.store.repository import Store
from tests.conftest import NO_RATE_LIMITS, LiveServer, serving, steam
from tests.integration.test_cli import run

ADMIN = "scopes-admin-token"
OWN = "scopes-server-token-for-own"  # scoped to the pools of `Scoped.own`
ALL = "scopes-server-token-unscoped"  # stored before scopes existed: every pool


@dataclass
class Scoped:
    url: str
    store: Store
    own: str  # a private pool the scoped token may use
    other: str  # a private pool it may not
    public: str  # a public pool it may not use, which anyone may read

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def _round(a: int, b: int, **extra: object) -> dict[str, Any]:
    return {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(a)], "B": [steam(b)]},
        **extra,
    }


@pytest.fixture(scope="module")
def scoped(backend: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scoped]:
    """A server on the test database whose tokens are the token table's (none configured):
    an admin's, a server token scoped to `own` (and a pool not made yet), an unscoped one;
    three pools with a round each."""
    store = Store(backend)
    names = {kind: f"{kind[0]}{uuid.uuid4().hex[:12]}" for kind in ("own", "other", "public")}
    store.add_token("admin", ADMIN, "scopes admin")
    store.add_token("server", OWN, "eu-1", [names["own"], "not-made-yet"])
    store.add_token("server", ALL, "old server")
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("scopes"),
        autotune_check_s=0,
        metrics_public=True,
        **NO_RATE_LIMITS,
    )
    app = create_app(settings, store=store)
    with serving(app) as url:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}) as admin:
            for kind, name in names.items():
                r = admin.post(
                    "/v1/pools", json={"name": name, "team_size": 1, "public": kind == "public"}
                )
                assert r.status_code == 201, r.text
                body = _round(1, 2, round_id="r1", names={steam(1): "One", steam(2): "Two"})
                assert admin.post(f"/v1/pools/{name}/rounds", json=body).status_code == 201
        yield Scoped(url, store, names["own"], names["other"], names["public"])


# the server routes that take a pool: (method, path, body), each answered 2xx for its pool
SERVER_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/v1/pools/{pool}/rounds", lambda: _round(3, 4)),
    ("GET", f"/v1/pools/{{pool}}/players/{steam(1)}", None),
    ("POST", "/v1/pools/{pool}/players/lookup", lambda: {"steam_ids": [steam(1)]}),
    ("POST", "/v1/pools/{pool}/splits", lambda: {"players": [steam(n) for n in range(1, 5)]}),
    (
        "POST",
        "/v1/pools/{pool}/autobalance",
        lambda: {"teams": {"A": [steam(1), steam(2), steam(3)], "B": [steam(4)]}},
    ),
    ("POST", "/v1/pools/{pool}/predict", lambda: {"teams": {"A": [steam(1)], "B": [steam(2)]}}),
    ("GET", "/v1/public/pools/{pool}/leaderboard", None),
    ("GET", f"/v1/public/pools/{{pool}}/players/{steam(1)}", None),
    ("GET", f"/v1/public/pools/{{pool}}/players/{steam(1)}/history", None),
    ("GET", "/v1/public/pools/{pool}/rounds/r1", None),
    ("GET", "/v1/public/pools/{pool}/health", None),
]


def _call(client: httpx.Client, method: str, path: str, body: Any, pool: str) -> httpx.Response:
    return client.request(method, path.format(pool=pool), json=body() if body else None)


def _same(a: httpx.Response, b: httpx.Response, names: tuple[str, str]) -> None:
    """Two answers alike but for the pool's name in them."""
    assert a.status_code == b.status_code
    assert a.text.replace(names[0], "NAME") == b.text.replace(names[1], "NAME")


@pytest.mark.parametrize(("method", "path", "body"), SERVER_ROUTES)
def test_a_scoped_token_uses_its_pools_and_no_other(
    scoped: Scoped, method: str, path: str, body: Any
) -> None:
    """Every server token could post to and read every pool, private ones included. A
    scoped one now gets, on a pool outside its scope, exactly what a pool that does not
    exist gets: 404, so that it cannot tell which other pools exist. A public pool stays
    readable on the public routes, as it is without a token."""
    nothing = f"n{uuid.uuid4().hex[:12]}"
    with scoped.client(OWN) as own:
        assert _call(own, method, path, body, scoped.own).is_success
        refused = _call(own, method, path, body, scoped.other)
        assert refused.status_code == 404, refused.text
        _same(refused, _call(own, method, path, body, nothing), (scoped.other, nothing))
        public = _call(own, method, path, body, scoped.public)
        if path.startswith("/v1/public/"):
            assert public.is_success, public.text
        else:
            assert public.status_code == 404, public.text
    with scoped.client(ALL) as unscoped:
        for pool in (scoped.own, scoped.other, scoped.public):
            assert _call(unscoped, method, path, body, pool).is_success


def _concrete(path: str, pool: str) -> str:
    return path.format(pool=pool, steam_id=steam(1), round_id="r1", job_id=1)


def test_every_route_that_takes_a_pool_keeps_the_scope(scoped: Scoped) -> None:
    """Every operation of the OpenAPI document whose path names a pool, found rather than
    listed (a route added later is covered too): a scoped token on a pool outside its scope
    gets 404 on a server route, as for a pool that does not exist, or 403 on an admin
    route, as on any pool; never an answer that tells the pool exists."""
    with scoped.client(OWN) as own:
        paths = own.get("/openapi.json").json()["paths"]
        operations = [
            (method.upper(), path)
            for path, ops in paths.items()
            if "{pool}" in path
            for method in ops
        ]
        assert len(operations) >= 25
        nothing = f"n{uuid.uuid4().hex[:12]}"
        for method, path in operations:
            refused = own.request(method, _concrete(path, scoped.other), json={})
            if path.startswith("/v1/public/"):
                assert refused.status_code == 404, (method, path, refused.text)
            else:
                assert refused.status_code in (403, 404), (method, path, refused.text)
            absent = own.request(method, _concrete(path, nothing), json={})
            _same(refused, absent, (scoped.other, nothing))


def test_a_scoped_token_reads_exact_chances_of_its_own_pools_only(scoped: Scoped) -> None:
    """A token's reader sees a round's chance unrounded: a game server can look the ratings
    up anyway. Not one scoped to other pools, on a public pool: it sees what anyone does."""
    with scoped.client(OWN) as own, scoped.client(ALL) as unscoped, scoped.client(None) as anyone:
        for client, pool in ((own, scoped.own), (unscoped, scoped.public)):
            body = _round(1, 2, round_id="chance")  # 1 won r1: the chance is no longer 1/2
            assert client.post(f"/v1/pools/{pool}/rounds", json=body).is_success
        theirs = own.get(f"/v1/public/pools/{scoped.public}/rounds/chance").json()
        assert theirs == anyone.get(f"/v1/public/pools/{scoped.public}/rounds/chance").json()
        assert theirs["p_a"] == round(theirs["p_a"], 2)
        mine = own.get(f"/v1/public/pools/{scoped.own}/rounds/chance").json()
        assert mine["p_a"] != round(mine["p_a"], 2)


def test_a_lookups_rename_is_in_the_admin_log(scoped: Scoped) -> None:
    """A lookup's `names` renamed a player on the public boards with nothing in the admin
    log. Each name it changes is now logged, by the token's holder; an unchanged name, or
    a player the pool has not rated, logs nothing."""
    names = {steam(1): "One", steam(2): "Renamed", steam(99): "Nobody"}
    body = {"steam_ids": list(names), "names": names}
    with scoped.client(OWN) as own, scoped.client(ADMIN) as admin:
        assert own.post(f"/v1/pools/{scoped.own}/players/lookup", json=body).is_success
        assert own.post(f"/v1/pools/{scoped.own}/players/lookup", json=body).is_success
        log = admin.get(f"/v1/pools/{scoped.own}/changes").json()["changes"]
        renames = [c for c in log if c["kind"] == "rename"]
        assert [(c["steam_id"], c["value"], c["actor"]) for c in renames] == [
            (steam(2), {"name": "Renamed", "was": "Two"}, "eu-1")
        ]
        shown = admin.get(f"/v1/public/pools/{scoped.own}/players/{steam(2)}").json()
        assert shown["name"] == "Renamed"


def test_public_metrics_name_no_private_pool(scoped: Scoped) -> None:
    """With SYNELO_METRICS_PUBLIC=true, /metrics counted rounds by pool name, private pools'
    too: anyone could list them. A private pool's rounds are now counted under
    pool="(private)", a name no pool can have; a public pool is still named."""
    with scoped.client(OWN) as own:
        assert own.post(f"/v1/pools/{scoped.own}/rounds", json=_round(5, 6)).status_code == 201
    with scoped.client(ALL) as unscoped:
        r = unscoped.post(f"/v1/pools/{scoped.public}/rounds", json=_round(5, 6))
        assert r.status_code == 201
    with scoped.client(None) as anyone:
        scrape = anyone.get("/metrics").text
    assert scoped.own not in scrape and scoped.other not in scrape
    assert 'pool="(private)"' in scrape
    assert f'pool="{scoped.public}"' in scrape


def test_tokens_given_in_the_environment_use_every_pool(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """The configured server token (SYNELO_SERVER_TOKENS) has no scope: every pool."""
    for _ in range(2):
        name = f"e{uuid.uuid4().hex[:12]}"
        assert admin.post("/v1/pools", json={"name": name, "team_size": 1}).status_code == 201
        assert server.post(f"/v1/pools/{name}/rounds", json=_round(1, 2)).status_code == 201
        assert server.get(f"/v1/public/pools/{name}/leaderboard").status_code == 200


def test_token_create_with_pools_and_list(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0
    made = run(
        ["token", "create", "--role", "server", "--label", "eu-2", "--pool", "default"]
        + ["--pool", "later"],
        tmp_path,
    )
    assert made.returncode == 0, made.stderr
    assert "no pool 'later' yet" in made.stderr
    token = made.stdout.strip()
    listed = run(["token", "list"], tmp_path).stdout
    row = next(line for line in listed.splitlines() if "eu-2" in line)
    assert "default,later" in row
    assert "(every pool)" in next(line for line in listed.splitlines() if "generated" in line)
    store = Store(create_engine_for(tmp_path))
    identity = store.token_identity(token)
    assert identity is not None and identity.pools == {"default", "later"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--role", "admin", "--pool", "default"], "only a server token is scoped"),
        (["--pool", "no spaces"], "'no spaces' is not a pool name"),
        (["--pool", "x" * 65], "is not a pool name"),
    ],
)
def test_token_create_refuses_a_bad_scope(tmp_path: Path, args: list[str], message: str) -> None:
    assert run(["migrate"], tmp_path).returncode == 0
    made = run(["token", "create", *args], tmp_path)
    assert made.returncode == 2 and message in made.stderr, made.stderr
    assert "Traceback" not in made.stderr and made.stdout == ""


def create_engine_for(folder: Path) -> Engine:
    from synelo.store.engine import create_store_engine

    return create_store_engine(f"sqlite:///{folder / 'synelo.db'}")
