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
        with self._lock:
            item = self._items.get(player_id)
            if item is None or item[0] != stamp:
                return None
            self._items.move_to_end(player_id)
            return item[1], item[2]

    def put(self, player_id: int, stamp: int, window: ConvergenceWindow, c: float) -> None:
        if self.capacity <= 0:
            return
        with self._lock:
            self._items[player_id] = (stamp, window, c)
            self._items.move_to_end(player_id)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (after a rolled-back transaction: its windows were advanced)."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
