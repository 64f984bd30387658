"""The pool health page's reads: F6 by blocks of rounds, the reliability bins, rounds per
day, the players' uncertainty and the auto-tune log, aggregated in SQL in one snapshot.

Every figure leaves voided rounds out. The aggregates group in the database (a pool may
hold 100,000 rounds): only a few hundred rows come back, whatever the pool's size, and
the same statements run on SQLite and PostgreSQL, but for the day of a timestamp, which
each spells its own way (`_day`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import ColumnElement, Connection, String, case, false, func, literal, select

from synelo.domain import Change, Pool, pool_model
from synelo.ratings import k_factor
from synelo.ratings.brier import block_rounds
from synelo.store.core import Core
from synelo.store.rows import as_change
from synelo.store.tables import changes, players, pools, round_time, rounds

BLOCKS = 50  # at most this many points on the Brier chart
# How far a point of the Brier chart may stray from a calibrated pool's Brier by chance
# alone (two standard errors): its blocks hold enough rounds for that, 400
# (`ratings.brier.block_rounds`). A pool at B = 0.24 keeps 97.7 % of them under 0.25.
BAND = 0.025
MIN_BLOCK = block_rounds(BAND)
BINS = 10  # reliability bins of P_A: [0, 0.1), [0.1, 0.2) … [0.9, 1]
DAYS = 60  # the rounds-per-day chart's span, ending on the newest round's day
TUNES = 5  # auto-tunes listed, newest first


@dataclass(frozen=True, slots=True)
class BrierBlock:
    """F6 over the rounds of seq first…last that are not voided (`rounds` of them)."""

    first: int
    last: int
    rounds: int
    brier: float


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """The rounds whose P_A fell in [low, high): how many, their mean P_A and the observed
    frequency of A winning (O_A's mean: a draw counts ½, as in F6)."""

    low: float
    high: float
    rounds: int
    predicted: float
    observed: float


@dataclass(frozen=True, slots=True)
class ServerHealth:
    """One server's rounds in the pool: those rated (`rounds`, not voided) and voided, F6
    over the rated ones with its standard error (None: too few), and its newest report."""

    server_id: str
    rounds: int
    voided: int
    brier: float | None
    error: float | None
    last_seq: int
    last_round: str
    last_at: datetime


@dataclass(frozen=True, slots=True)
class PoolHealth:
    """What the health page shows beside `Store.quality`: the pool as read in the same
    snapshot, its rounds not voided, F6 by whole blocks of `block` seqs (the newest ending
    with the pool's newest round; none before `block` rounds), the reliability bins,
    the rounds of each day of the last DAYS (a day without rounds: 0), each active
    player's uncertainty figure (the model's `uncertainty` field, SynElo's K; empty if the
    model keeps none), the newest auto-tunes and the newest adopted one, and the newest
    change of the model or its parameters by anyone."""

    pool: Pool
    rounds: int
    block: int
    blocks: list[BrierBlock]
    bins: list[ReliabilityBin]
    days: list[tuple[date, int]]
    uncertainty: list[float]
    tunes: list[Change]
    last_change: Change | None = None  # the newest auto-tune adopted, however old
    # the newest re-rate that changed the model or its parameters: a PATCH (a switch
    # included) or an adopted auto-tune, whoever made it
    last_params_change: Change | None = None


def outcome_a() -> ColumnElement[float]:
    """F2's O_A in SQL: 1 when A won, ½ for a draw, 0 when B won (`round_score`)."""
    return case((rounds.c.winner == "A", 1.0), (rounds.c.winner == "draw", 0.5), else_=0.0)


def p_bin() -> ColumnElement[int]:
    """P_A's reliability bin, 0 … BINS − 1, by comparisons (exact, and the same on every
    database, where a cast to an integer rounds on one and truncates on another)."""
    edges = [(rounds.c.p_a < (i + 1) / BINS, i) for i in range(BINS - 1)]
    return case(*edges, else_=BINS - 1)


def _day(dialect: str, column: Any) -> ColumnElement[str]:
    """The UTC day of a timestamp as YYYY-MM-DD: SQLite keeps naive UTC text, PostgreSQL a
    timestamptz, whose day depends on the session's time zone unless taken in UTC."""
    if dialect == "sqlite":
        return func.strftime("%Y-%m-%d", column, type_=String)
    return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD", type_=String)


def pool_health(core: Core, pool: Pool) -> PoolHealth:
    """The pool health page's figures, read in one snapshot with the pool as it stands."""
    now = core.clock()
    with core.snapshot_read() as conn:
        return read_health(conn, core.pool_by_id(conn, pool), now)


def read_health(conn: Connection, pool: Pool, now: datetime) -> PoolHealth:
    """The health figures of `pool` (as read on `conn`, in the snapshot they are read in),
    `now` deciding which players are active (a round in the pool's stale period)."""
    kept = (rounds.c.pool_id == pool.id, rounds.c.voided == false())
    block = max(MIN_BLOCK, math.ceil(pool.rounds / BLOCKS))
    blocks, bins = _blocks_and_bins(conn, kept, block, pool.rounds)
    days = _days(conn, kept)
    uncertainty = _uncertainty(conn, pool, now)
    tunes = conn.execute(
        select(changes)
        .where(changes.c.pool_id == pool.id, changes.c.kind == "tune")
        .order_by(changes.c.id.desc())
        .limit(TUNES)
    ).all()
    # an adopted fit's entry holds its verdict as json.dumps writes it (`rerate.autotune.Fit`)
    adopted = conn.execute(
        select(changes)
        .where(
            changes.c.pool_id == pool.id,
            changes.c.kind == "tune",
            changes.c.value.like('%"adopted": true%'),
        )
        .order_by(changes.c.id.desc())
        .limit(1)
    ).first()
    # a re-rate's entry holds the parameters it swapped in (`generations`); a PATCH that set
    # only the visibility or the auto-tuning, and an auto-tune not adopted, hold none
    params_change = conn.execute(
        select(changes)
        .where(
            changes.c.pool_id == pool.id,
            changes.c.kind.in_(("patch", "tune")),
            changes.c.value.like('%"params": {%'),
        )
        .order_by(changes.c.id.desc())
        .limit(1)
    ).first()
    return PoolHealth(
        pool,
        sum(b.rounds for b in bins),
        block,
        blocks,
        bins,
        days,
        uncertainty,
        [as_change(row) for row in tunes],
        None if adopted is None else as_change(adopted),
        None if params_change is None else as_change(params_change),
    )


def health_version(store: Core, pool: Pool) -> tuple[int, ...]:
    """What the health figures depend on besides the time, in one cheap read: the pool's
    generation, rounds and voids, and its newest admin log entry (an auto-tune only
    logged, an admin's set…). Equal versions: equal figures, but for the players turning
    stale meanwhile."""
    newest = select(func.max(changes.c.id)).where(changes.c.pool_id == pools.c.id)
    stmt = select(
        pools.c.generation, pools.c.rounds, pools.c.voided, newest.scalar_subquery()
    ).where(pools.c.id == pool.id)
    with store.snapshot_read() as conn:
        row = conn.execute(stmt).first()
    if row is None:
        return (pool.id, -1)
    return (pool.id, *(-1 if v is None else int(v) for v in row))


def _blocks_and_bins(
    conn: Connection, kept: tuple[Any, ...], block: int, last: int
) -> tuple[list[BrierBlock], list[ReliabilityBin]]:
    """F6 over each whole block of `block` seqs (Brier = mean (P_A − O_A)²) counted back
    from seq `last`, oldest first, and the reliability bins (all BINS of them, an empty one
    with 0 rounds): one scan, grouped by block and bin, whose sums add up either way. The
    oldest rounds, too few for a block, are in the bins only."""
    o = outcome_a()
    inner = (
        select(
            ((literal(last) - rounds.c.seq) // literal(block)).label("block"),
            p_bin().label("bin"),
            rounds.c.p_a,
            o.label("o"),
            ((rounds.c.p_a - o) * (rounds.c.p_a - o)).label("e2"),
        )
        .where(*kept)
        .subquery()
    )
    stmt = select(
        inner.c.block,
        inner.c.bin,
        func.count(),
        func.sum(inner.c.p_a),
        func.sum(inner.c.o),
        func.sum(inner.c.e2),
    ).group_by(inner.c.block, inner.c.bin)
    by_block: dict[int, list[float]] = {}
    by_bin: dict[int, list[float]] = {}
    for n, b, count, p, won, e2 in conn.execute(stmt):
        sums = by_block.setdefault(int(n), [0, 0.0])
        sums[0] += count
        sums[1] += e2
        cell = by_bin.setdefault(int(b), [0, 0.0, 0.0])
        cell[0] += count
        cell[1] += p
        cell[2] += won
    blocks = [
        BrierBlock(last - (n + 1) * block + 1, last - n * block, int(count), e2 / count)
        for n, (count, e2) in sorted(by_block.items(), reverse=True)
        if n < last // block
    ]
    bins = []
    for i in range(BINS):
        count, p, won = by_bin.get(i, (0, math.nan, math.nan))
        bins.append(
            ReliabilityBin(
                i / BINS, (i + 1) / BINS, int(count), p / (count or 1), won / (count or 1)
            )
        )
    return blocks, bins


def server_health(core: Core, pool: Pool) -> list[ServerHealth]:
    """Each server's figures (`_servers`), read in one snapshot with the pool as it stands.
    Apart from the health page's: the scan reads every round's row, not an index (about
    as long again as the page's figures at 100,000 rounds), so only the server view pays
    for it."""
    with core.snapshot_read() as conn:
        return _servers(conn, core.pool_by_id(conn, pool))


def _servers(conn: Connection, pool: Pool) -> list[ServerHealth]:
    """Each server's rounds, F6 and its standard error (from the spread of its rounds'
    (P_A − O_A)²), and newest report, the newest reporting first: one scan grouped by
    server, then the newest rounds by their seq."""
    o = outcome_a()
    e2 = (rounds.c.p_a - o) * (rounds.c.p_a - o)
    rated = case((rounds.c.voided == false(), 1), else_=0)
    stmt = (
        select(
            rounds.c.server_id,
            func.sum(rated),
            func.count(),
            func.sum(rated * e2),
            func.sum(rated * e2 * e2),
            func.max(rounds.c.seq),
        )
        .where(rounds.c.pool_id == pool.id)
        .group_by(rounds.c.server_id)
    )
    found = conn.execute(stmt).all()
    newest = {
        int(seq): (str(round_id), at)
        for seq, round_id, at in conn.execute(
            select(rounds.c.seq, rounds.c.round_id, rounds.c.created_at).where(
                rounds.c.pool_id == pool.id, rounds.c.seq.in_([int(r[5]) for r in found])
            )
        )
    }
    out = []
    for server_id, n, count, total, squares, last in found:
        n = int(n or 0)
        brier = total / n if n else None
        error = None
        if n > 1 and brier is not None:
            variance = max(0.0, (squares - n * brier * brier) / (n - 1))
            error = math.sqrt(variance / n)
        round_id, at = newest[int(last)]
        out.append(
            ServerHealth(str(server_id), n, int(count) - n, brier, error, int(last), round_id, at)
        )
    return sorted(out, key=lambda s: -s.last_seq)


def _days(conn: Connection, kept: tuple[Any, ...]) -> list[tuple[date, int]]:
    """The rounds played on each of the DAYS days up to the newest round's (UTC), 0 on a
    day without; fewer days when the pool's first round is more recent. A round's day is
    when it was played (`round_time`), so an imported history keeps its days."""
    played = round_time()
    newest = conn.execute(select(func.max(played)).where(*kept)).scalar()
    if newest is None:
        return []
    last = newest.date()
    since = datetime.combine(last - timedelta(days=DAYS - 1), datetime.min.time(), newest.tzinfo)
    day = _day(conn.dialect.name, played).label("day")
    stmt = select(day, func.count()).where(*kept, played >= since).group_by(day)
    counts = {date.fromisoformat(d): int(n) for d, n in conn.execute(stmt)}
    first = min(counts, default=last)
    return [
        (first + timedelta(days=i), counts.get(first + timedelta(days=i), 0))
        for i in range((last - first).days + 1)
    ]


def _uncertainty(conn: Connection, pool: Pool, now: datetime) -> list[float]:
    """Each active player's uncertainty figure: SynElo's F5 K = K_min + (K_max − K_min)·C·G
    from their stored C and rating (as the lookup computes it), another model's
    `uncertainty` field from their state; none for a model that keeps no such figure."""
    active = (
        players.c.pool_id == pool.id,
        players.c.last_played >= now - timedelta(days=pool.params.t_stale_days),
    )
    if pool.is_synelo:
        params = pool.params
        stmt = select(players.c.convergence, players.c.rating).where(*active)
        return [k_factor(c, r, params) for c, r in conn.execute(stmt)]
    model = pool_model(pool)
    name = model.uncertainty
    if name is None:
        return []
    states = conn.execute(select(players.c.state).where(*active)).scalars()
    return [model.fields(model.decode(orjson.loads(s) if s else {}))[name] for s in states]
