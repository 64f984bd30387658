"""A player's journal and the pool's: a player's history, chart and win/loss record walked
down their chain, their recent trend, and every round with its participants (the export a
re-rate or an audit replays).

A player's journal rows form a chain (`prev_id`) from `players.last_journal`: every walk
here follows it by primary key, and reads only the generation in force.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import CTE, Column, Connection, func, literal, select

from synelo.domain import Change, JournalEntry, JournalRound, Pool, RatingStep, UnknownPool
from synelo.store.core import Core
from synelo.store.rows import as_change, as_pool
from synelo.store.tables import UtcDateTime, changes, journal, players, pools, rounds


def history(
    core: Core, pool: Pool, key: str, limit: int, before: int | None = None
) -> list[JournalEntry]:
    """The journal of one player, newest first: from its newest entry, or from the entry
    preceding journal id `before`. Walks the player's chain by primary key."""
    with core.read() as conn:
        head = conn.execute(
            select(players.c.id, players.c.last_journal).where(
                players.c.pool_id == pool.id, players.c.player_key == key
            )
        ).first()
        if head is None:
            return []
        start = head.last_journal
        if before is not None:
            start = conn.execute(
                select(journal.c.prev_id).where(
                    journal.c.id == before,
                    journal.c.player_id == head.id,
                    journal.c.generation
                    == select(pools.c.generation).where(pools.c.id == pool.id).scalar_subquery(),
                )
            ).scalar()
        if start is None:
            return []
        chain = (
            select(journal.c.id, journal.c.prev_id, literal(1).label("depth"))
            .where(journal.c.id == start)
            .cte("chain", recursive=True)
        )
        chain = chain.union_all(
            select(journal.c.id, journal.c.prev_id, (chain.c.depth + 1).label("depth"))
            .join(chain, journal.c.id == chain.c.prev_id)
            .where(chain.c.depth < limit)
        )
        stmt = (
            select(
                journal.c.id,
                journal.c.kind,
                rounds.c.round_id,
                rounds.c.seq,
                journal.c.team,
                journal.c.before,
                journal.c.after,
                journal.c.k,
                journal.c.p,
                journal.c.s,
                # a round's entry is dated by when the round was played (`round_time`)
                func.coalesce(rounds.c.played_at, journal.c.created_at, type_=UtcDateTime()),
            )
            .select_from(
                chain.join(journal, journal.c.id == chain.c.id).outerjoin(
                    rounds, journal.c.round_pk == rounds.c.id
                )
            )
            .order_by(chain.c.depth)
        )
        return [JournalEntry(*r) for r in conn.execute(stmt)]


def _walk(
    conn: Connection, pool: Pool, key: str, columns: Sequence[Column[Any]], limit: int, name: str
) -> CTE | None:
    """The player's newest `limit` journal entries as a recursive walk of their chain by
    primary key (`columns` of each, and its `depth`: 1 the newest), joining nothing; None
    for a player the pool does not have."""
    start = conn.execute(
        select(players.c.last_journal).where(
            players.c.pool_id == pool.id, players.c.player_key == key
        )
    ).scalar()
    if start is None:
        return None
    step = (journal.c.id, journal.c.prev_id, *columns)
    chain = (
        select(*step, literal(1).label("depth"))
        .where(journal.c.id == start)
        .cte(name, recursive=True)
    )
    return chain.union_all(
        select(*step, (chain.c.depth + 1).label("depth"))
        .join(chain, journal.c.id == chain.c.prev_id)
        .where(chain.c.depth < limit)
    )


def rating_series(core: Core, pool: Pool, key: str, limit: int) -> list[RatingStep]:
    """A player's newest `limit` journal entries, newest first, narrowed to what a chart
    draws: a walk of the chain by primary key that joins nothing (a player page's chart
    of 2,000 rounds and more reads only this)."""
    columns = (journal.c.kind, journal.c.round_pk, journal.c.after)
    with core.read() as conn:
        chain = _walk(conn, pool, key, columns, limit, "series")
        if chain is None:
            return []
        rows = conn.execute(
            select(chain.c.kind, chain.c.round_pk, chain.c.after).order_by(chain.c.depth)
        )
        return [RatingStep(*r) for r in rows]


