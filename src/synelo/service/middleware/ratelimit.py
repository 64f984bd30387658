"""Rate limits per token and per client address, answering 429 with ``Retry-After``.

Each limit is a GCRA (the "generic cell rate algorithm", a token bucket that keeps one number
per key: the theoretical arrival time, TAT, of the next request): a key with rate r a second
and burst b lets b requests through at once and r a second after that. A request checked
against several keys at once (a server token's requests and rounds) is let through only if
every key allows it, and then counts against all of them; a refused request counts against
none, so a client that keeps retrying too early does not push its own wait further.

Two backends hold the TATs:

- `LocalLimiter`: a dict in the process. With several workers each has its own, so a limit
  holds per worker (N workers let N times the rate through).
- `RedisLimiter`: one Lua script per check on a shared Redis, atomic, on Redis's own clock
  (so workers on hosts whose clocks differ still agree), keys expiring once their bucket is
  full again. If Redis cannot be reached, each worker falls back to its own `LocalLimiter`
  for `RETRY_REDIS_S` seconds and logs a warning: the limits loosen to per worker rather
  than the service stopping or every request waiting on a dead Redis. The fallback goes on
  from the TATs Redis last answered for each key (a Redis hiccup gives no flooding key a
  fresh burst), and once Redis answers again, a key's next check raises its TAT in Redis to
  at least the one the fallback left (what went through meanwhile is not forgotten).

A client address may also present only `FAILED_TOKENS` invalid tokens a second: each costs
a read of the token table, which a flood of random tokens would otherwise get for every
request its address limit lets through. Past that, `LimitGate` answers 429 to the
address's tokens that the worker does not know, before the body is read or the table asked.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from synelo.config import Settings

log = logging.getLogger("synelo.ratelimit")

BURST_S = 1.0  # a limit lets this many seconds' worth of requests through at once
PUBLIC_PREFIX = "/v1/public/"  # the read endpoints anyone may call (api/public.py)


def is_public_path(path: str) -> bool:
    """Whether the path is one anyone may read without a token: the public read endpoints
    and the pages (synelo.service.pages), which share their own per-address limit."""
    return path.startswith((PUBLIC_PREFIX, "/pools/")) or path in ("/", "/login", "/logout")


# A client address may present FAILED_TOKENS tokens a second that turn out invalid (a read of
# the token table each, when they are not in the worker's memory), FAILED_BURST at once; the
# next one is read and refused, and then the gate answers 429 to the address's requests with
# a token it does not know, without that read, until the rate allows another.
FAILED_TOKENS = 10.0
FAILED_BURST = 10.0

RETRY_REDIS_S = 5.0  # after Redis failed, the local limits serve this long before a retry
REDIS_TIMEOUT_S = 0.25  # a check waits no longer than this for Redis, then falls back
PREFIX = "synelo:rl:"

# KEYS: the buckets; ARGV: each bucket's interval, tolerance and floor (how far ahead of now
# the caller knows its TAT to be at least, 0 if it knows nothing Redis does not), in
# microseconds; a floor past a bucket's TAT is stored even if the request is refused.
# Returns {0, 0, leads...} when the request may go (and then counts it in every bucket),
# else {the microseconds until it may, the 1-based index of the bucket that refuses
# longest, leads...}; each lead is how far ahead of now a bucket's TAT then stands. Numbers
# stay integers below 2^53, which Lua's doubles hold exactly.
GCRA_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local wait, which = 0, 0
local tats, leads = {}, {}
for i, key in ipairs(KEYS) do
  local tat = math.max(tonumber(redis.call('GET', key)) or now, now)
  local floor = now + tonumber(ARGV[3 * i])
  if floor > tat then
    tat = floor
    redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
  end
  leads[i] = tat - now
  tats[i] = tat + tonumber(ARGV[3 * i - 2])
  local over = tats[i] - now - tonumber(ARGV[3 * i - 1])
  if over > wait then wait, which = over, i end
end
if wait > 0 then return {math.ceil(wait), which, unpack(leads)} end
for i, key in ipairs(KEYS) do
  leads[i] = tats[i] - now
  redis.call('SET', key, string.format('%.0f', tats[i]),
             'PX', math.ceil(leads[i] / 1000) + 1)
end
return {0, 0, unpack(leads)}
"""


