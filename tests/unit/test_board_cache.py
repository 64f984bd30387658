"""The public boards kept in memory: made anew when the pool changes, served a little behind
while a thread catches up when only rounds came and making one is slow."""

from __future__ import annotations

import time

import pytest

from synelo.domain import PlayerRow
from synelo.store import board as board_module
from synelo.store.board import Board, BoardCache


def row(key: str, rating: int, name: str | None = None) -> PlayerRow:
    return PlayerRow(key, rating, 60, None, 1.0, None, name)


class Reads:
    """A board read that counts its calls and takes `seconds`."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.calls = seconds, 0

    def __call__(self) -> list[PlayerRow]:
        time.sleep(self.seconds)
        self.calls += 1
        return [row(f"p{self.calls}", 1000)]


def version(rounds: int, voided: int = 0, change: int = 0, minute: int = 0) -> tuple[int, ...]:
    return (1, 0, rounds, voided, change, minute)


def test_a_board_places_and_searches_case_blind() -> None:
    board = Board.of([row("111", 1500, "Ann"), row("222", 1400, "Élodie"), row("333", 1300)])
    assert board.places == {"111": 1, "222": 2, "333": 3}
    assert board.search("éLO") == [(2, board.rows[1])]
    assert board.search("3") == [(3, board.rows[2])]
    assert board.search("zzz") == []


def test_a_slow_board_is_served_behind_while_a_thread_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(board_module, "REFRESH_S", 0.0)
    cache = BoardCache()
    read = Reads(board_module.SLOW_S + 0.03)
    assert cache.get(1, version(10), read).rows[0].player_key == "p1"
    assert cache.get(1, version(10), read).rows[0].player_key == "p1" and read.calls == 1
    assert cache.get(1, version(11), read).rows[0].player_key == "p1"  # behind, at once
    assert cache.get(1, version(12, minute=1), read).rows[0].player_key == "p1"
    deadline = time.monotonic() + 5
    while read.calls < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.02)
    assert read.calls == 2
    assert cache.get(1, version(11), read).rows[0].player_key == "p2"
    # a void or an admin change (hiding a player…) is read before the answer
    assert cache.get(1, version(11, voided=1), read).rows[0].player_key == "p3"
    assert cache.get(1, version(11, voided=1, change=4), read).rows[0].player_key == "p4"


def test_a_fast_board_is_always_read_anew() -> None:
    cache = BoardCache()
    read = Reads(0.0)
    assert cache.get(2, version(1), read).rows[0].player_key == "p1"
    assert cache.get(2, version(2), read).rows[0].player_key == "p2"
    assert cache.get(2, version(2, minute=1), read).rows[0].player_key == "p3"


def test_a_slow_board_is_read_again_at_most_every_few_seconds() -> None:
    cache = BoardCache()
    read = Reads(board_module.SLOW_S + 0.01)
    assert cache.get(3, version(1), read).rows[0].player_key == "p1"
    for rounds in range(2, 12):  # a pool in play: the board stays, no thread is started
        assert cache.get(3, version(rounds), read).rows[0].player_key == "p1"
    time.sleep(0.05)
    assert read.calls == 1
