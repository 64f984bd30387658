"""The writer's window cache: valid only with the stamp it was stored with; LRU-bounded."""

from synelo.ratings import ConvergenceWindow
from synelo.store.window_cache import WindowCache


def test_stamp_decides_validity() -> None:
    cache = WindowCache(10)
    w = ConvergenceWindow(5)
    cache.put(1, 7, w, 0.25)
    assert cache.get(1, 7) == (w, 0.25)
    assert cache.get(1, 8) is None  # the player changed since (a newer journal row)
    assert cache.get(1, None) is None
    assert cache.get(2, 7) is None


def test_least_recently_used_goes_first() -> None:
    cache = WindowCache(2)
    for pid in (1, 2):
        cache.put(pid, pid, ConvergenceWindow(5), 1.0)
    assert cache.get(1, 1) is not None  # 1 is now the most recent
    cache.put(3, 3, ConvergenceWindow(5), 1.0)
    assert cache.get(2, 2) is None and cache.get(1, 1) is not None and len(cache) == 2
    cache.clear()
    assert len(cache) == 0
    zero = WindowCache(0)
    zero.put(1, 1, ConvergenceWindow(5), 1.0)
    assert len(zero) == 0


def test_many_at_once_is_the_same_as_one_by_one() -> None:
    cache = WindowCache(3)
    w = [ConvergenceWindow(5) for _ in range(4)]
    cache.put_many([(1, 10, w[0], 0.1), (2, 20, w[1], 0.2), (3, 30, w[2], 0.3)])
    # a wrong stamp misses; the hits become the most recently used, in the order asked
    assert cache.get_many({3: 30, 1: 10, 2: 99}) == {3: (w[2], 0.3), 1: (w[0], 0.1)}
    cache.put_many([(4, 40, w[3], 0.4)])  # evicts 2, the least recently used
    assert cache.get(2, 20) is None
    assert cache.get_many({1: 10, 3: 30, 4: 40}) == {1: (w[0], 0.1), 3: (w[2], 0.3), 4: (w[3], 0.4)}
    cache.put_many([(1, 11, w[0], 0.5)])  # a newer stamp replaces the entry
    assert cache.get(1, 10) is None and cache.get(1, 11) == (w[0], 0.5)
