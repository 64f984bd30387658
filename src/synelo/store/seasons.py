"""A pool's new season (docs/maths/seasons.md): every rating pulled part of the way back toward
the pool's mean, in one transaction, as an admin change.

The pool's row is locked, as a round's path locks it, so a season falls between two rounds.
Every player the season moves (each one who is not new) gets a "season" journal row at the
head of their chain, which is also what tells every worker's window cache that the player
changed; a SynElo pool's windows start again. The admin log records the season after the
rounds rated so far, with the fraction as it was given (or none: the model's default), so a
re-rate applies it at its place (`store.generations`), and an export writes it there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

import orjson
from sqlalchemy import Connection, delete, insert, select

from synelo.domain import Pool, pool_model
from synelo.models.base import Model, new_season
from synelo.models.rounds import column_int
from synelo.ratings import PlayerRecord, new_window
from synelo.store import driver_sql as sql
from synelo.store.admin_log import log_change
from synelo.store.bulk import bulk_update
from synelo.store.core import Core, locked_pool
from synelo.store.tables import journal, players, pool_context, window_chunks

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SeasonDone:
    """What a season did: the share of the way back it took (the one given, or the model's
    default), whether it was the default, the players it moved and the rounds before it."""

    fraction: float
    default: bool
    players: int
    seq: int


class _Row(NamedTuple):
    """A player as a season reads them."""

    id: int
    key: str
    rating: int
    rounds: int
    last_journal: int | None
    state: str | None  # the model's, outside SynElo pools


def start_season(
    core: Core,
    pool_name: str,
    fraction: float | None,
    actor: str,
    reason: str | None,
    *,
    view: Callable[[Pool, SeasonDone], T],
) -> T:
    """Start a new season of the pool (see the module): `fraction` of the way back (None:
    the model's `season_fraction`), logged with who and why. The answer is `view` of the
    pool and what the season did, inside the transaction, as for a set."""
    with core.write_transaction() as conn:
        pool = locked_pool(conn, pool_name)
        model = pool_model(pool)
        rows = _players(conn, pool)
        states = _states(pool, model, rows)
        context = _context(conn, pool)
        season = new_season(model, states, fraction, context)
        at = core.clock()
        moved = [row for row in rows if row.key in season.states]
        ratings = {row.key: column_int(model.rating(season.states[row.key])) for row in moved}
        journal_ids = _journal(conn, pool, moved, ratings, at)
        encode = None if pool.is_synelo else model.encode
        bulk_update(
            conn,
            "players",
            (
                "rating",
                "state",
                "last_journal",
                "convergence",
                "window_state",
                "window_tail",
                "window_appended",
            ),
            [
                (
                    ratings[row.key],
                    None if encode is None else _json(encode(season.states[row.key])),
                    journal_ids[row.id],
                    1.0,
                    None,
                    None,
                    0,
                    row.id,
                )
                for row in moved
            ],
        )
        if pool.is_synelo and moved:
            conn.execute(
                delete(window_chunks).where(
                    window_chunks.c.player_id.in_(
                        select(players.c.id).where(players.c.pool_id == pool.id)
                    )
                )
            )
        sql.save_context(conn, pool.id, season.context)
        given = {"fraction": fraction} if fraction is not None else {"default": season.fraction}
        log_change(conn, pool, "season", actor, reason, at=at, value=given)
        return view(pool, SeasonDone(season.fraction, fraction is None, len(moved), pool.rounds))


def _players(conn: Connection, pool: Pool) -> list[_Row]:
    """Every player of the pool, their rows locked in key order (as the round path and a
    re-rate's swap lock them)."""
    found = conn.execute(
        select(
            players.c.id,
            players.c.player_key,
            players.c.rating,
            players.c.rounds_played,
            players.c.last_journal,
            players.c.state,
        )
        .where(players.c.pool_id == pool.id)
        .order_by(players.c.player_key)
        .with_for_update()
    )
    return [_Row._make(r) for r in found]


def _states(pool: Pool, model: Model[Any], rows: list[_Row]) -> dict[str, Any]:
    """Each player's state in the pool's model: SynElo's record (its window is of no
    account, the season restarts it), or the model's decoded state (NULL: a new player)."""
    if pool.is_synelo:
        params = pool.params
        return {r.key: PlayerRecord(r.rating, r.rounds, new_window(params)) for r in rows}
    return {r.key: model.decode(orjson.loads(r.state) if r.state else {}) for r in rows}


def _context(conn: Connection, pool: Pool) -> dict[str, Any]:
    """All of the pool's context entries (a model's season may read or change them)."""
    rows = conn.execute(
        select(pool_context.c.entry, pool_context.c.value).where(pool_context.c.pool_id == pool.id)
    )
    return {entry: orjson.loads(value) for entry, value in rows}


def _journal(
    conn: Connection, pool: Pool, moved: list[_Row], ratings: Mapping[str, int], at: datetime
) -> dict[int, int]:
    """A "season" journal row at the head of each moved player's chain; {player id: its
    row id}."""
    if not moved:
        return {}
    rows = [
        {
            "pool_id": pool.id,
            "player_id": row.id,
            "round_pk": None,
            "generation": pool.generation,
            "kind": "season",
            "team": None,
            "before": row.rating,
            "after": ratings[row.key],
            "k": None,
            "p": None,
            "s": None,
            "created_at": at,
            "prev_id": row.last_journal,
        }
        for row in moved
    ]
    stmt = insert(journal).returning(
        journal.c.id, journal.c.player_id, sort_by_parameter_order=True
    )
    return {player: jid for jid, player in conn.execute(stmt, rows)}


def _json(value: Mapping[str, Any]) -> str:
    return orjson.dumps(value).decode()