@dataclass(frozen=True)
class Rate:
    """`per_s` requests a second, `burst` of them at once."""

    per_s: float
    burst: float

    @classmethod
    def of(cls, per_s: float | None) -> Rate | None:
        """The rate of a setting (None: unlimited), with a burst of `BURST_S` seconds."""
        return None if per_s is None else cls(per_s, max(1.0, per_s * BURST_S))

    @property
    def interval(self) -> float:
        return 1.0 / self.per_s

    @property
    def tolerance(self) -> float:
        """How far ahead of now a key's TAT may run (b requests' worth of intervals)."""
        return self.burst * self.interval


Bucket = tuple[str, Rate]
Verdict = tuple[float, int]  # (seconds to wait, 0.0 to go now; index of the refusing bucket)
GO: Verdict = (0.0, -1)


class Limiter(Protocol):
    async def acquire(self, buckets: Sequence[Bucket]) -> Verdict:
        """`GO` if the request may go (it is counted in every bucket), else how long it
        must wait and the bucket that refuses it longest."""
        ...

    async def close(self) -> None: ...


class LocalLimiter:
    """GCRA in a dict of this process (thread-safe; keys are swept once their bucket is
    full again, so the dict holds only the keys active within the last burst)."""

    SWEEP_EVERY = 10_000  # new keys between two sweeps

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tats: dict[str, float] = {}
        self._lock = threading.Lock()
        self._new_keys = 0

    def acquire_now(self, buckets: Sequence[Bucket]) -> Verdict:
        with self._lock:
            now = self._clock()
            verdict = GO
            tats = []
            for i, (key, rate) in enumerate(buckets):
                tat = max(self._tats.get(key, now), now) + rate.interval
                if tat - now - rate.tolerance > verdict[0]:
                    verdict = (tat - now - rate.tolerance, i)
                tats.append(tat)
            if verdict[0] > 0:
                return verdict
            self._store(zip((key for key, _ in buckets), tats, strict=True), now)
            return GO

    def _store(self, tats: Iterable[tuple[str, float]], now: float) -> None:
        """Set keys' TATs (under the lock), sweeping the full buckets now and then."""
        for key, tat in tats:
            if key not in self._tats:
                self._new_keys += 1
            self._tats[key] = tat
        if self._new_keys >= self.SWEEP_EVERY:
            self._new_keys = 0
            self._tats = {k: t for k, t in self._tats.items() if t > now}

    def lead(self, key: str, at: float) -> float:
        """How far ahead of `at` (this limiter's clock) the key's TAT stands, 0 if not."""
        with self._lock:
            return max(0.0, self._tats.get(key, at) - at)

    def remember(self, leads: Iterable[tuple[str, float]], at: float) -> None:
        """Take keys' TATs as another limiter answered them: each `lead` seconds ahead of
        `at` on this limiter's clock. A TAT held further ahead stays: it counts what this
        limiter let through since that answer was made."""
        with self._lock:
            self._store(
                (
                    (key, at + lead)
                    for key, lead in leads
                    if lead > 0 and at + lead > self._tats.get(key, at)
                ),
                at,
            )

    async def acquire(self, buckets: Sequence[Bucket]) -> Verdict:
        return self.acquire_now(buckets)

    async def close(self) -> None:
        pass


