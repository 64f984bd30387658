"""SplitCache(all_play=True) against a real service: one split of everyone, kept for a
scramble when the service is down, and planned onto the players of the moment by
synelo.game.splits.plan, which benches nobody (issue 35: outside arena everyone plays)."""

from __future__ import annotations

from synelo.client import SplitCache, SyneloClient
from synelo.game.splits import plan
from tests.conftest import LOADED, SERVER, LiveServer, post_round, steam

PLAYERS = [steam(n) for n in range(1, 10)]


def test_all_play_split_survives_an_outage_and_seats_everyone(live: LiveServer, pool: str) -> None:
    with live.client(SERVER) as server:
        post_round(server, pool, [1, 2, 3], [4, 5, 6], "A")
    with SyneloClient(live.url, SERVER, pool=pool, timeout=LOADED) as client:
        cache = SplitCache(client, all_play=True)
        split = cache.scramble(PLAYERS)
        assert split is not None and not split.bench
        assert sorted([len(split.A), len(split.B)]) == [4, 5]
        assert set(split.A) | set(split.B) == set(PLAYERS)
    # the service goes away; one player left and two joined since the split was cached
    with SyneloClient("http://127.0.0.1:9", SERVER, pool=pool, timeout=0.5) as down:
        cache.client = down
        eligible = [*PLAYERS[1:], steam(20), steam(21)]
        stale = cache.scramble(eligible)
        assert stale is split and not cache.pending
        seats = plan((stale.A, stale.B), eligible, lambda p: 1000)
        assert set(seats) == set(eligible) and "waiting" not in seats.values()
        sides = sorted(list(seats.values()).count(s) for s in ("A", "B"))
        assert sides == [5, 5]
