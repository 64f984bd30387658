"""A pool's players: read by key, named (a lookup's renames logged), and changed by an
admin (set, reset, hidden).

An admin's set or reset is journaled at the head of the player's chain, as a round is, and
logged (`store.admin_log`); a re-rate replays both among the rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

import orjson
from sqlalchemy import Connection, delete, insert, select, update

from synelo.domain import PlayerRow, Pool, Strength, pool_model
from synelo.models.rounds import column_int
from synelo.store import driver_sql as sql
from synelo.store.admin_log import log_change
from synelo.store.core import Core, locked_pool
from synelo.store.rows import PLAYER_VIEW
from synelo.store.tables import journal, players, window_chunks

T = TypeVar("T")
VIEW_COLUMNS = tuple(c.name for c in PLAYER_VIEW)


class Target(NamedTuple):
    """The player an admin change is made to, its row locked."""

    id: int
    rating: int
    last_journal: int | None
    state: str | None  # the model's state, outside SynElo pools


def locked_player(conn: Connection, pool: Pool, key: str) -> Target | None:
    """A stored player, its row locked."""
    row = conn.execute(
        select(players.c.id, players.c.rating, players.c.last_journal, players.c.state)
        .where(players.c.pool_id == pool.id, players.c.player_key == key)
        .with_for_update()
    ).first()
    return None if row is None else Target._make(row)


def player_view(conn: Connection, pid: int) -> PlayerRow:
    """The player of row id `pid` as the pages and the API show them."""
    return PlayerRow(*conn.execute(select(*PLAYER_VIEW).where(players.c.id == pid)).one())


def new_rating(pool: Pool) -> int:
    """The display rating of a player the pool has not seen."""
    if pool.is_synelo:
        return pool.params.r0
    model = pool_model(pool)
    return column_int(model.rating(model.new_state()))


def lookup(core: Core, pool: Pool, keys: Sequence[str]) -> dict[str, PlayerRow]:
    """Stored players among `keys`; unknown players are simply absent (nothing stored)."""
    return read_players(core, pool, keys)[1]


def read_players(core: Core, pool: Pool, keys: Sequence[str]) -> tuple[Pool, dict[str, PlayerRow]]:
    """The pool as it stands and its stored players among `keys`, read in one snapshot
    (a re-rate may change the pool's model: the states are read with the pool they
    belong to); unknown players are simply absent."""
    pool, rows = _read_columns(core, pool, keys, VIEW_COLUMNS)
    return pool, {r[0]: PlayerRow(*r) for r in rows}


def read_strengths(core: Core, pool: Pool, keys: Sequence[str]) -> tuple[Pool, dict[str, Strength]]:
    """`read_players` for balancing: only each player's rating and state. Their other
    columns (a time among them, converted from SQLite's text) were a third of a 32-player
    read."""
    pool, rows = _read_columns(core, pool, keys, ("player_key", "rating", "state"))
    return pool, {key: Strength(rating, state) for key, rating, state in rows}


def _read_columns(
    core: Core, pool: Pool, keys: Sequence[str], columns: tuple[str, ...]
) -> tuple[Pool, list[tuple[Any, ...]]]:
    """The pool as it stands and `columns` of its stored players among `keys`, read in one
    snapshot."""
    wanted = list(dict.fromkeys(keys))
    where = f"pool_id = ? AND player_key IN ({', '.join('?' * len(wanted))})"
    with core.snapshot_read() as conn:
        pool = core.pool_by_id(conn, pool)
        if not wanted:
            return pool, []
        return pool, sql.typed_rows(conn, "players", columns, where, (pool.id, *wanted))


def save_names(core: Core, pool: Pool, names: dict[str, str], actor: str) -> dict[str, str]:
    """Record display names reported outside a round (a lookup's), for stored players. A
    name that changes what the public boards show is logged as a "rename" (who, the name
    and the one before), as an admin's change is. Only a lookup that changes a name
    writes. The names changed, by player."""
    if not names:
        return {}
    with core.read() as conn:
        if not _renamed(conn, pool, names)[0]:
            return {}
    with core.write_transaction() as conn:
        fresh = core.pool_by_id(conn, pool)  # the rounds so far: where the log entry goes
        renamed, was = _renamed(conn, fresh, names)
        sql.save_names(conn, fresh.id, renamed)
        for key in sorted(renamed):
            value = {"name": renamed[key], "was": was[key]}
            log_change(
                conn, fresh, "rename", actor, None, at=core.clock(), player_key=key, value=value
            )
    return renamed


def _renamed(
    conn: Connection, pool: Pool, names: dict[str, str]
) -> tuple[dict[str, str], dict[str, str | None]]:
    """The names among `names` that differ from their stored players' (players the pool
    does not have are left out), and the names stored now."""
    rows = conn.execute(
        select(players.c.player_key, players.c.name).where(
            players.c.pool_id == pool.id, players.c.player_key.in_(list(names))
        )
    )
    was: dict[str, str | None] = {key: name for key, name in rows}
    return {key: name for key, name in names.items() if key in was and was[key] != name}, was


def name_of(core: Core, pool: Pool, key: str) -> str | None:
    """The player's display name as last reported (None: none, or no such player)."""
    with core.read() as conn:
        return conn.execute(
            select(players.c.name).where(players.c.pool_id == pool.id, players.c.player_key == key)
        ).scalar()


def set_rating(
    core: Core,
    pool_name: str,
    key: str,
    rating: int,
    actor: str = "admin",
    reason: str | None = None,
    *,
    view: Callable[[Pool, PlayerRow | None], T],
) -> T:
    """Admin override, journaled as "set" and logged with who and why. SynElo's
    convergence window restarts: the old ratings no longer describe this player, so
    C = 1 until two rounds are rated. In another model's pool the model's `with_rating`
    says what the set keeps. The answer is `view` of the pool and the player's new row,
    computed inside the transaction, so that a failing answer writes nothing."""
    with core.write_transaction() as conn:
        pool = locked_pool(conn, pool_name)
        row = locked_player(conn, pool, key)
        values: dict[str, Any] = {"rating": rating}
        if not pool.is_synelo:
            model = pool_model(pool)
            state = model.decode(orjson.loads(row.state) if row and row.state else {})
            state = model.with_rating(state, rating)
            values["state"] = orjson.dumps(model.encode(state)).decode()
            values["rating"] = column_int(model.rating(state))
        if row is None:
            pid = conn.execute(
                insert(players)
                .values(
                    pool_id=pool.id,
                    player_key=key,
                    rating=values["rating"],
                    rounds_played=0,
                    convergence=1.0,
                )
                .returning(players.c.id)
            ).scalar_one()
            row = Target(pid, new_rating(pool), None, None)
        journal_admin(conn, pool, row, "set", values["rating"], core.clock(), **values)
        log_change(
            conn,
            pool,
            "set",
            actor,
            reason,
            at=core.clock(),
            player_key=key,
            value={"rating": rating},
        )
        return view(pool, player_view(conn, row.id))


def reset_player(
    core: Core,
    pool_name: str,
    key: str,
    actor: str = "admin",
    reason: str | None = None,
    *,
    view: Callable[[Pool, PlayerRow | None], T],
) -> T:
    """Back to R_0 with 0 rounds (shadow again), journaled as "reset" and logged; no row
    (and no change) for a player the pool does not know. The answer is `view`, inside
    the transaction, as for `set_rating`."""
    with core.write_transaction() as conn:
        pool = locked_pool(conn, pool_name)
        row = locked_player(conn, pool, key)
        if row is None:
            return view(pool, None)
        r0 = new_rating(pool)
        journal_admin(
            conn,
            pool,
            row,
            "reset",
            r0,
            core.clock(),
            rating=r0,
            rounds_played=0,
            last_played=None,
            state=None,
        )
        log_change(conn, pool, "reset", actor, reason, at=core.clock(), player_key=key)
        return view(pool, player_view(conn, row.id))


def set_hidden(
    core: Core,
    pool_name: str,
    key: str,
    hidden: bool,
    actor: str,
    reason: str | None,
    *,
    view: Callable[[Pool, PlayerRow | None], T],
) -> T:
    """Hide a player from the pool's public lists, or show them again, logged as
    "hide"; their rating and rounds are untouched. A player the pool does not know has
    nothing to hide: `view` of None, nothing written."""
    with core.write_transaction() as conn:
        pool = locked_pool(conn, pool_name)
        row = locked_player(conn, pool, key)
        if row is None:
            return view(pool, None)
        conn.execute(update(players).where(players.c.id == row.id).values(hidden=hidden))
        log_change(
            conn,
            pool,
            "hide",
            actor,
            reason,
            at=core.clock(),
            player_key=key,
            value={"hidden": hidden},
        )
        return view(pool, player_view(conn, row.id))


def journal_admin(
    conn: Connection,
    pool: Pool,
    row: Target,
    kind: str,
    after: int,
    at: datetime,
    **changes: object,
) -> None:
    """Journal an admin change at the head of the player's chain (`at`: the store's clock
    now) and apply `changes`; the convergence window restarts (C = 1)."""
    pid, before, last_journal, _ = row
    jid = conn.execute(
        insert(journal)
        .values(
            pool_id=pool.id,
            player_id=pid,
            round_pk=None,
            generation=pool.generation,
            kind=kind,
            team=None,
            before=before,
            after=after,
            k=None,
            p=None,
            s=None,
            created_at=at,
            prev_id=last_journal,
        )
        .returning(journal.c.id)
    ).scalar_one()
    conn.execute(
        update(players)
        .where(players.c.id == pid)
        .values(
            convergence=1.0,
            window_state=None,
            window_tail=None,
            window_appended=0,
            last_journal=jid,
            **changes,
        )
    )
    conn.execute(delete(window_chunks).where(window_chunks.c.player_id == pid))


def keys_named(core: Core, pool: Pool, names: Sequence[str]) -> dict[str, list[str]]:
    """The players of the pool who go by each of `names` (their display name as last
    reported), by name: the scramble viewer reads a pasted name as its player."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    with core.read() as conn:
        rows = conn.execute(
            select(players.c.name, players.c.player_key)
            .where(players.c.pool_id == pool.id, players.c.name.in_(wanted))
            .order_by(players.c.player_key)
        )
        found: dict[str, list[str]] = {}
        for name, key in rows:
            found.setdefault(name, []).append(key)
        return found
