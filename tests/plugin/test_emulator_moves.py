"""F11 moves on the real synelo.smx: dead players are moved, a live one when they die or after
sm_synelo_move_wait (issue 35: "players already dead are preferred")."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin.emulate.engine import BLU, RED, Client, Server
from plugin.emulate.game import Game
from plugin.emulate.natives import flag_bits
from plugin.emulate.ripext import Http

from tests.conftest import SERVER, LiveServer

# What is tested here is the plugin's; the service's database does not matter: SQLite only.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@pytest.fixture
def smx(compiled_smx: Path) -> Path:
    return compiled_smx


def live_round(live: LiveServer, pool: str, smx: Path, players: int = 10) -> tuple[Server, Game]:
    """`players` on koth, seated as they join, a round under way, everyone alive."""
    server = Server(smx, seed=5)
    server.http = Http()
    server.load()
    for name, value in (
        ("sm_synelo_url", live.url),
        ("sm_synelo_token", SERVER),
        ("sm_synelo_pool", pool),
        ("sm_synelo_autoscramble_min_players", "99"),  # no scramble: keep the teams as seated
    ):
        server.set_convar(name, value)
    game = Game(server, "koth")
    game.start_map()
    for n in range(players):
        game.join_team(game.connect(f"mover{n}"))
    game.waiting_for_players()
    server.fire("teamplay_round_start", full_reset=1)
    server.advance(5.0)
    server.fire("teamplay_round_active")
    for client in server.clients.values():
        client.alive = True
    timer = next(e for e in server.entities.values() if e.classname == "team_round_timer")
    timer.props["m_flTimerEndTime"] = server.game_time() + 600.0
    return server, game


def live_round_with_a_gap(live: LiveServer, pool: str, smx: Path) -> tuple[Server, list[Client]]:
    """10 players on koth, a round under way; then two RED players leave: 3 v 5."""
    server, game = live_round(live, pool, smx)
    reds = [c for c in server.sorted_clients() if c.team == RED]
    for client in reds[:2]:
        game.leave(client)
    return server, [c for c in server.sorted_clients() if c.team == BLU]


def moves(server: Server) -> list[dict[str, object]]:
    return [e for e in server.log if e["kind"] == "action" and "moved" in e["text"]]


def test_a_live_player_is_moved_when_they_die(live: LiveServer, pool: str, smx: Path) -> None:
    server, blues = live_round_with_a_gap(live, pool, smx)
    server.advance(12.0)  # the autobalance delay (10 s): the service names who moves
    assert moves(server) == []  # everyone is alive: nobody moved yet
    death_at = server.now
    for client in blues:
        client.alive = False
        server.fire("player_death", userid=client.userid, attacker=0, death_flags=0)
    moved = moves(server)
    assert len(moved) == 1, moved
    assert moved[0]["t"] == round(death_at, 3)
    assert moved[0]["to"] == "red"


def test_a_dead_player_is_chosen_over_an_equally_good_live_one(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """Every player is new (1000): any BLU player evens 3 v 5 as well as another. The plugin
    names the live ones (`alive`), so the service picks the one who is dead, moved as soon
    as the delay ends, with no wait for a death."""
    server, blues = live_round_with_a_gap(live, pool, smx)
    dead = blues[-1]
    dead.alive = False
    server.fire("player_death", userid=dead.userid, attacker=0, death_flags=0)
    asked = server.now
    server.advance(12.0)  # the autobalance delay (10 s), not sm_synelo_move_wait
    moved = moves(server)
    assert [e["target"] for e in moved] == [dead.steam_id], moved
    assert float(moved[0]["t"]) <= asked + 11.0  # type: ignore[arg-type]
    assert dead.team == RED


def test_a_live_player_who_does_not_die_is_moved_after_the_wait(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """Fault 6: the player is moved sm_synelo_move_wait (10 s) after the service named them,
    and is told so on screen. Who moved is read from the team change itself, not the log."""
    server, _ = live_round_with_a_gap(live, pool, smx)
    gap_at = server.now
    server.advance(12.0)
    asked = server.now
    assert moves(server) == []
    server.advance(12.0)  # sm_synelo_move_wait is 10 s
    changed = [c for c in server.team_changes() if c["t"] >= gap_at]
    assert [(c["from"], c["to"]) for c in changed] == [("blue", "red")], changed
    target = server.by_steam(changed[0]["player"])
    assert target is not None and target.team == RED
    assert any("moved you" in text for text in target.screen), target.screen
    assert asked + 8.0 <= float(changed[0]["t"]) <= asked + 11.0
    assert [m["target"] for m in moves(server)] == [target.steam_id]


def test_a_moved_live_player_does_not_die_for_it(live: LiveServer, pool: str, smx: Path) -> None:
    """TF2 kills a live player who changes team (a suicide, and player_death); the plugin marks
    the player dead for the change, so the move costs no death. The engine's own rule holds
    for a change the plugin did not make."""
    server, _ = live_round_with_a_gap(live, pool, smx)
    deaths: list[int] = []
    fire = server.fire

    def watch(event: str, **fields: object) -> None:
        if event == "player_death":
            deaths.append(int(fields["userid"]))  # type: ignore[call-overload]
        fire(event, **fields)

    server.fire = watch  # type: ignore[method-assign]
    server.advance(24.0)  # F11 after the delay, the live player after sm_synelo_move_wait
    (moved,) = moves(server)
    target = server.by_steam(str(moved["target"]))
    assert target is not None and target.userid not in deaths
    other = next(c for c in server.sorted_clients() if c.alive and c is not target)
    server.set_team(other, RED if other.team == BLU else BLU)
    server._drain()
    assert deaths == [other.userid]


def test_an_admin_moves_a_player_under_the_autobalance_rules(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """sm_synelo_move: bad usage and an unknown target are refused with a message; an immune
    player stays and the reply says why; a move is made, logged with the admin, and starts
    the player's move cooldown, which sm_synelo_status and a second move both report."""
    server, blues = live_round_with_a_gap(live, pool, smx)
    assert "Usage: sm_synelo_move" in (server.run_command(0, "sm_synelo_move mover1") or "")
    assert "Usage: sm_synelo_move" in (server.run_command(0, "sm_synelo_move mover1 green") or "")
    assert "No player matches" in (server.run_command(0, "sm_synelo_move nobody red") or "")
    chosen = blues[0]
    chosen.alive = False  # a dead player: moved at once, no death
    reply = server.run_command(0, f"sm_synelo_move {chosen.name} red") or ""
    assert reply.endswith(f"moved {chosen.name} to RED"), reply
    assert chosen.team == RED
    logged = [e["text"] for e in server.log if e["kind"] == "action"]
    assert any("moved" in t and chosen.name in t and "with synelo" in t for t in logged), logged
    status = server.run_command(0, "sm_synelo_status") or ""
    assert f"{chosen.name}: held from moves (cooldown, 120 s left)" in status, status
    again = server.run_command(0, f"sm_synelo_move {chosen.name} blue") or ""
    assert "stays: held from moves (cooldown, 120 s left)" in again and chosen.team == RED
    admin = blues[1]
    admin.flags = flag_bits("b")  # sm_synelo_immunity_flag's default
    server.forward("OnRebuildAdminCache", 1)
    refused = server.run_command(0, f"sm_synelo_move {admin.name} red") or ""
    assert f"{admin.name} stays: held from moves (immune)" in refused and admin.team == BLU


