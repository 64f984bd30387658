"""When each stored token was last used (issue 37): noted by the token's lookup, written at
most once a minute a token so that a lookup in steady use stays a read, on SQLite and
PostgreSQL; `synelo token list` shows it (tests/integration/test_operations.py)."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import Engine, event

from synelo.config import Settings
from synelo.ratings import SynEloParams
from synelo.service.app import create_app
from synelo.store.repository import Store
from synelo.store.tokens import hash_token
from tests.conftest import MovableClock, serving, steam


@contextmanager
def token_writes(engine: Engine) -> Iterator[list[str]]:
    """The statements that write the token table while the block runs."""
    seen: list[str] = []

    def note(conn, cursor, statement, parameters, context, many) -> None:
        if statement.lstrip().upper().startswith("UPDATE API_TOKENS"):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def test_a_tokens_use_is_noted_at_most_once_a_minute(backend: Engine, tmp_path: Path) -> None:
    clock = MovableClock()
    store = Store(backend, clock)
    label, token, pool = f"use-{uuid.uuid4().hex[:8]}", secrets.token_urlsafe(32), uuid.uuid4().hex
    store.add_token("server", token, label)
    store.create_pool(pool, 2, SynEloParams(theta=200))

    def last_used() -> datetime | None:
        return next(t.last_used_at for t in store.list_tokens() if t.label == label)

    assert last_used() is None  # made, not used yet
    # a real service on the token table (no configured token): the first use is noted
    app = create_app(Settings(data_dir=tmp_path), store=store)
    with serving(app) as url:
        asked = clock()
        r = httpx.get(
            f"{url}/v1/pools/{pool}/players/{steam(1)}",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 200, r.text
    first = last_used()
    assert first is not None and asked <= first <= clock()

    # within the minute, lookups (a worker's, each time its 1 s memory of the token lapses)
    # only read; past it, the next one writes once
    digest = hash_token(token)
    clock.offset = first + timedelta(seconds=50) - datetime.now(UTC)
    with token_writes(backend) as writes:
        for _ in range(50):
            assert store.use_token(digest) == ("server", label, None)
    assert writes == [] and last_used() == first
    clock.offset = first + timedelta(seconds=61) - datetime.now(UTC)
    with token_writes(backend) as writes:
        now = clock()
        for _ in range(50):
            assert store.use_token(digest) is not None
    assert len(writes) == 1
    noted = last_used()
    assert noted is not None and now <= noted <= clock()
    assert store.use_token(hash_token("not a token")) is None
