"""Benchmark of the update endpoint, POST /v1/pools/{pool}/rounds, on SQLite or PostgreSQL.

Method
------
1. Two temporary data folders (SYNELO_DATA_DIR) get ``synelo init`` with known admin and
   server tokens: "empty" keeps its freshly created pool, "history" gets ``--history`` rounds
   rated in this process by the service's own write path: a ``RoundWriter`` over a ``Store``
   on that database, the object the route hands each round to. Kept busy by a queue of
   rounds, it rates them in group-commit transactions exactly as the server does under load.
   Only the fill's own connection skips waiting for the disk (SQLite: ``synchronous=OFF``
   and a large page cache; PostgreSQL: ``synchronous_commit=off``), which changes no row.
   The history is thus real: rounds with their stored answers, journal rows, and (by
   default 100,000 rounds over 2,000 players, ~1,200 each) full convergence windows. The
   fill is one writer, as SQLite has. The fill time and the resulting row counts are
   printed.

   With ``--database postgresql`` each phase's database is a fresh schema of the database at
   ``--pg-url`` (``synelo_bench_<run>_empty`` and ``…_history``, dropped at the end, also on
   errors), named the same way in its connections' ``application_name``. Nothing in it is
   analyzed by the benchmark: the planner sees whatever statistics the server's autovacuum
   gathers, or none.
2. ``synelo serve --workers N`` (``--workers``, default 1; more than one only on
   PostgreSQL) then runs on each database at once, each as a subprocess on a free local
   port; only one of them is under load at any moment. Each gets ``--warmup`` unmeasured
   rounds a worker first: they load the history's convergence windows into each worker's
   cache (200 rounds a worker: 4,800 players rated, ~91 % of the 2,000 at least once). They
   go out in two loads a worker, each on new connections, so that every worker gets its
   share: a keep-alive connection stays with the worker that accepted it, and just after
   start one worker may accept them all; the other's cache then read windows back in the
   first measured block (2.7 ms of server CPU a round against 1.0). ``--synchronous`` sets
   SQLite's ``synchronous`` for both servers (SYNELO_SQLITE_SYNCHRONOUS; default the
   service's). The rate limits and the fair share are off (SYNELO_RATE_*,
   SYNELO_FAIR_SHARE): the benchmark measures the rating path.
3. A load generator runs in a separate process (spawned with multiprocessing, so its CPU use
   and GIL are not the server's; one process serves every load of the run). It posts 12v12
   rounds: 24 distinct SteamID64s drawn from a population of players (account n is
   76561197960265728 + n), a random winner and a unique round_id. It keeps a fixed number of
   requests in flight: ``--concurrency`` threads, each with its own keep-alive HTTP/1.1
   connection, pulling from one shared list of pre-encoded bodies. The connections are plain
   sockets that send a pre-encoded request and read the whole answer (status, headers,
   Content-Length bytes of body): the load generator shares the machine, and httpx
   (``--client httpx``) spent 0.5-1.1 ms of CPU per round there, 4-10× as much. Any answer
   other than 201 Created (an error, or a 200 replay of a reused round_id) stops the
   benchmark with exit status 1.
4. Each phase's ``--rounds`` measured rounds are posted in ``--blocks`` blocks that alternate
   between the two servers in ABBA order (empty, history, history, empty, ...). This VM's
   speed drifts by 25-35 % within minutes: measured one after the other, a phase that ran at
   a fast moment and one that ran at a slow one gave a ratio that said more about the
   machine than about the history (0.76 to 1.18 for the same code). Alternating short
   blocks lets both phases see the same machine. Per block it prints both rates and the
   load generator's CPU per round (the best gauge of the machine's speed at that moment).
   Reported per phase, over all its blocks: rounds/s (measured rounds over the summed wall
   clock from first send to last answer of each block), the p50/p99 latency of one POST and,
   on Linux, the CPU time per round of the server (its process and, with several workers,
   theirs) and of the load generator (they share the machine's cores: this tells how much
   they compete) and, on PostgreSQL running on this machine, of the database backends that
   serve the measured server.

5. Then each rating model a pool can choose (``synelo.models.pool_models``) gets a pool of
   its own on the empty server: 50 unmeasured rounds, then ``--model-rounds`` measured
   ones, 12v12 rounds as an NS2 server reports them (sides, commanders, eight maps, the
   round's length, two players' time played: what Hive reads; a mode, positions and
   points: what positional and sectors-edge read) at the same load; its rounds/s, p50/p99
   latency and the server's CPU a round are printed as a table (``--models`` picks some of
   the models).
   All of a pool's rounds fall on one day, so there a whr player holds one day of a dozen
   games. Whr's cost grows with the days and games a player keeps (W5 steps over all of
   them, and the state stored is all of them), so a second whr pool first gets
   ``--whr-history`` rounds (unmeasured) dated over the ``--whr-days`` days before today
   (``started_at``), which leaves a regular with a near-full window of days, then the same
   measured rounds, today. Target for both whr pools: p99 <= 50 ms.

The table shows both phases, the ratio throughput(history)/throughput(empty) and the
targets. The servers and the temporary folders are removed at the end, also on errors and
Ctrl-C. The client shares the machine with the server: on a small machine it takes CPU the
server would otherwise have, so the figures are a lower bound for a remote client.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from sqlalchemy import Engine, create_engine, event, func, select, text
from sqlalchemy.engine import make_url

from synelo.config import Settings
from synelo.domain import RoundReport, SubmitResult
from synelo.store.engine import create_store_engine
from synelo.store.repository import Store
from synelo.store.tables import journal, players, rounds
from synelo.store.writer import RoundWriter

SYNELO = Path(sys.executable).with_name("synelo")
STEAM_BASE = 76561197960265728
TEAM_SIZE = 12
POOL = "default"
ADMIN_TOKEN = "bench-admin-token"
SERVER_TOKEN = "bench-server-token"
FILL_IN_FLIGHT = 1000  # history rounds queued to the writer at a time
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"  # --pg-url's default

TARGET_RPS = 400.0
TARGET_P99_MS = 20.0
TARGET_RATIO = 0.8
TARGET_WHR_P99_MS = 50.0


class BenchError(RuntimeError):
    """Something went wrong that makes the figures meaningless."""


# --- round generation ---------------------------------------------------------------------
def steam_ids(rng: random.Random, population: int) -> list[str]:
    """Two teams' worth of distinct SteamID64s (accounts 1..population)."""
    return [str(STEAM_BASE + n) for n in rng.sample(range(1, population + 1), 2 * TEAM_SIZE)]


