"""The fair share (synelo.service.middleware.fairshare): a client's requests past its share
wait, in order, before the app sees them, while every other client's go straight in.

Driven as ASGI on one event loop, with an app whose requests each wait for the test to let
them finish: what is asserted is who is in the app, never how long anything took."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.service.middleware.fairshare import PER_CLIENT, FairShare
from synelo.service.middleware.ratelimit import TrustedProxies
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store


class HeldApp:
    """An ASGI app that holds each request until `finish(name)`: `inside` lists the requests
    in it, by the name their path carries."""

    def __init__(self) -> None:
        self.inside: list[str] = []
        self.release: dict[str, asyncio.Event] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        name = scope["path"].rsplit("/", 1)[1]
        self.release[name] = asyncio.Event()
        self.inside.append(name)
        try:
            await self.release[name].wait()
        finally:
            self.inside.remove(name)

    def finish(self, name: str) -> None:
        self.release[name].set()


def scope(name: str, token: str | None, host: str = "192.0.2.1", path: str = "/v1/x/") -> dict:
    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    return {"type": "http", "path": path + name, "headers": headers, "client": (host, 1234)}


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def nothing() -> dict:
    return {"type": "http.disconnect"}


async def ignore(_: Any) -> None:
    pass


def test_a_token_past_its_share_waits_in_order_while_others_go_in() -> None:
    async def scenario() -> None:
        app = HeldApp()
        gate = FairShare(app, TrustedProxies([]), per_client=2)
        flood = [
            asyncio.create_task(gate(scope(f"f{i}", "flood"), nothing, ignore)) for i in range(5)
        ]
        await settle()
        assert app.inside == ["f0", "f1"] and gate.waiting() == 3
        other = asyncio.create_task(gate(scope("o", "other"), nothing, ignore))
        await settle()
        assert app.inside == ["f0", "f1", "o"]  # another token is not behind the flood
        app.finish("f1")
        await settle()
        assert app.inside == ["f0", "o", "f2"] and gate.waiting() == 2  # the next, in order
        for name in ("o", "f0", "f2", "f3", "f4"):
            app.finish(name)
            await settle()
        await asyncio.gather(other, *flood)
        assert not app.inside and gate.waiting() == 0
        assert gate.clients() == 0  # an idle client holds no entry

    asyncio.run(scenario())


def test_without_a_token_the_client_address_has_the_share() -> None:
    """A flood of unknown tokens is a token each: the gate of invalid tokens (test_rate_limits)
    bounds that one; without a token, the address is the client."""

    async def scenario() -> None:
        app = HeldApp()
        gate = FairShare(app, TrustedProxies([]), per_client=1)
        tasks = [
            asyncio.create_task(gate(scope(name, None, host), nothing, ignore))
            for name, host in (("a1", "192.0.2.1"), ("a2", "192.0.2.1"), ("b1", "192.0.2.2"))
        ]
        healthz = asyncio.create_task(gate(scope("healthz", None, path="/"), nothing, ignore))
        await settle()
        assert app.inside == ["a1", "b1", "healthz"]  # /healthz never waits
        for name in ("a1", "a2", "b1", "healthz"):
            app.finish(name)
            await settle()
        await asyncio.gather(healthz, *tasks)

    asyncio.run(scenario())


def app_request(name: str, host: str) -> dict[str, Any]:
    """A whole HTTP scope for `GET /held/{name}` from `host`, as uvicorn sends it."""
    return {
        **scope(name, None, host, path="/held/"),
        "method": "GET",
        "scheme": "http",
        "http_version": "1.1",
        "raw_path": f"/held/{name}".encode(),
        "query_string": b"",
        "root_path": "",
        "server": ("127.0.0.1", 8000),
        "asgi": {"version": "3.0"},
    }


async def empty_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def until(done: Callable[[], bool]) -> None:
    """Wait, up to 5 s, for `done()`."""
    for _ in range(500):
        if done():
            return
        await asyncio.sleep(0.01)


def test_the_app_built_with_default_settings_has_the_fair_share(tmp_path: Path) -> None:
    """The middleware above is only fair if the app installs it: create_app with default
    settings (SYNELO_FAIR_SHARE 2), one address's third request waits outside a route while
    another address's goes in; nothing failed when create_app stopped installing it. Driven
    as ASGI through the whole app, with a route added that holds each request."""
    engine = create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}")
    migrate(engine)
    settings = Settings(data_dir=tmp_path, admin_tokens=["a" * 43])
    assert settings.fair_share == PER_CLIENT == 2  # the default this test is about
    app = create_app(settings, store=Store(engine))
    held = HeldApp()

    async def hold(name: str) -> dict[str, str]:
        held.inside.append(name)
        held.release[name] = asyncio.Event()
        try:
            await held.release[name].wait()
        finally:
            held.inside.remove(name)
        return {"name": name}

    app.add_api_route("/held/{name}", hold)
    statuses: list[int] = []

    async def record(message: Any) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def scenario() -> None:
        flood = [
            asyncio.create_task(app(app_request(f"a{i}", "192.0.2.1"), empty_body, record))
            for i in range(3)
        ]
        await until(lambda: len(held.inside) >= 2)
        other = asyncio.create_task(app(app_request("b0", "192.0.2.2"), empty_body, record))
        await until(lambda: "b0" in held.inside)
        await settle()
        assert sorted(held.inside) == ["a0", "a1", "b0"]  # a2 waits; the other address not
        held.finish("a0")
        await until(lambda: "a2" in held.inside)
        for name in ("a1", "a2", "b0"):
            held.finish(name)
        await asyncio.gather(other, *flood)

    asyncio.run(scenario())
    assert statuses == [200] * 4
    engine.dispose()
