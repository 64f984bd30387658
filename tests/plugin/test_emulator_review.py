"""Faults a review of the real synelo.smx found on the emulated TF2 server (issue 35), each
a scenario that failed before its fix: the cfg read too early on the first map, sudden
death taken for a draw, moves logged without a reason or not at all, the wrong round timer
read, TF2's balancing left off without rip.ext, and the immunity flag's default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin.emulate.engine import BLU, RED, SPECTATOR, UNASSIGNED, Server
from plugin.emulate.game import Game
from plugin.emulate.natives import flag_bits
from plugin.emulate.ripext import Http
from plugin.emulate.scenario import Options, Run, start

from plugin import release
from tests.conftest import SERVER, LiveServer

# What is tested is the plugin's: where the service takes part, on SQLite only.
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

NO_AUTO = {"sm_synelo_autoscramble_triggers": ""}  # no automatic scramble in the way


def begin(smx: Path, live: LiveServer | None = None, pool: str = "default", **options: Any) -> Run:
    """A scenario started (waiting for players over, no round yet): against `live`, or with
    the service down when None."""
    service = {"url": live.url, "token": SERVER} if live else {"url": "http://127.0.0.1:9"}
    return start(Options(rounds=1, pool=pool, smx=smx, **service, **options))  # type: ignore[arg-type]


def offline_server(smx: Path, cfg: dict[str, str]) -> Server:
    """A server whose service is down, with `cfg` as its plugin.synelo.cfg."""
    server = Server(smx)
    server.http = Http()
    server.http.down = True
    server.server_cfg = dict(cfg)
    server.load()
    return server


def status(server: Server) -> str:
    return (server.run_command(0, "sm_synelo_status") or "").splitlines()[0]


# --- the cfg on the first map ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cfg", "expected"),
    [
        ({"sm_synelo_map_modes": "koth_*=off"}, "enabled: no"),
        ({"sm_synelo_mode": "cp"}, "mode: cp"),
    ],
)
def test_the_cfg_decides_the_first_maps_mode(
    compiled_smx: Path, cfg: dict[str, str], expected: str
) -> None:
    """SourceMod runs plugin.synelo.cfg after OnMapStart: the mode and the per-map switch it
    sets hold from the first map on, not from the second."""
    server = offline_server(compiled_smx, cfg)
    game = Game(server, "koth")
    game.start_map()
    assert expected in status(server)
    game.end_map()
    game.start_map()
    assert expected in status(server)


def test_the_cfg_sets_the_first_maps_server_id(compiled_smx: Path) -> None:
    server = offline_server(compiled_smx, {"sm_synelo_server_id": "myserver"})
    Game(server, "koth").start_map()
    assert server.global_string("g_slServerId") == "myserver"


# --- sudden death ----------------------------------------------------------------------------


def reported_winners(server: Server) -> list[tuple[str, str]]:
    """(round id, winner) of each round report the plugin sent, once per round."""
    seen: dict[str, str] = {}
    for exchange in server.http.exchanges:
        if exchange.url.endswith("/rounds"):
            seen.setdefault(exchange.body["round_id"], exchange.body["winner"])
    return list(seen.items())


@pytest.mark.parametrize(
    ("stalemate_enable", "winner", "expected"),
    [
        ("1", RED, "A"),  # sudden death, RED survives: RED won
        ("1", UNASSIGNED, "draw"),  # sudden death ends undecided
        ("0", RED, "draw"),  # no sudden death: the timer's end is a draw
    ],
)
def test_sudden_death_is_not_the_round_end(
    compiled_smx: Path, stalemate_enable: str, winner: int, expected: str
) -> None:
    """TF2 fires teamplay_round_stalemate when sudden death begins and teamplay_round_win
    when the round ends (team 0 for a draw): one report per round, with the real result."""
    current = begin(
        compiled_smx,
        mode="koth",
        players=8,
        convars={**NO_AUTO, "mp_stalemate_enable": stalemate_enable},
    )
    server, fired = current.server, []
    fire = server.fire

    def noting(event: str, **fields: Any) -> None:
        fired.append(event)
        fire(event, **fields)

    server.fire = noting  # type: ignore[method-assign]
    current.game.play_round(winner=winner, timed_out=True)
    assert fired.count("teamplay_round_stalemate") == (1 if stalemate_enable == "1" else 0)
    assert fired.count("teamplay_round_win") == 1
    ((_, reported),) = reported_winners(current.server)
    assert reported == expected


# --- LogAction: every move with its reason, and what was missing -----------------------------


def offline_koth(smx: Path, players: int = 6) -> Run:
    """KOTH with the service down, no automatic scramble, waiting for players over."""
    return begin(smx, mode="koth", players=players, convars=NO_AUTO)


def test_an_admin_move_has_a_reason_and_the_team_lock_is_logged(compiled_smx: Path) -> None:
    """The admin's move is logged with "(admin)", which the JSON's moves read as its reason;
    the team lock sending the moved player back from Spectator is a move too, logged."""
    current = offline_koth(compiled_smx)
    server = current.server
    player = next(c for c in current.players if c.team == RED)
    player.alive = False  # dead: moved at once
    reply = server.run_command(0, f"sm_synelo_move {player.name} blue") or ""
    assert reply.endswith(f"moved {player.name} to BLU"), reply
    server.run_command(player.index, "spectate")  # a locked player may spectate ...
    server._drain()
    assert player.team == SPECTATOR
    server.run_command(player.index, "jointeam auto")  # ... and comes back to their side
    server._drain()
    assert player.team == BLU
    moves = [(m["player"], m["to"], m["reason"]) for m in current.record()["moves"]]
    assert moves == [
        (player.steam_id, "blue", "admin"),
        (player.steam_id, "blue", "team_lock"),
    ], current.record()["moves"]


def test_a_scramble_another_plugin_asks_for_is_logged(compiled_smx: Path) -> None:
    current = offline_koth(compiled_smx)
    server = current.server
    server.plugin_files[77] = "mapvote_bridge.smx"
    assert server.call_id(server.natives_created["SynElo_RequestScramble"], 77, 0) == 1
    actions = [e["text"] for e in server.log if e["kind"] == "action"]
    assert any("mapvote_bridge.smx asked for a synelo scramble" in t for t in actions), actions


# --- the round timer: which one, and sm_synelo_autobalance_cutoff ----------------------------


def round_with_a_gap(live: LiveServer, pool: str, smx: Path, mode: str, cfg: dict[str, str]) -> Run:
    """10 players, seated as they joined, a round under way (setup over); then two RED
    players leave: 3 v 5, which F11 evens 10 s later (plus the wait for a death)."""
    no_scramble = {"sm_synelo_autoscramble_min_players": "99"}  # the teams as they sat down
    current = begin(smx, live, pool, mode=mode, players=10, convars={**no_scramble, **cfg})
    current.game.begin_round()
    for client in [c for c in current.server.sorted_clients() if c.team == RED][:2]:
        current.game.leave(client)
    return current


def f11_moves(current: Run) -> list[dict[str, Any]]:
    return [m for m in current.record()["moves"] if m["reason"] == "f11"]


@sqlite_only
@pytest.mark.parametrize(
    ("mode", "holder", "left", "cutoff", "moved"),
    [
        ("koth", RED, 25.0, "30", False),  # RED's timer runs, BLU's (found first) is paused
        ("koth", BLU, 25.0, "30", False),
        ("koth", RED, 200.0, "30", True),
        ("koth", RED, 25.0, "0", True),  # no cutoff
        ("ad", 0, 25.0, "30", False),  # stage 1's timer; stage 2's (found first) is disabled
        ("ad", 0, 200.0, "30", True),
    ],
)
def test_no_autobalance_in_the_rounds_last_seconds(
    live: LiveServer,
    pool: str,
    compiled_smx: Path,
    mode: str,
    holder: int,
    left: float,
    cutoff: str,
    moved: bool,
) -> None:
    """sm_synelo_autobalance_cutoff: with fewer seconds than it left on the timer that ends
    the round (KOTH: the point holder's; multi-stage attack/defend: the stage's), no F11
    move; with more, or the cutoff 0, the gap is evened."""
    current = round_with_a_gap(
        live, pool, compiled_smx, mode, {"sm_synelo_autobalance_cutoff": cutoff}
    )
    if holder:
        current.game.koth_capture(holder)
    current.game.set_time_left(left)
    current.server.advance(25.0)  # the delay (10 s), then the wait for a death (10 s)
    assert bool(f11_moves(current)) is moved, current.record()["moves"]


@sqlite_only
def test_setup_is_read_from_the_game_rules(live: LiveServer, pool: str, compiled_smx: Path) -> None:
    """Attack/defend: the doors go up when the game rules leave setup, not at
    teamplay_round_active, whichever stage's timer comes first."""
    current = begin(compiled_smx, live, pool, mode="ad", players=6, convars=NO_AUTO)
    server, game = current.server, current.game
    for timer in game.timers():  # the later stages start without a setup time
        if timer.props["m_bIsDisabled"]:
            timer.props["m_nSetupTimeLength"] = 0
    game.set_in_setup(True)  # stage 1's timer is in its setup
    server.fire("teamplay_round_start", full_reset=1)
    server.fire("teamplay_round_active")
    assert server.global_cell("g_slLive") == 0  # setup: the doors are still shut
    server.fire("teamplay_setup_finished")
    assert server.global_cell("g_slLive") == 1