def test_a_gap_an_admin_leaves_is_evened_by_autobalance(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """Two admin moves in a live 4 v 4 round leave 2 v 6; autobalance's delay starts, and after
    it (and the wait for a death) the service's F11 moves two others back: 4 v 4, with the
    admin's two, on their move cooldown, still on BLU. Each move is announced as the
    admin's."""
    server, _ = live_round(live, pool, smx, players=8)
    moved = [c for c in server.sorted_clients() if c.team == RED][:2]
    for client in moved:
        reply = server.run_command(0, f"sm_synelo_move {client.name} blue") or ""
        assert reply.endswith(f"moved {client.name} to BLU"), reply
    sizes = [sum(c.team == team for c in server.clients.values()) for team in (RED, BLU)]
    assert sizes == [2, 6]
    assert any(f"{moved[0].name} was moved to BLU by an admin" in c["text"] for c in server.chat)
    server.advance(25.0)  # the delay (10 s), then the wait for a death (10 s)
    sizes = [sum(c.team == team for c in server.clients.values()) for team in (RED, BLU)]
    assert sizes == [4, 4], moves(server)
    assert all(c.team == BLU for c in moved)
    f11 = [e["text"] for e in moves(server) if "(f11)" in e["text"]]
    assert len(f11) == 2, moves(server)
