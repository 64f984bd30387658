"""Day-one faults of issue 35 on the real synelo.smx, each a scenario that failed before its
fix: automatic scrambles without controls (4), scrambles without the service (5), command
names taken from other plugins (6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin.emulate.engine import RED, Server
from plugin.emulate.game import Game
from plugin.emulate.ripext import Http
from plugin.emulate.scenario import Options, run

from tests.conftest import SERVER, LiveServer

# What is tested is the plugin's: the service on SQLite only.
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def scrambles(record: dict[str, object]) -> list[dict[str, object]]:
    return record["scrambles"]  # type: ignore[return-value]


@sqlite_only
def test_a_small_koth_server_does_not_scramble_every_round(
    live: LiveServer, pool: str, compiled_smx: Path
) -> None:
    """Fault 4: 6 players on KOTH, and the loser often never captures; with the defaults
    (at least 8 players) no automatic scramble fires. 8 players: they do again.

    Seen from the teams, not only from the plugin's log: with 6 the plugin changes nobody's
    team and every round starts with the teams the players joined; with 8 each logged scramble
    is a reshuffle the players see (some RED to BLU and some BLU to RED at once)."""

    def koth(players: int) -> dict[str, Any]:
        """Six rounds of KOTH, every ConVar at its default."""
        return run(
            Options(
                mode="koth",
                players=players,
                rounds=6,
                url=live.url,
                token=SERVER,
                pool=pool,
                smx=compiled_smx,
                seed=2,
            )
        )

    small = koth(6)
    assert scrambles(small) == []
    assert small["team_changes"] == [] and small["reseats"] == []
    seated = [r["teams"] for r in small["rounds"]]
    assert len(seated) == 6 and all(teams == seated[0] for teams in seated), seated
    assert all(r["stored"] for r in small["rounds"])
    larger = koth(8)
    reasons = [s["reason"] for s in scrambles(larger)]
    assert reasons[:1] == ["waiting_ended"]
    times = [float(s["t"]) for s in scrambles(larger)]  # type: ignore[arg-type]
    assert all(b - a >= 300 for a, b in zip(times, times[1:], strict=False))  # the cooldown
    seen = [float(r["t"]) for r in larger["reseats"]]
    assert len(seen) >= 2 and seen == times, (seen, times)


def test_a_scramble_without_the_service_uses_the_cached_ratings(compiled_smx: Path) -> None:
    """Fault 5: the service unreachable from the start, no split cached: the waiting-for-
    players scramble still seats everyone from a local split, 5 v 4, nobody waiting."""
    record = run(
        Options(
            mode="koth",
            players=9,
            rounds=1,
            url="http://127.0.0.1:9",
            token=SERVER,
            smx=compiled_smx,
        )
    )
    (scramble,) = [s for s in scrambles(record) if s["reason"] == "waiting_ended"]
    assert "local split" in str(scramble["text"])
    teams = record["rounds"][0]["teams"]  # type: ignore[index]
    assert teams["spectator"] == [] and sorted([len(teams["red"]), len(teams["blue"])]) == [4, 5]
    assert record["rounds"][0]["stored"] is False  # type: ignore[index]


@sqlite_only
def test_commands_other_plugins_own_are_left_to_them(live: LiveServer, compiled_smx: Path) -> None:
    """Fault 6: sm_rank (a rank plugin's) stays its own; synelo's is sm_synelo_rank, and
    sm_top, which nobody has, is registered too. sm_balance and sm_scramble are never taken."""
    server = Server(compiled_smx)
    server.http = Http()
    server.foreign_commands.add("sm_rank")
    server.load()
    server.set_convar("sm_synelo_url", live.url)
    server.set_convar("sm_synelo_token", SERVER)
    Game(server, "koth").start_map()
    assert "sm_rank" not in server.commands
    assert {"sm_synelo_rank", "sm_top", "sm_synelo_top", "sm_synelo_balance"} <= set(
        server.commands
    )
    assert not {"sm_balance", "sm_scramble", "sm_party"} & set(server.commands)
    assert any("sm_rank belongs to another plugin" in e["text"] for e in server.log)
    player = Game(server, "koth").connect("asker")
    server.set_team(player, RED)
    server._drain()
    assert server.say(player.index, "!rank") is None  # !rank is the other plugin's


def test_a_map_change_keeps_tf2_balancing_off(compiled_smx: Path) -> None:
    """server.cfg runs on every map load; its mp_autoteambalance 1 must not switch TF2's
    autobalance back on beside synelo's (fault 3 again, from the second map on)."""
    server = Server(compiled_smx)
    server.http = Http()
    server.server_cfg = {"mp_autoteambalance": "1", "sv_vote_issue_scramble_teams_allowed": "1"}
    server.load()
    game = Game(server, "koth")
    for _ in range(2):
        game.start_map()
        assert server.convars["mp_autoteambalance"].value == "0"
        assert server.convars["sv_vote_issue_scramble_teams_allowed"].value == "0"
        game.end_map()
    server.unload()
    assert server.convars["mp_autoteambalance"].value == "1"


@sqlite_only
def test_immune_players_stay_and_the_scramble_still_evens_the_teams(
    live: LiveServer, pool: str, compiled_smx: Path
) -> None:
    """Four admins immune to moves: they keep their team, someone else takes their planned
    place, and every round starts 7 v 6, as the log says."""
    record = run(
        Options(
            mode="koth",
            players=13,
            rounds=3,
            url=live.url,
            token=SERVER,
            pool=pool,
            smx=compiled_smx,
            admins=4,
            seed=1,
            convars={"sm_synelo_immunity_flag": "b", "sm_synelo_autoscramble_cooldown": "0"},
        )
    )
    for r in record["rounds"]:  # type: ignore[attr-defined]
        assert sorted([len(r["teams"]["red"]), len(r["teams"]["blue"])]) == [6, 7], r
    for scramble in scrambles(record):
        assert "7 v 6" in str(scramble["text"]) or "6 v 7" in str(scramble["text"]), scramble
