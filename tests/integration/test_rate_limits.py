"""Rate limits (per token, per client address, invalid tokens per address) on a real Redis
and real uvicorn servers, what they do while Redis is away (a redis-server of the test's
own, killed and started again), and token revocation reaching every worker within a second.

Redis is the one at SYNELO_TEST_REDIS_URL (default redis://127.0.0.1:6379/0); these tests
use keys under a prefix of their own and delete them afterwards. When CI=true an
unreachable Redis fails the run instead of skipping its tests.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
import redis
from sqlalchemy import delete, event

from synelo.client import RoundReporter, ServiceUnavailable, SyneloClient
from synelo.config import Settings
from synelo.service.app import create_app
from synelo.service.middleware import ratelimit
from synelo.service.middleware.ratelimit import (
    BURST_S,
    FAILED_BURST,
    GO,
    Limiter,
    LocalLimiter,
    Rate,
    RedisLimiter,
    Verdict,
)
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store, hash_token
from synelo.store.tables import api_tokens
from tests.conftest import (
    ADMIN,
    SERVER,
    Served,
    own_pg_schema,
    rss_kib,
    serving,
    steam,
    synelo_serve,
)

# wall-clock bounds: `make test` runs this module alone, after the parallel part
pytestmark = pytest.mark.serial

REDIS_URL = os.environ.get("SYNELO_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
OTHER = "second-server-token-for-tests"
POOL = "p"


@pytest.fixture(scope="module")
def redis_available() -> None:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is unreachable at {REDIS_URL} (CI=true: this is a failure)")
        pytest.skip(f"Redis is unreachable at {REDIS_URL}")


@pytest.fixture
def prefix(redis_available: None) -> Iterator[str]:
    """A key prefix of this test's own in the shared Redis, emptied afterwards."""
    prefix = f"synelo-test:{uuid.uuid4().hex}:"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


# --- the limiters on their own ----------------------------------------------------------


@pytest.fixture(params=["local", "redis"])
def limiter(request: pytest.FixtureRequest) -> Callable[[], Limiter]:
    """A factory of limiters of one kind; the Redis ones of a test share its prefix (as the
    workers of one service do)."""
    if request.param == "local":
        return LocalLimiter
    prefix = request.getfixturevalue("prefix")
    return lambda: RedisLimiter(REDIS_URL, prefix)


def test_a_burst_goes_through_then_the_rate(limiter: Callable[[], Limiter]) -> None:
    rate = Rate(20.0, 4.0)  # one every 50 ms, four at once

    async def scenario() -> None:
        lim = limiter()
        try:
            verdicts = [await lim.acquire([("k", rate)]) for _ in range(6)]
            assert verdicts[:4] == [GO] * 4
            (wait5, which5), (wait6, _) = verdicts[4:]
            assert which5 == 0 and 0.0 < wait5 <= 0.05
            # a refused request is not counted: refused again, the wait does not grow
            assert 0.0 < wait6 <= wait5
            await asyncio.sleep(wait6 + 0.005)
            assert await lim.acquire([("k", rate)]) == GO
            assert (await lim.acquire([("k", rate)]))[0] > 0
            assert await lim.acquire([("other key", rate)]) == GO
        finally:
            await lim.close()

    asyncio.run(scenario())


def test_several_buckets_count_all_or_none(limiter: Callable[[], Limiter]) -> None:
    """A round counts against its token's requests and rounds; refused by one, it is
    counted in neither."""
    # the requests bucket refills one a second: a slow moment between the calls below (they
    # took over 10 ms on a loaded machine) must not refill it
    rounds, requests = ("rounds", Rate(1.0, 1.0)), ("requests", Rate(1.0, 10.0))

    async def scenario() -> None:
        lim = limiter()
        try:
            assert await lim.acquire([requests, rounds]) == GO
            for _ in range(5):
                wait, which = await lim.acquire([requests, rounds])
                assert wait > 0.9 and which == 1  # the rounds bucket refuses
            # 9 of the requests bucket's 10 are left: the refused rounds took none
            assert [await lim.acquire([requests]) for _ in range(9)] == [GO] * 9
            assert (await lim.acquire([requests]))[0] > 0
        finally:
            await lim.close()

    asyncio.run(scenario())


def test_redis_limiters_share_their_counts_and_keys_expire(prefix: str) -> None:
    """Two limiters stand for two workers: what one lets through, the other sees."""
    rate = Rate(2.0, 3.0)

    async def scenario() -> None:
        first, second = RedisLimiter(REDIS_URL, prefix), RedisLimiter(REDIS_URL, prefix)
        try:
            assert [await first.acquire([("k", rate)]) for _ in range(3)] == [GO] * 3
            assert (await second.acquire([("k", rate)]))[0] > 0.4
        finally:
            await first.close()
            await second.close()

    asyncio.run(scenario())
    client = redis.Redis.from_url(REDIS_URL)
    ttl_ms = client.pttl(f"{prefix}k")
    client.close()
    assert 0 < ttl_ms <= 1500 + 1  # gone once the bucket is full again (3 × 500 ms)


