"""Benchmark of the public pages' latency (issue 20): p95 <= 100 ms server-side for a pool of
20,000 players and 100,000 rounds.

Method
------
1. A temporary data folder gets ``synelo init`` with known tokens; its ``default`` pool (12v12)
   gets ``--rounds`` rounds rated in this process by the service's own write path, as
   bench/update.py fills its history: a ``RoundWriter`` over a ``Store`` on that database,
   in group-commit transactions. Only the fill's own connection skips waiting for the disk
   (SQLite: ``synchronous=OFF`` and a large page cache; PostgreSQL:
   ``synchronous_commit=off``), which changes no row. Each round has 24 distinct players
   drawn from ``--players`` (every player ~120 rounds at the defaults, so nearly all are past
   the shadow period and on the board), a display name for each (``names``, as a game server
   reports them) and a random winner. One player, the "regular", plays in every
   ``--regular-every``-th round as well (2,000 rounds and more at the defaults). The store's
   clock dates round i at an even step over the ``--days`` days before the fill started, so
   the rounds (and the players' last rounds) are spread over weeks. Then the pool is made
   public (``Store.set_public``, as ``PATCH /v1/pools/{pool}`` does). On PostgreSQL the tables
   are vacuumed and analyzed after the fill (VACUUM ANALYZE: what autovacuum, on by default,
   does after such a load; it is off on this VM). The fill time and
   the resulting row counts are printed.
2. ``synelo serve`` runs on the database as a subprocess on a free local port, with its
   access log on (``--access-log``) and the rate limits off (SYNELO_RATE_*).
3. One client sends GET requests one at a time over one keep-alive connection: each page in
   turn, ``--warmup`` unmeasured requests then ``--requests`` measured ones, so that every page
   meets the same moments of the machine. The pages: the leaderboard (page 1, a deep page,
   and a search), the regular's player page, a round's page, the index and the pool's
   health page, twice: as read again (an app keeps a pool's health figures while the pool
   is unchanged), and with a new round rated through the API (POST …/rounds, untimed) before
   each request, which makes it bring them up to date, as on a pool in play; that page is
   measured after the others, in a phase of its own, so that the work it starts (a thread
   may compute the figures beside the requests) does not weigh on the others' figures. A
   page that answers 404 to its first request is reported "not available" and left out.
   The deep leaderboard page is measured after a new round too (the store keeps each
   pool's board in memory and brings it up to date the same way).
4. Server-side time is the server's own: the access log's duration of each request, taken by
   the app's outermost middleware (synelo.service.middleware.metrics.RequestMetrics, the
   same timer as the ``synelo_http_request_duration_seconds`` histogram) from the request's
   head to the end of its answer, in 0.1 ms. The client's time of each request (over loopback
   HTTP, an upper bound) is printed beside it. Per page: p50, p95 and max of both, and
   whether the server-side p95 meets ``p95 <= 100 ms``.
5. With ``--profile``, or for every page that missed the target, the page is served again in
   this process by the app on the filled database (the server stopped) with every Store
   method it calls timed; then each SQL statement it ran is run on its own and fetched whole,
   timed, with its plan (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN ANALYZE), and the
   charts it draws in Python are timed apart.

The server and the temporary folder are removed at the end, also on errors and Ctrl-C
(``--keep DIR`` keeps the data folder and the server's log instead).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Connection, Engine, event, func, select

# bench/update.py, beside this script: its server, PostgreSQL and fill helpers
from update import (
    ADMIN_TOKEN,
    FILL_IN_FLIGHT,
    PG_URL,
    SERVER_TOKEN,
    STEAM_BASE,
    SYNELO,
    BenchError,
    fill_engine,
    free_port,
    log_tail,
    machine,
    pg_schemas,
    progress,
    speed_gauge,
    stop,
    synelo_init,
    wait_healthy,
)

from synelo.config import Settings
from synelo.domain import RoundReport, SubmitResult
from synelo.service.api.views import BARS
from synelo.service.app import create_app
from synelo.service.charts import Point, histogram, line_chart
from synelo.service.pages.public import CHART_POINTS, HISTORY, PAGE, sampled
from synelo.store.engine import create_store_engine
from synelo.store.repository import Store
from synelo.store.tables import journal, players, rounds
from synelo.store.writer import RoundWriter

POOL = "default"
TEAM_SIZE = 12
TARGET_P95_MS = 100.0
REGULAR = 1  # the regular is account 1: SteamID64 STEAM_BASE + 1
ADJECTIVES = "Swift Bold Quiet Lucky Grim Brave Sly Wild Calm Keen Dark Pale Red Iron Frost Storm"
NOUNS = "Otter Raven Fox Wolf Lynx Hawk Bear Moth Crab Eel Newt Owl Yak Ant Bat Cod"
ADJ, NOUN = ADJECTIVES.split(), NOUNS.split()
# "server" duration of the access log's lines ('client - "GET /path" 200 12.3 ms')
ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+)" (?P<status>\d{3}) (?P<ms>[\d.]+) ms')


def steam_id(n: int) -> str:
    return str(STEAM_BASE + n)


def name_of(n: int) -> str:
    """Player n's display name: 256 adjective-noun pairs, and the number."""
    return f"{ADJ[n % len(ADJ)]}{NOUN[n // len(ADJ) % len(NOUN)]}_{n}"