class RedisLimiter:
    """GCRA on a shared Redis: every worker and host of the service counts in the same
    keys. While Redis is unreachable, this worker's `LocalLimiter` stands in."""

    def __init__(self, url: str, prefix: str = PREFIX) -> None:
        from redis.asyncio import Redis
        from redis.exceptions import RedisError

        self.prefix = prefix
        self._failures = (RedisError, OSError)
        self._redis: Redis = Redis.from_url(
            url,
            socket_timeout=REDIS_TIMEOUT_S,
            socket_connect_timeout=REDIS_TIMEOUT_S,
            health_check_interval=30,
        )
        self._script = self._redis.register_script(GCRA_LUA)
        self._fallback = LocalLimiter()  # mirrors Redis's answers; stands in while it is away
        # the keys the fallback let through, each with when it last did: Redis has not seen
        # those requests until a check sent after them gives it the key's TAT as a floor
        self._unsynced: dict[str, float] = {}
        self._unsynced_added = 0  # keys added since `_unsynced` was last swept
        self._down_until = 0.0
        self._failed_at = -math.inf  # when a check last failed

    async def acquire(self, buckets: Sequence[Bucket]) -> Verdict:
        asked = time.monotonic()
        if asked < self._down_until:
            return self._fall_back(buckets)
        args: list[int] = []
        for key, rate in buckets:
            floor = self._fallback.lead(key, asked) if key in self._unsynced else 0.0
            args += [round(rate.interval * 1e6), round(rate.tolerance * 1e6), round(floor * 1e6)]
        try:
            keys = [self.prefix + key for key, _ in buckets]
            wait_us, which, *leads_us = await self._script(keys=keys, args=args)
        except self._failures as exc:
            if self._down_until == 0.0:
                log.warning(
                    "rate limits: Redis unreachable (%s); this worker limits on its own "
                    "(per worker) and tries Redis again every %.0f s",
                    exc,
                    RETRY_REDIS_S,
                )
            self._failed_at = time.monotonic()
            self._down_until = self._failed_at + RETRY_REDIS_S
            return self._fall_back(buckets)
        answered = time.monotonic()
        # only a check sent after the last failure says Redis is back: one sent before it
        # that answers late leaves the worker on its own counts until the retry
        if self._down_until and asked > self._failed_at:
            log.warning("rate limits: Redis answers again; the limits are shared again")
            self._down_until = 0.0
        # the mirror takes the answer as of its arrival: ahead of Redis by at most the
        # answer's way back, never behind it (the fallback's bound holds)
        names = [key for key, _ in buckets]
        self._fallback.remember(
            zip(names, (int(lead) / 1e6 for lead in leads_us), strict=True), answered
        )
        for key in names:  # the floor sent carried what the fallback let through before
            if self._unsynced.get(key, math.inf) < asked:
                del self._unsynced[key]
        return (int(wait_us) / 1e6, int(which) - 1) if wait_us else GO

    def _fall_back(self, buckets: Sequence[Bucket]) -> Verdict:
        """This worker's own verdict, going on from the TATs Redis last answered; what it
        lets through is remembered for Redis."""
        verdict = self._fallback.acquire_now(buckets)
        if verdict == GO:
            now = time.monotonic()
            for key, _ in buckets:
                self._unsynced_added += key not in self._unsynced
                self._unsynced[key] = now
            if self._unsynced_added > LocalLimiter.SWEEP_EVERY:  # a long outage: keep it small
                self._unsynced_added = 0
                self._unsynced = {
                    k: t for k, t in self._unsynced.items() if self._fallback.lead(k, now) > 0
                }
        return verdict

    async def close(self) -> None:
        await self._redis.aclose()


