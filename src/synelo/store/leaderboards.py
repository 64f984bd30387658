"""Who a pool lists, in what order and at what place: the public board (kept in memory by
`store.board`), its pages, searches and places, the admin's leaderboard and the hidden
players."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import false, func, select, true

from synelo.domain import PlayerRow, Pool, UnknownPool
from synelo.store.board import Board
from synelo.store.core import Core
from synelo.store.rows import PLAYER_VIEW, as_pool
from synelo.store.tables import changes, players, pools

# the public board's order
BOARD_ORDER = (players.c.rating.desc(), players.c.rounds_played.desc(), players.c.player_key)


def listed(pool: Pool, now: datetime) -> tuple[Any, ...]:
    """Who a pool's public board lists: past the shadow period, not stale, not hidden."""
    return (
        players.c.pool_id == pool.id,
        players.c.rounds_played >= pool.params.t_shadow,
        players.c.last_played >= now - timedelta(days=pool.params.t_stale_days),
        players.c.hidden == false(),
    )


def board(core: Core, pool: Pool) -> tuple[Pool, Board]:
    """The pool as it stands and its public board (store.board: kept in memory, made
    anew when the pool changed or the clock reached another minute)."""
    now = core.clock()
    newest = select(func.max(changes.c.id)).where(changes.c.pool_id == pools.c.id)
    with core.read() as conn:
        row = conn.execute(
            select(pools, newest.scalar_subquery().label("newest")).where(pools.c.id == pool.id)
        ).first()
    if row is None:
        raise UnknownPool(pool.name)
    current = as_pool(row)
    version = (
        current.id,
        current.generation,
        current.rounds,
        current.voided,
        row.newest,
        int(now.timestamp() // 60),
    )

    def read() -> list[PlayerRow]:
        stmt = select(*PLAYER_VIEW).where(*listed(current, now)).order_by(*BOARD_ORDER)
        with core.read() as conn:
            return [PlayerRow(*r) for r in conn.execute(stmt)]

    return current, core.boards.get(current.id, version, read)


def public_board(
    core: Core, pool: Pool, offset: int, limit: int, search: str | None
) -> tuple[Pool, int, list[tuple[int, PlayerRow]]]:
    """The pool as it stands, how many players its public board lists, and one page of
    them with their places (1 = the best): players past the shadow period, not stale,
    not hidden, by rating (ties: more rounds first, then id). `search` keeps those whose
    id or name contains it (case-blind); their places stay the board's. Read from the
    pool's board as kept in memory (`board`)."""
    pool, found_board = board(core, pool)
    if not search:
        page = found_board.rows[offset : offset + limit]
        return pool, len(found_board.rows), [(offset + i + 1, row) for i, row in enumerate(page)]
    found = found_board.search(search)
    return pool, len(found), found[offset : offset + limit]


def board_ratings(core: Core, pool: Pool) -> list[int]:
    """The ratings of the pool's public board, best first (its rating distribution)."""
    _, found = board(core, pool)
    return [row.rating for row in found.rows]


def public_place(core: Core, pool: Pool, row: PlayerRow) -> int | None:
    """The player's place on the pool's public board (None: not listed there)."""
    _, found = board(core, pool)
    return found.places.get(row.player_key)


def public_places(core: Core, pool: Pool, keys: Sequence[str]) -> dict[str, int]:
    """The places on the pool's public board of those of `keys` it lists: one read of
    the board for a whole lookup, not one a player."""
    _, found = board(core, pool)
    return {key: found.places[key] for key in keys if key in found.places}


def hidden_players(core: Core, pool: Pool) -> list[PlayerRow]:
    """The players an admin hid from the pool's public pages, by id (for the admin's
    leaderboard, where they can be shown again)."""
    with core.read() as conn:
        stmt = (
            select(*PLAYER_VIEW)
            .where(players.c.pool_id == pool.id, players.c.hidden == true())
            .order_by(players.c.player_key)
        )
        return [PlayerRow(*r) for r in conn.execute(stmt)]


def leaderboard(core: Core, pool: Pool, limit: int) -> tuple[Pool, list[PlayerRow]]:
    """The pool as it stands and its visible players by rating (ties: more rounds
    first, then id)."""
    with core.snapshot_read() as conn:
        pool = core.pool_by_id(conn, pool)
        stmt = (
            select(*PLAYER_VIEW)
            .where(players.c.pool_id == pool.id, players.c.rounds_played >= pool.params.t_shadow)
            .order_by(players.c.rating.desc(), players.c.rounds_played.desc(), players.c.player_key)
            .limit(limit)
        )
        return pool, [PlayerRow(*r) for r in conn.execute(stmt)]
