"""Each pool's public board, kept in memory: the listed players in the board's order.

A leaderboard page, its size, its histogram, a search and a player's place all read the
whole board (20,000 players in a large pool): counted, sorted and binned by the database on
every request, that cost 100–200 ms. An index on the rating would make it cheap to read but
cost every rated round 24 index moves (and, on PostgreSQL, every rating update its HOT
path). So the store keeps a snapshot of each pool's board instead, made by one ordered read,
and makes it anew when the pool changed (a round, a re-rate, a void, an admin change) or
the store's clock moved to another minute (players turn stale). When only new rounds came
and the last snapshot took longer than SLOW_S to make, readers get the last one while a
thread makes the next, at most every REFRESH_S: a board a few rounds behind, by two
seconds or so. A small pool's board is always made anew.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from synelo.domain import PlayerRow

log = logging.getLogger("synelo.store")
SLOW_S = 0.025  # boards slower than this to read are brought up to date in the background
REFRESH_S = 2.0  # ... at most this often (a pool in play rates a round every few seconds)
KEPT_POOLS = 16  # pools whose boards a store keeps, the least recently read dropped first


@dataclass(frozen=True, slots=True)
class Board:
    """A pool's listed players in the board's order, with each one's place (1 = best)."""

    rows: list[PlayerRow]
    places: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def of(rows: list[PlayerRow]) -> Board:
        return Board(rows, {row.player_key: i + 1 for i, row in enumerate(rows)})

    def search(self, text: str) -> list[tuple[int, PlayerRow]]:
        """The players whose id or name contains `text`, case-blind, with their places."""
        wanted = text.casefold()
        return [
            (i + 1, row)
            for i, row in enumerate(self.rows)
            if wanted in row.player_key.casefold() or wanted in (row.name or "").casefold()
        ]


@dataclass(frozen=True, slots=True)
class _Kept:
    version: tuple[Any, ...]
    made: float  # time.monotonic() when read
    took: float
    board: Board


class BoardCache:
    """The boards of the pools (see the module): one read at a time per pool."""

    def __init__(self) -> None:
        self._kept: OrderedDict[int, _Kept] = OrderedDict()
        self._locks: dict[int, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(
        self, pool_id: int, version: tuple[Any, ...], read: Callable[[], list[PlayerRow]]
    ) -> Board:
        """The pool's board as of `version` (the pool's rounds the next to last entry), or
        the last one while a thread reads it, when only rounds were added and reading is
        slow."""
        with self._lock:
            building = self._locks.setdefault(pool_id, threading.Lock())
            kept = self._kept.get(pool_id)
        if kept is not None and kept.version == version:
            return kept.board
        if kept is not None and kept.took >= SLOW_S and _only_new_rounds(kept.version, version):
            if time.monotonic() - kept.made < REFRESH_S:
                return kept.board  # new enough: no thread yet
            if building.acquire(blocking=False):  # else a thread is on it already
                threading.Thread(
                    target=self._build, args=(pool_id, version, read, building), daemon=True
                ).start()
            return kept.board
        with building:
            with self._lock:
                kept = self._kept.get(pool_id)
            if kept is not None and kept.version == version:
                return kept.board
            return self._read(pool_id, version, read)

    def _build(
        self,
        pool_id: int,
        version: tuple[Any, ...],
        read: Callable[[], list[PlayerRow]],
        building: threading.Lock,
    ) -> None:
        try:
            self._read(pool_id, version, read)
        except Exception:  # the next reader tries again, in its request
            log.exception("the board of pool %d could not be brought up to date", pool_id)
        finally:
            building.release()

    def _read(
        self, pool_id: int, version: tuple[Any, ...], read: Callable[[], list[PlayerRow]]
    ) -> Board:
        began = time.monotonic()
        board = Board.of(read())
        now = time.monotonic()
        with self._lock:
            self._kept[pool_id] = _Kept(version, now, now - began, board)
            self._kept.move_to_end(pool_id)
            while len(self._kept) > KEPT_POOLS:
                self._kept.popitem(last=False)
        return board


def _only_new_rounds(kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    """Whether `now` differs from `kept` by more rounds or a later minute alone: the
    versions are (…, rounds, voided, newest change, minute)."""
    return (
        len(kept) == len(now)
        and kept[:-4] == now[:-4]
        and kept[-4] <= now[-4]
        and kept[-3:-1] == now[-3:-1]
    )