def test_without_redis_each_worker_limits_on_its_own(caplog: pytest.LogCaptureFixture) -> None:
    """An unreachable Redis neither stops the service nor lifts the limits: the worker
    falls back to its own counts, says so once, and does not wait on Redis each time."""
    rate = Rate(1.0, 3.0)

    async def scenario() -> list[float]:
        lim = RedisLimiter("redis://127.0.0.1:1/0", "unused:")  # nothing listens on port 1
        try:
            return [(await lim.acquire([("k", rate)]))[0] for _ in range(5)]
        finally:
            await lim.close()

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="synelo.ratelimit"):
        waits = asyncio.run(scenario())
    assert time.monotonic() - started < 1.0
    assert waits[:3] == [0.0] * 3 and all(w > 0 for w in waits[3:])
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "Redis unreachable" in warnings[0]


# --- live servers -------------------------------------------------------------------------


def settings_for(folder: Path, **limits: Any) -> Settings:
    base: dict[str, Any] = {
        "rate_server_rounds": None,
        "rate_server_requests": None,
        "rate_address_requests": None,
    }
    return Settings(
        data_dir=folder,
        admin_tokens=[ADMIN],
        server_tokens=[SERVER, OTHER],
        autotune_check_s=0,
        redis_url=None,
        **{**base, **limits},
    )


def new_store(folder: Path, settings: Settings) -> Store:
    engine = create_store_engine(f"sqlite:///{folder / 'synelo.db'}")
    migrate(engine)
    store = Store(engine)
    store.create_pool(POOL, 2, settings.rating_params(settings.pool_theta(2)))
    return store


@contextmanager
def running(
    settings: Settings, store: Store, redis_prefix: str | None = None, **uvicorn_options: Any
) -> Iterator[str]:
    """The app under uvicorn on a thread; with `redis_prefix`, its limits on Redis under
    that prefix (so that no other test, or test run, shares its counts)."""
    app = create_app(settings, store=store)
    if redis_prefix is not None:
        app.state.limits.limiter = RedisLimiter(REDIS_URL, redis_prefix)
    try:
        with serving(app, **uvicorn_options) as url:
            yield url
    finally:
        store.engine.dispose()