def round_body(
    rng: random.Random,
    round_id: str,
    population: int,
    rich: bool = False,
    started_at: str | None = None,
) -> dict:
    """A 12v12 round; `rich`: as an NS2 server reports one, with sides, commanders, eight
    maps, the round's length and two players' time played (what Hive reads), and a mode,
    positions and scoreboard points (what positional and sectors-edge read); `started_at`:
    when it started (ISO 8601), which dates it for whr."""
    ids = steam_ids(rng, population)
    body = {
        "round_id": round_id,
        "server_id": "bench",
        "map": "bench_map",
        "winner": rng.choice("AB"),
        "teams": {"A": ids[:TEAM_SIZE], "B": ids[TEAM_SIZE:]},
    }
    if rich:
        marines_a = rng.random() < 0.5
        body["map"] = f"ns2_map{rng.randrange(8)}"
        body["sides"] = (
            {"A": "marines", "B": "aliens"} if marines_a else {"A": "aliens", "B": "marines"}
        )
        body["commanders"] = {"A": ids[0], "B": ids[TEAM_SIZE]}
        body["duration"] = rng.uniform(400.0, 1500.0)
        body["time_played"] = {
            ids[5]: 0.5,
            ids[TEAM_SIZE + 5]: {"from": 100.0, "to": body["duration"]},
        }
        # what positional and sectors-edge read: who played where, and the scoreboard
        body["mode"] = "CTF"
        body["positions"] = {p: ("offense", "defense")[i % 2] for i, p in enumerate(ids)}
        body["player_scores"] = {p: rng.randrange(60) for p in ids}
    if started_at is not None:
        body["started_at"] = started_at
    return body


# --- load generator (runs in its own process) ------------------------------------------------
@dataclass(frozen=True)
class LoadSpec:
    url: str
    token: str
    prefix: str  # round_id prefix, unique per block
    seed: int
    population: int
    rounds: int
    concurrency: int
    server_pid: int  # to read the server's CPU time (Linux /proc; NaN elsewhere)
    client: str = "socket"  # a key of CLIENTS
    rich: bool = False  # rounds with sides, commanders and time played (round_body)
    span_days: float = 0.0  # > 0: the rounds start evenly over this many days before now


