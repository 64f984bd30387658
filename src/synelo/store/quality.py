"""A pool's prediction quality and health counts as the API reports them: F6 over all and
recent rounds, its players by shadow and stale, and Θ fitted to its rounds. (The health
page's charts are `store.health`'s.)"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import false, func, select

from synelo.domain import Pool, PoolQuality, UnknownPool
from synelo.ratings.brier import brier_score
from synelo.ratings.synelo import round_score
from synelo.store.core import Core
from synelo.store.rows import as_change, as_pool
from synelo.store.tables import changes, players, pools, rounds

THETA_FIT_ROUNDS = 100_000  # the quality endpoint fits Θ to at most this many recent rounds


def quality(core: Core, pool_name: str, recent: int) -> tuple[Pool, PoolQuality]:
    """F6 and the pool's health counts, read in one snapshot."""
    # here, not above: Θ's fit needs NumPy, which the commands that only store should not load
    from synelo.ratings.theta import MIN_ROUNDS as THETA_MIN_ROUNDS
    from synelo.ratings.theta import fit_theta_interval

    now = core.clock()
    with core.snapshot_read() as conn:
        row = conn.execute(select(pools).where(pools.c.name == pool_name)).first()
        if row is None:
            raise UnknownPool(pool_name)
        pool = as_pool(row)
        stale_before = now - timedelta(days=pool.params.t_stale_days)
        counts = conn.execute(
            select(
                func.count().label("players"),
                func.count().filter(players.c.rounds_played < pool.params.t_shadow).label("shadow"),
                func.count().filter(players.c.last_played < stale_before).label("stale"),
                func.avg(players.c.convergence).label("mean_c"),
            ).where(players.c.pool_id == pool.id)
        ).one()
        last = conn.execute(
            select(rounds.c.p_a, rounds.c.winner)
            .where(rounds.c.pool_id == pool.id, rounds.c.voided == false())
            .order_by(rounds.c.seq.desc())
            .limit(recent)
        ).all()
        fit_rows = (
            []
            if pool.rounds < THETA_MIN_ROUNDS or not pool.is_synelo
            else conn.execute(
                select(rounds.c.sum_a - rounds.c.sum_b, rounds.c.winner)
                .where(rounds.c.pool_id == pool.id, rounds.c.voided == false())
                .order_by(rounds.c.seq.desc())
                .limit(THETA_FIT_ROUNDS)
            ).all()
        )
        last_fit = conn.execute(
            select(changes)
            .where(changes.c.pool_id == pool.id, changes.c.kind == "tune")
            .order_by(changes.c.id.desc())
            .limit(1)
        ).first()
    recent_brier = brier_score((p - round_score(w, "A")) ** 2 for p, w in last)
    theta = fit_theta_interval(
        [gap for gap, _ in fit_rows],
        [round_score(w, "A") for _, w in fit_rows],
        pool.params.theta,
    )
    mean_c = None if counts.mean_c is None or not pool.is_synelo else float(counts.mean_c)
    return pool, PoolQuality(
        rounds=pool.rated,
        players=counts.players,
        shadow=counts.shadow,
        stale=counts.stale,
        mean_convergence=mean_c,
        brier_all=pool.brier_sum / pool.rated if pool.rated else None,
        brier_recent=recent_brier,
        recent_rounds=len(last),
        theta_fit=theta,
        last_fit=None if last_fit is None else as_change(last_fit),
    )
