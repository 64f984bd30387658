"""Benchmark of re-rating a pool while it keeps serving, on SQLite and on PostgreSQL.

Method
------
1. A SynElo pool (team size 12) gets ``--history`` 12v12 rounds (default 100,000 over 2,000
   players: 2.4 M journal rows) rated in this process by the service's own write path, the
   ``RoundWriter`` (as ``bench/update.py`` fills its history).
2. ``synelo serve`` (one worker) runs on that database as a subprocess.
3. ``PATCH /v1/pools/default`` changes K_max, which re-rates every stored round in the
   background. From the PATCH until the job reports done, load threads in this process keep
   asking the server: ``--lookups`` threads post lookups of 24 random players, together
   ``--lookup-rate`` a second (what many game servers' joins ask; each one's latency is
   recorded from its scheduled time, so a stall counts in full), and one thread posts a new
   12v12 round every ``--round-every`` seconds (each must be 201).
4. Then the history's middle round is voided and the void undone (two more re-rates), and
   every player's lookup (rating, rounds, C, K, last played) is compared with the one
   before: it must be back exactly.
5. Reported: the time from the PATCH until the job says done (the new ratings in force;
   the old generation's clean-up follows), the lookups' count and p50/p99 latency, the
   rounds accepted meanwhile and their p99, the void and unvoid's time, and whether every
   rating came back. Targets: swap ≤ 60 s, lookup p99 ≤ 50 ms, every round accepted, every
   rating back.

The load shares the machine with the server and the job: the latencies are an upper bound.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import update  # noqa: E402  (bench/update.py: the fill and the server)

TARGET_SWAP_S = 60.0
TARGET_P99_MS = 50.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def load(
    base: str, stop: threading.Event, population: int, lookups: int, rate: float, every: float
) -> dict:
    """`rate` lookups a second over `lookups` threads and a round every `every` s, until
    `stop`."""
    latencies: list[float] = []
    round_latencies: list[float] = []
    posted = [0, 0]  # accepted, refused
    rng = random.Random(7)
    interval = lookups / rate  # each thread's period

    def ask() -> None:
        local = random.Random(threading.get_ident())
        with httpx.Client(base_url=base, headers=_auth(update.SERVER_TOKEN)) as c:
            due = time.perf_counter() + local.random() * interval
            while not stop.is_set():
                time.sleep(max(0.0, due - time.perf_counter()))
                ids = update.steam_ids(local, population)
                r = c.post("/v1/pools/default/players/lookup", json={"steam_ids": ids})
                latencies.append(time.perf_counter() - due)  # from when it was due
                due += interval
                if r.status_code != 200:
                    raise update.BenchError(f"lookup answered {r.status_code}: {r.text}")

    def send() -> None:
        with httpx.Client(base_url=base, headers=_auth(update.SERVER_TOKEN)) as c:
            n = 0
            while not stop.wait(every):
                body = update.round_body(rng, f"during-{n}", population)
                n += 1
                start = time.perf_counter()
                r = c.post("/v1/pools/default/rounds", json=body, timeout=120)
                round_latencies.append(time.perf_counter() - start)
                posted[0 if r.status_code == 201 else 1] += 1

    threads = [threading.Thread(target=ask) for _ in range(lookups)]
    threads.append(threading.Thread(target=send))
    for t in threads:
        t.start()
    return {
        "threads": threads,
        "latencies": latencies,
        "rounds": round_latencies,
        "posted": posted,
    }


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def run_one(name: str, env: dict[str, str], data_dir: Path, args: argparse.Namespace) -> dict:
    update.synelo_init(env)
    print(f"[{name}] filling {args.history:,} rounds…", flush=True)
    fill_s = fill(data_dir, env, args)
    print(f"[{name}] filled in {fill_s:.0f} s", flush=True)
    with update.server(env, data_dir / "server.log") as (base, _pid):
        stop = threading.Event()
        running = load(
            base, stop, args.population, args.lookups, args.lookup_rate, args.round_every
        )
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
        exact, void_s = void_and_undo(admin, base, args)
        admin.close()
    lat = running["latencies"]
    return {
        "backend": name,
        "rounds": job["total"],
        "swap_s": swap_s,
        "lookups": len(lat),
        "p50_ms": 1000 * percentile(lat, 0.50),
        "p99_ms": 1000 * percentile(lat, 0.99),
        "round_p99_ms": 1000 * percentile(running["rounds"], 0.99),
        "void_s": void_s,
        "exact": exact,
        "accepted": running["posted"][0],
        "refused": running["posted"][1],
        "after": pool["rounds"],
    }


def everyone(base: str, population: int) -> dict[str, dict]:
    """Every player's lookup, 256 at a time."""
    ids = [str(update.STEAM_BASE + n) for n in range(1, population + 1)]
    out = {}
    with httpx.Client(base_url=base, headers=_auth(update.SERVER_TOKEN), timeout=60) as c:
        for at in range(0, len(ids), 256):
            r = c.post("/v1/pools/default/players/lookup", json={"steam_ids": ids[at : at + 256]})
            out.update({p["steam_id"]: p for p in r.json()["players"]})
    return out


