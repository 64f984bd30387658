"""The defects of the second outside probe (issue 36), each kept fixed, over real HTTP on
both databases: times out of range, ids a URL cannot hold, the smaller ones. The security
headers are tests/integration/test_security_headers.py's."""

from __future__ import annotations

import html
import inspect
import json
import socket
import stat
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy import event, func, select

from synelo.store import checkpoint
from synelo.store.tables import journal, pools, rounds
from tests.conftest import LiveServer, steam, synelo_serve
from tests.integration.test_cli import run
from tests.integration.test_rerate import wait


def _pool(admin: httpx.Client, **extra: object) -> str:
    name = f"g{uuid.uuid4().hex[:10]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 1, **extra})
    assert r.status_code == 201, r.text
    return name


def _stored(live: LiveServer, name: str) -> tuple[int, int]:
    """The pool's rounds and journal rows."""
    with live.store.engine.connect() as conn:
        pool_id = conn.execute(select(pools.c.id).where(pools.c.name == name)).scalar_one()
        return (
            conn.execute(select(func.count()).where(rounds.c.pool_id == pool_id)).scalar_one(),
            conn.execute(select(func.count()).where(journal.c.pool_id == pool_id)).scalar_one(),
        )


def _round(**fields: object) -> dict:
    return {
        "round_id": uuid.uuid4().hex,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
        **fields,
    }


@pytest.mark.parametrize("field", ["started_at", "ended_at"])
@pytest.mark.parametrize("moment", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_a_time_outside_the_range_in_utc_is_a_422(
    live: LiveServer, admin: httpx.Client, field: str, moment: str
) -> None:
    """Valid times with a zone that fall outside year 1–9999 in UTC: a 500 from
    astimezone(UTC), which clients retry for ever; now a 422 naming the field."""
    name = _pool(admin)
    r = admin.post(f"/v1/pools/{name}/rounds", json=_round(**{field: moment}))
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", field]
    assert "UTC" in r.json()["detail"][0]["msg"]
    assert _stored(live, name) == (0, 0)


def test_times_at_the_edges_of_the_range_are_kept_in_utc(
    live: LiveServer, admin: httpx.Client
) -> None:
    name = _pool(admin)
    body = _round(started_at="0001-01-01T14:00:00+14:00", ended_at="9999-12-31T09:59:59-14:00")
    r = admin.post(f"/v1/pools/{name}/rounds", json=body)
    assert r.status_code == 201, r.text
    with live.store.engine.connect() as conn:
        report = json.loads(
            conn.execute(
                select(rounds.c.report).where(rounds.c.round_id == body["round_id"])
            ).scalar_one()
        )
    assert report["started_at"] == "0001-01-01T00:00:00Z"
    assert report["ended_at"] == "9999-12-31T23:59:59Z"


SLASHED = ["srv1/2026-11-28/1", "a%2Fb/c?d#e", "/", "./..", "x/" * 63 + "yz"]


@pytest.mark.parametrize("round_id", SLASHED)
def test_a_round_id_with_slashes_is_reachable_everywhere(
    live: LiveServer, admin: httpx.Client, threaded_jobs: None, round_id: str
) -> None:
    """ "srv1/2026-11-28/1" was rated, then void, unvoid, the public round JSON and the
    round page all answered 404, and the player page's link led nowhere: the path's %2F
    was taken for a '/'. Every id is now reached as one segment, its '/' sent as %2F (the
    longest one, 128 characters, too)."""
    name = _pool(admin, public=True)
    body = _round(round_id=round_id)
    assert admin.post(f"/v1/pools/{name}/rounds", json=body).status_code == 201
    for n in (3, 4):  # a round after it, so the void has something to re-rate
        other = _round(teams={"A": [steam(1)], "B": [steam(n)]})
        assert admin.post(f"/v1/pools/{name}/rounds", json=other).status_code == 201
    segment = quote(round_id, safe="")
    shown = admin.get(f"/v1/public/pools/{name}/rounds/{segment}")
    assert shown.status_code == 200, shown.text
    assert shown.json()["round_id"] == round_id
    page = admin.get(f"/pools/{name}/rounds/{segment}")
    assert page.status_code == 200 and html.escape(round_id) in page.text
    player = admin.get(f"/pools/{name}/players/{steam(2)}")
    assert f'href="/pools/{name}/rounds/{segment}"' in player.text
    wait(admin, name, admin.post(f"/v1/pools/{name}/rounds/{segment}/void", json={"reason": "x"}))
    assert admin.get(f"/v1/public/pools/{name}/rounds/{segment}").json()["voided"] is True
    wait(admin, name, admin.post(f"/v1/pools/{name}/rounds/{segment}/unvoid", json={}))
    assert admin.get(f"/v1/public/pools/{name}/rounds/{segment}").json()["voided"] is False


def test_a_round_id_path_is_checked_once_decoded(admin: httpx.Client) -> None:
    name = _pool(admin)
    too_long = quote("x/" * 64 + "y", safe="")  # 129 characters once decoded
    for path in (too_long, "a%2Fb%00c"):
        r = admin.post(f"/v1/pools/{name}/rounds/{path}/void", json={"reason": "x"})
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["loc"] == ["path", "round_id"]
    r = admin.post(
        f"/v1/pools/{name}/rounds/{quote('no/such', safe='')}/void", json={"reason": "x"}
    )
    assert r.status_code == 404, r.text


@pytest.mark.parametrize("dots", [".", ".."])
def test_dot_ids_are_refused_at_submission(
    live: LiveServer, admin: httpx.Client, dots: str
) -> None:
    """A browser and httpx drop `.` and `..` from a path, even as %2E: a round or a text
    pool's player of such an id could never be reached, so it is refused, naming the
    field, and nothing is stored."""
    name = _pool(admin)
    r = admin.post(f"/v1/pools/{name}/rounds", json=_round(round_id=dots))
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "round_id"], r.text
    text = _pool(admin, player_ids="text")
    for body, loc in (
        (_round(teams={"A": [dots], "B": ["b"]}), ["body", "teams", "A", 0]),
        (_round(teams={"A": ["a"], "B": ["b"]}, names={dots: "x"}), ["body", "names", dots]),
    ):
        r = admin.post(f"/v1/pools/{text}/rounds", json=body)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, r.text
        assert "'.' and '..'" in r.json()["detail"][0]["msg"]
    assert _stored(live, name) == (0, 0) and _stored(live, text) == (0, 0)
    ok = _round(round_id="..a", teams={"A": [".a"], "B": ["..."]})  # other dots are fine
    assert admin.post(f"/v1/pools/{text}/rounds", json=ok).status_code == 201
    assert admin.get(f"/v1/pools/{text}/players/...").json()["rounds_played"] == 1


