"""Benchmark of the rate limits: what a flood does to everybody else's latency.

Method
------
1. ``synelo init`` and ``synelo serve`` (one worker, SQLite) at the default limits (50
   rounds/s and 200 requests/s per server token, 1,000 requests/s per client address, each
   with a second's worth at once), with random tokens, once per backend: the limits in
   the process, and on Redis (``--redis``, default redis://127.0.0.1:6379/0).
2. A steady client in this process, from 127.0.0.3 with a server token of its own, posts a
   6v6 round ``--rate`` times a second and asks /healthz as often, each on a keep-alive
   connection of its own. Sends are on a fixed schedule (not after the previous answer),
   so a slow answer cannot hide the ones it delays. It records every latency.
3. Phases of ``--seconds`` each, with a pause between them long enough for every bucket to
   fill again:
   - "quiet": nothing else;
   - "token flood": another process (spawned, so its CPU and GIL are not this one's), from
     127.0.0.2 with a second server token, posts rounds from ``--connections`` keep-alive
     connections, ``--flood-rate`` a second in all (2,000: 40 times the rounds limit and
     twice the address limit), or with 0 as fast as the answers come (then the flood's own
     client takes a core of this small machine, which a flood from elsewhere would not);
   - "address flood": the same process sends no token, from 127.0.0.4: only the
     per-address limit stands in its way.
   Any 127.x.y.z is this machine; binding the clients to different ones gives them different
   client addresses.
4. Per backend and phase it prints the flood's answers a second by status, the steady
   client's p50, p99 and max for rounds and for /healthz, and any steady answer that was
   not a 201 (rounds) or 200 (/healthz): there must be none.

The flood's connections, the steady client and the server share the machine's cores, so the
figures include the CPU the flood takes from everything else.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path

import httpx

from synelo.service.middleware.ratelimit import BURST_S  # a drained bucket is full again after this

sys.path.insert(0, str(Path(__file__).parent))
import update  # noqa: E402  (bench/update.py: free ports, a process's CPU)

SYNELO = Path(sys.executable).with_name("synelo")
STEAM_BASE = 76561197960265728


class BenchError(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection from a given local address, on a plain socket: a
    pre-encoded request out, the whole answer (status, headers, Content-Length bytes) in.
    Cheap, so that the flood spends its CPU on requests rather than on a client library."""

    def __init__(self, port: int, source: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), 30, (source, 0))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, request: bytes) -> tuple[int, dict[bytes, bytes]]:
        self.sock.sendall(request)
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            self._read()
        head, self.buf = self.buf[:end], self.buf[end + 4 :]
        lines = head.split(b"\r\n")
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (x.partition(b":") for x in lines[1:])
        }
        length = int(headers[b"content-length"])
        while len(self.buf) < length:
            self._read()
        self.buf = self.buf[length:]
        return int(lines[0].split(b" ", 2)[1]), headers

    def _read(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise BenchError("the server closed the connection")
        self.buf += data

    def close(self) -> None:
        self.sock.close()


def request(method: str, path: str, token: str | None, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n"
    if token:
        head += f"authorization: Bearer {token}\r\n"
    if body:
        head += "content-type: application/json\r\n"
    return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body


def round_request(token: str | None, rng: random.Random) -> bytes:
    """A new 6v6 round among 200 players, with a round_id of its own."""
    players = [str(STEAM_BASE + n) for n in rng.sample(range(1, 201), 12)]
    body = {
        "round_id": secrets.token_hex(12),
        "server_id": "bench",
        "winner": rng.choice("AB"),
        "teams": {"A": players[:6], "B": players[6:]},
    }
    return request("POST", "/v1/pools/default/rounds", token, json.dumps(body).encode())


# --- the flood (a process of its own) -----------------------------------------------------
def flood(
    port: int, source: str, token: str | None, connections: int, rate: float, seconds: float
) -> dict:
    """Rounds from `connections` connections, `rate` a second in all on a fixed schedule
    (0: as fast as the answers come), for `seconds`."""
    deadline = time.monotonic() + seconds
    interval = connections / rate if rate else 0.0
    counts: Counter[int] = Counter()
    retry_after: Counter[str] = Counter()
    lock = threading.Lock()

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        conn = Connection(port, source)
        mine: Counter[int] = Counter()
        waits: Counter[str] = Counter()
        start = time.monotonic() + seed * interval / connections
        try:
            for k in itertools.count():
                now = time.monotonic()
                if now >= deadline:
                    break
                if start + k * interval > now:
                    time.sleep(start + k * interval - now)
                status, headers = conn.send(round_request(token, rng))
                mine[status] += 1
                if status == 429:
                    waits[headers[b"retry-after"].decode()] += 1
        finally:
            conn.close()
        with lock:
            counts.update(mine)
            retry_after.update(waits)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "seconds": time.monotonic() - started,
        "status": dict(counts),
        "retry_after": dict(retry_after),
    }


# --- the steady client ---------------------------------------------------------------------
def steady(port: int, token: str, rate: float, seconds: float) -> dict[str, tuple[list, Counter]]:
    """A round and a /healthz every 1/`rate` s on a fixed schedule; latencies in ms."""
    out: dict[str, tuple[list, Counter]] = {}

    def worker(kind: str) -> None:
        rng = random.Random(kind)
        conn = Connection(port, "127.0.0.3")
        latencies: list[float] = []
        codes: Counter[int] = Counter()
        start = time.perf_counter()
        try:
            for k in range(int(rate * seconds)):
                delay = start + k / rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                req = round_request(token, rng) if kind == "rounds" else healthz_request()
                t0 = time.perf_counter()
                status, _ = conn.send(req)
                latencies.append((time.perf_counter() - t0) * 1000)
                codes[status] += 1
        finally:
            conn.close()
        out[kind] = (latencies, codes)

    threads = [threading.Thread(target=worker, args=(kind,)) for kind in ("rounds", "healthz")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def healthz_request() -> bytes:
    return request("GET", "/healthz", None)


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 1000) - 1]


