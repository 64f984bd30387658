"""Benchmark of the split solver against the seed's F9 enumeration, in one process.

Method: for each pool size N, `--pools` pools of ratings are drawn as the issue says (normal
around 1000, sd 300, rounded, floored at 100; seeded, so every run sees the same pools). For
each pool the solver (`synelo.balance.best_splits`, exact method on: `n_max=None`, budget
10 s) answers every k from 2 to N/2, and its time is taken (process CPU time, see `timed`).
On the first `--f9-pools` pools of each N up to `--f9-max`, the seed's F9 enumeration (errata
fixed, `synelo.balance.gosper`) does the same, and its gaps are checked against the solver's.
The seed's greedy fallback alone (`n_max=0`) runs on every pool too (each method in its
own pass over the pools): its time and its mean
excess gap over the optimum show what falling back costs. Reported per N: solver p50/p99
(ms), the share of pools where every k is proven optimal, F9 p50/p99 and the ratio of the
p50s, the greedy's p50 and mean excess gap.

The service's whole split path (`--service-n`, default 32; 0 skips it): the app that `synelo
serve` runs (`create_app`) on a temporary SQLite database holding each pool's players, called
in this process as an ASGI application with a hand-made HTTP request, the body a game server
sends (`{"players": [...]}`, so the schema's default preference), once for every k together and
once per k alone (`min_k = max_k = k`). That runs every middleware, the token check, the body's
parsing and validation, the solver's gate and thread, the ratings' read, the solver, the
answer's assembly and its JSON: everything of the service but the socket and uvicorn's HTTP
parser, which cost the same for every route. (Starlette's TestClient was not used: it runs the
app on a thread of its own and its hand-offs cost more than the route's work; a real uvicorn
adds the client's and the socket's time, and their noise.) Each request is timed in process
CPU time like the solver, from the app's call to its last message (the bench's own writing of
the body and reading of the answer are left out), and the solver alone on the same ratings
(`n_max=None`, as above) is timed right beside it, so both see the same moments of the
machine; the ratio of the p50s is printed for every k (target ≤ 1.5× for the request of
every k), with the share of splits the service proved optimal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from synelo.balance import best_splits
from synelo.balance.gosper import enumerate_all

THETA = 2400.0


def draw(rng: random.Random, n: int) -> list[int]:
    return [max(100, round(rng.gauss(1000, 300))) for _ in range(n)]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn):  # type: ignore[no-untyped-def]
    """The result and the CPU seconds this process spent: the solver and F9 are single-threaded,
    so on a quiet machine this is their wall time, and it stays fair on a shared one."""
    began = time.process_time()
    out = fn()
    return out, time.process_time() - began


class Service:
    """The service's app on a temporary SQLite database, called in this process (ASGI)."""

    TOKEN = "bench-token"

    def __init__(self, folder: Path) -> None:
        from synelo.config import Settings
        from synelo.service.app import create_app
        from synelo.store.engine import create_store_engine, migrate
        from synelo.store.repository import Store

        engine = create_store_engine(f"sqlite:///{folder / 'synelo.db'}")
        migrate(engine)
        settings = Settings(
            data_dir=folder,
            admin_tokens=[self.TOKEN],
            server_tokens=[self.TOKEN],
            autotune_check_s=0,
            balance_budget_ms=10_000,  # as the solver's own run: never cut short
            rate_server_rounds=None,
            rate_server_requests=None,
            rate_address_requests=None,
            rate_public_requests=None,
        )
        self.app = create_app(settings, store=Store(engine))

    async def call(self, method: str, path: str, body: Any) -> tuple[int, Any, float]:
        """The answer's status and JSON, and the CPU seconds the app spent on it: from its
        call to its last message, without the client's writing of the body or reading of
        the answer."""
        raw = json.dumps(body).encode()
        headers = [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Bearer {self.TOKEN}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
        ]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        answer: dict[str, Any] = {"body": b""}
        sent = asyncio.Event()

        async def receive() -> dict[str, Any]:
            if not sent.is_set():
                sent.set()
                return {"type": "http.request", "body": raw, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")

        began = time.process_time()
        await self.app(scope, receive, send)
        spent = time.process_time() - began
        return answer["status"], json.loads(answer["body"]), spent


async def service_figures(pools: list[list[int]]) -> list[dict[str, Any]]:
    """Per team size (None: every k in one request): the service's and the solver's p50 (ms,
    CPU), their ratio, and the share of the service's splits proven optimal."""
    n = len(pools[0])
    keys = [str(76561197960265730 + i) for i in range(n)]  # SteamID64s
    with tempfile.TemporaryDirectory() as folder:
        service = Service(Path(folder))
        async with service.app.router.lifespan_context(service.app):
            for j, ratings in enumerate(pools):
                status, _, _ = await service.call(
                    "POST", "/v1/pools", {"name": f"p{j}", "team_size": n // 2, "theta": THETA}
                )
                assert status == 201
                for key, rating in zip(keys, ratings, strict=True):
                    path = f"/v1/pools/p{j}/players/{key}"
                    status, _, _ = await service.call("PUT", path, {"rating": rating})
                    assert status == 200
            rows = []
            for k in (None, *range(2, n // 2 + 1)):
                sizes: dict[str, int] = {} if k is None else {"min_k": k, "max_k": k}
                service_t, solver_t, proven, splits = [], [], 0, 0
                for j, ratings in enumerate(pools):
                    body = {"players": keys, **sizes}
                    status, answer, spent = await service.call(
                        "POST", f"/v1/pools/p{j}/splits", body
                    )
                    service_t.append(spent)
                    assert status == 200, answer
                    proven += sum(s["optimal"] for s in answer["splits"])
                    splits += len(answer["splits"])
                    _, t = timed(
                        lambda r=ratings, s=sizes: best_splits(  # type: ignore[misc]
                            r, theta=THETA, n_max=None, budget_s=10, **s
                        )
                    )
                    solver_t.append(t)
                service_p50 = quantile(service_t, 0.5) * 1e3
                solver_p50 = quantile(solver_t, 0.5) * 1e3
                rows.append(
                    {
                        "k": k,
                        "service": service_p50,
                        "solver": solver_p50,
                        "ratio": service_p50 / solver_p50,
                        "optimal": proven / splits,
                    }
                )
    return rows


def service_table(console: Console, rows: list[dict[str, Any]], n: int, pools: int) -> bool:
    """Print the service's figures; whether the request of every k met ≤ 1.5×."""
    table = Table(title=f"the service's split path against the solver alone, N = {n}")
    for col in ("k", "pools", "service p50 ms", "solver p50 ms", "service/solver", "optimal"):
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(
            "all" if row["k"] is None else str(row["k"]),
            str(pools),
            f"{row['service']:.2f}",
            f"{row['solver']:.2f}",
            f"{row['ratio']:.2f}×",
            f"{row['optimal']:.0%}",
        )
    console.print(table)
    every_k = rows[0]
    return every_k["ratio"] <= 1.5 and every_k["optimal"] == 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="12,16,20,24,32,48,64,100")
    parser.add_argument("--pools", type=int, default=50)
    parser.add_argument("--f9-pools", type=int, default=10)
    parser.add_argument("--f9-max", type=int, default=24)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--service-n", type=int, default=32, help="0: skip the service")
    args = parser.parse_args()
    console = Console(width=130)
    table = Table(title="split solver: all k from 2 to N/2, per pool")
    for col in (
        "N",
        "pools",
        "solver p50 ms",
        "solver p99 ms",
        "all optimal",
        "F9 p50 ms",
        "F9 p99 ms",
        "F9/solver",
        "greedy p50 ms",
        "greedy excess gap",
    ):
        table.add_column(col, justify="right")
    figures = {}
    best_splits(draw(random.Random(0), 24), theta=THETA)  # warm up (imports, first calls)
    for n in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(args.seed * 1000 + n)
        pools = [draw(rng, n) for _ in range(args.pools)]
        # Each method in its own loop over the pools, so that none runs with the caches and
        # allocator state another one left behind.
        results, solver_t = [], []
        for ratings in pools:
            result, t = timed(
                lambda r=ratings: best_splits(r, theta=THETA, n_max=None, budget_s=10)
            )
            results.append(result)
            solver_t.append(t)
        proven = sum(all(s.optimal for s in result.splits) for result in results)
        greedy_t, excess = [], []
        for ratings, result in zip(pools, results, strict=True):
            greedy, tg = timed(lambda r=ratings: best_splits(r, theta=THETA, n_max=0))
            greedy_t.append(tg)
            excess += [g.gap - s.gap for g, s in zip(greedy.splits, result.splits, strict=True)]
        f9_t = []
        f9_count = args.f9_pools if n <= args.f9_max else 0
        for ratings, result in zip(pools[:f9_count], results, strict=False):
            baseline, tf = timed(lambda r=ratings: enumerate_all(r))
            assert all(baseline[s.k][0] == s.gap for s in result.splits), "F9 disagrees"
            f9_t.append(tf)
        f9_solver_t = solver_t[: len(f9_t)]
        row = {
            "p50": quantile(solver_t, 0.5) * 1e3,
            "p99": quantile(solver_t, 0.99) * 1e3,
            "optimal": proven / len(pools),
        }
        cells = [
            str(n),
            str(len(pools)),
            f"{row['p50']:.2f}",
            f"{row['p99']:.2f}",
            f"{row['optimal']:.0%}",
        ]
        if f9_t:
            row["f9_ratio"] = statistics.median(f9_t) / statistics.median(f9_solver_t)
            cells += [
                f"{quantile(f9_t, 0.5) * 1e3:.0f}",
                f"{quantile(f9_t, 0.99) * 1e3:.0f}",
                f"{row['f9_ratio']:.0f}×",
            ]
        else:
            cells += ["–", "–", "–"]
        cells += [f"{quantile(greedy_t, 0.5) * 1e3:.2f}", f"{statistics.mean(excess):.1f}"]
        table.add_row(*cells)
        figures[n] = row
    console.print(table)
    console.print(
        "F9/solver is the ratio of the medians over the pools both ran on. "
        "Greedy excess gap: mean over pools and k of (greedy gap − optimal gap)."
    )
    targets = [
        ("N=24: ≥ 1000× faster than F9", figures.get(24, {}).get("f9_ratio", 0) >= 1000),
        ("N=32: p50 ≤ 5 ms", figures.get(32, {}).get("p50", 1e9) <= 5),
        ("N=32: p99 ≤ 25 ms", figures.get(32, {}).get("p99", 1e9) <= 25),
        ("N=64: p50 ≤ 100 ms", figures.get(64, {}).get("p50", 1e9) <= 100),
        ("N=100: p50 ≤ 500 ms", figures.get(100, {}).get("p50", 1e9) <= 500),
        ("N=100: optimal in ≥ 99 % of pools", figures.get(100, {}).get("optimal", 0) >= 0.99),
    ]
    if args.service_n:
        rng = random.Random(args.seed * 1000 + args.service_n)
        pools = [draw(rng, args.service_n) for _ in range(args.pools)]
        rows = asyncio.run(service_figures(pools))
        met = service_table(console, rows, args.service_n, len(pools))
        targets.append((f"N={args.service_n}: service ≤ 1.5× the solver, every k, optimal", met))
    for name, met in targets:
        console.print(f"  {'met' if met else 'MISSED'}  {name}")


if __name__ == "__main__":
    main()