@dataclass
class LoadResult:
    rounds: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    server_cpu: float = math.nan  # CPU seconds used by the server while measured
    client_cpu: float = math.nan  # and by the load generator
    idle_cpu: float = math.nan  # and by the other, idle server (its WAL checkpoints)
    db_cpu: float = math.nan  # and by the PostgreSQL backends serving the measured server

    @property
    def rate(self) -> float:
        return self.rounds / self.seconds if self.seconds else 0.0

    def cpu_ms(self, seconds: float) -> float:
        """CPU milliseconds per measured round."""
        return seconds * 1000.0 / self.rounds

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile of the latencies, q in (0, 1]."""
        ordered = sorted(self.latencies_ms)
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def encoded_bodies(spec: LoadSpec, start: int, count: int) -> list[bytes]:
    rng = random.Random(f"{spec.seed}-{spec.prefix}-{start}")
    first = datetime.now(UTC) - timedelta(days=spec.span_days)
    step = timedelta(days=spec.span_days) / max(spec.rounds, 1)

    def started(i: int) -> str | None:
        return (first + i * step).isoformat() if spec.span_days > 0 else None

    return [
        json.dumps(
            round_body(rng, f"{spec.prefix}-{i}", spec.population, spec.rich, started(i))
        ).encode()
        for i in range(start, start + count)
    ]


class KeepAlive:
    """One keep-alive HTTP/1.1 connection that posts pre-encoded requests and reads each
    answer whole: status line, headers, and a body of exactly Content-Length bytes.

    A load generator should cost little of the machine it shares with the server: httpx
    needed ~1 ms of CPU per round here, this ~0.1 ms (``--client httpx`` still measures with
    httpx). Any answer it cannot read (no Content-Length, a closed connection) is an error.
    """

    def __init__(self, url: str, headers: dict[str, str], timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        self.head = (
            f"POST {parts.path} HTTP/1.1\r\nhost: {parts.netloc}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        ).encode()
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def post(self, body: bytes) -> tuple[int, bytes]:
        self.sock.sendall(b"%scontent-length: %d\r\n\r\n%s" % (self.head, len(body), body))
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            self._read()
        head, self.buf = self.buf[:end], self.buf[end + 4 :]
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = next(
            (
                int(v)
                for k, _, v in (line.partition(b":") for line in lines[1:])
                if k.strip().lower() == b"content-length"
            ),
            None,
        )
        if length is None:
            raise BenchError(f"an answer without Content-Length: {head[:300]!r}")
        while len(self.buf) < length:
            self._read()
        answer, self.buf = self.buf[:length], self.buf[length:]
        return status, answer

    def _read(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise BenchError("the server closed the connection")
        self.buf += data

    def close(self) -> None:
        self.sock.close()


class HttpxClient:
    """The same interface over httpx (``--client httpx``)."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float = 60.0) -> None:
        self.url = url
        self.client = httpx.Client(headers=headers, timeout=timeout)

    def post(self, body: bytes) -> tuple[int, bytes]:
        resp = self.client.post(self.url, content=body)
        return resp.status_code, resp.content

    def close(self) -> None:
        self.client.close()


CLIENTS = {"socket": KeepAlive, "httpx": HttpxClient}


def post_all(clients: list[KeepAlive | HttpxClient], bodies: list[bytes]) -> LoadResult:
    """Post every body, one thread per client; each thread takes the next body when free."""
    result = LoadResult(rounds=len(bodies))
    next_index = itertools.count().__next__  # atomic under the GIL
    lock = threading.Lock()

    def worker(client: KeepAlive | HttpxClient) -> None:
        while (i := next_index()) < len(bodies) and not result.errors:
            t0 = time.perf_counter()
            try:
                status, answer = client.post(bodies[i])
                error = None if status == 201 else f"HTTP {status}: {answer[:300]!r}"
            except Exception as exc:  # a transport error, or a bug here: both stop the run
                error = f"{type(exc).__name__}: {exc}"
            ms = (time.perf_counter() - t0) * 1000.0
            with lock:
                result.latencies_ms.append(ms)
                if error:
                    result.errors.append(error)

    # Daemon threads: on Ctrl-C this process exits without finishing the list.
    threads = [threading.Thread(target=worker, args=(c,), daemon=True) for c in clients]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.seconds = time.perf_counter() - start
    return result


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (None: no such process)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def _cpu(fields: list[str]) -> float:
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """User + system CPU seconds so far of a process and its live descendants (a server
    with several workers is a process that started them), from /proc (NaN without it)."""
    if (own := _stat(pid)) is None:
        return math.nan
    children: dict[int, list[tuple[int, list[str]]]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(entry.name)) is not None:
            children.setdefault(int(fields[1]), []).append((int(entry.name), fields))
    total, todo = _cpu(own), [pid]
    while todo:
        for child, fields in children.get(todo.pop(), []):
            total += _cpu(fields)
            todo.append(child)
    return total


class BackendCpu:
    """The CPU of the PostgreSQL backends that serve one application_name, from /proc: the
    database server must run on this machine (NaN otherwise). A backend that exits between
    two readings takes its CPU with it; the server's pool keeps its connections open."""

    def __init__(self, admin: Engine, application_name: str) -> None:
        self.admin = admin
        self.application_name = application_name

    def snapshot(self) -> dict[int, float]:
        with self.admin.connect() as conn:
            pids = conn.execute(
                text("SELECT pid FROM pg_stat_activity WHERE application_name = :name"),
                {"name": self.application_name},
            ).scalars()
            return {pid: _cpu(fields) for pid in pids if (fields := _stat(pid)) is not None}

    def since(self, before: dict[int, float]) -> float:
        """CPU seconds since `before` (a snapshot)."""
        now = self.snapshot()
        if not now and not before:
            return math.nan
        return sum(cpu - before.get(pid, 0.0) for pid, cpu in now.items())


