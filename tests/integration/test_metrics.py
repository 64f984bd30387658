"""GET /metrics (Prometheus) and the access log, in-process and under `synelo serve`."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ADMIN, SERVER, LiveServer, steam
from tests.integration.test_cli import SYNELO, _free_port, run
from tests.integration.test_connection_limits import wait_until_up

# wall-clock bounds: `make test` runs this module alone, after the parallel part
pytestmark = pytest.mark.serial

ROUNDS_ROUTE = "/v1/pools/{pool}/rounds"


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and labels."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scrape: dict, name: str, **labels: str) -> float:
    return scrape.get((name, frozenset(labels.items())), 0.0)


def round_body(round_id: str | None = None) -> dict:
    return {
        "round_id": round_id or uuid.uuid4().hex,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }


def test_metrics_need_an_admin_token(live: LiveServer) -> None:
    assert httpx.get(f"{live.url}/metrics").status_code == 401
    with live.client(SERVER) as c:
        assert c.get("/metrics").status_code == 403
    with live.client(ADMIN) as c:
        r = c.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert "synelo_writer_queue_depth" in r.text
    with live.client(ADMIN) as c:  # not an API route: not in the OpenAPI document
        assert "/metrics" not in c.get("/openapi.json").json()["paths"]


def test_metrics_count_rounds_latency_and_errors_by_route(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    before = samples(admin.get("/metrics").text)
    first = round_body()
    assert server.post(f"/v1/pools/{pool}/rounds", json=first).status_code == 201
    assert server.post(f"/v1/pools/{pool}/rounds", json=round_body()).status_code == 201
    assert server.post(f"/v1/pools/{pool}/rounds", json=first).status_code == 200  # a retry
    assert server.post(f"/v1/pools/{pool}/rounds", json={"winner": "A"}).status_code == 422
    assert server.post("/v1/pools/no-such-pool/rounds", json=round_body()).status_code == 404
    assert admin.get("/no/such/route").status_code == 404
    after = samples(admin.get("/metrics").text)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("synelo_rounds_total", pool=pool, outcome="rated") == 2
    assert delta("synelo_rounds_total", pool=pool, outcome="replayed") == 1
    assert (
        delta("synelo_http_request_duration_seconds_count", method="POST", route=ROUNDS_ROUTE) == 5
    )
    assert (
        delta("synelo_http_errors_total", method="POST", route=ROUNDS_ROUTE, status_class="4xx")
        == 2
    )
    assert delta("synelo_http_errors_total", method="GET", route="unmatched", status_class="4xx")
    # routes are templates: no path, and so no pool name, is a label value of its own
    assert not any(
        dict(labels).get("route", "").startswith(("/v1/pools/no-such", f"/v1/pools/{pool}"))
        for _, labels in after
    )
    assert not any(dict(labels).get("pool") == "no-such-pool" for _, labels in after)


def test_a_body_refused_before_routing_is_counted_on_its_route(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, pool: str
) -> None:
    """A 413 is answered before the router runs; it still counts on the route's template."""
    before = samples(admin.get("/metrics").text)
    big = b"x" * (live.settings.max_body_bytes + 1)
    assert server.post(f"/v1/pools/{pool}/rounds", content=big).status_code == 413
    after = samples(admin.get("/metrics").text)
    labels = {"method": "POST", "route": ROUNDS_ROUTE, "status_class": "4xx"}
    assert value(after, "synelo_http_errors_total", **labels) == (
        value(before, "synelo_http_errors_total", **labels) + 1
    )


def _serve_env(data: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(
        SYNELO_DATA_DIR=str(data),
        SYNELO_DATABASE_URL=url,
        SYNELO_ADMIN_TOKENS=ADMIN,
        SYNELO_SERVER_TOKENS=SERVER,
        SYNELO_METRICS_PUBLIC="true",
        SYNELO_RATE_SERVER_ROUNDS="100000",
        SYNELO_RATE_SERVER_REQUESTS="100000",
        SYNELO_RATE_ADDRESS_REQUESTS="100000",
        TMPDIR=str(data),  # where `serve` makes the metrics' folder, to look into
    )
    return env


@pytest.mark.postgres
def test_metrics_add_up_across_workers_and_the_access_log(
    tmp_path: Path, pg_schema_url: str
) -> None:
    """`serve --workers 2`: whichever worker answers a scrape, it counts every worker's
    rounds; SYNELO_METRICS_PUBLIC lets a scrape in without a token; --access-log writes a
    line per request."""
    env = _serve_env(tmp_path, pg_schema_url)
    migrated = run(["migrate"], tmp_path, SYNELO_DATABASE_URL=pg_schema_url)
    assert migrated.returncode == 0, migrated.stderr
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [*SYNELO, "serve", "--port", str(port), "--workers", "2", "--access-log"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(url, proc)
        pool = f"w{uuid.uuid4().hex[:12]}"
        auth = {"Authorization": f"Bearer {ADMIN}"}
        # public: public metrics name no private pool (tests/integration/test_scopes.py)
        made = httpx.post(f"{url}/v1/pools", json={"name": pool, "public": True}, headers=auth)
        assert made.is_success

        def submit(_: int) -> int:
            # a connection each, so that both workers take some
            return httpx.post(
                f"{url}/v1/pools/{pool}/rounds",
                json=round_body(),
                headers={"Authorization": f"Bearer {SERVER}"},
            ).status_code

        # a path that decodes to a line break: logged as sent, it cannot forge a log line
        assert httpx.get(f"{url}/v1/pools/x%0Aforged%20line").status_code == 401
        # batches of 60 until both workers have taken some: the second may still be starting
        # when the first answers, and on a busy machine one worker can accept whole batches
        sent, deadline = 0, time.monotonic() + 60
        with ThreadPoolExecutor(8) as threads:
            while True:
                assert list(threads.map(submit, range(60))) == [201] * 60
                sent += 60
                (folder,) = tmp_path.glob("synelo-metrics-*")
                writers = {p.name for p in folder.glob("counter_*.db")}
                if len(writers) >= 2 or time.monotonic() > deadline:
                    break
        assert len(writers) >= 2, writers  # both workers counted rounds
        for _ in range(6):  # a new connection each: either worker may answer
            scrape = samples(httpx.get(f"{url}/metrics").text)  # public: no token
            assert value(scrape, "synelo_rounds_total", pool=pool, outcome="rated") == sent
            assert (
                value(
                    scrape,
                    "synelo_http_request_duration_seconds_count",
                    method="POST",
                    route=ROUNDS_ROUTE,
                )
                >= sent
            )
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert not folder.exists()  # removed when the service stops
    lines = [line for line in out.splitlines() if f"/v1/pools/{pool}/rounds" in line]
    assert len(lines) == sent, out[-2000:] + err[-2000:]
    assert all('"POST /v1/pools/' in line and '" 201 ' in line for line in lines)
    assert all(line.rstrip().endswith(" ms") and "127.0.0.1:" in line for line in lines)
    assert '"GET /v1/pools/x%0Aforged%20line" 401 ' in out
    assert not any(line.startswith("forged") for line in out.splitlines())


def test_no_access_log_unless_switched_on(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env["SYNELO_DATA_DIR"] = str(tmp_path)
    port = _free_port()
    proc = subprocess.Popen(
        [*SYNELO, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", proc)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert "/healthz" not in out + err
    assert "Uvicorn running" in err  # the log itself works