# --- fill -----------------------------------------------------------------------------------
class DatedStore(Store):
    """The service's Store whose clock says when the round being rated was played: round i
    of the fill at `first + i * step` (the clock dates the rows it writes; nothing else
    differs)."""

    def __init__(self, engine: Engine, first: datetime, step: timedelta, cache: int) -> None:
        self._now = first
        self.first, self.step = first, step
        super().__init__(engine, clock=lambda: self._now, window_cache=cache)

    def submit_in(self, conn: Connection, pool_name: str, report: RoundReport) -> SubmitResult:
        self._now = self.first + int(report.round_id.rpartition("-")[2]) * self.step
        return super().submit_in(conn, pool_name, report)


def regular_round(args: argparse.Namespace) -> str:
    """The id of the regular's newest round of the fill."""
    return f"fill-{(args.rounds - 1) // args.regular_every * args.regular_every}"


def reports(args: argparse.Namespace) -> Iterator[RoundReport]:
    """12v12 rounds of distinct players out of `args.players`, with their names; the regular
    in every `args.regular_every`-th round (from the first)."""
    rng = random.Random(f"{args.seed}-pages")
    population = range(1, args.players + 1)
    for i in range(args.rounds):
        ids = rng.sample(population, 2 * TEAM_SIZE)
        if i % args.regular_every == 0 and REGULAR not in ids:
            ids[rng.randrange(2 * TEAM_SIZE)] = REGULAR
        keys = [steam_id(n) for n in ids]
        a, b = tuple(keys[:TEAM_SIZE]), tuple(keys[TEAM_SIZE:])
        yield RoundReport(
            f"fill-{i}",
            "bench",
            f"ns2_map{i % 8}",
            rng.choice("AB"),
            a,
            b,
            a,
            b,
            {"names": {k: name_of(n) for k, n in zip(keys, ids, strict=True)}},
        )


def fill(url: str, args: argparse.Namespace) -> float:
    """Rate the rounds through the service's RoundWriter into the database at `url`, dated
    over the `args.days` days before now; returns seconds."""
    engine = fill_engine(url)
    first = datetime.now(UTC) - timedelta(days=args.days)
    # the writer keeps every player's window decoded (a server keeps SYNELO_WINDOW_CACHE,
    # 5,000 by default): only the fill's speed depends on it
    store = DatedStore(engine, first, timedelta(days=args.days) / args.rounds, args.players)
    writer = RoundWriter(store)
    pending: deque[Future[SubmitResult]] = deque()
    done = 0
    start = time.perf_counter()

    def settle_oldest() -> None:
        nonlocal done
        if not pending.popleft().result().created:
            raise BenchError("a round was not rated (round_id reused?)")
        done += 1
        progress(done, args.rounds, time.perf_counter() - start)

    try:
        for report in reports(args):
            pending.append(writer.submit(POOL, report))
            if len(pending) >= FILL_IN_FLIGHT:
                settle_oldest()
        while pending:
            settle_oldest()
    finally:
        writer.close()
        engine.dispose()
    return time.perf_counter() - start