def run_load(spec: LoadSpec) -> LoadResult:
    """The child process: measure `spec.rounds` posts."""
    measured = encoded_bodies(spec, 0, spec.rounds)
    headers = {"authorization": f"Bearer {spec.token}", "content-type": "application/json"}
    clients = [CLIENTS[spec.client](spec.url, headers) for _ in range(spec.concurrency)]
    try:
        server0, client0 = process_cpu(spec.server_pid), time.process_time()
        result = post_all(clients, measured)
        result.server_cpu = process_cpu(spec.server_pid) - server0
        result.client_cpu = time.process_time() - client0
        return result
    finally:
        for c in clients:
            c.close()


_generator: ProcessPoolExecutor | None = None


def load_generator() -> ProcessPoolExecutor:
    """The load generator's process: spawned at the first load and kept for every later one
    (a spawn imports this module again, 2-3 s of a small machine each time, which a run of
    many short loads, such as the per-model pools, otherwise spends dozens of times). Each
    load still opens connections of its own (`run_load`); the process ends with this one."""
    global _generator
    if _generator is None:
        _generator = ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"))
    return _generator


def measure(spec: LoadSpec) -> LoadResult:
    result = load_generator().submit(run_load, spec).result()
    if result.errors:
        shown = "\n  ".join(result.errors[:5])
        raise BenchError(
            f"{len(result.errors)} failed request(s) in phase {spec.prefix}:\n  {shown}"
        )
    return result


# --- server -------------------------------------------------------------------------------
def bench_env(
    data_dir: Path, database_url: str | None = None, synchronous: str | None = None
) -> dict[str, str]:
    """This environment without any SYNELO_* setting, plus the benchmark's own: the data
    folder, the tokens, the database (`database_url`; default: SQLite in the folder) and
    SQLite's `synchronous` (default: the service's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(
        SYNELO_DATA_DIR=str(data_dir),
        SYNELO_ADMIN_TOKENS=ADMIN_TOKEN,
        SYNELO_SERVER_TOKENS=SERVER_TOKEN,
        # the benchmark sends rounds as fast as the server takes them, from many
        # connections with one token: no rate limits, no bound on the requests in progress
        SYNELO_RATE_SERVER_ROUNDS="",
        SYNELO_RATE_SERVER_REQUESTS="",
        SYNELO_RATE_ADDRESS_REQUESTS="",
        SYNELO_FAIR_SHARE="",
    )
    if database_url:
        env["SYNELO_DATABASE_URL"] = database_url
    if synchronous:
        env["SYNELO_SQLITE_SYNCHRONOUS"] = synchronous
    return env


@contextmanager
def pg_schemas(base_url: str, names: Iterable[str]) -> Iterator[dict[str, str]]:
    """A fresh schema per name in the PostgreSQL database at `base_url`, dropped afterwards
    (also on errors); {name: URL of the database with that schema as its search path}. Each
    URL also names its connections (application_name), so that their backends can be found
    (`database_cpu`)."""
    run_id = uuid.uuid4().hex[:10]
    schemas = {name: f"synelo_bench_{run_id}_{name}" for name in names}
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    sep = "&" if "?" in base_url else "?"
    try:
        with admin.connect() as conn:
            for schema in schemas.values():
                conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        yield {
            name: f"{base_url}{sep}options=-csearch_path%3D{schema}&application_name={schema}"
            for name, schema in schemas.items()
        }
    finally:
        with admin.connect() as conn:
            for schema in schemas.values():
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def synelo_init(env: dict[str, str]) -> None:
    done = subprocess.run([str(SYNELO), "init"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"synelo init failed:\n{done.stdout}{done.stderr}")


def log_tail(log: Path, chars: int = 3000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else ""


def wait_healthy(base: str, proc: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"the server exited ({proc.returncode}):\n{log_tail(log)}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise BenchError(f"no /healthz answer within {timeout:.0f} s:\n{log_tail(log)}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def server(env: dict[str, str], log: Path, workers: int = 1) -> Iterator[tuple[str, int]]:
    """`synelo serve --workers N` on a free port; yields its base URL and process id (with
    several workers, that of the process that started them)."""
    port = free_port()
    cmd = [
        str(SYNELO),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    with log.open("ab") as out:
        # Its own session: Ctrl-C reaches this script only, which stops the server last.
        proc = subprocess.Popen(
            cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, log)
        yield base, proc.pid
    finally:
        stop(proc)


# --- history fill (in this process, server stopped) -----------------------------------------
def database_url(data_dir: Path, url: str | None = None) -> str:
    """The database the server of this folder uses: `url`, or SQLite in the folder."""
    return Settings(data_dir=data_dir, database_url=url).sqlalchemy_url


def fill_engine(url: str) -> Engine:
    """The server's engine for this database, tuned for one bulk writer (content unchanged):
    on SQLite no syncs and a large page cache, on PostgreSQL commits that do not wait for
    their WAL flush."""
    engine = create_store_engine(url, pool_size=1)

    @event.listens_for(engine, "connect")
    def _bulk(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        if engine.dialect.name == "sqlite":
            dbapi_conn.execute("PRAGMA synchronous=OFF")
            dbapi_conn.execute("PRAGMA cache_size=-262144")  # 256 MiB
        else:
            dbapi_conn.execute("SET synchronous_commit = off")
            dbapi_conn.commit()

    return engine


def history_reports(count: int, population: int, seed: int) -> Iterator[RoundReport]:
    rng = random.Random(f"{seed}-history")
    for i in range(count):
        body = round_body(rng, f"fill-{i}", population)
        a, b = tuple(body["teams"]["A"]), tuple(body["teams"]["B"])
        yield RoundReport(
            body["round_id"], body["server_id"], body["map"], body["winner"], a, b, a, b
        )


def fill_history(url: str, count: int, population: int, seed: int) -> float:
    """Rate `count` rounds through the service's RoundWriter into the database at `url`;
    returns seconds."""
    engine = fill_engine(url)
    writer = RoundWriter(Store(engine))
    pending: deque[Future[SubmitResult]] = deque()
    done = 0
    start = time.perf_counter()

    def settle_oldest() -> None:
        nonlocal done
        if not pending.popleft().result().created:
            raise BenchError("a history round was not rated (round_id reused?)")
        done += 1
        progress(done, count, time.perf_counter() - start)

    try:
        for report in history_reports(count, population, seed):
            pending.append(writer.submit(POOL, report))
            if len(pending) >= FILL_IN_FLIGHT:
                settle_oldest()
        while pending:
            settle_oldest()
    finally:
        writer.close()
        engine.dispose()
    return time.perf_counter() - start


def checkpoint(base_url: str) -> float:
    """PostgreSQL's CHECKPOINT after the fill; returns seconds.

    The fill writes 100,000 rounds' WAL in minutes (a server gathers it over months) and
    leaves PostgreSQL a checkpoint to run: started by the WAL's volume, it ran into the
    measured blocks, where every page a round touched first after it went to the WAL whole
    (full-page writes). The history's rounds touch far more distinct pages than the empty
    pool's, so the blocks it hit measured the fill, not the history: 262 rounds/s with
    1.9 ms of database CPU a round, against 445-500 and 0.9 ms in the same run's others."""
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    start = time.perf_counter()
    try:
        with admin.connect() as conn:
            conn.execute(text("CHECKPOINT"))
    finally:
        admin.dispose()
    return time.perf_counter() - start