# --- without rip.ext ---------------------------------------------------------------------------


def test_without_rip_ext_tf2_keeps_its_own_balancing(compiled_smx: Path) -> None:
    """rip.ext not loaded: synelo sits out; TF2's autobalance and scramble vote stay on,
    across map changes, the log says so once, and nobody is scrambled or placed."""
    server = Server(compiled_smx)
    server.http = Http()
    server.extensions.discard("ripext")
    server.load()
    game = Game(server, "koth")
    for _ in range(2):
        game.start_map()
        assert server.convars["mp_autoteambalance"].value == "1"
        assert server.convars["sv_vote_issue_scramble_teams_allowed"].value == "1"
        assert server.convars["mp_scrambleteams_auto"].value == "1"
        game.end_map()
    game.start_map()
    for n in range(10):
        game.join_team(game.connect(f"p{n}"))
    game.waiting_for_players()
    game.begin_round()
    errors = [e["text"] for e in server.log if e["kind"] == "error" and "rip.ext" in e["text"]]
    assert len(errors) == 1 and "TF2's own autobalance and scramble vote stay on" in errors[0]
    assert [e for e in server.log if e["kind"] == "action"] == []
    assert server.http.exchanges == []
    assert "enabled: no" in status(server)


# --- the immunity flag's default ---------------------------------------------------------------