def make_public(url: str) -> None:
    """Open the pool's pages to anyone, as the admin's PATCH does (logged)."""
    engine = create_store_engine(url, pool_size=1)
    try:
        Store(engine).set_public(POOL, True, "bench", "pages benchmark")
        if engine.dialect.name == "postgresql":
            # what autovacuum (on by default; off on this VM) does after such a load: the
            # fill left ~2.4 million dead row versions in `players` (24 updates a round),
            # which a plain ANALYZE leaves to every sequential scan, and no visibility map,
            # without which no index-only scan pays. VACUUM runs outside a transaction.
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                for table in ("pools", "players", "rounds", "journal", "window_chunks"):
                    conn.exec_driver_sql(f"VACUUM ANALYZE {table}")
    finally:
        engine.dispose()


@dataclass(frozen=True)
class Filled:
    """What the measured pages show, read from the filled database."""

    listed: int  # players on the public board
    regular_rounds: int
    summary: str


def describe(url: str) -> Filled:
    engine = create_store_engine(url, pool_size=1)
    try:
        store = Store(engine)
        pool = store.get_pool(POOL)
        _, listed, _ = store.public_board(pool, 0, 1, None)
        regular = store.lookup(pool, [steam_id(REGULAR)])[steam_id(REGULAR)]
        with engine.connect() as conn:
            n_rounds, n_journal, n_players, first, last = (
                conn.execute(q).scalar_one()
                for q in (
                    select(func.count()).select_from(rounds),
                    select(func.count()).select_from(journal),
                    select(func.count()).select_from(players),
                    select(func.min(rounds.c.created_at)),
                    select(func.max(rounds.c.created_at)),
                )
            )
    finally:
        engine.dispose()
    days = f"{first:%Y-%m-%d} to {last:%Y-%m-%d}" if first is not None else "none"
    summary = (
        f"{n_rounds:,} rounds ({days}), {n_journal:,} journal rows, {n_players:,} players, "
        f"{listed:,} on the public board; the regular has played {regular.rounds_played:,} "
        "rounds"
    )
    return Filled(listed, regular.rounds_played, summary)