def progress(done: int, total: int, seconds: float) -> None:
    if done % 10_000 == 0 or done == total:
        print(f"  filled {done:,}/{total:,} rounds in {seconds:.0f} s", flush=True)


def database_summary(url: str) -> str:
    """Row counts that show the history is real."""
    engine = fill_engine(url)
    try:
        window = Store(engine).get_pool(POOL).params.window
        with engine.connect() as conn:
            n_rounds, n_journal, n_players, n_full = (
                conn.execute(q).scalar_one()
                for q in (
                    select(func.count()).select_from(rounds),
                    select(func.count()).select_from(journal),
                    select(func.count()).select_from(players),
                    select(func.count()).where(players.c.rounds_played >= window),
                )
            )
    finally:
        engine.dispose()
    return (
        f"{n_rounds:,} rounds, {n_journal:,} journal rows, {n_players:,} players, "
        f"{n_full:,} with a full window of {window} rounds"
    )


# --- report ---------------------------------------------------------------------------------
def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs, load average {load}, speed gauge {speed_gauge():.0f} ms"


def speed_gauge() -> float:
    """Milliseconds of CPU for a fixed pure-Python loop (best of 3): this VM's speed moves by
    2-3x between and within sessions, and this says how fast it ran for a phase."""
    best = math.inf
    for _ in range(3):
        t0 = time.process_time()
        total = 0
        for i in range(300_000):
            total += i * i % 7
        best = min(best, time.process_time() - t0)
    return best * 1000.0


def print_table(rows: list[tuple[str, LoadResult]]) -> None:
    print(
        f"\n{'phase':<16}{'rounds':>8}{'rounds/s':>11}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'server CPU ms/round':>21}{'client CPU ms/round':>21}"
    )
    for name, r in rows:
        print(
            f"{name:<16}{r.rounds:>8}{r.rate:>11.1f}{r.percentile(0.5):>9.1f}"
            f"{r.percentile(0.99):>9.1f}{r.cpu_ms(r.server_cpu):>21.2f}"
            f"{r.cpu_ms(r.client_cpu):>21.2f}"
        )
    print(
        "CPU the idle server used meanwhile (its WAL checkpoints, not in the figures above), "
        "ms/round: " + ", ".join(f"{name} {r.cpu_ms(r.idle_cpu):.3f}" for name, r in rows)
    )
    if any(not math.isnan(r.db_cpu) for _, r in rows):
        print(
            "CPU of the PostgreSQL backends serving the measured server, ms/round: "
            + ", ".join(f"{name} {r.cpu_ms(r.db_cpu):.2f}" for name, r in rows)
        )


