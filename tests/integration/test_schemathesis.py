"""schemathesis over the OpenAPI document, against a real server on SQLite (issue 16).

Every operation gets a bounded number of generated requests, valid by the schema (positive)
and invalid (negative), each with one of the server's stored tokens: an admin's, or a server
token scoped to two of the pools (issue 36), against pools that exist (one of SteamID64s,
one of text ids, one with another model, which the scoped token may not use). The answers
must never be a 5xx, and every status, content type and body must be one the document
declares. Deleting a pool is left out (it would delete the pools the other cases need;
tests/integration/test_hardening.py covers it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store
from tests.conftest import ADMIN, serving, steam

POOLS = ("st", "tx", "ts")  # steam ids (synelo), text ids, trueskill
SCOPED = "schemathesis-server-token-st-tx"  # a server token for "st" and "tx" only
TOKENS = (ADMIN, SCOPED)
EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A server on a SQLite database of its own, its pools made, jobs on threads; its
    tokens are the token table's (an admin's, and a server token scoped to two pools)."""
    folder: Path = tmp_path_factory.mktemp("schemathesis")
    engine = create_store_engine(f"sqlite:///{folder / 'synelo.db'}")
    migrate(engine)
    store = Store(engine)
    store.add_token("admin", ADMIN, "admin")
    store.add_token("server", SCOPED, "scoped", ["st", "tx"])
    app = create_app(
        Settings(
            data_dir=folder,
            autotune_check_s=0,
            rate_server_requests=None,  # the fuzzer sends faster than any client would
            rate_server_rounds=None,
            rate_address_requests=None,
        ),
        store=store,
    )
    app.state.jobs.separate_process = False  # a PATCH's re-rate: a thread, not a process
    with serving(app) as url:
        import httpx

        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}) as c:
            for name, extra in (
                ("st", {}),
                ("tx", {"player_ids": "text"}),
                ("ts", {"model": "trueskill"}),
            ):
                assert c.post("/v1/pools", json={"name": name, **extra}).status_code == 201
            for pool in POOLS:
                ids = [steam(n) for n in range(1, 5)] if pool != "tx" else ["a", "b", "c", "d"]
                r = c.post(
                    f"/v1/pools/{pool}/rounds",
                    json={
                        "round_id": "r1",
                        "server_id": "s",
                        "winner": "A",
                        "teams": {"A": ids[:2], "B": ids[2:]},
                    },
                )
                assert r.status_code == 201, r.text
        schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
        yield url, schema


def _operations(schema: Any) -> list[Any]:
    out = []
    for result in schema.get_all_operations():
        op = result.ok()
        if (op.method.upper(), op.path) != ("DELETE", "/v1/pools/{pool}"):
            out.append(op)
    return out


def test_no_server_error_and_no_schema_violation(api: tuple[str, Any]) -> None:
    url, schema = api
    operations = _operations(schema)
    assert len(operations) >= 20
    seen: dict[str, set[int]] = {}
    used: set[str] = set()
    for op in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = op.as_strategy(generation_mode=mode)
            if "pool" in {p.name for p in op.path_parameters}:
                strategy = strategy.flatmap(_in_a_pool)
            strategy = st.tuples(strategy, st.sampled_from(TOKENS))
            try:
                _run(strategy, url, seen.setdefault(f"{op.method.upper()} {op.path}", set()), used)
            except Unsatisfiable:
                # an operation without parameters or body has no invalid request to make
                assert mode == GenerationMode.NEGATIVE, op.path
    # the cases reached the routes, not only the pool lookup: some were answered 2xx
    answered = {label for label, codes in seen.items() if any(200 <= c < 300 for c in codes)}
    assert len(answered) >= len(operations) // 2, seen
    assert used == set(TOKENS)


def _in_a_pool(case: Any) -> st.SearchStrategy[Any]:
    """Most cases aim at a pool that exists (a random name is only ever a 404)."""

    def aim(pool: str | None) -> Any:
        if pool is not None:
            case.path_parameters = {**(case.path_parameters or {}), "pool": pool}
        return case

    return st.sampled_from([*POOLS, None]).map(aim)


def _run(
    strategy: st.SearchStrategy[tuple[Any, str]], url: str, codes: set[int], tokens: set[str]
) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def check(case_and_token: tuple[Any, str]) -> None:
        case, token = case_and_token
        response = case.call_and_validate(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, checks=CHECKS
        )
        codes.add(response.status_code)
        tokens.add(token)

    check()
