"""Decoded convergence windows of recently rated players, kept by the writing process.

A full window is ~6.7 KB stored and ~45 KB decoded (its entries are Python ints in lists,
which the compiled rating loop reads fastest); reading and decoding 24 of them per round was
the cost that grew with history. An entry is valid while the player's newest journal row
(`players.last_journal`) is the one it was cached with: every change of a player — a rated
round, an admin set or reset, in this process or another — writes a journal row, so that id
is a version stamp and a stale entry is never used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from synelo.ratings import ConvergenceWindow


class WindowCache:
    """At most `capacity` windows, least recently used evicted first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[int, tuple[int | None, ConvergenceWindow, float]] = OrderedDict()
        self._lock = threading.Lock()  # the writer uses it; admin threads may clear it

    def get(self, player_id: int, stamp: int | None) -> tuple[ConvergenceWindow, float] | None:
        """The window and its C if cached with this stamp."""
        return self.get_many({player_id: stamp}).get(player_id)

    def get_many(self, stamps: dict[int, int | None]) -> dict[int, tuple[ConvergenceWindow, float]]:
        """{player id: (window, C)} of the players in `stamps` ({player id: stamp}) cached
        with that stamp; one lock for a whole round."""
        found = {}
        items = self._items
        with self._lock:
            for player_id, stamp in stamps.items():
                item = items.get(player_id)
                if item is not None and item[0] == stamp:
                    items.move_to_end(player_id)
                    found[player_id] = item[1], item[2]
        return found

    def get_or_stale(
        self, stamps: dict[int, int | None]
    ) -> tuple[
        dict[int, tuple[ConvergenceWindow, float]], dict[int, tuple[int, ConvergenceWindow]]
    ]:
        """As `get_many`, and besides {player id: (stamp, window)} of the players in `stamps`
        cached with another stamp: an older version of the window, which the journal rows
        written since can bring up to date (another worker rated the player meanwhile)."""
        found, stale = {}, {}
        items = self._items
        with self._lock:
            for player_id, stamp in stamps.items():
                item = items.get(player_id)
                if item is None:
                    continue
                items.move_to_end(player_id)
                if item[0] == stamp:
                    found[player_id] = item[1], item[2]
                elif item[0] is not None:
                    stale[player_id] = item[0], item[1]
        return found, stale

    def put(self, player_id: int, stamp: int, window: ConvergenceWindow, c: float) -> None:
        self.put_many([(player_id, stamp, window, c)])

    def put_many(self, entries: list[tuple[int, int, ConvergenceWindow, float]]) -> None:
        """Cache (player id, stamp, window, C) of each entry, in order (the last is the most
        recently used)."""
        if self.capacity <= 0:
            return
        items = self._items
        with self._lock:
            for player_id, stamp, window, c in entries:
                items[player_id] = (stamp, window, c)
                items.move_to_end(player_id)
            while len(items) > self.capacity:
                items.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (after a rolled-back transaction: its windows were advanced)."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