def trends(core: Core, pool: Pool, keys: Sequence[str], depth: int) -> dict[str, int]:
    """Each player's rating change over their last `depth` rated rounds: the sum of
    those rounds' changes (an admin's set or reset in between is not a trend). Walks
    their journal chains by primary key, `2·depth` entries at most."""
    if not keys:
        return {}
    with core.read() as conn:
        chain = (
            select(
                journal.c.id,
                journal.c.prev_id,
                players.c.player_key.label("key"),
                literal(1).label("depth"),
            )
            .join(players, players.c.last_journal == journal.c.id)
            .where(players.c.pool_id == pool.id, players.c.player_key.in_(list(keys)))
            .cte("trend", recursive=True)
        )
        chain = chain.union_all(
            select(journal.c.id, journal.c.prev_id, chain.c.key, chain.c.depth + 1)
            .join(chain, journal.c.id == chain.c.prev_id)
            .where(chain.c.depth < 2 * depth)
        )
        rows = conn.execute(
            select(chain.c.key, journal.c.kind, journal.c.before, journal.c.after)
            .join(journal, journal.c.id == chain.c.id)
            .order_by(chain.c.key, chain.c.depth)
        ).all()
    change: dict[str, int] = {}
    counted: dict[str, int] = {}
    for key, kind, before, after in rows:
        if kind == "round" and counted.get(key, 0) < depth:
            change[key] = change.get(key, 0) + after - before
            counted[key] = counted.get(key, 0) + 1
    return change


def journal_rounds(core: Core, pool_name: str) -> tuple[Pool, list[JournalRound], list[Change]]:
    """Every stored round of a pool in `seq` order (voided ones too), each with its
    participants as the journal in force recorded them, and the pool's admin log."""
    with core.snapshot_read() as conn:
        row = conn.execute(select(pools).where(pools.c.name == pool_name)).first()
        if row is None:
            raise UnknownPool(pool_name)
        pool = as_pool(row)
        log = [
            as_change(r)
            for r in conn.execute(
                select(changes)
                .where(changes.c.pool_id == pool.id)
                .order_by(changes.c.seq, changes.c.id)
            )
        ]
        out = [
            JournalRound(
                r.seq,
                r.round_id,
                r.server_id,
                r.map,
                r.winner,
                r.sum_a,
                r.sum_b,
                r.p_a,
                r.created_at,
                [],
                None if r.report is None else orjson.loads(r.report),
                r.voided,
            )
            for r in conn.execute(
                select(
                    rounds.c.id,
                    rounds.c.seq,
                    rounds.c.round_id,
                    rounds.c.server_id,
                    rounds.c.map,
                    rounds.c.winner,
                    rounds.c.sum_a,
                    rounds.c.sum_b,
                    rounds.c.p_a,
                    rounds.c.created_at,
                    rounds.c.report,
                    rounds.c.voided,
                )
                .where(rounds.c.pool_id == pool.id)
                .order_by(rounds.c.seq)
            )
        ]
        by_seq = {rnd.seq: rnd for rnd in out}
        stmt = (
            select(
                rounds.c.seq,
                players.c.player_key,
                journal.c.team,
                journal.c.before,
                journal.c.after,
            )
            .select_from(
                rounds.join(journal, journal.c.round_pk == rounds.c.id).join(
                    players, players.c.id == journal.c.player_id
                )
            )
            .where(rounds.c.pool_id == pool.id, journal.c.generation == pool.generation)
            .order_by(journal.c.id)
        )
        for r in conn.execute(stmt):
            by_seq[r.seq].participants.append((r.player_key, r.team, r.before, r.after))
    return pool, out, log


@dataclass(frozen=True, slots=True)
class Record:
    """A player's rounds won, lost and drawn (by their score: above ½, below, ½), over
    their whole journal when `complete`, else over its newest entries."""

    won: int
    lost: int
    drawn: int
    complete: bool


def record(core: Core, pool: Pool, key: str, limit: int) -> Record:
    """The player's win/loss record over their newest `limit` journal entries (all of them
    when fewer): a walk of their chain by primary key, counted in the database."""
    with core.read() as conn:
        chain = _walk(conn, pool, key, (journal.c.kind, journal.c.s), limit, "results")
        if chain is None:
            return Record(0, 0, 0, True)
        rows = conn.execute(
            select(chain.c.kind, chain.c.s, func.count()).group_by(chain.c.kind, chain.c.s)
        ).all()
    counts = {"won": 0, "lost": 0, "drawn": 0}
    for kind, s, n in rows:
        if kind == "round" and s is not None:
            counts["won" if s > 0.5 else "lost" if s < 0.5 else "drawn"] += int(n)
    return Record(**counts, complete=sum(int(n) for *_, n in rows) < limit)