class TrustedProxies:
    """The addresses and networks (``10.0.0.0/8``) of SYNELO_TRUSTED_PROXIES."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.networks = []
        for entry in entries:
            try:
                self.networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                raise ValueError(
                    f"SYNELO_TRUSTED_PROXIES: {entry!r} is not an IP address or network"
                ) from None

    def __contains__(self, host: object) -> bool:
        address = _ip(host) if isinstance(host, str) else None
        return address is not None and any(address in net for net in self.networks)

    def __bool__(self) -> bool:
        return bool(self.networks)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as a proxy may write it: bare, ``1.2.3.4:port`` or ``[v6]:port``."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else text
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def client_address(scope: Scope, trusted: TrustedProxies) -> str:
    """Who the client is: the peer, or, when the peer is a trusted proxy, the right-most
    X-Forwarded-For hop that is not a trusted proxy (the hops left of it are whatever the
    client wrote). IPv6 clients count by their /64, which one host usually holds whole."""
    client = scope.get("client")
    host = client[0] if client else ""
    if trusted and host in trusted:
        hops = [
            hop.strip()
            for name, value in scope["headers"]
            if name == b"x-forwarded-for"
            for hop in value.decode("latin-1").split(",")
            if hop.strip()
        ]
        for hop in reversed(hops):
            host = hop
            if hop not in trusted:
                break
    return _address_key(host[:100])


@functools.lru_cache(maxsize=4096)
def _address_key(host: str) -> str:
    """The bucket of a host (remembered: parsing an address costs more than a 429)."""
    address = _ip(host)
    if address is None:
        return host[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def retry_after(wait: float) -> str:
    """The Retry-After header: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))


class RateLimits:
    """The service's limits (`app.state.limits`): one per client address, checked for
    every request but /healthz before anything else, and per token, checked once the token
    is known (requests, and rounds on the round route).

    A refusal is remembered here until it ends: a bucket's TAT never goes back, so until
    then the limiter would refuse again. A flood past its limit is therefore turned away by
    `LimitGate` without asking Redis, reading its body or routing it, which keeps a 429 cheap."""

    def __init__(
        self,
        limiter: Limiter,
        *,
        server_rounds: float | None,
        server_requests: float | None,
        admin_requests: float | None,
        address_requests: float | None,
        trusted_proxies: Sequence[str] = (),
        public_requests: float | None = None,
    ) -> None:
        self.limiter = limiter
        self.trusted = TrustedProxies(trusted_proxies)
        self._address = Rate.of(address_requests)
        self._public = Rate.of(public_requests)
        self._rounds = Rate.of(server_rounds)
        self._requests = {"server": Rate.of(server_requests), "admin": Rate.of(admin_requests)}
        self._failed = Rate(FAILED_TOKENS, FAILED_BURST)
        self._refused: dict[str, float] = {}  # bucket key → when its refusal ends (monotonic)

    @classmethod
    def from_settings(cls, settings: Settings, limiter: Limiter | None = None) -> RateLimits:
        """Shared through Redis when SYNELO_REDIS_URL is set, else per worker."""
        if limiter is None:
            limiter = RedisLimiter(settings.redis_url) if settings.redis_url else LocalLimiter()
        return cls(
            limiter,
            server_rounds=settings.rate_server_rounds,
            server_requests=settings.rate_server_requests,
            admin_requests=settings.rate_admin_requests,
            address_requests=settings.rate_address_requests,
            trusted_proxies=settings.trusted_proxies,
            public_requests=settings.rate_public_requests,
        )

    async def address(self, scope: Scope) -> float:
        """0.0, or the seconds the request's client address must wait: its limit on every
        request, and the stricter one on the public read endpoints (`PUBLIC_PREFIX`)."""
        public = self._public if is_public_path(scope["path"]) else None
        if self._address is None and public is None:
            return 0.0
        address = client_address(scope, self.trusted)
        buckets: list[Bucket] = []
        if self._address is not None:
            buckets.append(("a:" + address, self._address))
        if public is not None:
            buckets.append(("p:" + address, public))
        wait, _ = await self._acquire(buckets)
        return wait

    async def token(self, token: str, role: str, rounds: bool = False) -> tuple[float, str]:
        """(0.0, "") or the seconds this token must wait and what it sent too many of
        ("requests" or "rounds")."""
        key = token_key(token)
        named: list[tuple[str, Bucket]] = []
        requests = self._requests.get(role)
        if requests is not None:
            named.append(("requests", ("t:" + key, requests)))
        if rounds and role == "server" and self._rounds is not None:
            named.append(("rounds", ("r:" + key, self._rounds)))
        if not named:
            return 0.0, ""
        wait, which = await self._acquire([bucket for _, bucket in named])
        return (wait, named[which][0]) if wait > 0 else (0.0, "")

    async def failed(self, scope: Scope) -> None:
        """Count an invalid token presented from the request's client address. The one
        past `FAILED_BURST` at once, or `FAILED_TOKENS` a second, is refused, and then
        `failing` says how long the address must wait: until two more fit, so that the
        table is read for the one that fits and the next refused one, at the rate."""
        key = "f:" + client_address(scope, self.trusted)
        wait, _ = await self._acquire([(key, self._failed)])
        if wait > 0:
            self._refused[key] = time.monotonic() + wait + self._failed.interval

    def failing(self, scope: Scope) -> float:
        """0.0, or the seconds until the request's client address may present a token the
        worker does not know again (from the remembered refusals only)."""
        until = self._refused.get("f:" + client_address(scope, self.trusted), 0.0)
        return max(0.0, until - time.monotonic())

    def refused(self, token: str, rounds: bool) -> tuple[float, str]:
        """Like `token`, from the remembered refusals only (no limiter, no role needed)."""
        key = token_key(token)
        now = time.monotonic()
        for what, bucket in (("requests", "t:" + key), ("rounds", "r:" + key)):
            until = self._refused.get(bucket, 0.0)
            if until > now and (rounds or what == "requests"):
                return until - now, what
        return 0.0, ""

    async def _acquire(self, buckets: list[Bucket]) -> Verdict:
        now = time.monotonic()
        for i, (key, _) in enumerate(buckets):
            until = self._refused.get(key, 0.0)
            if until > now:
                return until - now, i
        wait, which = await self.limiter.acquire(buckets)
        if wait > 0:
            if len(self._refused) >= 10_000:  # a cache: forgetting only costs a check
                self._refused.clear()
            # from before the check: this refusal ends no later than the limiter's
            self._refused[buckets[which][0]] = now + wait
        return wait, which

    async def close(self) -> None:
        await self.limiter.close()


