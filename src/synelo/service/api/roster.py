"""The players of one balance request or prediction: their ids as indices, checks that name
the field at fault, and their stored ratings or model states, read once in one snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from synelo.domain import Pool, Strength, pool_model
from synelo.models import Model
from synelo.service.ids import Loc, invalid, normalize_ids
from synelo.store.repository import Store


class Roster:
    """The players of one request, their indices, and checks that name the field at fault."""

    def __init__(self, pool: Pool, keys: Sequence[str]) -> None:
        self.pool, self.keys = pool, list(keys)
        self.index = {k: i for i, k in enumerate(self.keys)}
        self._rows: dict[str, Strength] | None = None
        self._states: tuple[Model[Any], dict[str, Any]] | None = None

    def read(self, store: Store) -> Pool:
        """The pool as it stands, with this request's stored players, read once in one
        snapshot (a re-rate may have changed the pool's model since `pool` was read)."""
        if self._rows is None:
            self.pool, self._rows = store.read_strengths(self.pool, self.keys)
        return self.pool

    def members(
        self,
        values: Sequence[object],
        loc: Loc,
        seen: dict[str, Loc] | None = None,
        where: str = "players",
    ) -> list[int]:
        """Indices of `values`, each of which must be one of the roster's players."""
        keys = normalize_ids(values, self.pool.player_ids, loc, seen)
        for i, key in enumerate(keys):
            if key not in self.index:
                raise invalid((*loc, i), f"player {key} is not in {where}", value=values[i])
        return [self.index[k] for k in keys]

    def parties(self, parties: Sequence[Sequence[object]], where: str) -> list[list[int]]:
        seen: dict[str, Loc] = {}
        return [self.members(p, ("body", "parties", j), seen, where) for j, p in enumerate(parties)]

    def ratings(self, store: Store) -> list[int]:
        """Each player's strength, in whole points: a SynElo rating (R_0 for a player the pool
        has never seen), or the strength of the model's state, rounded."""
        self.read(store)
        if self.pool.is_synelo:
            rows = self._rows or {}
            r0 = self.pool.params.r0
            return [rows[k].rating if k in rows else r0 for k in self.keys]
        model, states = self.states(store)
        return [round(x) for x in model.strengths([model.state_of(states, k) for k in self.keys])]

    def states(self, store: Store) -> tuple[Model[Any], dict[str, Any]]:
        """The pool's model and the stored states of this request's players (a pool whose
        model is not SynElo)."""
        if self._states is None:  # read once: the balancing and its predictions share them
            self.read(store)
            model = pool_model(self.pool)
            rows = self._rows or {}
            decoded = {k: model.decode(orjson.loads(r.state)) for k, r in rows.items() if r.state}
            self._states = model, decoded
        return self._states