# --- server ---------------------------------------------------------------------------------
def serve_env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    """This environment without any SYNELO_* setting, plus the benchmark's own: the data
    folder, the tokens, the database (default: SQLite in the folder), no rate limits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(
        SYNELO_DATA_DIR=str(data_dir),
        SYNELO_ADMIN_TOKENS=ADMIN_TOKEN,
        SYNELO_SERVER_TOKENS=SERVER_TOKEN,
        # one client asks as fast as the server answers: no rate limits
        SYNELO_RATE_SERVER_ROUNDS="",
        SYNELO_RATE_SERVER_REQUESTS="",
        SYNELO_RATE_ADMIN_REQUESTS="",
        SYNELO_RATE_ADDRESS_REQUESTS="",
        SYNELO_RATE_PUBLIC_REQUESTS="",
    )
    if database_url:
        env["SYNELO_DATABASE_URL"] = database_url
    return env


@contextmanager
def server(env: dict[str, str], log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`synelo serve --access-log` on a free port, its output to `log`; yields its base URL
    and process."""
    port = free_port()
    cmd = [str(SYNELO), "serve", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--log-level", "warning", "--access-log"]
    with log.open("ab") as out:
        # its own session: Ctrl-C reaches this script only, which stops the server last
        proc = subprocess.Popen(
            cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, log)
        yield base, proc
    finally:
        stop(proc)


class AccessLog:
    """Reads the server's access log lines as they are written."""

    def __init__(self, log: Path, proc: subprocess.Popen[bytes]) -> None:
        self.log, self.proc = log, proc
        self.file = log.open("r", errors="replace")
        self.partial = ""

    def next_for(self, path: str, timeout: float = 10.0) -> tuple[int, float]:
        """(status, server milliseconds) of the next logged request to `path` (lines of
        other paths, the health checks before, are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.file.readline()
            if line.endswith("\n"):
                line, self.partial = self.partial + line, ""
                found = ACCESS.search(line)
                if found and found["path"] == path:
                    return int(found["status"]), float(found["ms"])
                continue
            self.partial += line
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise BenchError(f"no access log line for {path}:\n{log_tail(self.log)}")
            time.sleep(0.0005)

    def close(self) -> None:
        self.file.close()


# --- measurement ----------------------------------------------------------------------------
@dataclass
class Page:
    name: str
    path: str
    params: dict[str, str | int] = field(default_factory=dict)
    server_ms: list[float] = field(default_factory=list)
    client_ms: list[float] = field(default_factory=list)
    missing: str | None = None  # why it was not measured
    # a round is rated before each request (untimed): figures an app keeps while the pool is
    # unchanged (the health page's) are computed afresh for it
    after_round: bool = False

    @property
    def url(self) -> str:
        return str(httpx.URL(self.path, params=self.params))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, q in (0, 1]."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def pages_to_measure(args: argparse.Namespace, filled: Filled) -> list[Page]:
    deep = max(1, min(args.deep_page, -(-filled.listed // PAGE)))
    board = f"/pools/{POOL}"
    return [
        Page("leaderboard, page 1", board),
        Page(f"leaderboard, page {deep}", board, {"page": deep}),
        Page(f"leaderboard, search {args.search!r}", board, {"q": args.search}),
        Page(
            f"player ({filled.regular_rounds:,} rounds)",
            f"/pools/{POOL}/players/{steam_id(REGULAR)}",
        ),
        Page("round", f"/pools/{POOL}/rounds/{regular_round(args)}"),
        Page("index", "/"),
        Page("health", f"/pools/{POOL}/health"),
        Page("health, after a new round", f"/pools/{POOL}/health", after_round=True),
        Page(
            f"leaderboard, page {deep}, after a new round", board, {"page": deep}, after_round=True
        ),
    ]


class NewRounds:
    """Rates a fresh 12v12 round of the pool's players through the API (POST
    /v1/pools/{pool}/rounds), as a game server would between two page reads."""

    def __init__(self, args: argparse.Namespace, prefix: str) -> None:
        self.rng = random.Random(f"{args.seed}-{prefix}")
        self.players = args.players
        self.prefix = prefix
        self.count = 0

    def post(self, client: Any) -> None:
        ids = [steam_id(n) for n in self.rng.sample(range(1, self.players + 1), 2 * TEAM_SIZE)]
        self.count += 1
        body = {
            "round_id": f"{self.prefix}-{self.count}",
            "server_id": "bench",
            "map": "ns2_map0",
            "winner": self.rng.choice("AB"),
            "teams": {"A": ids[:TEAM_SIZE], "B": ids[TEAM_SIZE:]},
        }
        headers = {"Authorization": f"Bearer {SERVER_TOKEN}"}
        resp = client.post(f"/v1/pools/{POOL}/rounds", json=body, headers=headers)
        if resp.status_code != 201:
            raise BenchError(f"a new round answered {resp.status_code}: {resp.text[:300]}")


def get(client: httpx.Client, access: AccessLog, page: Page) -> tuple[int, float, float]:
    """One request: (status, server ms, client ms)."""
    t0 = time.perf_counter()
    resp = client.get(page.path, params=page.params)
    client_ms = (time.perf_counter() - t0) * 1000.0
    raw_path = resp.request.url.raw_path.decode().split("?", 1)[0]
    status, server_ms = access.next_for(raw_path)
    if status != resp.status_code:
        raise BenchError(f"{page.url}: answered {resp.status_code}, logged {status}")
    if resp.status_code == 200 and not resp.content:
        raise BenchError(f"{page.url}: an empty page")
    return resp.status_code, server_ms, client_ms


def measure(base: str, access: AccessLog, pages: list[Page], args: argparse.Namespace) -> None:  # noqa: C901
    """Warm-up, then the measured requests, page after page in turn; the pages read after a
    new round in a second phase of their own (see the docstring)."""
    rounds = NewRounds(args, "new")
    with httpx.Client(base_url=base, timeout=60.0) as client:

        def read(page: Page) -> tuple[int, float, float]:
            if page.after_round:
                rounds.post(client)
            return get(client, access, page)

        live = []
        for page in pages:
            status, _, _ = read(page)
            if status == 404:
                page.missing = "not available (404: the page does not exist on this server)"
            elif status != 200:
                raise BenchError(f"{page.url} answered {status}:\n{log_tail(access.log)}")
            else:
                live.append(page)
        for phase in (False, True):
            for r in range(args.warmup + args.requests):
                for page in (p for p in live if p.after_round == phase):
                    status, server_ms, client_ms = read(page)
                    if status != 200:
                        raise BenchError(f"{page.url} answered {status}:\n{log_tail(access.log)}")
                    if r >= args.warmup:
                        page.server_ms.append(server_ms)
                        page.client_ms.append(client_ms)


def print_results(pages: list[Page]) -> list[Page]:
    """The table and the target's verdicts; returns the pages that missed it."""
    print(
        "\n| page | requests | server p50 ms | server p95 ms | server max ms | "
        "client p50 ms | client p95 ms | client max ms | p95 <= 100 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    missed = []
    for page in pages:
        if page.missing:
            print(f"| {page.name} | 0 | | | | | | | {page.missing} |")
            continue
        s, c = page.server_ms, page.client_ms
        ok = percentile(s, 0.95) <= TARGET_P95_MS
        if not ok:
            missed.append(page)
        print(
            f"| {page.name} | {len(s)} | {percentile(s, 0.5):.1f} | {percentile(s, 0.95):.1f} | "
            f"{max(s):.1f} | {percentile(c, 0.5):.1f} | {percentile(c, 0.95):.1f} | "
            f"{max(c):.1f} | {'met' if ok else 'MISSED'} |"
        )
    print(
        "(server: the server's own time per request, from its access log; client: the "
        "client's, over loopback HTTP)"
    )
    for page in pages:
        if page.missing:
            print(f"target: {page.name}: {page.missing}")
        else:
            p95 = percentile(page.server_ms, 0.95)
            verdict = "met" if p95 <= TARGET_P95_MS else "MISSED"
            print(f"target: {page.name}: p95 {p95:.1f} ms <= {TARGET_P95_MS:.0f} ms  {verdict}")
    return missed


# --- profile --------------------------------------------------------------------------------
CONTEXTS = {"read", "snapshot_read", "write_transaction", "write_connection", "discard"}  # untimed


class StoreTimer:
    """Times every public method of one Store instance as the app calls it (the outermost
    call of each thread only: a method calling another is one call), and collects the SQL
    the store runs."""

    def __init__(self, store: Store) -> None:
        self.calls: dict[str, list[float]] = {}  # method: milliseconds of each call
        self.sql: dict[str, Any] = {}  # statement: its parameters, in the order first run
        self.sql_runs: dict[str, int] = {}  # statement: how many times it ran
        self.local = threading.local()
        self.engine = store.engine
        self.paused = False  # while the benchmark itself calls the app (NewRounds)
        for name in dir(Store):
            if not name.startswith("_") and name not in CONTEXTS and callable(getattr(Store, name)):
                setattr(store, name, self._timed(name, getattr(store, name)))

        @event.listens_for(store.engine, "before_cursor_execute")
        def _capture(_conn, _cursor, statement, parameters, _context, _many) -> None:  # type: ignore[no-untyped-def]
            # not the transactions' own statements, nor the WAL checkpoints of the app's thread
            skip = ("BEGIN", "COMMIT", "ROLLBACK", "SET", "PRAGMA")
            if not self.paused and not statement.lstrip().upper().startswith(skip):
                self.sql.setdefault(statement, parameters)
                self.sql_runs[statement] = self.sql_runs.get(statement, 0) + 1

    def _timed(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.paused or getattr(self.local, "inside", False):
                return method(*args, **kwargs)
            self.local.inside = True
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.calls.setdefault(name, []).append((time.perf_counter() - t0) * 1000.0)
                self.local.inside = False

        return timed

    def reset(self) -> None:
        self.calls.clear()
        self.sql.clear()
        self.sql_runs.clear()


def profile(
    url: str, data: Path, pg: str | None, pages: list[Page], args: argparse.Namespace
) -> None:
    """Where each page's time goes: the page served in this process by the app (the server
    stopped), `--profile-runs` times, with every store method it calls timed; then each SQL
    statement it ran, run again on its own and fetched whole, with its plan; and the charts
    drawn in Python, timed apart."""
    with warnings.catch_warnings():  # starlette's about httpx, irrelevant here
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    settings = Settings(
        data_dir=data,
        database_url=pg,
        admin_tokens=[ADMIN_TOKEN],
        server_tokens=[SERVER_TOKEN],
        rate_server_rounds=None,
        rate_server_requests=None,
        rate_address_requests=None,
        rate_public_requests=None,
    )
    engine = create_store_engine(url, pool_size=settings.db_pool_size)
    store = Store(engine, window_cache=settings.window_cache)
    timer = StoreTimer(store)
    rounds = NewRounds(args, "profile")
    try:
        with TestClient(create_app(settings, store=store)) as client:
            for page in pages:
                profile_page(client, timer, rounds, page, args)
                charts(store, page)
    finally:
        engine.dispose()


def profile_page(
    client: Any, timer: StoreTimer, rounds: NewRounds, page: Page, args: argparse.Namespace
) -> None:
    server = (
        f"server p50 {percentile(page.server_ms, 0.5):.1f} ms" if page.server_ms else page.missing
    )
    print(f"\nprofile: {page.name} ({page.url}; {server})")
    for _ in range(2):  # warm
        client.get(page.path, params=page.params)
    timer.reset()
    wall = []
    for _ in range(args.profile_runs):
        if page.after_round:
            timer.paused = True
            rounds.post(client)
            timer.paused = False
        t0 = time.perf_counter()
        resp = client.get(page.path, params=page.params)
        wall.append((time.perf_counter() - t0) * 1000.0)
    if resp.status_code != 200:
        print(f"  answered {resp.status_code} in-process: not profiled")
        return
    runs = args.profile_runs
    print(f"  whole request in-process: median {statistics.median(wall):7.2f} ms")
    spent = 0.0
    for name, ms in timer.calls.items():
        median = statistics.median(ms)
        spent += median * len(ms) / runs  # each call's median times the calls a request makes
        print(
            f"  store.{name:<22} {len(ms) / runs:4.1f} call(s), median {median:7.2f} ms, "
            f"max {max(ms):7.2f} ms"
        )
    rest = statistics.median(wall) - spent
    if rest >= 0:
        print(f"  {'the rest (routing, rendering, charts)':<40} ~{rest:7.2f} ms")
    else:  # a store call ran beside the requests (the health page's refresh thread)
        print("  (the store calls above took longer than the requests: some ran beside them)")
    for statement, parameters in list(timer.sql.items()):
        explain(timer, statement, parameters, timer.sql_runs[statement] / runs, runs)


def explain(
    timer: StoreTimer, statement: str, parameters: Any, per_request: float, runs: int
) -> None:
    """One statement's time (run on its own and fetched whole, median) and its plan."""
    engine = timer.engine
    with engine.connect() as conn:
        times = []
        for _ in range(max(3, runs // 2)):
            t0 = time.perf_counter()
            conn.exec_driver_sql(statement, parameters).fetchall()
            times.append((time.perf_counter() - t0) * 1000.0)
        if engine.dialect.name == "sqlite":
            plan = [
                str(row[-1])
                for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
            ]
        else:
            plan = [
                str(row[0])
                for row in conn.exec_driver_sql(
                    f"EXPLAIN (ANALYZE, BUFFERS) {statement}", parameters
                )
            ]
        conn.rollback()
    sql = " ".join(statement.split())
    print(
        f"  SQL {statistics.median(times):7.2f} ms ({per_request:.1f}/request): "
        f"{sql[:500]}{' ...' if len(sql) > 500 else ''}"
    )
    for line in plan:
        print(f"      {line}")


def charts(store: Store, page: Page) -> None:
    """The Python charts the page draws, timed apart (median of 5)."""
    pool = store.get_pool(POOL)
    if page.path == f"/pools/{POOL}":
        ratings = store.board_ratings(pool)
        draw: Callable[[], Any] = lambda: histogram(ratings, BARS, "ratings")  # noqa: E731
        label = f"histogram of {len(ratings):,} ratings"
    elif page.path.startswith(f"/pools/{POOL}/players/"):
        series = list(reversed(store.rating_series(pool, steam_id(REGULAR), HISTORY)))
        points = [
            Point(series[i].after, f"{series[i].after} after {series[i].kind}")
            for i in sampled(series, CHART_POINTS)
        ]
        draw = lambda: line_chart(points, "rating")  # noqa: E731
        label = f"line chart of {len(points)} points"
    else:
        return
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        draw()
        times.append((time.perf_counter() - t0) * 1000.0)
    print(f"  chart (Python, timed apart): {label}: median {statistics.median(times):.2f} ms")


# --- main -----------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--players", type=int, default=20_000, help="players in the pool")
    p.add_argument("--rounds", type=int, default=100_000, help="12v12 rounds rated first")
    p.add_argument(
        "--regular-every",
        type=int,
        default=50,
        help="the regular plays in every N-th round (2,000 of 100,000 at 50)",
    )
    p.add_argument("--days", type=float, default=28.0, help="the rounds span these days")
    p.add_argument("--requests", type=int, default=100, help="measured requests per page")
    p.add_argument("--warmup", type=int, default=10, help="unmeasured requests per page first")
    p.add_argument("--deep-page", type=int, default=200, help="the deep leaderboard page")
    p.add_argument("--search", default="boldlynx", help="the leaderboard search measured")
    p.add_argument(
        "--profile",
        action="store_true",
        help="profile every page (default: only those that miss the target)",
    )
    p.add_argument("--profile-runs", type=int, default=20, help="runs of each profiled call")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="a new folder to keep the data folder (SQLite's database) and the server's log in",
    )
    p.add_argument(
        "--database",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="postgresql: a fresh schema of the database at --pg-url, dropped at the end",
    )
    p.add_argument(
        "--pg-url",
        default=os.environ.get("SYNELO_BENCH_PG_URL", PG_URL),
        help="the PostgreSQL database (SQLAlchemy URL; env SYNELO_BENCH_PG_URL)",
    )
    args = p.parse_args(argv)
    if args.players < 2 * TEAM_SIZE or args.rounds < 1 or args.regular_every < 1:
        p.error("need --players >= 24, --rounds >= 1 and --regular-every >= 1")
    if args.requests < 1 or args.warmup < 0 or args.days <= 0 or args.profile_runs < 1:
        p.error("need --requests >= 1, --warmup >= 0, --days > 0 and --profile-runs >= 1")
    if args.keep is not None and args.keep.exists():
        p.error(f"--keep: {args.keep} exists already")
    return args


@contextmanager
def database(args: argparse.Namespace) -> Iterator[str | None]:
    """A PostgreSQL URL (a fresh schema, dropped afterwards) or None: SQLite in the folder."""
    if args.database == "sqlite":
        yield None
        return
    with pg_schemas(args.pg_url, ["pages"]) as urls:
        yield urls["pages"]


@contextmanager
def work_folder(args: argparse.Namespace) -> Iterator[Path]:
    """A temporary folder for the data and the server's log, or `--keep`'s, kept."""
    if args.keep is None:
        with tempfile.TemporaryDirectory(prefix="synelo-bench-pages-") as tmp:
            yield Path(tmp)
        return
    args.keep.mkdir(parents=True)
    yield args.keep
    print(f"kept the data folder and the server's log in {args.keep}", flush=True)


def run(args: argparse.Namespace) -> int:
    with work_folder(args) as tmp, database(args) as pg:
        data = tmp / "data"
        data.mkdir()
        env = serve_env(data, pg)
        url = Settings(data_dir=data, database_url=pg).sqlalchemy_url
        synelo_init(env)
        print(
            f"filling {args.rounds:,} 12v12 rounds of {args.players:,} players over "
            f"{args.days:g} days in-process into {args.database} ...",
            flush=True,
        )
        seconds = fill(url, args)
        make_public(url)
        filled = describe(url)
        print(
            f"  fill took {seconds:.1f} s ({args.rounds / seconds:.0f} rounds/s); "
            f"database now: {filled.summary}",
            flush=True,
        )
        pages = pages_to_measure(args, filled)
        log = tmp / "server.log"
        with server(env, log) as (base, proc):
            access = AccessLog(log, proc)
            try:
                print(
                    f"{args.warmup} warm-up and {args.requests} measured requests a page, one "
                    f"at a time, pages in turn ({machine()})",
                    flush=True,
                )
                measure(base, access, pages, args)
            finally:
                access.close()
        missed = print_results(pages)
        print(f"speed gauge after: {speed_gauge():.0f} ms", flush=True)
        if args.profile or missed:
            profile(url, data, pg, pages if args.profile else missed, args)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