def token_key(token: str) -> str:
    """A token's bucket name: not the token, nor the SHA-256 the token table stores."""
    return hashlib.sha256(b"synelo-rate-limit:" + token.encode()).hexdigest()[:32]


def _is_round_report(scope: Scope) -> bool:
    """POST /v1/pools/{pool}/rounds: a remembered refusal of rounds applies (the route's
    own check, in `require`, is what counts a round)."""
    path: str = scope["path"]
    return (
        scope["method"] == "POST"
        and path.startswith("/v1/pools/")
        and path.endswith("/rounds")
        and path.count("/") == 4
    )


def bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


class LimitGate:
    """ASGI middleware, outside the body limit and the routes: the per-address limit, before
    the body is read or the token looked up, so that a flood without a (valid) token is
    limited too; then a token already known to be over its limit is turned away at once, and
    so is a token the worker does not know (`known`: configured, or found lately) from an
    address that presented too many invalid ones (`FAILED_TOKENS`), before the token table
    is read. /healthz is never limited; the public paths, which need no token, do not
    care about the one they are sent."""

    def __init__(
        self, app: ASGIApp, limits: RateLimits, known: Callable[[str], bool] | None = None
    ) -> None:
        self.app = app
        self.limits = limits
        self.known = known

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != "/healthz":
            wait = await self.limits.address(scope)
            if wait > 0:
                await too_many(send, wait, "too many requests from this address")
                return
            token = bearer(scope)
            if token:
                wait, what = self.limits.refused(token, _is_round_report(scope))
                if wait > 0:
                    await too_many(send, wait, f"too many {what} with this token")
                    return
                if self.known is not None and not is_public_path(scope["path"]):
                    wait = self.limits.failing(scope)
                    if wait > 0 and not self.known(token):
                        await too_many(send, wait, "too many invalid tokens from this address")
                        return
        await self.app(scope, receive, send)


async def too_many(send: Send, wait: float, detail: str) -> None:
    """A 429 with Retry-After and synelo's JSON error body."""
    body = orjson.dumps({"detail": f"{detail}; retry after {retry_after(wait)} s"})
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", retry_after(wait).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
