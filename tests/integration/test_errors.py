"""Errors a client can provoke: a lone surrogate is a 422, and a run of 500s logs one
traceback, not one each."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine
from synelo.store.repository import Store
from tests.conftest import ADMIN, SERVER, _free_port, steam

JSON = {"Content-Type": "application/json"}


def test_lone_surrogate_in_a_refused_field_is_a_422(admin: httpx.Client) -> None:
    """The pool name's pattern refuses it; the 422 used to echo it, fail to encode it, and
    become a 500."""
    r = admin.post("/v1/pools", content=b'{"name": "a\\udc00", "team_size": 4}', headers=JSON)
    assert r.status_code == 422, r.text
    (error,) = r.json()["detail"]
    assert error["loc"] == ["body", "name"]
    assert error["input"] == "a\\udc00"  # escaped, as text


def raw_json(document: object) -> bytes:
    """`document` as JSON, with each "<Dxxx>" in it written as the escape \\uDxxx (which
    Python cannot write for a lone surrogate)."""
    return re.sub(r"<(D[0-9A-F]{3})>", r"\\u\1", json.dumps(document)).encode()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("server_id", "s<D800>"),  # accepted by the model: it used to reach the database
        ("map", "<DFFF>-<D83D>"),
        ("teams", {"A": ["<DC00>"], "B": [steam(2)]}),
        ("names", {steam(1): "<DC00>"}),
        ("time_played", {"<DC00>": 1.0}),  # as a key
    ],
)
def test_lone_surrogate_in_any_field_of_a_round_is_a_422(
    server: httpx.Client, pool: str, field: str, value: object
) -> None:
    body = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
        field: value,
    }
    r = server.post(f"/v1/pools/{pool}/rounds", content=raw_json(body), headers=JSON)
    assert r.status_code == 422, r.text
    (error,) = r.json()["detail"]
    assert error["loc"][:2] == ["body", field]
    assert "surrogate" in error["msg"]


def test_a_surrogate_pair_is_a_character_not_an_error(server: httpx.Client, pool: str) -> None:
    """An escaped pair (here U+1F600) is valid JSON text; only a lone half is refused; and
    an escaped backslash followed by `udc00` is six plain characters."""
    body = {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "map": "<D83D><DE00> \\udc00",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }
    r = server.post(f"/v1/pools/{pool}/rounds", content=raw_json(body), headers=JSON)
    assert r.status_code == 201, r.text
    assert r.json()["round_id"] == body["round_id"]


@pytest.fixture
def broken(tmp_path: Path) -> Iterator[tuple[str, logging.Logger]]:
    """The app under uvicorn over a database that was never migrated: every pool route
    fails inside the store, a real 500."""
    store = Store(create_store_engine(f"sqlite:///{tmp_path / 'empty.db'}"))
    settings = Settings(data_dir=tmp_path, admin_tokens=[ADMIN], server_tokens=[SERVER])
    app = create_app(settings, store=store)
    app.state.error_log.interval_s = 1.0
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", logging.getLogger("synelo")
    server.should_exit = True
    thread.join(10)


def test_a_run_of_500s_logs_one_traceback_per_place_and_interval(
    broken: tuple[str, logging.Logger],
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
) -> None:
    url, _ = broken
    headers = {"Authorization": f"Bearer {ADMIN}"}
    caplog.set_level(logging.INFO)
    uvicorn_log = logging.getLogger("uvicorn.error")  # it does not propagate to caplog's
    uvicorn_log.addHandler(caplog.handler)
    request.addfinalizer(lambda: uvicorn_log.removeHandler(caplog.handler))
    with httpx.Client(base_url=url, headers=headers) as c:
        for _ in range(20):
            assert c.get("/v1/pools").status_code == 500
        # a second place of failure is logged at once, apart from the first
        assert c.post("/v1/pools", json={"name": "x"}).status_code == 500
        tracebacks = [r for r in caplog.records if r.exc_info]
        # one per place: not 21, and not twice each (uvicorn's own "Exception in ASGI
        # application" used to follow every one)
        assert len(tracebacks) == 2, [r.getMessage() for r in tracebacks]
        assert all(r.name == "synelo" for r in tracebacks)
        time.sleep(1.1)  # the interval passes: the next one is logged with the count
        assert c.get("/v1/pools").status_code == 500
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 3
    assert "19 more" in tracebacks[-1].getMessage()
