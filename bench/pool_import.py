"""Benchmark of `synelo pool import` against the in-process round writer it stands for.

Method
------
A history of ``--rounds`` 12v12 rounds among 500 players (SteamID64s, a random winner, a
map and display names) is written once. Each repetition then rates it into three new
pools of one database (SQLite in a temporary folder, or a fresh PostgreSQL schema of
``--pg-url`` with ``--database postgresql``), in turn:

- ``writer``: the rounds as reports straight into a ``RoundWriter`` with the service's
  settings (batches of 32, no pause): the in-process writer's speed;
- ``import``: ``history_import.rate_reports``, the rating phase of the command (on SQLite
  batches of 64 with a 0.1 s pause after each, which lets a running service's writer in);
- ``command``: ``synelo pool import`` as an operator runs it, a process of its own, timed
  from its start to its end: the Python start, the checks of every line and the rating.

Each repetition's three pools start empty, so each rates the same rounds against the same
state. The median rounds a second of each, and each one's ratio to ``writer`` measured in
the same repetitions, are printed. Timings on a loaded machine are noisy: compare the ratios.
The per-token round limit of the API (50 rounds a second by default) is the bulk path's
other choice; it needs no measuring.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from sqlalchemy import create_engine, text

from synelo.config import Settings
from synelo.service.history_import import plan_import, rate_reports
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store
from synelo.store.writer import RoundWriter

PLAYERS = 500


def write_history(path: Path, rounds: int) -> None:
    rng = random.Random(1)
    ids = [str(76561197960265728 + n) for n in range(1, PLAYERS + 1)]
    with path.open("wb") as f:
        for i in range(rounds):
            players = rng.sample(ids, 24)
            match = {
                "id": f"b{i}",
                "teams": {"A": players[:12], "B": players[12:]},
                "winner": rng.choice("AB"),
                "map": "pl_upward",
                "time": f"2026-10-{1 + i * 30 // rounds:02d}T20:00:00Z",
                "names": {p: f"P{p[-3:]}" for p in players},
            }
            f.write(orjson.dumps(match) + b"\n")


@contextmanager
def database(kind: str, pg_url: str) -> Iterator[str]:
    """A migrated empty database's URL, removed afterwards."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{folder}/bench.db"
            migrate(create_store_engine(url, pool_size=1))
            yield url
        return
    schema = f"synelo_bench_import_{uuid.uuid4().hex[:8]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in pg_url else "?"
    url = f"{pg_url}{sep}options=-csearch_path%3D{schema}"
    try:
        migrate(create_store_engine(url, pool_size=1))
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def new_pool(store: Store) -> str:
    settings = Settings()
    name = f"b{uuid.uuid4().hex[:10]}"
    store.create_pool(name, 12, settings.rating_params(settings.pool_theta(12)))
    return name


def by_writer(store: Store, history: Path) -> float:
    """Seconds the service's RoundWriter takes to rate the history's reports."""
    name = new_pool(store)
    reports = [r for _, r in plan_import(history, store.get_pool(name), "bench").reports]
    writer = RoundWriter(store)
    started = time.perf_counter()
    futures = [writer.submit(name, report) for report in reports]
    for future in futures:
        future.result()
    elapsed = time.perf_counter() - started
    writer.close()
    return elapsed


def by_import(store: Store, history: Path) -> float:
    """Seconds `rate_reports` (the command's rating phase) takes."""
    name = new_pool(store)
    plan = plan_import(history, store.get_pool(name), "bench")
    started = time.perf_counter()
    rate_reports(store, name, plan.reports)
    return time.perf_counter() - started


def by_command(store: Store, url: str, history: Path) -> float:
    """Seconds `synelo pool import` takes, from its start to its end."""
    name = new_pool(store)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(SYNELO_DATABASE_URL=url, SYNELO_DATA_DIR=str(history.parent))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "synelo", "pool", "import", name, str(history)],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, database(args.database, args.pg_url) as url:
        history = Path(folder) / "history.jsonl"
        write_history(history, args.rounds)
        store = Store(create_store_engine(url, pool_size=2))
        times: dict[str, list[float]] = {"writer": [], "import": [], "command": []}
        for _ in range(args.repeat):
            times["writer"].append(by_writer(store, history))
            times["import"].append(by_import(store, history))
            times["command"].append(by_command(store, url, history))
    print(f"{args.rounds} 12v12 rounds on {args.database}, {args.repeat} repetitions")
    for what, seconds in times.items():
        ratios = [w / s for w, s in zip(times["writer"], seconds, strict=True)]
        print(
            f"  {what:8} {args.rounds / statistics.median(seconds):7.0f} rounds/s, "
            f"{statistics.median(ratios):.2f} × the writer's speed"
        )


if __name__ == "__main__":
    main()
