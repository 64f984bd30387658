"""Benchmark: does an anonymous answer's time tell a private pool from one that does not exist?

Method
------
1. ``synelo init`` and ``synelo serve`` (one worker) on SQLite, and with ``--database
   postgresql`` on a fresh schema of the PostgreSQL database at ``--pg-url``, without rate
   limits (the public limit of 20 requests/s would refuse most samples).
2. An admin token makes a private pool and posts ``--rounds`` rounds of 6v6 into it, so that
   it has players, a board and a journal; a second name is of no pool.
3. One keep-alive connection (a plain socket, so that the client adds little noise) sends
   ``--samples`` pairs of anonymous GETs of the same route, one for each name, in a random
   order within each pair, after ``--warm-up`` pairs it does not count. Interleaved pairs
   put both names under the same conditions (the machine's other load, its clock speed).
   Every answer must be a 404 of the same length.
4. It prints, for each route: the median time of each name, the median of the paired
   differences (private minus none) with a 95 % bootstrap interval, and the share of pairs
   in which the private pool's answer was the slower one (0.5 when time tells nothing).

The issue's probe measured 1.2–1.7 ms more for the private pool (150–200 interleaved samples,
SQLite and PostgreSQL).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import update  # noqa: E402  (bench/update.py: the server, schemas, keep-alive requests)

ROUTES = (
    "/v1/public/pools/{pool}/leaderboard",
    "/v1/public/pools/{pool}/players/76561197960265729",
    "/v1/public/pools/{pool}/health",
    "/pools/{pool}",  # the pool's page
)


class Get(update.KeepAlive):
    """A keep-alive connection that sends GETs."""

    def __init__(self, url: str) -> None:
        super().__init__(url, {})
        self.host = url.split("//", 1)[1]

    def get(self, path: str) -> tuple[int, bytes, float]:
        """Status, body and seconds from the request's send to its answer's last byte."""
        self.head = f"GET {path} HTTP/1.1\r\nhost: {self.host}\r\n".encode()
        start = time.perf_counter()
        status, body = self.post(b"")
        return status, body, time.perf_counter() - start


def fill(base: str, pool: str, rounds: int) -> None:
    headers = {"Authorization": f"Bearer {update.ADMIN_TOKEN}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as c:
        r = c.post("/v1/pools", json={"name": pool, "team_size": 6})
        if r.status_code != 201:
            raise update.BenchError(r.text)
        rng = random.Random(1)
        for n in range(rounds):
            ids = [str(76561197960265729 + i) for i in rng.sample(range(60), 12)]
            body = {
                "round_id": f"r{n}",
                "server_id": "bench",
                "winner": rng.choice("AB"),
                "teams": {"A": ids[:6], "B": ids[6:]},
            }
            r = c.post(f"/v1/pools/{pool}/rounds", json=body)
            if r.status_code != 201:
                raise update.BenchError(r.text)


def bootstrap(diffs: list[float], rng: random.Random, n: int = 2000) -> tuple[float, float]:
    """A 95 % interval of the median of `diffs`, by resampling."""
    medians = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(n))
    return medians[int(0.025 * n)], medians[int(0.975 * n) - 1]


def measure(base: str, private: str, none: str, args: argparse.Namespace) -> list[str]:
    rng = random.Random(args.seed)
    conn = Get(base)
    lines = []
    try:
        for route in ROUTES:
            times: dict[str, list[float]] = {private: [], none: []}
            sizes: set[tuple[int, int]] = set()
            for i in range(args.warm_up + args.samples):
                pair = [private, none]
                rng.shuffle(pair)
                for name in pair:
                    status, body, seconds = conn.get(route.format(pool=name))
                    sizes.add((status, len(body) - len(name)))
                    if i >= args.warm_up:
                        times[name].append(seconds * 1000)
            if len(sizes) != 1 or next(iter(sizes))[0] != 404:
                raise update.BenchError(f"{route}: answers differ or are not 404: {sizes}")
            diffs = [a - b for a, b in zip(times[private], times[none], strict=True)]
            low, high = bootstrap(diffs, rng)
            slower = sum(d > 0 for d in diffs) / len(diffs)
            lines.append(
                f"| {args.database} | `{route}` | {statistics.median(times[private]):.3f} | "
                f"{statistics.median(times[none]):.3f} | {statistics.median(diffs):+.3f} "
                f"[{low:+.3f}, {high:+.3f}] | {slower:.2f} |"
            )
    finally:
        conn.close()
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    p.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    p.add_argument("--samples", type=int, default=1000, help="pairs measured per route")
    p.add_argument("--warm-up", type=int, default=100, help="pairs sent first, not counted")
    p.add_argument("--rounds", type=int, default=200, help="rounds in the private pool")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    private, none = f"p{uuid.uuid4().hex[:8]}", f"n{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = update.bench_env(folder)
        env.update(SYNELO_RATE_PUBLIC_REQUESTS="", SYNELO_AUTOTUNE_CHECK_S="0")
        if args.database == "postgresql":
            with update.pg_schemas(args.pg_url, ["timing"]) as urls:
                env["SYNELO_DATABASE_URL"] = urls["timing"]
                lines = run(env, folder, private, none, args)
        else:
            lines = run(env, folder, private, none, args)
    print(f"{update.machine()}; {args.samples} interleaved pairs per route, ms")
    print("| database | route | private | no pool | difference, median [95 %] | private slower |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    print("\n".join(lines))


def run(
    env: dict[str, str], folder: Path, private: str, none: str, args: argparse.Namespace
) -> list[str]:
    update.synelo_init(env)
    with update.server(env, folder / "serve.log") as (base, _pid):
        fill(base, private, args.rounds)
        return measure(base, private, none, args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