@pytest.mark.parametrize("dots", [".", ".."])
def test_dot_server_ids_and_pool_names_are_refused(
    live: LiveServer, admin: httpx.Client, dots: str
) -> None:
    """A server id of `.` or `..` was rated (201), then the pages linked
    /pools/P/servers/.., which a browser reads as /pools/P: it is refused as a round id is.
    A pool name matched [A-Za-z0-9_.-]{1,64}, so `.` and `..` were names too."""
    name = _pool(admin)
    r = admin.post(f"/v1/pools/{name}/rounds", json=_round(server_id=dots))
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "server_id"], r.text
    assert "'.' and '..'" in r.json()["detail"][0]["msg"]
    assert _stored(live, name) == (0, 0)
    for ok in ("..a", "..."):  # other dots are fine
        assert admin.post(f"/v1/pools/{name}/rounds", json=_round(server_id=ok)).status_code == 201
    r = admin.post("/v1/pools", json={"name": dots, "team_size": 1})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "name"], r.text
    assert "'.' and '..'" in r.json()["detail"][0]["msg"]
    assert dots not in {p["name"] for p in admin.get("/v1/pools").json()}


@pytest.mark.parametrize("dots", [".", ".."])
def test_the_cli_refuses_dot_pool_names_and_server_ids(tmp_path: Path, dots: str) -> None:
    """`pool create` and `pool import --server-id` take the same ids as the API."""
    assert run(["init"], tmp_path).returncode == 0
    made = run(["pool", "create", dots], tmp_path)
    assert made.returncode == 2 and "'.' and '..'" in made.stderr, made.stderr
    assert "Traceback" not in made.stderr
    history = tmp_path / "h.jsonl"
    history.write_text("")
    imported = run(["pool", "import", "default", str(history), "--server-id", dots], tmp_path)
    assert imported.returncode == 2 and "--server-id" in imported.stderr, imported.stderr
    assert "'.' and '..'" in imported.stderr and "Traceback" not in imported.stderr


