"""Benchmark of re-rating a pool while it keeps serving, on SQLite and on PostgreSQL.

Method
------
1. A SynElo pool (team size 12) gets ``--history`` 12v12 rounds (default 100,000 over 2,000
   players: 2.4 M journal rows) rated in this process by the service's own write path, the
   ``RoundWriter`` (as ``bench/update.py`` fills its history).
2. ``synelo serve`` (one worker) runs on that database as a subprocess.
3. ``PATCH /v1/pools/default`` changes K_max, which re-rates every stored round in the
   background. From the PATCH until the job reports done, load threads in this process keep
   asking the server: ``--lookups`` threads post lookups of 24 random players back to back
   (each one's latency recorded), and one thread posts a new 12v12 round every
   ``--round-every`` seconds (each must be 201).
4. Reported: the job's time from its start to the swap (the new ratings in force) and to
   the end of the clean-up of the old journal generation, the lookups' count and p50/p99
   latency, and the rounds accepted meanwhile. Targets: swap ≤ 60 s, lookup p99 ≤ 50 ms,
   every round accepted.

The load shares the machine with the server and the job: the latencies are an upper bound.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).parent))
import update  # noqa: E402  (bench/update.py: the fill and the server)

from synelo.config import Settings  # noqa: E402

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
TARGET_SWAP_S = 60.0
TARGET_P99_MS = 50.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@contextmanager
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema for the run, dropped afterwards; its database URL."""
    schema = f"synelo_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def load(base: str, stop: threading.Event, population: int, lookups: int, every: float) -> dict:
    """Lookups back to back on `lookups` threads and a round every `every` s, until `stop`."""
    latencies: list[float] = []
    posted = [0, 0]  # accepted, refused
    rng = random.Random(7)

    def ask() -> None:
        local = random.Random(threading.get_ident())
        with httpx.Client(base_url=base, headers=_auth(update.SERVER_TOKEN)) as c:
            while not stop.is_set():
                ids = update.steam_ids(local, population)
                start = time.perf_counter()
                r = c.post("/v1/pools/default/players/lookup", json={"steam_ids": ids})
                latencies.append(time.perf_counter() - start)
                if r.status_code != 200:
                    raise update.BenchError(f"lookup answered {r.status_code}: {r.text}")

    def send() -> None:
        with httpx.Client(base_url=base, headers=_auth(update.SERVER_TOKEN)) as c:
            n = 0
            while not stop.wait(every):
                body = update.round_body(rng, f"during-{n}", population)
                n += 1
                r = c.post("/v1/pools/default/rounds", json=body, timeout=120)
                posted[0 if r.status_code == 201 else 1] += 1

    threads = [threading.Thread(target=ask) for _ in range(lookups)]
    threads.append(threading.Thread(target=send))
    for t in threads:
        t.start()
    return {"threads": threads, "latencies": latencies, "posted": posted}


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def run_one(name: str, env: dict[str, str], data_dir: Path, args: argparse.Namespace) -> dict:
    update.synelo_init(env)
    print(f"[{name}] filling {args.history:,} rounds…", flush=True)
    fill_s = fill(data_dir, env, args)
    print(f"[{name}] filled in {fill_s:.0f} s", flush=True)
    with update.server(env, data_dir / "server.log") as (base, _pid):
        stop = threading.Event()
        running = load(base, stop, args.population, args.lookups, args.round_every)
        time.sleep(1.0)  # the load runs before the job starts
        admin = httpx.Client(base_url=base, headers=_auth(update.ADMIN_TOKEN), timeout=60)
        start = time.perf_counter()
        r = admin.patch("/v1/pools/default", json={"params": {"k_max": 40}, "reason": "bench"})
        if r.status_code != 202:
            raise update.BenchError(f"PATCH answered {r.status_code}: {r.text}")
        job_url = r.headers["location"]
        while (job := admin.get(job_url).json())["status"] == "running":
            time.sleep(0.2)
        swap_s = time.perf_counter() - start
        if job["status"] != "done":
            raise update.BenchError(f"the job failed: {job['error']}")
        stop.set()
        for t in running["threads"]:
            t.join()
        pool = admin.get("/v1/pools/default").json()
        admin.close()
    lat = running["latencies"]
    return {
        "backend": name,
        "rounds": job["total"],
        "swap_s": swap_s,
        "lookups": len(lat),
        "p50_ms": 1000 * percentile(lat, 0.50),
        "p99_ms": 1000 * percentile(lat, 0.99),
        "accepted": running["posted"][0],
        "refused": running["posted"][1],
        "after": pool["rounds"],
    }


def fill(data_dir: Path, env: dict[str, str], args: argparse.Namespace) -> float:
    """The history, through the service's RoundWriter (update.fill_history's, for either
    database: on PostgreSQL the engine comes from the URL in `env`)."""
    url = env.get("SYNELO_DATABASE_URL")
    if url is None:
        return update.fill_history(data_dir, args.history, args.population, args.seed)
    settings = Settings(data_dir=data_dir, database_url=url)
    original = update.fill_engine
    update.fill_engine = lambda _dir: update.create_store_engine(settings.sqlalchemy_url)
    try:
        return update.fill_history(data_dir, args.history, args.population, args.seed)
    finally:
        update.fill_engine = original


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", type=int, default=100_000)
    parser.add_argument("--population", type=int, default=2_000)
    parser.add_argument("--lookups", type=int, default=2, help="lookup threads")
    parser.add_argument("--round-every", type=float, default=0.1, help="seconds between rounds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args(argv)
    results = []
    for name in ("sqlite", "postgresql"):
        if args.backend not in (name, "both"):
            continue
        with tempfile.TemporaryDirectory(prefix="synelo-rerate-") as folder:
            data_dir = Path(folder)
            env = update.bench_env(data_dir)
            if name == "postgresql":
                with pg_schema() as url:
                    env["SYNELO_DATABASE_URL"] = url
                    results.append(run_one(name, env, data_dir, args))
            else:
                results.append(run_one(name, env, data_dir, args))
    print()
    print("| database | rounds re-rated | to the swap | lookups | p50 | p99 | rounds accepted |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    ok = True
    for r in results:
        print(
            f"| {r['backend']} | {r['rounds']:,} | {r['swap_s']:.1f} s | {r['lookups']:,} | "
            f"{r['p50_ms']:.1f} ms | {r['p99_ms']:.1f} ms | {r['accepted']} of "
            f"{r['accepted'] + r['refused']} |"
        )
        ok &= r["swap_s"] <= TARGET_SWAP_S and r["p99_ms"] <= TARGET_P99_MS and not r["refused"]
    print(
        f"\ntargets: swap ≤ {TARGET_SWAP_S:.0f} s, lookup p99 ≤ {TARGET_P99_MS:.0f} ms, "
        f"every round accepted: {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
