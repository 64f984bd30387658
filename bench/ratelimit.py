"""Benchmark of the rate limits: what a flood does to everybody else's latency.

Method
------
1. ``synelo init`` and ``synelo serve`` at the default limits (50 rounds/s and 200
   requests/s per server token, 1,000 requests/s per client address, each with a second's
   worth at once), with stored tokens (the token table, as ``synelo init`` makes them; none
   configured), in each of ``--setups``:
   - ``sqlite``: one worker on SQLite, the limits in the process;
   - ``sqlite-redis``: the same with the limits on Redis (``--redis``);
   - ``pg2-redis``: two workers on PostgreSQL (a fresh schema of the database at
     ``--pg-url``, dropped afterwards), the limits on Redis.
2. A steady client in this process, from 127.0.0.3 with a server token of its own, posts a
   6v6 round, looks up 24 players and asks /healthz, each ``--rate`` times a second on a
   keep-alive connection of its own. Sends are on a fixed schedule (not after the previous
   answer), so a slow answer cannot hide the ones it delays. It records every latency.
3. Phases of ``--seconds`` each, with a pause between them long enough for every bucket to
   fill again:
   - "quiet": nothing else;
   - "token flood": another process (spawned, so its CPU and GIL are not this one's), from
     127.0.0.2 with a second server token, posts rounds from ``--connections`` keep-alive
     connections, ``--flood-rate`` a second in all (2,000: 40 times the rounds limit and
     twice the address limit), or with 0 as fast as the answers come (then the flood's own
     client takes a core of this small machine, which a flood from elsewhere would not);
   - "address flood": the same process sends no token, from 127.0.0.4: only the
     per-address limit stands in its way;
   - "lookup flood": the second token looks up 24 players at its request limit (200 a
     second), from 127.0.0.2: the costliest thing a token may do that often;
   - "bad-token flood": from 127.0.0.5, lookups with a new random token each, at the
     address limit (1,000 a second): every token unknown, so each would cost a read of the
     token table.
   Any 127.x.y.z is this machine; binding the clients to different ones gives them different
   client addresses.
4. Per setup and phase it prints the flood's answers a second by status, the steady
   client's p50, p99 and max for rounds, lookups and /healthz, any steady answer that was
   not a 201 (rounds) or 200 (lookups, /healthz): there must be none; and the resident
   memory (RSS) of each worker after the phase, with the requests it has answered so far.

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
from contextlib import ExitStack, contextmanager
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


def lookup_request(token: str | None, rng: random.Random) -> bytes:
    """A lookup of 24 of the 200 players (a 12v12 server's), most of them rated."""
    players = [str(STEAM_BASE + n) for n in rng.sample(range(1, 201), 24)]
    body = json.dumps({"steam_ids": players}).encode()
    return request("POST", "/v1/pools/default/players/lookup", token, body)


def make_request(kind: str, token: str | None, rng: random.Random) -> bytes:
    """A request of a flood or of the steady client; token "random": a new one each time."""
    if token == "random":
        token = secrets.token_urlsafe(32)
    return (round_request if kind == "rounds" else lookup_request)(token, rng)


# --- the flood (a process of its own) -----------------------------------------------------
def flood(
    port: int,
    source: str,
    token: str | None,
    kind: str,
    connections: int,
    rate: float,
    seconds: float,
) -> dict:
    """`kind` ("rounds" or "lookup") from `connections` connections, `rate` a second in all
    on a fixed schedule (0: as fast as the answers come), for `seconds`; `token` "random":
    a new random token each request."""
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
                status, headers = conn.send(make_request(kind, token, rng))
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
    """A round, a lookup and a /healthz every 1/`rate` s on a fixed schedule; latencies
    in ms."""
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
                req = healthz_request() if kind == "healthz" else make_request(kind, token, rng)
                t0 = time.perf_counter()
                status, _ = conn.send(req)
                latencies.append((time.perf_counter() - t0) * 1000)
                codes[status] += 1
        finally:
            conn.close()
        out[kind] = (latencies, codes)

    threads = [threading.Thread(target=worker, args=(kind,)) for kind in STEADY]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


STEADY = {"rounds": 201, "lookup": 200, "healthz": 200}  # what the steady client asks: its answer


def healthz_request() -> bytes:
    return request("GET", "/healthz", None)


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 1000) - 1]


