"""The vote scramble on the real synelo.smx: on TF2's vote screen when NativeVotes runs (fault 3
of issue 35: there was no NativeVotes support), in chat otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin.emulate import nativevotes
from plugin.emulate.engine import RED, Server
from plugin.emulate.game import Game
from plugin.emulate.ripext import Http

from tests.conftest import SERVER, LiveServer

# What is tested here is the plugin's; the service's database does not matter: SQLite only.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

# "Synelo Scrambled Notice" in plugin/translations/synelo.phrases.txt: the reason is the scramble.
NOTICE = "synelo scrambled the teams by rating: you play on a new team now."


@pytest.fixture
def smx(compiled_smx: Path) -> Path:
    return compiled_smx


def between_rounds(live: LiveServer, pool: str, smx: Path, *, native: bool) -> tuple[Server, Game]:
    """8 players on koth after one round, past the vote's map-start delay; no vote cooldown
    after the waiting-for-players scramble (a failed NativeVotes vote still cools down)."""
    server = Server(smx, seed=3)
    server.http = Http()
    if native:
        server.libraries.add(nativevotes.LIBRARY)
    server.load()
    for name, value in (
        ("sm_synelo_url", live.url),
        ("sm_synelo_token", SERVER),
        ("sm_synelo_pool", pool),
        ("sm_synelo_vote_cooldown", "0"),
    ):
        server.set_convar(name, value)
    game = Game(server, "koth")
    game.start_map()
    for n in range(8):
        game.join_team(game.connect(f"voter{n}"))
    game.waiting_for_players()
    game.play_round()
    return server, game


def actions(server: Server) -> list[str]:
    return [e["text"] for e in server.log if e["kind"] == "action"]


def test_a_nativevotes_vote_that_passes_scrambles(live: LiveServer, pool: str, smx: Path) -> None:
    server, _ = between_rounds(live, pool, smx, native=True)
    players = [c.index for c in server.sorted_clients()]
    server.say(players[0], "!synelo_votescramble")
    vote = nativevotes.running(server)
    assert vote is not None and sorted(vote.clients) == players  # everyone on a team
    for index in players[:6]:  # 60 % of 8 players, rounded up: 5 needed
        nativevotes.cast(server, index, yes=True)
    nativevotes.cast(server, players[6], yes=False)
    before = len(actions(server))
    nativevotes.finish(server)
    new = actions(server)[before:]
    assert any("vote passed: 6 yes of 5 needed" in text for text in new), new
    assert any(text.startswith("synelo: scrambled the teams") for text in new), new
    assert vote.result == "passed"


def test_a_nativevotes_vote_without_enough_yes_fails_and_cools_down(
    live: LiveServer, pool: str, smx: Path
) -> None:
    server, _ = between_rounds(live, pool, smx, native=True)
    players = [c.index for c in server.sorted_clients()]
    before = len(actions(server))
    server.say(players[0], "!synelo_votescramble")
    vote = nativevotes.running(server)
    assert vote is not None
    for index in players[:3]:
        nativevotes.cast(server, index, yes=True)
    for index in players[3:5]:
        nativevotes.cast(server, index, yes=False)
    nativevotes.finish(server)
    assert vote.result == "failed"
    assert not any(text.startswith("synelo: scrambled") for text in actions(server)[before:])
    # The cooldown from the failed vote (t 230): with 250 s, the waiting-for-players scramble's
    # (t 30) is over at t 290, the failed vote's is not (190 s left).
    server.set_convar("sm_synelo_vote_cooldown", "250")
    server.advance(60.0)
    server.say(players[1], "!synelo_votescramble")
    assert nativevotes.running(server) is None
    assert "vote in 190 seconds" in server.chat[-1]["text"], server.chat[-3:]


def test_without_nativevotes_the_chat_vote_counts(live: LiveServer, pool: str, smx: Path) -> None:
    server, _ = between_rounds(live, pool, smx, native=False)
    players = [c.index for c in server.sorted_clients()]
    before = len(actions(server))
    for index in players[:4]:
        server.say(index, "!synelo_votescramble")
    assert not any("scrambled" in text for text in actions(server)[before:])  # 4 of 5
    server.say(players[4], "!synelo_votescramble")
    assert getattr(server, "nativevote", 0) == 0
    assert any(text.startswith("synelo: scrambled the teams") for text in actions(server)[before:])


def test_live_players_a_vote_scramble_moves_mid_round_are_told_why(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """Fault 6 of issue 35: a live player moved by a scramble got only the chat line
    "Scrambled". 30 s into a round RED's players die, then a chat vote passes
    (sm_synelo_vote_at_round_end is 0: the scramble is at once). Which players it moved is read
    from the team changes: each live one gets the on-screen notice, which names the scramble by
    rating as the reason; the dead ones moved and those not moved do not."""
    server, game = between_rounds(live, pool, smx, native=False)
    players = [c.index for c in server.sorted_clients()]
    seen: dict[str, int] = {}  # each player's count of screen texts before the vote
    alive: set[str] = set()
    voted_at: list[float] = []

    def vote() -> None:
        assert game.round_live
        for client in server.sorted_clients():
            if client.team == RED:
                client.alive = False
                server.fire("player_death", userid=client.userid, attacker=0, death_flags=0)
            seen[client.steam_id] = len(client.screen)
        alive.update(c.steam_id for c in server.sorted_clients() if c.alive)
        voted_at.append(round(server.now, 3))
        for index in players[:5]:  # 60 % of 8 players, rounded up
            server.say(index, "!synelo_votescramble")

    game.play_round(moments={30.0: vote})
    assert voted_at, "the vote did not happen during the round"
    changes = [c for c in server.team_changes() if c["t"] == voted_at[0]]
    assert all(c["to"] in ("red", "blue") for c in changes), changes
    moved = {str(c["player"]) for c in changes}
    assert moved & alive and moved - alive, (moved, alive)  # both kinds were moved
    for client in server.sorted_clients():
        new = client.screen[seen[client.steam_id] :]
        told = [text for text in new if "scrambled" in text]
        if client.steam_id in moved & alive:
            assert told == [NOTICE], (client.steam_id, new)
        else:
            assert told == [], (client.steam_id, new)
    assert moved != set(seen), moved  # some players stayed, and were not told
