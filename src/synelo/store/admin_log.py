"""A pool's admin log (`changes`): who changed what and why, in order with the rounds.

Every admin change (a set, a reset, a hide, a patch, a re-rate's void or tune) appends one
entry after the rounds rated so far; a re-rate replays the sets and resets among the rounds
from here, and the pages list the entries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select

from synelo.domain import Change, Pool
from synelo.store.core import Core
from synelo.store.rows import as_change
from synelo.store.tables import changes


def log_change(
    conn: Connection,
    pool: Pool,
    kind: str,
    actor: str,
    reason: str | None,
    *,
    at: datetime,
    player_key: str | None = None,
    round_id: str | None = None,
    value: Mapping[str, Any] | None = None,
) -> None:
    """Append to the pool's admin log, after the rounds rated so far (`at`: the store's
    clock now)."""
    conn.execute(
        insert(changes).values(
            pool_id=pool.id,
            seq=pool.rounds,
            kind=kind,
            player_key=player_key,
            round_id=round_id,
            value=None if value is None else json.dumps(value),
            actor=actor[:64],
            reason=reason,
            created_at=at,
        )
    )


def read_changes(core: Core, pool: Pool, kinds: Sequence[str] | None = None) -> list[Change]:
    """The pool's admin log in order (only `kinds` if given)."""
    stmt = select(changes).where(changes.c.pool_id == pool.id)
    if kinds is not None:
        stmt = stmt.where(changes.c.kind.in_(list(kinds)))
    with core.read() as conn:
        return [as_change(r) for r in conn.execute(stmt.order_by(changes.c.seq, changes.c.id))]
