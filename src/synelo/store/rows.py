"""Stored rows as the domain's objects: a pool, an admin log entry, a job, a player's view.

Every store module reads these tables; the conversions live here once, so that none of them
reaches into another for them.
"""

from __future__ import annotations

import json
from typing import Any

from synelo.domain import Change, Job, Pool, pool_params
from synelo.store.tables import players


def as_pool(row: Any) -> Pool:
    """A `pools` row as a Pool, its parameters decoded for its model."""
    params, model_params = pool_params(row.model, row.params)
    return Pool(
        row.id,
        row.name,
        row.kmax,  # the column keeps the team size's old name
        row.player_ids,
        params,
        row.rounds,
        row.brier_sum,
        row.created_at,
        row.model,
        model_params,
        row.generation,
        row.voided,
        None if row.autotune is None else json.loads(row.autotune),
        bool(row.public),
    )


def as_change(row: Any) -> Change:
    """A `changes` row (the admin log) as a Change."""
    return Change(
        row.id,
        row.seq,
        row.kind,
        row.player_key,
        row.round_id,
        None if row.value is None else json.loads(row.value),
        row.actor,
        row.reason,
        row.created_at,
    )


def as_job(row: Any, pool: str) -> Job:
    """A `jobs` row as the Job of the pool named `pool`."""
    return Job(
        row.id,
        pool,
        row.kind,
        json.loads(row.spec),
        row.status,
        row.phase,
        row.total,
        row.done,
        row.error,
        row.actor,
        row.created_at,
        row.updated_at,
        row.finished_at,
    )


# the columns of a PlayerRow, in its order: select(*PLAYER_VIEW) reads PlayerRow(*row)
PLAYER_VIEW = (
    players.c.player_key,
    players.c.rating,
    players.c.rounds_played,
    players.c.last_played,
    players.c.convergence,
    players.c.state,
    players.c.name,
    players.c.hidden,
)