# --- the server ----------------------------------------------------------------------------
@contextmanager
def server(
    folder: Path, redis_url: str | None, tokens: dict[str, str]
) -> Iterator[tuple[int, int]]:
    """`synelo serve`, one worker, at the default limits; yields its port and pid."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(
        SYNELO_DATA_DIR=str(folder),
        SYNELO_ADMIN_TOKENS=tokens["admin"],
        SYNELO_SERVER_TOKENS=f"{tokens['steady']},{tokens['flood']}",
        SYNELO_AUTOTUNE_CHECK_S="0",
    )
    if redis_url:
        env["SYNELO_REDIS_URL"] = redis_url
    done = subprocess.run([str(SYNELO), "init"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"synelo init failed:\n{done.stdout}{done.stderr}")
    port = update.free_port()
    log = folder / "serve.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(SYNELO), "serve", "--port", str(port), "--log-level", "warning"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise BenchError(f"the server exited:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"no /healthz answer:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        yield port, proc.pid
        warnings = log.read_text()
        if "Traceback" in warnings:
            raise BenchError(f"the server logged an error:\n{warnings[-3000:]}")
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- the run -------------------------------------------------------------------------------
PHASES = {"quiet": None, "token flood": "flood", "address flood": "anonymous"}


def run_phase(
    port: int, pid: int, tokens: dict[str, str], flooder: str | None, args: argparse.Namespace
) -> dict:
    result: dict = {"flood": None}
    cpu, started = update.process_cpu(pid), time.monotonic()
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as ex:
        pending = None
        if flooder is not None:
            token = tokens["flood"] if flooder == "flood" else None
            source = "127.0.0.2" if flooder == "flood" else "127.0.0.4"
            pending = ex.submit(
                flood, port, source, token, args.connections, args.flood_rate, args.seconds
            )
            time.sleep(0.3)  # the flood's process and connections up before measuring
        result["steady"] = steady(port, tokens["steady"], args.rate, args.seconds - 0.3)
        if pending is not None:
            result["flood"] = pending.result()
    result["server_cpu"] = (update.process_cpu(pid) - cpu) / (time.monotonic() - started)
    return result


def describe(backend: str, phase: str, result: dict) -> list[str]:
    lines = [f"{backend}, {phase}: the server used {result['server_cpu']:.0%} of a core"]
    if result["flood"]:
        f = result["flood"]
        per_s = ", ".join(
            f"{status}: {n / f['seconds']:,.1f}/s" for status, n in sorted(f["status"].items())
        )
        lines.append(f"  flood: {per_s}; Retry-After values {f['retry_after']}")
    for kind, (latencies, codes) in result["steady"].items():
        lines.append(
            f"  steady {kind}: {len(latencies)} sent, answers {dict(codes)}, "
            f"p50 {statistics.median(latencies):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms,"
            f" max {max(latencies):.1f} ms"
        )
    return lines


def table_row(backend: str, phase: str, result: dict) -> str:
    f = result["flood"]
    if f:
        flood_cells = [f["status"].get(s, 0) / f["seconds"] for s in (201, 401, 429)]
        flood_text = " | ".join(f"{x:,.0f}" for x in flood_cells)
    else:
        flood_text = "– | – | –"
    (r_lat, r_codes), (h_lat, h_codes) = result["steady"]["rounds"], result["steady"]["healthz"]
    wrong = sum(n for c, n in r_codes.items() if c != 201)
    wrong += sum(n for c, n in h_codes.items() if c != 200)
    return (
        f"| {backend} | {phase} | {flood_text} | {statistics.median(r_lat):.1f} | "
        f"{percentile(r_lat, 0.99):.1f} | {statistics.median(h_lat):.1f} | "
        f"{percentile(h_lat, 0.99):.1f} | {wrong} | {result['server_cpu']:.0%} |"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    p.add_argument("--rate", type=float, default=20.0, help="steady rounds (and /healthz) a second")
    p.add_argument("--connections", type=int, default=8, help="the flood's connections")
    p.add_argument(
        "--flood-rate", type=float, default=2000.0, help="flood requests a second; 0: no bound"
    )
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="Redis for that backend")
    p.add_argument("--backends", default="local,redis", help="local, redis or both")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = []
    worst_p99 = 0.0
    wrong = 0
    try:
        for backend in args.backends.split(","):
            tokens = {name: secrets.token_urlsafe(24) for name in ("admin", "steady", "flood")}
            with (
                tempfile.TemporaryDirectory(prefix="synelo-ratelimit-") as folder,
                server(Path(folder), args.redis if backend == "redis" else None, tokens) as (
                    port,
                    pid,
                ),
            ):
                for n, (phase, flooder) in enumerate(PHASES.items()):
                    if n:
                        time.sleep(BURST_S + 1)  # every bucket full again
                    result = run_phase(port, pid, tokens, flooder, args)
                    print("\n".join(describe(backend, phase, result)), flush=True)
                    rows.append(table_row(backend, phase, result))
                    for kind, (latencies, codes) in result["steady"].items():
                        worst_p99 = max(worst_p99, percentile(latencies, 0.99))
                        good = 201 if kind == "rounds" else 200
                        wrong += sum(n for c, n in codes.items() if c != good)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print()
    print(
        "| limits | phase | flood 201/s | flood 401/s | flood 429/s | steady rounds p50 ms"
        " | p99 ms | /healthz p50 ms | p99 ms | steady answers not 2xx | server CPU |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))
    verdict = "met" if worst_p99 <= 50.0 and wrong == 0 else "NOT met"
    print(f"\ntarget: the steady client's p99 ≤ 50 ms and every answer 2xx: {verdict}")
    print(f"(worst p99 {worst_p99:.1f} ms, {wrong} steady answers not 2xx)")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