# --- the server ----------------------------------------------------------------------------
SETUPS = {  # name: (database, workers, limits on Redis)
    "sqlite": ("sqlite", 1, False),
    "sqlite-redis": ("sqlite", 1, True),
    "pg2-redis": ("postgresql", 2, True),
}


def synelo(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([str(SYNELO), *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"synelo {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


@contextmanager
def server(
    folder: Path, setup: str, args: argparse.Namespace
) -> Iterator[tuple[int, int, dict[str, str]]]:
    """`synelo serve` of a setup at the default limits, with stored tokens (`synelo init`'s
    and two made by `synelo token create`); yields its port, its pid and the tokens."""
    database, workers, on_redis = SETUPS[setup]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(SYNELO_DATA_DIR=str(folder), SYNELO_AUTOTUNE_CHECK_S="0")
    if on_redis:
        env["SYNELO_REDIS_URL"] = args.redis
        redis_flush(args.redis)
    with ExitStack() as stack:
        if database == "postgresql":
            env["SYNELO_DATABASE_URL"] = stack.enter_context(
                update.pg_schemas(args.pg_url, ["ratelimit"])
            )["ratelimit"]
        synelo(env, "init")
        tokens = {
            name: synelo(env, "token", "create", "--role", "server", "--label", name).strip()
            for name in ("steady", "flood")
        }
        yield stack.enter_context(serving(folder, env, workers)) + (tokens,)


def redis_flush(url: str) -> None:
    """Forget the limits' keys of an earlier run (they would refuse this one's first
    requests: the addresses are the same)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter("synelo:rl:*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@contextmanager
def serving(folder: Path, env: dict[str, str], workers: int) -> Iterator[tuple[int, int]]:
    port = update.free_port()
    log = folder / "serve.log"
    command = [str(SYNELO), "serve", "--port", str(port), "--log-level", "warning"]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*command, "--workers", str(workers)],
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


def workers_rss(pid: int) -> list[float]:
    """The resident memory, MB, of the server's workers: the process itself with one
    worker, else its children that are uvicorn's workers (not multiprocessing's tracker)."""
    children = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit()
        and (fields := update._stat(entry.name)) is not None
        and int(fields[1]) == pid
        and b"resource_tracker" not in (entry / "cmdline").read_bytes()
    ]
    page_mb = os.sysconf("SC_PAGE_SIZE") / 2**20
    return sorted(
        int(fields[21]) * page_mb
        for p in children or [pid]
        if (fields := update._stat(p)) is not None
    )


# --- the run -------------------------------------------------------------------------------
PHASES = {  # phase: (the flood's token, its source address, what it sends, its rate; None: default)
    "quiet": None,
    "token flood": ("flood", "127.0.0.2", "rounds", None),
    "address flood": (None, "127.0.0.4", "rounds", None),
    "lookup flood": ("flood", "127.0.0.2", "lookup", 200.0),
    "bad-token flood": ("random", "127.0.0.5", "lookup", 1000.0),
}


def run_phase(
    port: int, pid: int, tokens: dict[str, str], phase: str, args: argparse.Namespace
) -> dict:
    result: dict = {"flood": None}
    cpu, started = update.process_cpu(pid), time.monotonic()
    flooder = PHASES[phase]
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as ex:
        pending = None
        if flooder is not None:
            who, source, kind, rate = flooder
            token = tokens.get(who, who)
            rate = args.flood_rate if rate is None else rate
            pending = ex.submit(
                flood, port, source, token, kind, args.connections, rate, args.seconds
            )
            time.sleep(0.3)  # the flood's process and connections up before measuring
        result["steady"] = steady(port, tokens["steady"], args.rate, args.seconds - 0.3)
        if pending is not None:
            result["flood"] = pending.result()
    result["server_cpu"] = (update.process_cpu(pid) - cpu) / (time.monotonic() - started)
    result["rss"] = workers_rss(pid)
    return result


def describe(setup: str, phase: str, result: dict) -> list[str]:
    rss = ", ".join(f"{mb:.0f}" for mb in result["rss"])
    lines = [
        f"{setup}, {phase}: the server used {result['server_cpu']:.0%} of a core; "
        f"workers' RSS {rss} MB"
    ]
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


def wrong_answers(result: dict) -> int:
    return sum(
        n
        for kind, (_, codes) in result["steady"].items()
        for c, n in codes.items()
        if c != STEADY[kind]
    )


def table_row(setup: str, phase: str, result: dict) -> str:
    f = result["flood"]
    if f:
        flood_cells = [f["status"].get(s, 0) / f["seconds"] for s in (200, 201, 401, 429)]
        flood_text = " | ".join(f"{x:,.0f}" for x in flood_cells)
    else:
        flood_text = "– | – | – | –"
    cells = []
    for kind in STEADY:
        latencies = result["steady"][kind][0]
        if kind != "healthz":
            cells.append(f"{statistics.median(latencies):.1f}")
        cells.append(f"{percentile(latencies, 0.99):.1f}")
    rss = "/".join(f"{mb:.0f}" for mb in result["rss"])
    return (
        f"| {setup} | {phase} | {flood_text} | {' | '.join(cells)} | {wrong_answers(result)} | "
        f"{result['server_cpu']:.0%} | {rss} |"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    p.add_argument(
        "--rate", type=float, default=20.0, help="steady rounds (and lookups, /healthz) a second"
    )
    p.add_argument("--connections", type=int, default=8, help="the flood's connections")
    p.add_argument(
        "--flood-rate",
        type=float,
        default=2000.0,
        help="the token and address floods' requests a second; 0: no bound",
    )
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="Redis for the limits")
    p.add_argument("--pg-url", default=update.PG_URL, help="PostgreSQL for pg2-redis")
    p.add_argument("--setups", default=",".join(SETUPS), help=f"some of {', '.join(SETUPS)}")
    p.add_argument("--phases", default=",".join(PHASES), help="some of the phases, by name")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = []
    worst_p99 = 0.0
    wrong = 0
    try:
        for setup in args.setups.split(","):
            with (
                tempfile.TemporaryDirectory(prefix="synelo-ratelimit-") as folder,
                server(Path(folder), setup, args) as (port, pid, tokens),
            ):
                for n, phase in enumerate(args.phases.split(",")):
                    if n:
                        time.sleep(BURST_S + 1)  # every bucket full again
                    result = run_phase(port, pid, tokens, phase, args)
                    print("\n".join(describe(setup, phase, result)), flush=True)
                    rows.append(table_row(setup, phase, result))
                    for latencies, _ in result["steady"].values():
                        worst_p99 = max(worst_p99, percentile(latencies, 0.99))
                    wrong += wrong_answers(result)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print()
    print(
        "| setup | phase | flood 200/s | 201/s | 401/s | 429/s | steady rounds p50 ms | p99 ms"
        " | lookup p50 ms | p99 ms | /healthz p99 ms | steady not 2xx | server CPU"
        " | workers' RSS MB |"
    )
    print("| --- | --- |" + " ---: |" * 13)
    print("\n".join(rows))
    verdict = "met" if worst_p99 <= 50.0 and wrong == 0 else "NOT met"
    print(f"\ntarget: the steady client's p99 ≤ 50 ms and every answer 2xx: {verdict}")
    print(f"(worst p99 {worst_p99:.1f} ms, {wrong} steady answers not 2xx)")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