def print_targets(empty: LoadResult, history: LoadResult) -> None:
    ratio = history.rate / empty.rate

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    print(f"\nratio throughput(history)/throughput(empty): {ratio:.2f}")
    print("targets:")
    for name, r in (("empty", empty), ("history", history)):
        print(
            f"  {name:<8} >= {TARGET_RPS:.0f} rounds/s: {r.rate:7.1f}  "
            f"{verdict(r.rate >= TARGET_RPS)}"
        )
        print(
            f"  {name:<8} p99 <= {TARGET_P99_MS:.0f} ms:    {r.percentile(0.99):7.1f}  "
            f"{verdict(r.percentile(0.99) <= TARGET_P99_MS)}"
        )
    print(f"  ratio >= {TARGET_RATIO}:            {ratio:7.2f}  {verdict(ratio >= TARGET_RATIO)}")


# --- main -----------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--rounds", type=int, default=3000, help="measured rounds per phase")
    p.add_argument(
        "--blocks",
        type=int,
        default=6,
        help="the measured rounds of each phase are posted in this many blocks "
        "(even), alternating between the two servers",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=200,
        help="unmeasured rounds a worker, to each server, before the measured blocks",
    )
    p.add_argument(
        "--history",
        type=int,
        default=100_000,
        help="rounds of history rated into the second database",
    )
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight")
    p.add_argument(
        "--model-rounds",
        type=int,
        default=1000,
        help="rounds measured for each rating model's pool on the empty server (0: skip)",
    )
    p.add_argument(
        "--models",
        default="",
        help="the models that get a pool, comma-separated (default: every model a pool can choose)",
    )
    p.add_argument(
        "--whr-history",
        type=int,
        default=6000,
        help="rounds dated over the --whr-days days before today given to the second whr "
        "pool before its measured ones (0: no such pool)",
    )
    p.add_argument("--whr-days", type=int, default=30, help="the days --whr-history spans")
    p.add_argument("--population", type=int, default=2000, help="distinct players")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--database",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="postgresql: a fresh schema per phase in the database at --pg-url",
    )
    p.add_argument(
        "--pg-url",
        default=os.environ.get("SYNELO_BENCH_PG_URL", PG_URL),
        help="the PostgreSQL database (SQLAlchemy URL; env SYNELO_BENCH_PG_URL)",
    )
    p.add_argument("--workers", type=int, default=1, help="server processes (PostgreSQL)")
    p.add_argument(
        "--synchronous",
        choices=["NORMAL", "FULL"],
        default=None,
        help="SQLite's synchronous setting for the servers (SYNELO_SQLITE_SYNCHRONOUS); "
        "default: the service's",
    )
    p.add_argument(
        "--client",
        choices=sorted(CLIENTS),
        default="socket",
        help="the load generator's HTTP client (socket: raw keep-alive HTTP/1.1)",
    )
    args = p.parse_args(argv)
    if (
        not 2 <= args.blocks <= args.rounds
        or args.blocks % 2
        or args.concurrency < 1
        or args.population < 2 * TEAM_SIZE
        or args.workers < 1
    ):
        p.error(
            "need an even --blocks from 2 to --rounds (ABBA pairs), --concurrency >= 1, "
            "--workers >= 1 and --population >= 24"
        )
    if args.database == "sqlite" and args.workers != 1:
        p.error("SQLite is served by one worker (its one writer): --workers needs postgresql")
    if args.database == "postgresql" and args.synchronous:
        p.error("--synchronous is SQLite's setting")
    from synelo.models import pool_models

    known = pool_models()  # a pool's models: the replay-only peers (epa) get no pool
    args.models = [m.strip() for m in args.models.split(",") if m.strip()] or known
    if unknown := sorted(set(args.models) - set(known)):
        p.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if args.whr_days < 1:
        p.error("--whr-days must be at least 1")
    return args


PHASES = ("empty", "history")