def test_donors_with_a_reserved_slot_are_not_immune_by_default(compiled_smx: Path) -> None:
    """The default sm_synelo_immunity_flag is b (generic admin), not a (reservation, which
    donors have): a donor is moved, an admin is not; the release cfg says b."""
    assert 'sm_synelo_immunity_flag "b"' in release.config_text(release.read_convars(), "0")
    current = offline_koth(compiled_smx)
    server = current.server
    donor, admin = [c for c in current.players if c.team == RED][:2]
    donor.flags, admin.flags = flag_bits("a"), flag_bits("b")
    server.forward("OnRebuildAdminCache", 1)
    donor.alive = admin.alive = False
    assert "moved" in (server.run_command(0, f"sm_synelo_move {donor.name} blue") or "")
    refused = server.run_command(0, f"sm_synelo_move {admin.name} blue") or ""
    assert "held from moves (immune)" in refused and admin.team == RED


# --- the report buffer at an unload -------------------------------------------------------------


def test_reports_waiting_at_an_unload_are_logged_with_their_bodies(compiled_smx: Path) -> None:
    """The buffer is memory only: a reload loses what waits in it. Before it goes, each
    waiting report is logged with its round id and written whole to synelo_reports.log."""
    current = offline_koth(compiled_smx, players=4)
    for _ in range(2):
        current.game.play_round(winner=RED)
    ids = [r.round_id for r in current.game.rounds]
    assert all(ids)
    server = current.server
    server.unload()
    lines = server.files["addons/sourcemod/logs/synelo_reports.log"]
    for round_id in ids:
        assert any(
            f"round report {round_id} not delivered before the plugin unloaded" in line
            for line in lines
        ), lines
        assert any(f'"round_id":"{round_id}"' in line.replace(" ", "") for line in lines)