def test_the_database_made_by_init_or_restore_is_its_owners_only(tmp_path: Path) -> None:
    """The data folder was 0700 but synelo.db 0644: the file that holds every rating, the
    token digests and the sessions is now 0600 when `init` or `restore` makes it."""
    first = tmp_path / "first"
    assert run(["init"], first).returncode == 0
    made = [first / "synelo.db", *first.glob("synelo.db-*")]
    assert [oct(stat.S_IMODE(f.stat().st_mode)) for f in made] == ["0o600"] * len(made)
    copy = tmp_path / "copy.db"
    assert run(["backup", str(copy)], first).returncode == 0
    second = tmp_path / "second"
    restored = run(["restore", str(copy)], second)
    assert restored.returncode == 0, restored.stderr
    assert stat.S_IMODE((second / "synelo.db").stat().st_mode) == 0o600
    # over a database left readable by others, with --replace
    (second / "synelo.db").chmod(0o644)
    assert run(["restore", "--replace", str(copy)], second).returncode == 0
    assert stat.S_IMODE((second / "synelo.db").stat().st_mode) == 0o600


def test_every_command_that_makes_the_data_folder_makes_it_its_owners_only(
    tmp_path: Path,
) -> None:
    """`init` made the data folder 0700, `migrate` and `restore` 0755 (the umask's): the
    folder that holds the database and the tokens is its owner's only whichever made it.
    A folder that exists keeps the mode its operator gave it."""
    assert run(["migrate"], tmp_path / "migrated").returncode == 0
    assert run(["init"], tmp_path / "initialised").returncode == 0
    copy = tmp_path / "copy.db"
    assert run(["backup", str(copy)], tmp_path / "initialised").returncode == 0
    assert run(["restore", str(copy)], tmp_path / "restored").returncode == 0
    for made in ("migrated", "initialised", "restored"):
        assert stat.S_IMODE((tmp_path / made).stat().st_mode) == 0o700, made
    kept = tmp_path / "kept"
    kept.mkdir(mode=0o750)
    kept.chmod(0o750)
    assert run(["migrate"], kept).returncode == 0
    assert stat.S_IMODE(kept.stat().st_mode) == 0o750


def test_a_405_allows_every_method_of_the_path(admin: httpx.Client) -> None:
    """`OPTIONS /v1/pools` listed GET only, where the path also takes POST."""
    name = _pool(admin)
    for path, methods in (
        ("/v1/pools", {"GET", "POST"}),
        (f"/v1/pools/{name}", {"GET", "PATCH", "DELETE"}),
        (f"/v1/pools/{name}/players/{steam(1)}", {"GET", "PUT", "DELETE"}),
        ("/openapi.json", {"GET", "HEAD"}),
    ):
        for method in ("OPTIONS", "TRACE"):
            r = admin.request(method, path)
            assert r.status_code == 405, (method, path)
            allowed = {m.strip() for m in r.headers["allow"].split(",")}
            assert allowed == methods, (path, allowed)
            for listed in allowed:  # each listed method is a route, not a 405
                assert admin.request(listed, path).status_code != 405, (listed, path)


def test_a_body_with_thousands_of_unknown_fields_gets_a_bounded_422(
    admin: httpx.Client,
) -> None:
    """6,500 unknown fields in 54 KB were answered with 633 KB: the 422 lists the first 20
    errors and says how many it left out."""
    name = _pool(admin)
    body = _round(**{f"f{n}": 0 for n in range(6500)})
    r = admin.post(f"/v1/pools/{name}/rounds", json=body)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert len(detail) == 21 and len(r.content) < 5000, len(r.content)
    assert detail[0]["loc"] == ["body", "f0"] and detail[0]["type"] == "extra_forbidden"
    assert detail[-1] == {"loc": [], "msg": "6480 more errors left out", "type": "too_many_errors"}
    few = admin.post(f"/v1/pools/{name}/rounds", json=_round(**{f"f{n}": 0 for n in range(20)}))
    assert len(few.json()["detail"]) == 20  # up to 20, all of them, and no note