def client(url: str, token: str | None = None, source: str = "127.0.0.1") -> httpx.Client:
    """A client from `source` (any 127.x.y.z is this machine: another client address)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(
        base_url=url,
        headers=headers,
        timeout=30,
        transport=httpx.HTTPTransport(local_address=source),
    )


def round_body() -> dict[str, Any]:
    return {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }


def test_a_token_over_its_request_limit_gets_429_with_retry_after(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, rate_server_requests=0.5)  # one every 2 s
    with (
        running(settings, new_store(tmp_path, settings)) as url,
        client(url, SERVER) as s,
        client(url, OTHER) as other,
    ):
        player = f"/v1/pools/{POOL}/players/{steam(1)}"
        assert s.get(player).status_code == 200
        r = s.get(player)
        assert r.status_code == 429
        assert r.headers["retry-after"] == "2"  # just under 2 s away, in whole seconds
        assert r.json() == {"detail": "too many requests with this token; retry after 2 s"}
        assert other.get(player).status_code == 200  # each token has its own count
        time.sleep(2.0)
        assert s.get(player).status_code == 200


def test_rounds_have_a_limit_of_their_own(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, rate_server_rounds=0.5, rate_server_requests=200.0)
    with (
        running(settings, new_store(tmp_path, settings)) as url,
        client(url, SERVER) as s,
        client(url, OTHER) as other,
        client(url, ADMIN) as a,
    ):
        rounds = f"/v1/pools/{POOL}/rounds"
        assert s.post(rounds, json=round_body()).status_code == 201
        r = s.post(rounds, json=round_body())
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert r.json() == {"detail": "too many rounds with this token; retry after 2 s"}
        # once refused, turned away before its body is read (not JSON here: else a 422)
        junk = s.post(rounds, content=b"{", headers={"Content-Type": "application/json"})
        assert junk.status_code == 429 and junk.json() == r.json()
        # the token's other requests, another token's rounds, an admin's: all go
        assert s.get(f"/v1/pools/{POOL}/players/{steam(1)}").status_code == 200
        assert other.post(rounds, json=round_body()).status_code == 201
        assert [a.post(rounds, json=round_body()).status_code for _ in range(8)] == [201] * 8


@pytest.mark.parametrize("admin_rate", [None, 0.5], ids=["default", "limited"])
def test_admin_tokens_are_unlimited_unless_set(tmp_path: Path, admin_rate: float | None) -> None:
    limits: dict[str, Any] = {"rate_server_requests": 0.5}
    if admin_rate is not None:
        limits["rate_admin_requests"] = admin_rate
    settings = settings_for(tmp_path, **limits)
    with (
        running(settings, new_store(tmp_path, settings)) as url,
        client(url, SERVER) as s,
        client(url, ADMIN) as a,
    ):
        admin_codes = [a.get("/v1/pools").status_code for _ in range(20)]
        server_codes = [s.get("/v1/pools/p/players/" + steam(1)).status_code for _ in range(2)]
    assert server_codes == [200, 429]
    if admin_rate is None:
        assert admin_codes == [200] * 20
    else:
        assert admin_codes == [200] + [429] * 19


def test_each_client_address_has_a_limit_checked_before_the_token(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, rate_address_requests=0.5)  # one every 2 s
    with (
        running(settings, new_store(tmp_path, settings)) as url,
        client(url, None, "127.0.0.2") as anon,
        client(url, ADMIN, "127.0.0.2") as a,
    ):
        # a flood without a token is limited too, not only answered 401
        assert anon.get("/v1/pools").status_code == 401
        r = anon.get("/v1/pools")
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert r.json() == {"detail": "too many requests from this address; retry after 2 s"}
        assert a.get("/v1/pools").status_code == 429  # a good token, the same address
        assert anon.get("/v1/models").status_code == 429  # a route without a token
        assert [anon.get("/healthz").status_code for _ in range(20)] == [200] * 20
        with client(url, ADMIN, "127.0.0.3") as elsewhere:
            assert elsewhere.get("/v1/pools").status_code == 200


@pytest.mark.parametrize(
    "uvicorn_options",
    [{"proxy_headers": False}, {"forwarded_allow_ips": ["127.0.0.2"]}],
    ids=["synelo-alone", "as-synelo-serve"],
)
def test_forwarded_for_is_believed_from_trusted_proxies_only(
    tmp_path: Path, uvicorn_options: dict[str, Any]
) -> None:
    """127.0.0.2 is the trusted proxy; 127.0.0.3 a client that writes X-Forwarded-For
    itself. Checked with synelo reading the header alone, and with uvicorn told the same
    proxies, as `synelo serve` tells it."""
    settings = settings_for(tmp_path, rate_address_requests=0.5, trusted_proxies=["127.0.0.2"])

    def codes(c: httpx.Client, forwarded: Callable[[int], str], n: int) -> list[int]:
        return [
            c.get("/v1/pools", headers={"X-Forwarded-For": forwarded(i)}).status_code
            for i in range(n)
        ]

    with (
        running(settings, new_store(tmp_path, settings), **uvicorn_options) as url,
        client(url, ADMIN, "127.0.0.2") as proxy,
        client(url, ADMIN, "127.0.0.3") as liar,
    ):
        # behind the proxy: one client limited, the next one not
        assert codes(proxy, lambda _: "198.51.100.1", 2) == [200, 429]
        assert codes(proxy, lambda _: "198.51.100.2", 1) == [200]
        # what a client wrote left of the proxy's own hop is not believed
        assert codes(proxy, lambda i: f"203.0.113.{i}, 198.51.100.1", 1) == [429]
        # from an untrusted peer the header is ignored: a new value each time is no escape
        assert codes(liar, lambda i: f"203.0.113.{i}", 2) == [200, 429]


class StallingRedisLimiter(RedisLimiter):
    """A `RedisLimiter` whose every fifth check fails as a timeout does: before Redis sees
    it, or (every other time) after Redis counted it and the answer was lost."""

    def __init__(self, url: str, prefix: str = ratelimit.PREFIX) -> None:
        super().__init__(url, prefix)
        script, calls = self._script, itertools.count(1)

        async def stalling(**call: Any) -> Any:
            n = next(calls)
            if n % 5 == 0:
                if n % 10 == 0:
                    await script(**call)
                raise redis.exceptions.TimeoutError(f"check {n} stalled (test)")
            return await script(**call)

        self._script = stalling  # type: ignore[assignment]


@pytest.mark.parametrize("stalls", [False, True], ids=["redis", "redis-stalling"])
def test_a_flooding_token_is_limited_while_another_goes_on(
    tmp_path: Path,
    prefix: str,
    stalls: bool,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At the default limits, on Redis: one server token posts rounds from six connections
    as fast as it can for 2.5 s; another token's rounds and /healthz, from another address,
    all succeed meanwhile. (Their latency is measured by bench/ratelimit.py.) `stalls`:
    every fifth check fails as a Redis timeout does (half of them after Redis counted it)
    and Redis is tried again 50 ms later, so the worker falls back to its own counts and
    back to Redis many times, and the flood still gets no more than its burst and its rate
    (a busy CI machine once stalled one check past 0.25 s, and the worker's own counts,
    which then started full, let 200 rounds through where 177 were due)."""
    if stalls:
        monkeypatch.setattr(ratelimit, "RETRY_REDIS_S", 0.05)
        monkeypatch.setattr(sys.modules[__name__], "RedisLimiter", StallingRedisLimiter)
    settings = settings_for(
        tmp_path,
        rate_server_rounds=Settings().rate_server_rounds,
        rate_server_requests=Settings().rate_server_requests,
        rate_address_requests=Settings().rate_address_requests,
        fair_share=None,  # the limits alone: the fair share would hold the flood below them
    )
    rate = settings.rate_server_rounds
    assert rate is not None
    with running(settings, new_store(tmp_path, settings), redis_prefix=prefix) as url:
        stop = threading.Event()

        def flood(_: int) -> tuple[int, int, set[str]]:
            accepted = refused = 0
            retry_afters: set[str] = set()
            with client(url, SERVER, "127.0.0.2") as c:
                while not stop.is_set():
                    r = c.post(f"/v1/pools/{POOL}/rounds", json=round_body())
                    if r.status_code == 201:
                        accepted += 1
                    else:
                        assert r.status_code == 429, r.text
                        refused += 1
                        retry_afters.add(r.headers["retry-after"])
            return accepted, refused, retry_afters

        def steady(_: int) -> list[int]:
            out = []
            with client(url, OTHER, "127.0.0.3") as c:
                while not stop.is_set():
                    out.append(c.post(f"/v1/pools/{POOL}/rounds", json=round_body()).status_code)
                    out.append(c.get("/healthz").status_code)
                    time.sleep(0.05)
            return out

        with ThreadPoolExecutor(7) as ex:
            started = time.monotonic()
            floods = [ex.submit(flood, i) for i in range(6)]
            other = ex.submit(steady, 0)
            time.sleep(2.5)
            stop.set()
            results = [f.result() for f in floods]
            span = time.monotonic() - started
            steady_codes = other.result()
    accepted = sum(a for a, _, _ in results)
    refused = sum(r for _, r, _ in results)
    assert refused > 0 and set().union(*(r for _, _, r in results)) == {"1"}
    assert accepted <= BURST_S * rate + rate * span + 1  # the burst, then the rate
    if stalls:  # it fell back, and came back
        said = [r.getMessage() for r in caplog.records]
        assert any("Redis unreachable" in m for m in said)
        assert any("Redis answers again" in m for m in said)
    # it kept going (a loaded machine made 16 requests in the 2.5 s, an idle one ~40)
    assert len(steady_codes) >= 8 and set(steady_codes) == {200, 201}


