"""`synelo serve`'s limits at the connection level, on a real `synelo serve` over real
sockets: the number of connections, the open-file limit, the timeouts, the size of a head."""

from __future__ import annotations

import os
import re
import resource
import selectors
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from synelo.service.middleware.headers import PAGE_POLICY
from tests.conftest import rss_kib
from tests.integration.test_cli import SYNELO, _free_port, run

# wall-clock bounds: `make test` runs this module alone, after the parallel part
pytestmark = pytest.mark.serial

KIB = 1024


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    port: int
    admin: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def rss_kib(self) -> int:
        return rss_kib(self.proc.pid)


def wait_until_up(url: str, proc: subprocess.Popen, seconds: float = 60) -> None:
    """Until `url`/healthz answers 200; fails if the server exits or takes `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, "synelo serve exited"
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    pytest.fail("synelo serve did not come up")


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder after `synelo init`, for each server of the module to copy: the same
    database and tokens, for one `init` (a process, ~2 s) rather than one a server."""
    folder = tmp_path_factory.mktemp("initialised")
    assert run(["init"], folder).returncode == 0
    return folder


def serve(
    initialised: Path,
    data: Path,
    env: dict[str, str],
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[Served]:
    """`synelo serve` (one worker, SQLite) with `env` on top of a clean environment, on a
    copy of the initialised folder in `data`."""
    shutil.copytree(initialised, data, dirs_exist_ok=True)
    full = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    full.update(SYNELO_DATA_DIR=str(data), **env)
    port = _free_port()
    proc = subprocess.Popen(
        [*SYNELO, "serve", "--port", str(port), "--log-level", "warning"],
        env=full,
        preexec_fn=preexec_fn,
    )
    served = Served(proc, port, (data / "tokens" / "admin.token").read_text().strip())
    try:
        wait_until_up(served.url, proc)
        yield served
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.fixture(scope="module")
def quick(initialised: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Short timeouts: a request within 1 s, an idle connection kept 0.5 s."""
    yield from serve(
        initialised,
        tmp_path_factory.mktemp("quick"),
        {"SYNELO_TIMEOUT_REQUEST_S": "1", "SYNELO_TIMEOUT_KEEP_ALIVE_S": "0.5"},
    )


@pytest.fixture(scope="module")
def small(initialised: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Eight connections at most, and time enough to hold them."""
    yield from serve(
        initialised,
        tmp_path_factory.mktemp("small"),
        {"SYNELO_LIMIT_CONCURRENCY": "8", "SYNELO_TIMEOUT_REQUEST_S": "60"},
    )


def read_all(sock: socket.socket, timeout: float) -> bytes:
    """What the server sends until it closes the connection (or `timeout` passes)."""
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (TimeoutError, ConnectionResetError):
        pass
    return b"".join(chunks)


def read_response(sock: socket.socket) -> bytes:
    """One whole answer (its head and its Content-Length of body), leaving the connection."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: (\d+)", head)[1])  # type: ignore[index]
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def is_closed(sock: socket.socket, wait: float = 0.5) -> bool:
    """Whether the server has closed `sock` (it sent nothing else)."""
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def count_closed(socks: list[socket.socket], at_least: int, wait: float = 5.0) -> int:
    """How many of `socks` the server has closed, waiting up to `wait` seconds until there
    are `at_least` (one epoll over them all: `is_closed` a socket at a time waits its
    timeout on every socket left open, seconds for hundreds of them)."""
    closed = 0
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            ready = selector.select(0 if closed >= at_least else left)
            if not ready and closed >= at_least:
                break
            for key, _ in ready:
                selector.unregister(key.fileobj)
                closed += is_closed(key.fileobj, 0.01)  # type: ignore[arg-type]
    return closed


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def get_healthz(headers: str = "") -> bytes:
    return f"GET /healthz HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n".encode()


# -- heads


def test_a_header_line_over_16_kib_is_431(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(get_healthz(f"X-Big: {'a' * (15 * KIB)}\r\n"))
        assert status_of(read_all(s, 5)) == 200
    with quick.connect() as s:
        s.sendall(get_healthz(f"X-Big: {'a' * (17 * KIB)}\r\n"))
        answer = read_all(s, 5)
    assert status_of(answer) == 431, answer[:200]
    assert b"application/json" in answer and b'"detail"' in answer
    # written by synelo's HTTP protocol, before the app: with the app's security headers
    head = answer.split(b"\r\n\r\n", 1)[0].decode().lower().split("\r\n")
    assert "x-frame-options: deny" in head and "x-content-type-options: nosniff" in head
    assert f"content-security-policy: {PAGE_POLICY}".lower() in head
    # the request line counts as a line too
    with quick.connect() as s:
        s.sendall(f"GET /healthz?{'a' * (17 * KIB)} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert status_of(read_all(s, 5)) == 431


def test_a_head_over_64_kib_in_all_is_431(quick: Served) -> None:
    lines = [f"X-Part-{i}: {'a' * (14 * KIB)}\r\n" for i in range(5)]
    with quick.connect() as s:
        s.sendall(get_healthz("".join(lines[:4])))  # 56 KiB: taken
        assert status_of(read_all(s, 5)) == 200
    with quick.connect() as s:
        s.sendall(get_healthz("".join(lines)))  # 70 KiB in one piece
        assert status_of(read_all(s, 5)) == 431
    with quick.connect() as s:  # 70 KiB, a line at a time: refused before the head ends
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        for line in lines:
            s.sendall(line.encode())
            time.sleep(0.05)
        assert status_of(read_all(s, 5)) == 431


def test_a_64_mib_header_is_refused_early_in_little_memory(quick: Served) -> None:
    """It used to be read whole (400 MB) and answered 200."""
    before = quick.rss_kib()
    sent = 0
    chunk = b"a" * (1024 * KIB)
    with quick.connect() as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        try:
            while sent < 64 * 1024 * KIB:
                s.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_all(s, 5)
    grown = quick.rss_kib() - before
    print(f"sent {sent // KIB} KiB of header; the server grew by {grown} KiB")
    assert sent < 64 * 1024 * KIB  # the server closed the connection first
    assert grown < 16 * 1024
    assert answer == b"" or status_of(answer) == 431


# -- timeouts


def test_a_half_sent_head_gets_408_and_the_connection_closes(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        start = time.monotonic()
        answer = read_all(s, 5)
        waited = time.monotonic() - start
    assert status_of(answer) == 408, answer
    assert 0.8 < waited < 3


def test_a_head_sent_a_byte_at_a_time_gets_408(quick: Served) -> None:
    """Slowloris: each byte arrives in time, the head does not."""
    head = get_healthz("X-Slow: " + "a" * 100 + "\r\n")
    with quick.connect() as s:
        start = time.monotonic()
        try:
            for byte in head:
                s.sendall(bytes([byte]))
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_all(s, 5)
    assert status_of(answer) == 408
    assert time.monotonic() - start < 4


def test_a_half_sent_body_gets_408(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(
            b"POST /v1/pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"name": '
        )
        answer = read_all(s, 5)
    assert status_of(answer) == 408, answer


def test_a_connection_that_sends_nothing_is_closed(quick: Served) -> None:
    with quick.connect() as s:
        start = time.monotonic()
        assert read_all(s, 5) == b""
        assert 0.8 < time.monotonic() - start < 3


def test_an_idle_kept_alive_connection_closes(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status_of(read_response(s)) == 200
        start = time.monotonic()
        assert read_all(s, 5) == b""
        # SYNELO_TIMEOUT_KEEP_ALIVE_S=0.5 (uvicorn's default, 5 s, before)
        assert time.monotonic() - start < 2


def test_a_slow_answer_is_not_cut_by_the_request_timeout(quick: Served) -> None:
    """The clock stops when the request has arrived: a request that arrived in time is
    answered however long the answer takes (here several requests in a row, 1.5 s)."""
    with httpx.Client(base_url=quick.url) as c:
        for _ in range(3):
            assert c.get("/healthz").status_code == 200
            time.sleep(0.4)  # kept alive: below 0.5 s


# -- connections


def test_a_new_connection_closes_the_longest_idle_one_at_the_limit(small: Served) -> None:
    held = []
    for _ in range(8):
        held.append(small.connect())
        time.sleep(0.05)
    try:
        r = httpx.get(f"{small.url}/healthz")
        assert r.status_code == 200
        assert is_closed(held[0])  # the oldest made room
        assert not any(is_closed(s, 0.1) for s in held[2:])
        metrics = httpx.get(
            f"{small.url}/metrics", headers={"Authorization": f"Bearer {small.admin}"}
        ).text
        evicted = re.search(r'synelo_connections_closed_total\{reason="evicted"\} (\S+)', metrics)
        assert evicted is not None and float(evicted[1]) >= 1
    finally:
        for s in held:
            s.close()


def test_past_the_limit_with_every_connection_busy_is_503(small: Served) -> None:
    busy = []
    try:
        for _ in range(8):
            s = small.connect()
            s.sendall(
                b"POST /v1/pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            busy.append(s)
        time.sleep(0.2)
        r = httpx.get(f"{small.url}/healthz")
        assert r.status_code == 503, r.text
        assert "too many connections" in r.json()["detail"]
    finally:
        for s in busy:
            s.close()
    time.sleep(0.2)
    assert httpx.get(f"{small.url}/healthz").status_code == 200


def _no_files_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def test_idle_connections_past_the_open_file_limit_do_not_starve_healthz(
    initialised: Path, tmp_path: Path
) -> None:
    """Under `ulimit -n 1024` (soft and hard), 1,100 idle connections made every /healthz
    fail: the worker could not accept() another. Now the oldest idle ones make room."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip("this test needs 1,300 open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    held: list[socket.socket] = []
    try:
        for served in serve(initialised, tmp_path, {}, preexec_fn=_no_files_limit):
            for _ in range(1100):
                held.append(served.connect())
            answers = []
            for _ in range(20):
                try:
                    answers.append(httpx.get(f"{served.url}/healthz", timeout=5).status_code)
                except httpx.TransportError as exc:
                    answers.append(type(exc).__name__)
            assert answers == [200] * 20
            closed = count_closed(held, 1100 - 512)
            print(f"of 1,100 idle connections, the server closed {closed}")
            assert closed >= 1100 - 512
    finally:
        for s in held:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_connection_limit_stays_below_the_open_file_limit(
    initialised: Path, tmp_path: Path
) -> None:
    shutil.copytree(initialised, tmp_path, dirs_exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env["SYNELO_DATA_DIR"] = str(tmp_path)
    port = _free_port()
    proc = subprocess.Popen(
        [*SYNELO, "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256)),
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", proc)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    # 256 open files, 128 kept for the rest: 128 connections, not the default 512
    assert "SYNELO_LIMIT_CONCURRENCY=512 is more than 256 open files allow: using 128" in err