def _raw(url: str, request: bytes) -> tuple[bytes, bool]:
    """Send `request` on a new connection; the answer, and whether the server then closed
    the connection (within 2 s)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                return answer, True
            answer += chunk
        sock.settimeout(2)
        try:
            return answer, sock.recv(1) == b""
        except TimeoutError:
            return answer, False


def test_a_request_framed_by_both_length_and_chunks_closes_its_connection(
    tmp_path: Path,
) -> None:
    """RFC 9112 §6.1: a request with both Content-Length and Transfer-Encoding may be
    answered, but the server MUST close the connection afterwards (else a proxy that read
    the body by the other header can smuggle a request). Under `synelo serve` (h11) the
    connection stayed open; a request framed once still keeps it."""
    assert run(["migrate"], tmp_path).returncode == 0
    with synelo_serve(tmp_path) as served:
        head = "GET /healthz HTTP/1.1\r\nHost: x\r\n"
        both = (head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").encode()
        answer, closed = _raw(served.url, both)
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert b"connection: close" in answer.lower() and closed
        answer, closed = _raw(served.url, (head + "\r\n").encode())
        assert answer.startswith(b"HTTP/1.1 200") and not closed
        chunked = (head + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n").encode()
        assert _raw(served.url, chunked)[1] is False


ANONYMOUS_READS = (
    "/v1/public/pools/{pool}/leaderboard",
    f"/v1/public/pools/{{pool}}/players/{steam(1)}",
    f"/v1/public/pools/{{pool}}/players/{steam(1)}/history",
    "/v1/public/pools/{pool}/rounds/r1",
    "/v1/public/pools/{pool}/health",
    "/pools/{pool}",
    f"/pools/{{pool}}/players/{steam(1)}",
    "/pools/{pool}/rounds/r1",
    "/pools/{pool}/health",
)


@contextmanager
def _work(live: LiveServer) -> Iterator[list[tuple[str, str]]]:
    """What the store does while in the block: each call of one of its operations with
    what it gave back ("None", a type's name, or the error it raised), and each SQL
    statement run on its engine."""
    done: list[tuple[str, str]] = []
    store = live.store

    def traced(name: str, method: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            try:
                answer = method(*args, **kwargs)
            except Exception as exc:
                done.append((name, f"raised {type(exc).__name__}"))
                raise
            done.append((name, "None" if answer is None else type(answer).__name__))
            return answer

        return call

    def statement(_conn: object, _cursor: object, sql: str, *_args: object) -> None:
        # The WAL checkpointer's timer runs on its own thread, whenever it falls due: not
        # the request's work.
        if threading.current_thread().name != checkpoint.THREAD_NAME:
            done.append(("sql", sql))

    operations = [
        n for n in dir(store) if not n.startswith("_") and inspect.ismethod(getattr(store, n))
    ]
    for name in operations:
        setattr(store, name, traced(name, getattr(store, name)))
    event.listen(store.engine, "before_cursor_execute", statement)
    try:
        yield done
    finally:
        event.remove(store.engine, "before_cursor_execute", statement)
        for name in operations:
            delattr(store, name)


@pytest.mark.parametrize("path", ANONYMOUS_READS)
def test_an_anonymous_read_does_the_same_work_for_a_private_pool_as_for_none(
    live: LiveServer, admin: httpx.Client, path: str
) -> None:
    """Issue 36, defect 5: anonymous reads of an existing private pool answered 1.2–1.7 ms
    later than of a pool that does not exist. The store found the private pool's row and
    made a Pool of it before the 404, where it found nothing for the other: the same
    statement, but not the same work. Now one statement answers both, with no row for
    either, and the store's calls, their outcomes and the SQL run are the same."""
    private = _pool(admin)
    assert admin.post(f"/v1/pools/{private}/rounds", json=_round(round_id="r1")).status_code == 201
    nothing = f"g{uuid.uuid4().hex[:10]}"
    traces = []
    with live.client(None) as anonymous:
        for name in (private, nothing):
            anonymous.get(path.format(pool=name))  # any memory of the pool made, as it would be
            with _work(live) as done:
                r = anonymous.get(path.format(pool=name))
            assert r.status_code == 404
            traces.append([(op, text.replace(name, "NAME")) for op, text in done])
    assert traces[0] == traces[1]
    assert ("visible_pool", "None") in traces[0] and any(op == "sql" for op, _ in traces[0])