def void_and_undo(admin: httpx.Client, base: str, args: argparse.Namespace) -> tuple[bool, float]:
    """Void the history's middle round, undo it: whether every player's lookup (rating,
    rounds, C, K, last played) is back exactly, and the seconds of the two re-rates."""
    before = everyone(base, args.population)
    middle = f"fill-{args.history // 2}"
    start = time.perf_counter()
    for action, body in (("void", {"reason": "bench"}), ("unvoid", {})):
        r = admin.post(f"/v1/pools/default/rounds/{middle}/{action}", json=body)
        if r.status_code != 202:
            raise update.BenchError(f"{action} answered {r.status_code}: {r.text}")
        while (job := admin.get(r.headers["location"]).json())["status"] == "running":
            time.sleep(0.2)
        if job["status"] != "done":
            raise update.BenchError(f"the {action} failed: {job['error']}")
    return everyone(base, args.population) == before, time.perf_counter() - start


def fill(data_dir: Path, env: dict[str, str], args: argparse.Namespace) -> float:
    """The history, through the service's RoundWriter (update.fill_history's), into the
    database the server will use: the URL in `env`, or SQLite in `data_dir`."""
    url = update.database_url(data_dir, env.get("SYNELO_DATABASE_URL"))
    return update.fill_history(url, args.history, args.population, args.seed)


def print_header() -> None:
    print(
        "| database | rounds re-rated | to the swap | lookups | lookup p50 | lookup p99 "
        "| rounds accepted | round p99 | void + unvoid | every rating back |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|", flush=True)


def print_row(r: dict) -> None:
    print(
        f"| {r['backend']} | {r['rounds']:,} | {r['swap_s']:.1f} s | {r['lookups']:,} | "
        f"{r['p50_ms']:.1f} ms | {r['p99_ms']:.1f} ms | {r['accepted']} of "
        f"{r['accepted'] + r['refused']} | {r['round_p99_ms']:.0f} ms | {r['void_s']:.0f} s | "
        f"{'yes' if r['exact'] else 'NO'} |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", type=int, default=100_000)
    parser.add_argument("--population", type=int, default=2_000)
    parser.add_argument("--lookups", type=int, default=4, help="lookup threads")
    parser.add_argument("--lookup-rate", type=float, default=40.0, help="lookups a second")
    parser.add_argument("--round-every", type=float, default=0.1, help="seconds between rounds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args(argv)
    results = []
    print_header()
    for name in ("sqlite", "postgresql"):
        if args.backend not in (name, "both"):
            continue
        with tempfile.TemporaryDirectory(prefix="synelo-rerate-") as folder:
            data_dir = Path(folder)
            env = update.bench_env(data_dir)
            if name == "postgresql":
                with update.pg_schemas(update.PG_URL, ["rerate"]) as urls:
                    env["SYNELO_DATABASE_URL"] = urls["rerate"]
                    results.append(run_one(name, env, data_dir, args))
            else:
                results.append(run_one(name, env, data_dir, args))
            print_row(results[-1])
    print()
    print_header()
    ok = True
    for r in results:
        print_row(r)
        ok &= (
            r["swap_s"] <= TARGET_SWAP_S
            and r["p99_ms"] <= TARGET_P99_MS
            and not r["refused"]
            and r["exact"]
        )
    print(
        f"\ntargets: swap ≤ {TARGET_SWAP_S:.0f} s, lookup p99 ≤ {TARGET_P99_MS:.0f} ms, "
        f"every round accepted, void + unvoid exact: {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