def block_sizes(rounds: int, blocks: int) -> list[int]:
    """`rounds` split into `blocks` near-equal parts."""
    return [rounds // blocks + (i < rounds % blocks) for i in range(blocks)]


def merge(results: list[LoadResult]) -> LoadResult:
    """One phase's blocks as one measurement: rounds/s is total rounds over total time."""
    return LoadResult(
        rounds=sum(r.rounds for r in results),
        seconds=sum(r.seconds for r in results),
        latencies_ms=[ms for r in results for ms in r.latencies_ms],
        server_cpu=sum(r.server_cpu for r in results),
        client_cpu=sum(r.client_cpu for r in results),
        idle_cpu=sum(r.idle_cpu for r in results),
        db_cpu=sum(r.db_cpu for r in results),
    )


def load(
    name: str,
    target: tuple[str, int],
    log: Path,
    args: argparse.Namespace,
    rounds: int,
    idle_pid: int | None = None,
    pool: str = POOL,
    backends: BackendCpu | None = None,
    rich: bool = False,
    span_days: float = 0.0,
) -> LoadResult:
    """Post `rounds` fresh rounds (round_ids prefixed `name`) to one server's `pool` and
    measure; `idle_pid`: the other server, whose CPU meanwhile is recorded too, and
    `backends`: those of its PostgreSQL database."""
    base, pid = target
    spec = LoadSpec(
        f"{base}/v1/pools/{pool}/rounds",
        SERVER_TOKEN,
        name,
        args.seed,
        args.population,
        rounds,
        args.concurrency,
        pid,
        args.client,
        rich,
        span_days,
    )
    idle0 = process_cpu(idle_pid) if idle_pid else math.nan
    db0 = backends.snapshot() if backends else {}
    try:
        result = measure(spec)
    except BenchError as exc:
        raise BenchError(f"{exc}\nend of the server log:\n{log_tail(log)}") from None
    result.idle_cpu = process_cpu(idle_pid) - idle0 if idle_pid else math.nan
    result.db_cpu = backends.since(db0) if backends else math.nan
    return result


def warm_up(
    name: str, target: tuple[str, int], log: Path, args: argparse.Namespace, rounds: int
) -> None:
    """`rounds` unmeasured rounds to one server, in several loads, each on connections of its
    own: a keep-alive connection stays with the worker that accepted it, and just after start
    one worker may take them all (4 of 4 at a first try, 2 and 2 in the 7 tries after)."""
    for part, size in enumerate(block_sizes(rounds, 2 * args.workers)):
        if size:
            load(f"{name}-warmup{part}", target, log, args, size)


@contextmanager
def databases(args: argparse.Namespace) -> Iterator[dict[str, str | None]]:
    """Each phase's database: {phase: PostgreSQL URL} (a fresh schema each, dropped
    afterwards) or, on SQLite, {phase: None} (the database in the phase's data folder)."""
    if args.database == "sqlite":
        yield dict.fromkeys(PHASES)
        return
    with pg_schemas(args.pg_url, PHASES) as urls:
        yield dict(urls)


def run(args: argparse.Namespace) -> dict[str, LoadResult]:
    """Both databases served at once; the phases' measured blocks alternate (see the
    module docstring); returns each phase's blocks merged."""
    with (
        tempfile.TemporaryDirectory(prefix="synelo-bench-") as tmp,
        databases(args) as pg,
    ):
        dirs = {name: Path(tmp) / name for name in PHASES}
        envs = {name: bench_env(dirs[name], pg[name], args.synchronous) for name in PHASES}
        urls = {name: database_url(dirs[name], pg[name]) for name in PHASES}
        for name, d in dirs.items():
            d.mkdir()
            synelo_init(envs[name])
        print(
            f"filling {args.history:,} rounds of history in-process into {args.database} ...",
            flush=True,
        )
        seconds = fill_history(urls["history"], args.history, args.population, args.seed)
        print(
            f"  fill took {seconds:.1f} s ({args.history / seconds:.0f} rounds/s); "
            f"database now: {database_summary(urls['history'])}",
            flush=True,
        )
        if args.database == "postgresql":
            print(f"  CHECKPOINT after the fill took {checkpoint(args.pg_url):.1f} s", flush=True)
        logs = {name: d / "server.log" for name, d in dirs.items()}
        admin = create_engine(args.pg_url) if args.database == "postgresql" else None
        backends = {
            name: BackendCpu(admin, make_url(pg_url).query["application_name"])
            if admin is not None and pg_url
            else None
            for name, pg_url in pg.items()
        }
        try:
            with (
                server(envs["empty"], logs["empty"], args.workers) as empty_target,
                server(envs["history"], logs["history"], args.workers) as history_target,
            ):
                targets = {"empty": empty_target, "history": history_target}
                warmup = args.warmup * args.workers
                print(
                    f"{warmup} warm-up rounds to each server ({args.workers} worker(s), "
                    f"{args.database}"
                    + (f", synchronous={args.synchronous}" if args.synchronous else "")
                    + f"), then {args.rounds} measured rounds a phase in {args.blocks} "
                    f"alternating blocks, {args.concurrency} in flight, client {args.client} "
                    f"({machine()})",
                    flush=True,
                )
                for name in PHASES:
                    warm_up(name, targets[name], logs[name], args, warmup)
                blocks: dict[str, list[LoadResult]] = {name: [] for name in PHASES}
                for b, size in enumerate(block_sizes(args.rounds, args.blocks)):
                    # ABBA order: a drift of the machine's speed within a pair weighs on both.
                    for name in PHASES if b % 2 == 0 else PHASES[::-1]:
                        other = targets["history" if name == "empty" else "empty"][1]
                        blocks[name].append(
                            load(
                                f"{name}-{b}",
                                targets[name],
                                logs[name],
                                args,
                                size,
                                idle_pid=other,
                                backends=backends[name],
                            )
                        )
                    print_block(b, blocks["empty"][-1], blocks["history"][-1])
                if args.model_rounds:
                    per_model(empty_target, logs["empty"], args)
        finally:
            if admin is not None:
                admin.dispose()
        for name in PHASES:  # the servers have stopped: every measured round is in its database
            print(f"  {name} database after the run: {database_summary(urls[name])}", flush=True)
    print(f"speed gauge after: {speed_gauge():.0f} ms", flush=True)
    return {name: merge(rs) for name, rs in blocks.items()}


def per_model(target: tuple[str, int], log: Path, args: argparse.Namespace) -> None:
    """Each rating model's throughput: a fresh pool of it on the empty server, `--model-rounds`
    rounds after 50 unmeasured ones (the table printed as it goes); then whr's pool with
    `--whr-history` rounds of the days before (see the module docstring)."""
    print(
        "\n| model | rounds/s | p50 ms | p99 ms | server CPU ms/round |\n|---|---:|---:|---:|---:|",
        flush=True,
    )
    whr: dict[str, LoadResult] = {}
    for model in args.models:
        pool = create_pool(target[0], f"bench-{model}", model)
        load(f"{model}-warmup", target, log, args, 50, pool=pool, rich=True)
        result = load(
            f"{model}-measured", target, log, args, args.model_rounds, pool=pool, rich=True
        )
        print_model_row(model, result)
        if model == "whr":
            whr["rounds on one day"] = result
    if "whr" in args.models and args.whr_history:
        pool = create_pool(target[0], "bench-whr-kept", "whr")
        days = f"{args.whr_days} days of history"
        name = f"whr, {days}"
        before = load(
            "whr-kept-history",
            target,
            log,
            args,
            args.whr_history,
            pool=pool,
            rich=True,
            span_days=args.whr_days,
        )
        result = load(
            "whr-kept-measured", target, log, args, args.model_rounds, pool=pool, rich=True
        )
        print_model_row(name, result)
        print(
            f"  ({name}: {args.whr_history:,} rounds over {args.whr_days} days first, "
            f"unmeasured, at {before.rate:.1f} rounds/s)",
            flush=True,
        )
        whr[days] = result
    for name, result in whr.items():
        p99 = result.percentile(0.99)
        verdict = "met" if p99 <= TARGET_WHR_P99_MS else "MISSED"
        print(f"target: whr ({name}) p99 <= {TARGET_WHR_P99_MS:.0f} ms: {p99:.1f}  {verdict}")


def create_pool(base: str, pool: str, model: str) -> str:
    """A fresh pool of `model` on the server at `base`; returns its name."""
    body = {"name": pool, "team_size": TEAM_SIZE, "model": model}
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    r = httpx.post(f"{base}/v1/pools", json=body, headers=headers, timeout=30)
    if r.status_code != 201:
        raise BenchError(f"creating a {model} pool answered {r.status_code}: {r.text}")
    return pool


def print_model_row(name: str, result: LoadResult) -> None:
    print(
        f"| {name} | {result.rate:.1f} | {result.percentile(0.5):.1f} | "
        f"{result.percentile(0.99):.1f} | {result.cpu_ms(result.server_cpu):.2f} |",
        flush=True,
    )


def print_block(b: int, empty: LoadResult, history: LoadResult) -> None:
    database = (
        ""
        if math.isnan(empty.db_cpu)
        else f"; database CPU ms/round {empty.cpu_ms(empty.db_cpu):.2f} / "
        f"{history.cpu_ms(history.db_cpu):.2f}"
    )
    print(
        f"  block {b + 1}: empty {empty.rate:7.1f} rounds/s (p99 "
        f"{empty.percentile(0.99):5.1f} ms), history {history.rate:7.1f} rounds/s (p99 "
        f"{history.percentile(0.99):5.1f} ms), ratio {history.rate / empty.rate:4.2f}; "
        f"server CPU ms/round {empty.cpu_ms(empty.server_cpu):.2f} / "
        f"{history.cpu_ms(history.server_cpu):.2f}; "
        f"client CPU ms/round {empty.cpu_ms(empty.client_cpu):.2f} / "
        f"{history.cpu_ms(history.client_cpu):.2f}" + database,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        results = run(args)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    empty, history = results["empty"], results["history"]
    print_table([("empty", empty), (f"{args.history:,} history", history)])
    print_targets(empty, history)
    return 0


if __name__ == "__main__":
    sys.exit(main())