# --- revocation -----------------------------------------------------------------------------


def revoke(store: Store, token: str) -> None:
    """What a revocation does to the token table (the row goes)."""
    with store.engine.begin() as conn:
        conn.execute(delete(api_tokens).where(api_tokens.c.token_hash == hash_token(token)))


def test_a_revoked_token_stops_working_within_a_second(tmp_path: Path) -> None:
    """Stored tokens (none configured); lower-case `bearer` works like `Bearer`."""
    settings = Settings(data_dir=tmp_path, autotune_check_s=0, redis_url=None)
    store = new_store(tmp_path, settings)
    token = uuid.uuid4().hex
    store.add_token("server", token, "revoked by the test")
    with running(settings, store) as url:
        player = f"{url}/v1/pools/{POOL}/players/{steam(1)}"
        for scheme in ("Bearer", "bearer", "BEARER"):
            assert (
                httpx.get(player, headers={"Authorization": f"{scheme} {token}"}).status_code == 200
            )
        revoke(store, token)
        revoked = time.monotonic()
        time.sleep(max(0.0, revoked + 1.0 - time.monotonic()))
        r = httpx.get(player, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 401 and r.json() == {"detail": "invalid token"}


# --- `synelo serve` -------------------------------------------------------------------------


@pytest.mark.parametrize("trusted", ["", "127.0.0.1"], ids=["no-proxy", "proxy"])
def test_serve_believes_forwarded_for_from_trusted_proxies_only(
    tmp_path: Path, trusted: str
) -> None:
    """uvicorn by itself believes X-Forwarded-For from 127.0.0.1; `synelo serve` makes it
    believe SYNELO_TRUSTED_PROXIES only."""
    migrate(create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}"))
    with synelo_serve(
        tmp_path, SYNELO_RATE_ADDRESS_REQUESTS="0.5", SYNELO_TRUSTED_PROXIES=trusted
    ) as served:
        codes = [
            httpx.get(
                f"{served.url}/v1/pools",
                headers={"Authorization": f"Bearer {ADMIN}", "X-Forwarded-For": f"203.0.113.{i}"},
            ).status_code
            for i in range(2)
        ]
    assert codes == [200, 200 if trusted else 429]


class TwoWorkers(NamedTuple):
    url: str
    store: Store
    tokens: dict[str, str]  # admin, flood, revoked, steady (server tokens but admin)
    served: Served


@pytest.fixture(scope="module")
def two_workers(
    pg_schema_url: str, redis_available: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TwoWorkers]:
    """`synelo serve --workers 2` on PostgreSQL (a schema of its own) with its limits on
    Redis: 4 rounds/s per server token (4 at once), stored tokens (none configured)."""
    with own_pg_schema() as url:
        engine = create_store_engine(url)
        migrate(engine)
        store = Store(engine)
        settings = Settings(_env_file=None)
        store.create_pool(POOL, 2, settings.rating_params(settings.pool_theta(2)))
        tokens = {name: uuid.uuid4().hex for name in ("admin", "flood", "revoked", "steady")}
        for name, token in tokens.items():
            store.add_token("admin" if name == "admin" else "server", token, f"rate {name}")
        with synelo_serve(
            tmp_path_factory.mktemp("two-workers"),
            workers=2,
            SYNELO_DATABASE_URL=url,
            SYNELO_ADMIN_TOKENS="",
            SYNELO_SERVER_TOKENS="",
            SYNELO_REDIS_URL=REDIS_URL,
            SYNELO_RATE_SERVER_ROUNDS="4",
            # no address limit: the address keys (not the tokens') are the same for every run
            SYNELO_RATE_ADDRESS_REQUESTS="",
        ) as served:
            yield TwoWorkers(served.url, store, tokens, served)
        engine.dispose()


def fresh_connections(url: str, token: str, method: str, path: str, n: int) -> list[int]:
    """`n` requests from 8 threads, each on a new connection, so that both workers answer."""

    def one(_: int) -> int:
        headers = {"Authorization": f"Bearer {token}"}
        body = round_body() if method == "POST" else None
        return httpx.request(method, f"{url}{path}", headers=headers, json=body).status_code

    with ThreadPoolExecutor(8) as ex:
        return list(ex.map(one, range(n)))


def test_two_workers_share_one_limit_through_redis(two_workers: TwoWorkers) -> None:
    """Counted per worker, two workers would let through twice the limit."""
    url, _, tokens, _ = two_workers
    started = time.monotonic()
    codes: list[int] = []
    while time.monotonic() - started < 3.0:
        codes += fresh_connections(url, tokens["flood"], "POST", f"/v1/pools/{POOL}/rounds", 40)
    span = time.monotonic() - started
    accepted, refused = codes.count(201), codes.count(429)
    assert accepted + refused == len(codes)
    assert refused > 0 and 4 <= accepted <= 4 + 4 * span + 1  # the burst, then the rate


def test_a_revoked_token_stops_on_every_worker_within_a_second(two_workers: TwoWorkers) -> None:
    url, store, tokens, _ = two_workers
    path = f"/v1/pools/{POOL}/players/{steam(1)}"
    assert fresh_connections(url, tokens["revoked"], "GET", path, 16) == [200] * 16
    revoke(store, tokens["revoked"])
    revoked = time.monotonic()
    time.sleep(max(0.0, revoked + 1.0 - time.monotonic()))
    codes = fresh_connections(url, tokens["revoked"], "GET", path, 16)
    # 16 invalid tokens at once from one address pass FAILED_BURST (10): the table is read
    # for the first ten, and the later ones may be turned away by the gate with a 429
    assert set(codes) <= {401, 429} and codes.count(401) >= FAILED_BURST


MEMORY_CHUNK = 25  # requests on one connection
WARM_UP_ROUNDS = 6  # of 300 requests at most, until each worker's memory settles
SETTLED_KIB = 1024  # what a settled worker grows by at most in a round of the warm-up
# What a worker may grow by over the measured 1,500 requests, about 750 each. Warm, a worker
# grew by about 0.25 MB a 1,500 requests (168.0 to 168.3 MB over ten rounds of 300), so this
# catches what keeps some 4 KB or more a request. Cold, it grows by 5 to 17 MB: a warm-up of
# fixed size left a worker that had started late cold, or one that had not yet answered
# before routing (see `mixed_requests`); hence a warm-up until both settle.
MEMORY_BOUND_KIB = 3 * 1024


def mixed_requests(url: str, tokens: dict[str, str], chunks: int, first: int) -> Counter[int]:
    """`chunks` chunks of each kind, each on a connection of its own (so that both workers
    answer), 6 at once: lookups of 24 players (a server token), 2v2 reports (the admin
    token: not held to 4 rounds/s), and lookups with tokens nobody holds, a new one each
    request, each chunk of them from a client address of its own (127.0.x.y from `first`
    on: each address has its own allowance of failed tokens) and first with a body over the
    limit. The answers' statuses, counted.

    The 413, like the gate's 429s, is answered before routing: a worker's first such answer
    builds the OpenAPI document once (`RequestMetrics`, for the route's template), about
    4.5 MB kept for good. Every chunk of bad tokens has one, so that the warm-up has it."""
    players = [steam(n) for n in range(1, 25)]
    lookup = {"steam_ids": players}
    too_big = b" " * (Settings.model_fields["max_body_bytes"].default + 1)

    def chunk(job: tuple[str, int]) -> list[int]:
        kind, n = job
        address = first + n
        local = f"127.0.{1 + address // 250}.{1 + address % 250}" if kind == "bad" else None
        token = {"lookup": tokens["steady"], "report": tokens["admin"]}.get(kind)
        with httpx.Client(
            base_url=url, timeout=30, transport=httpx.HTTPTransport(local_address=local)
        ) as c:
            codes = []
            for i in range(MEMORY_CHUNK):
                auth = {"Authorization": f"Bearer {token or uuid.uuid4().hex}"}
                if kind == "report":
                    a1, a2, b1, b2 = (players[(n * 7 + i * 5 + k * 6) % 24] for k in range(4))
                    body = {**round_body(), "teams": {"A": [a1, a2], "B": [b1, b2]}}
                    r = c.post(f"/v1/pools/{POOL}/rounds", json=body, headers=auth)
                elif kind == "bad" and i == 0:
                    r = c.post(f"/v1/pools/{POOL}/players/lookup", content=too_big, headers=auth)
                else:
                    r = c.post(f"/v1/pools/{POOL}/players/lookup", json=lookup, headers=auth)
                codes.append(r.status_code)
            return codes

    jobs = [(kind, n) for n in range(chunks) for kind in ("lookup", "report", "bad")]
    with ThreadPoolExecutor(6) as ex:
        return Counter(code for codes in ex.map(chunk, jobs) for code in codes)


def test_two_workers_keep_their_memory_under_lookups_reports_and_bad_tokens(
    two_workers: TwoWorkers,
) -> None:
    """Once each worker's memory has settled (a warm-up round of 300 requests grew neither
    by SETTLED_KIB), 1,500 more (lookups, reports, and bad tokens from 20 addresses) grow
    neither worker's resident memory by more than MEMORY_BOUND_KIB: nothing is kept per
    request, per token or per address beyond its bound."""
    url, _, tokens, served = two_workers
    first, last = 0, ([0], [0])
    for _ in range(WARM_UP_ROUNDS):
        warm = mixed_requests(url, tokens, 4, first=first)
        first += 4
        workers = served.workers()
        before = [rss_kib(pid) for pid in workers]
        settled = workers == last[0] and all(
            now - then < SETTLED_KIB for now, then in zip(before, last[1], strict=True)
        )
        if settled:
            break
        last = (workers, before)
    assert settled, f"the workers' memory did not settle: {last}, then {before} KiB"
    assert len(workers) == 2 and set(warm) <= {200, 201, 401, 413, 429}
    codes = mixed_requests(url, tokens, 20, first=first)
    assert served.workers() == workers  # the same two, neither restarted meanwhile
    after = [rss_kib(pid) for pid in workers]
    grown = [a - b for a, b in zip(after, before, strict=True)]
    print(f"warm-up of {first // 4} rounds; then {dict(codes)}: RSS {before} -> {after} KiB")
    assert set(codes) <= {200, 201, 401, 413, 429} and codes[413] == 20
    assert codes[200] == codes[201] == 20 * MEMORY_CHUNK  # every lookup and report
    assert codes[401] >= 20 * FAILED_BURST  # each address's first ten read the token table
    assert max(grown) <= MEMORY_BOUND_KIB, grown


def test_the_client_keeps_a_round_refused_by_a_rate_limit_and_delivers_it_later(
    tmp_path: Path,
) -> None:
    """The Python client's side of a 429: `SyneloClient` raises ServiceUnavailable (not a
    rejection), `RoundReporter` keeps the report in its ring buffer, and the next round end,
    past Retry-After, delivers it first with the same round_id, once."""
    settings = settings_for(tmp_path, rate_server_rounds=0.5)  # one round every 2 s
    with (
        running(settings, new_store(tmp_path, settings)) as url,
        SyneloClient(url, SERVER, POOL) as c,
        SyneloClient(url, ADMIN, POOL) as admin,
    ):
        reporter = RoundReporter(c, "s")
        teams = ([steam(1)], [steam(2)])
        assert reporter.report("A", teams)[-1].created
        assert reporter.report("B", teams) == []  # 429: kept, not raised
        kept = reporter.last_round_id
        assert [b["round_id"] for b in reporter.buffer] == [kept]
        assert reporter.stats.buffered == 1 and reporter.stats.rejected == 0
        with pytest.raises(ServiceUnavailable, match="429"):
            c.submit_round(dict(reporter.buffer[0]))
        assert admin.pool_info().rounds == 1
        time.sleep(2.1)
        delivered = reporter.flush()
        assert [r.round_id for r in delivered] == [kept] and delivered[0].created
        assert not reporter.buffer and reporter.stats.retried == 1
        assert admin.pool_info().rounds == 2
        assert [e.round_id for e in admin.full_history(steam(1)) if e.kind == "round"].count(
            kept
        ) == 1


def test_a_busy_community_never_meets_the_default_limits(tmp_path: Path) -> None:
    """The defaults stop a runaway token, not a community: 32 game servers sharing one
    server token end a 12v12 round in the same second (report, batch lookup, splits), then
    their 768 players reconnect over five seconds, each looked up on joining. No 429."""
    defaults = Settings()
    settings = settings_for(
        tmp_path,
        rate_server_rounds=defaults.rate_server_rounds,
        rate_server_requests=defaults.rate_server_requests,
        rate_address_requests=defaults.rate_address_requests,
        balance_budget_ms=30_000,  # 32 splits at once take turns: no 503 from the solver
    )
    store = new_store(tmp_path, settings)
    store.create_pool("busy", 12, settings.rating_params(settings.pool_theta(12)))
    statuses: list[int] = []

    def game_server(n: int) -> None:
        ids = [steam(24 * n + k) for k in range(1, 25)]
        body = {"round_id": uuid.uuid4().hex, "server_id": f"s{n}", "winner": "AB"[n % 2]}
        body["teams"] = {"A": ids[:12], "B": ids[12:]}
        with client(url, SERVER) as c:
            answers = [
                c.post("/v1/pools/busy/rounds", json=body),
                c.post("/v1/pools/busy/players/lookup", json={"steam_ids": ids}),
                c.post("/v1/pools/busy/splits", json={"players": ids}),
            ]
            for player in ids:
                time.sleep(5.0 / 24)
                answers.append(c.get(f"/v1/pools/busy/players/{player}"))
        statuses.extend(r.status_code for r in answers)

    with running(settings, store) as url:
        threads = [threading.Thread(target=game_server, args=(n,)) for n in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(statuses) == 32 * 27 and 429 not in statuses
    assert set(statuses) <= {200, 201}, sorted(set(statuses))


def test_the_public_endpoints_have_a_stricter_address_limit(tmp_path: Path) -> None:
    """SYNELO_RATE_PUBLIC_REQUESTS limits an address on /v1/public/… only: past it, the
    same address still reaches every other route."""
    settings = settings_for(tmp_path, rate_address_requests=None, rate_public_requests=0.5)
    with (
        running(settings, new_store(tmp_path, settings)) as url,
        client(url, None, "127.0.0.2") as anon,
        client(url, ADMIN, "127.0.0.2") as a,
    ):
        assert anon.get("/v1/public/pools").status_code == 200
        r = anon.get("/v1/public/pools")
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert a.get("/v1/pools").status_code == 200  # not a public route: not limited
        assert anon.get("/").status_code == 429  # the pages share the public limit
        with client(url, None, "127.0.0.3") as elsewhere:
            assert elsewhere.get("/v1/public/pools").status_code == 200


# --- invalid tokens -------------------------------------------------------------------------


def lookup(c: httpx.Client) -> int:
    return c.post(f"/v1/pools/{POOL}/players/lookup", json={"steam_ids": [steam(1)]}).status_code


def test_an_address_of_invalid_tokens_is_refused_before_the_token_table_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored tokens (none configured): each unknown token costs a read of the token table,
    so an address may present `FAILED_TOKENS` a second (`FAILED_BURST` at once; here 3,
    then one every 10 s); the one past them is refused, and then the address gets 429 for
    the tokens the worker does not know, without the read. Another address still gets its
    401."""
    monkeypatch.setattr(ratelimit, "FAILED_TOKENS", 0.1)
    monkeypatch.setattr(ratelimit, "FAILED_BURST", 3.0)
    settings = Settings(data_dir=tmp_path, autotune_check_s=0, redis_url=None)
    store = new_store(tmp_path, settings)
    reads: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "api_tokens" in statement:
            reads.append(statement)

    event.listen(store.engine, "before_cursor_execute", count)
    with running(settings, store) as url, client(url, None, "127.0.0.2") as bad:
        started = time.monotonic()
        answers = [
            bad.post(
                f"/v1/pools/{POOL}/players/lookup",
                json={"steam_ids": [steam(1)]},
                headers={"Authorization": f"Bearer {uuid.uuid4().hex}"},
            )
            for _ in range(12)
        ]
        span = time.monotonic() - started
        codes = [r.status_code for r in answers]
        assert codes[:4] == [401] * 4 and codes[4] == 429, codes
        assert set(codes) == {401, 429}
        assert answers[4].json()["detail"].startswith("too many invalid tokens from this address")
        # the burst and the one refused, then the rate
        assert len(reads) == codes.count(401) <= 3 + 1 + 0.1 * span + 1
        with client(url, uuid.uuid4().hex, "127.0.0.3") as elsewhere:
            assert lookup(elsewhere) == 401


def test_a_known_token_still_goes_from_an_address_of_invalid_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Configured tokens: the worker knows every valid token, so the address's valid one
    goes on while its invalid ones get 429; the public endpoints ignore a token."""
    monkeypatch.setattr(ratelimit, "FAILED_TOKENS", 0.1)
    monkeypatch.setattr(ratelimit, "FAILED_BURST", 3.0)
    settings = settings_for(tmp_path)
    with running(settings, new_store(tmp_path, settings)) as url:
        codes = []
        for _ in range(6):
            with client(url, uuid.uuid4().hex, "127.0.0.2") as bad:
                codes.append(lookup(bad))
        assert codes == [401, 401, 401, 401, 429, 429]
        with client(url, SERVER, "127.0.0.2") as good:
            assert lookup(good) == 200
        with client(url, uuid.uuid4().hex, "127.0.0.2") as bad:
            assert bad.get("/v1/public/pools").status_code == 200
            assert lookup(bad) == 429


# --- Redis going away and coming back -------------------------------------------------------


@contextmanager
def own_redis() -> Iterator[tuple[int, Callable[[], subprocess.Popen[bytes]]]]:
    """A redis-server of this test's own on a free port (no persistence): yields the port
    and a function that starts it (again); stopped afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("no redis-server to start")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
        )
        procs.append(proc)
        r = redis.Redis(port=port, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                r.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline and proc.poll() is None, "redis did not start"
                time.sleep(0.05)
        r.close()
        return proc

    try:
        yield port, start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


def test_redis_going_away_and_coming_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limits fail open to each worker's own: while Redis is away, a worker limits
    with its own counts (not every request refused, not every request let through), and
    it uses Redis again once Redis answers. A token each step, so no remembered refusal
    answers for the limiter."""
    monkeypatch.setattr(ratelimit, "RETRY_REDIS_S", 0.2)  # Redis is tried again this soon
    third = "third-server-token-for-tests"
    settings = Settings(
        data_dir=tmp_path,
        admin_tokens=[ADMIN],
        server_tokens=[SERVER, OTHER, third],
        autotune_check_s=0,
        redis_url=None,
        rate_server_rounds=None,
        rate_server_requests=0.5,  # one at once, then one every 2 s
        rate_address_requests=None,
    )
    player = f"/v1/pools/{POOL}/players/{steam(1)}"
    with own_redis() as (port, start_redis):
        redis_server = start_redis()
        keys = redis.Redis(port=port)
        app_store = new_store(tmp_path, settings)
        app = create_app(settings, store=app_store)
        app.state.limits.limiter = RedisLimiter(f"redis://127.0.0.1:{port}/0", "away:")
        with (
            caplog.at_level(logging.WARNING, logger="synelo.ratelimit"),
            serving(app) as url,
        ):
            with client(url, SERVER) as c:
                assert [c.get(player).status_code for _ in range(2)] == [200, 429]
            assert len(keys.keys("away:t:*")) == 1  # counted in Redis
            redis_server.kill()
            redis_server.wait(10)
            with client(url, OTHER) as c:
                assert [c.get(player).status_code for _ in range(3)] == [200, 429, 429]
            assert any("Redis unreachable" in r.getMessage() for r in caplog.records)
            start_redis()
            time.sleep(0.3)  # past RETRY_REDIS_S: the next check asks Redis
            with client(url, third) as c:
                assert [c.get(player).status_code for _ in range(2)] == [200, 429]
            assert len(keys.keys("away:t:*")) == 1  # the third token's, in the new Redis
            assert any("Redis answers again" in r.getMessage() for r in caplog.records)
        keys.close()
        app_store.engine.dispose()


def test_a_redis_outage_gives_no_key_a_fresh_burst_and_forgets_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fallback goes on from the TATs Redis last answered: a key Redis had filled is
    still refused while Redis is away (not let through a second burst). What the fallback
    lets through is counted into Redis once it answers again, even by an empty Redis, so
    another worker then refuses that key too."""
    monkeypatch.setattr(ratelimit, "RETRY_REDIS_S", 0.2)
    rate = Rate(0.1, 3.0)  # three at once, then one every 10 s: slow steps leave it so

    with own_redis() as (port, start_redis):
        redis_server = start_redis()
        url = f"redis://127.0.0.1:{port}/0"

        async def scenario() -> None:
            worker, other = RedisLimiter(url, "o:"), RedisLimiter(url, "o:")
            try:
                assert [await worker.acquire([("full", rate)]) for _ in range(3)] == [GO] * 3
                redis_server.kill()
                redis_server.wait(10)
                wait, which = await worker.acquire([("full", rate)])
                assert which == 0 and wait > 5  # the fallback knows the bucket is full
                # Redis away: the fallback lets a new key's burst through, then refuses
                assert [await worker.acquire([("new", rate)]) for _ in range(3)] == [GO] * 3
                assert (await worker.acquire([("new", rate)]))[0] > 5
                start_redis()  # an empty Redis
                await asyncio.sleep(0.3)  # past RETRY_REDIS_S
                assert (await worker.acquire([("new", rate)]))[0] > 5  # told Redis
                assert (await other.acquire([("new", rate)]))[0] > 5  # which others see
                assert await other.acquire([("unseen", rate)]) == GO
            finally:
                await worker.close()
                await other.close()

        asyncio.run(scenario())


def test_a_late_answer_from_redis_forgets_nothing_the_fallback_let_through(
    prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check is on its way to Redis when the next one fails: the worker falls back and
    lets its own burst through. The first check's answer then arrives: it must neither
    take back what the fallback counted nor say that Redis is back (it was sent before the
    failure). Let through: the fallback's burst and the one check Redis answered, however
    often the key is asked meanwhile or after Redis is tried again."""
    monkeypatch.setattr(ratelimit, "RETRY_REDIS_S", 0.05)
    rate = Rate(1.0, 10.0)  # ten at once, then one a second

    async def scenario() -> list[Verdict]:
        worker = RedisLimiter(REDIS_URL, prefix)
        script, calls, release = worker._script, itertools.count(1), asyncio.Event()

        async def late_then_failing(**call: Any) -> Any:
            n = next(calls)
            if n == 1:
                await release.wait()  # answered late
            elif n == 2:
                raise redis.exceptions.TimeoutError("stalled (test)")
            return await script(**call)

        worker._script = late_then_failing  # type: ignore[assignment]
        try:
            late = asyncio.create_task(worker.acquire([("k", rate)]))
            await asyncio.sleep(0)  # the first check is sent and waits
            verdicts = [await worker.acquire([("k", rate)]) for _ in range(12)]
            release.set()
            verdicts.append(await late)
            verdicts += [await worker.acquire([("k", rate)]) for _ in range(5)]
            await asyncio.sleep(0.06)  # past RETRY_REDIS_S: Redis is asked again
            verdicts += [await worker.acquire([("k", rate)]) for _ in range(5)]
            return verdicts
        finally:
            await worker.close()

    verdicts = asyncio.run(scenario())
    assert verdicts[:10] == [GO] * 10  # the fallback's burst
    assert verdicts.count(GO) <= 11  # and Redis's one answer; 21 before the fix
