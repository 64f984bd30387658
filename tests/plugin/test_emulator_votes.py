"""The vote scramble on the real synelo.smx: on TF2's vote screen when NativeVotes runs (fault 3
of issue 35: there was no NativeVotes support), in chat otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin.emulate import nativevotes
from plugin.emulate.engine import Server
from plugin.emulate.game import Game
from plugin.emulate.ripext import Http

from tests.conftest import SERVER, LiveServer

# What is tested here is the plugin's; the service's database does not matter: SQLite only.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


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
