"""Issue 35's scenario matrix, the fast part: the real synelo.smx on the emulated TF2 server
(plugin/emulate) against a real service. `make plugin-matrix` runs the wide part
(tests/plugin/test_emulator_matrix.py: every player count in every mode).

Most scenarios test the plugin, not the database: they run on SQLite only (`sqlite_only`);
the service answers (`!rank`, `!top`, `!balance`) run on PostgreSQL too.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from plugin.emulate.engine import BLU, RED, Entity
from plugin.emulate.game import ENGINEER, MEDIC
from plugin.emulate.natives import TopMenu, flag_bits
from plugin.emulate.scenario import Options, Run, finish, play, run, start

from plugin import build
from tests.conftest import SERVER, LiveServer
from tests.plugin.conftest import sqlite_and_matrix_postgresql

sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
QUICK = {"sm_synelo_autoscramble_cooldown": "0"}  # every trigger may fire, round after round
NO_AUTO = {"sm_synelo_autoscramble_triggers": ""}  # no automatic scramble in the way


@pytest.fixture(scope="module")
def smx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("smx") / "synelo.smx"
    result = build.compile_sp(build.DEFAULT_SOURCE, out)
    assert result.ok, result.output
    return out


def opts(live: LiveServer, pool: str, smx: Path, **options: Any) -> Options:
    return Options(url=live.url, token=SERVER, pool=pool, smx=smx, **options)


def stored_ids(live: LiveServer, pool: str) -> list[str]:
    _, rounds, _ = live.store.journal_rounds(pool)
    return [r.round_id for r in rounds]


def reasons(record: dict[str, Any]) -> list[str]:
    return [s["reason"] for s in record["scrambles"]]


def rostered(report: dict[str, Any]) -> int:
    """The players a round report puts on its teams."""
    return len(report["teams"]["A"]) + len(report["teams"]["B"])


def chat_to(server: Any, client: Any) -> list[str]:
    return [e["text"] for e in server.chat if e.get("to") == client.steam_id]


def assert_everyone_plays(record: dict[str, Any], players: int) -> None:
    """Outside arena: nobody on Spectator, ⌊n/2⌋ against ⌈n/2⌉ (fault 1)."""
    for r in record["rounds"]:
        red, blue = len(r["teams"]["red"]), len(r["teams"]["blue"])
        assert r["teams"]["spectator"] == [], r
        assert red + blue == players and abs(red - blue) <= 1, r


# --- modes ---------------------------------------------------------------------------------

# mode: (winners, the scrambles applied, in order)
MODES = {
    "arena": ("RRRRR", ["arena_round_2", "streak"]),
    "koth": ("RB", ["waiting_ended", "no_capture"]),
    "cp": ("RB", ["waiting_ended", "no_capture"]),
    "ctf": ("RB", ["waiting_ended", "no_capture"]),
    "plr": ("RB", ["waiting_ended", "no_capture"]),
    "ad": ("RBBR", ["waiting_ended", "attackers_timed_out", "full_rounds"]),
    "pl": ("RBBR", ["waiting_ended", "attackers_timed_out", "full_rounds"]),
    "pd": ("RBR", ["waiting_ended"]),
    "rd": ("RBR", ["waiting_ended"]),
    "pass": ("RBR", ["waiting_ended"]),
    "sd": ("RBR", ["waiting_ended"]),
    "mvm": ("RB", []),
}


@sqlite_only
def test_the_per_map_switch_takes_a_workshop_map_by_its_name(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """Fault 2's per-map switch (sm_synelo_map_modes): on a workshop map, matched by its
    display name (`workshop/koth_x.ugc1` is `koth_x`), `koth_*=off` turns synelo off for the
    map: no scramble, no move, no report, and TF2's autobalance stays the server's; `koth_*=cp`
    names the mode where the map's entities say koth."""

    def on_the_map(map_modes: str, rounds: int) -> dict[str, Any]:
        convars = {**QUICK, "sm_synelo_map_modes": map_modes}
        path = "workshop/koth_synelo_test.ugc3141592653"
        return run(
            opts(
                live,
                pool,
                smx,
                mode="koth",
                players=9,
                rounds=rounds,
                map_name=path,
                convars=convars,
            )
        )

    off = on_the_map("pl_*=pl, koth_*=off", 2)
    assert "enabled: no" in off["status"], off["status"]
    assert off["scrambles"] == [] and off["moves"] == []
    assert not [x for x in off["requests"] if x["path"].endswith("rounds")]
    assert stored_ids(live, pool) == []
    assert off["convars"]["mp_autoteambalance"] == "1"  # TF2's own, left on
    named = on_the_map("koth_synelo_test=cp", 1)
    assert "enabled: yes, mode: cp," in named["status"], named["status"]
    assert len(stored_ids(live, pool)) == 1


@sqlite_only
@pytest.mark.parametrize("mode", ["ad", "pl"])
def test_the_teams_change_colours_after_a_full_round(
    live: LiveServer, pool: str, smx: Path, mode: str
) -> None:
    """Attack/defend and payload: TF2 switches the teams before the next round (every RED
    player to BLU and back, a player_team each, in the pre-round). synelo takes it as the
    same teams: no autobalance move from the passing gap, no scramble, and each round's
    report names the players by the colour they played."""
    o = opts(live, pool, smx, mode=mode, players=10, rounds=3, round_seconds=60, convars=NO_AUTO)
    current = start(o)
    for number in (1, 2, 3):
        play(current, o, number)
    record = finish(current)
    r1, r2, r3 = record["rounds"]
    assert (r2["teams"]["red"], r2["teams"]["blue"]) == (r1["teams"]["blue"], r1["teams"]["red"])
    assert (r3["teams"]["red"], r3["teams"]["blue"]) == (r1["teams"]["red"], r1["teams"]["blue"])
    assert record["moves"] == [] and reasons(record) == []
    reports = {
        x.body["round_id"]: x.body
        for x in current.server.http.exchanges
        if x.method == "POST" and x.url.endswith("/rounds")
    }
    for r in (r1, r2, r3):
        assert r["stored"], r
        teams = reports[r["round_id"]]["teams"]  # A is RED
        assert (sorted(teams["A"]), sorted(teams["B"])) == (
            sorted(r["teams"]["red"]),
            sorted(r["teams"]["blue"]),
        ), teams


@sqlite_only
@pytest.mark.parametrize("mode", list(MODES))
def test_each_mode_is_detected_and_fires_its_own_triggers(
    live: LiveServer, pool: str, smx: Path, mode: str
) -> None:
    """Fault 2: every mode is recognised from its map (sm_synelo_status names it); koth, cp,
    ctf and plr scramble on "no capture" (in Payload Race both teams attack), ad and pl when
    the attackers time out and after 2 full rounds, arena on round 2 and a streak with its
    queue as the bench, pd/rd/pass/sd only when waiting for players ends (they never fire a
    capture: before the fix every round ended in a "no capture" scramble), mvm never."""
    winners, expected = MODES[mode]
    players = 9
    record = run(
        opts(
            live,
            pool,
            smx,
            mode=mode,
            players=players,
            rounds=len(winners),
            winners=winners,
            round_seconds=60,
            loser_captures=0.0,
            convars=QUICK,
        )
    )
    assert f"mode: {mode}," in record["status"], record["status"]
    assert reasons(record) == expected, record["scrambles"]
    rounds = record["rounds"]
    if mode == "mvm":
        assert "enabled: no" in record["status"]
        assert not [x for x in record["requests"] if x["path"].endswith("rounds")]
        assert record["moves"] == [] and stored_ids(live, pool) == []
        assert all(r["teams"]["blue"] == [] for r in rounds)  # humans stay RED
        return
    assert all(r["stored"] for r in rounds), rounds
    assert sorted(stored_ids(live, pool)) == sorted(r["round_id"] for r in rounds)
    if mode == "arena":
        duel = rounds[0]["teams"]
        assert (len(duel["red"]), len(duel["blue"]), len(duel["spectator"])) == (1, 1, 7)
        for r in rounds[1:]:  # 4 v 4 (half the 9 ready), the ninth on the queue: the bench
            assert (len(r["teams"]["red"]), len(r["teams"]["blue"])) == (4, 4), r
            assert len(r["teams"]["spectator"]) == 1, r
    else:
        assert_everyone_plays(record, players)


@sqlite_only
def test_koth_a_capture_by_the_losers_means_no_scramble(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """The counter-case of "no capture": when the losing team captured, no scramble fires."""
    record = run(
        opts(
            live,
            pool,
            smx,
            mode="koth",
            players=8,
            rounds=3,
            winners="RBR",
            round_seconds=60,
            loser_captures=1.0,
            convars=QUICK,
        )
    )
    assert reasons(record) == ["waiting_ended"]
    assert_everyone_plays(record, 8)


# --- player counts -------------------------------------------------------------------------


@sqlite_only
def test_a_leaver_during_a_scramble_and_late_joiners(
    live: LiveServer, pool: str, smx: Path
) -> None:
    """Fault 1: a "no capture" scramble is pending with the splits cached for 12 players; one
    leaves before the next round starts (the cached 6 v 6 no longer fits), and three join
    during the round after it. Everyone plays on a team, ⌊n/2⌋ against ⌈n/2⌉, every round is
    stored with everyone who played it."""
    o = opts(
        live,
        pool,
        smx,
        mode="koth",
        players=12,
        winners="RBR",
        round_seconds=60,
        loser_captures=0.0,
        convars=QUICK,
    )
    current = start(o)
    game, server = current.game, current.server
    play(current, o, 1)
    game.leave(current.players[0])

    def join() -> None:
        game.join_team(game.connect(f"late{len(server.clients)}"))

    play(current, o, 2, moments={10.0: join, 12.0: join, 14.0: join})
    play(current, o, 3)
    record = finish(current)
    assert reasons(record)[:2] == ["waiting_ended", "no_capture"], record["scrambles"]
    r1, r2, r3 = record["rounds"]
    for r, n in ((r1, 12), (r2, 11), (r3, 14)):
        assert r["teams"]["spectator"] == [], r
        assert len(r["teams"]["red"]) + len(r["teams"]["blue"]) == n, r
        assert abs(len(r["teams"]["red"]) - len(r["teams"]["blue"])) <= 1, r
    assert all(r["stored"] for r in record["rounds"])
    reports = [x for x in server.http.exchanges if x.method == "POST" and x.url.endswith("/rounds")]
    last = next(x.body for x in reports if x.body["round_id"] == r3["round_id"])
    assert rostered(last) == 14


@sqlite_and_matrix_postgresql
def test_100_players_with_32_byte_names(live: LiveServer, pool: str, smx: Path) -> None:
    """Fault 6 (limits): 100 players with 32-byte names on 101 slots, SourceTV in slot 1, so
    that the last player is client 101 (the plugin's SL_MAX_CLIENTS): the report fits and
    is stored with all 100, client 101 among them, everyone plays, every lookup is
    answered."""
    o = opts(
        live,
        pool,
        smx,
        mode="koth",
        players=100,
        rounds=1,
        long_names=True,
        max_clients=101,
        source_tv=True,
    )
    current = start(o)
    last = current.server.clients[101]
    assert not last.fake and last.team in (RED, BLU)
    play(current, o, 1)
    record = finish(current)
    (r,) = record["rounds"]
    assert r["stored"] and r["teams"]["spectator"] == []
    assert (len(r["teams"]["red"]), len(r["teams"]["blue"])) == (50, 50)
    assert last.steam_id in r["teams"]["red"] + r["teams"]["blue"]
    lookups = [x for x in record["requests"] if x["path"].endswith("players/lookup")]
    assert len(lookups) >= 100 and all(x["status"] == 200 for x in lookups)
    _, rounds, _ = live.store.journal_rounds(pool)
    assert len(rounds) == 1
    (report,) = [
        x.body
        for x in current.server.http.exchanges
        if x.method == "POST" and x.url.endswith("/rounds")
    ]
    assert last.steam_id in report["teams"]["A"] + report["teams"]["B"]


# --- votes ---------------------------------------------------------------------------------


def everyone_votes(current: Run) -> None:
    """Every player asks for a scramble in chat."""
    for client in current.players:
        current.server.say(client.index, "!synelo_votescramble")


@sqlite_only
def test_vote_scramble_min_players_and_cooldown(live: LiveServer, pool: str, smx: Path) -> None:
    """Enough votes scramble at once; a second vote inside sm_synelo_vote_cooldown is
    refused; and the chat's advice ("Type !… to agree") names a command that exists."""
    o = opts(
        live,
        pool,
        smx,
        mode="koth",
        players=8,
        round_seconds=120,
        convars={**NO_AUTO, "sm_synelo_vote_delay": "0"},
    )
    current = start(o)
    server = current.server

    def vote_again() -> None:
        server.say(current.players[0].index, "!synelo_votescramble")

    play(current, o, 1, moments={20.0: lambda: everyone_votes(current), 40.0: vote_again})
    record = finish(current)
    (scramble,) = record["scrambles"]  # at once, mid-round
    assert scramble["reason"] == "vote", scramble
    started = record["rounds"][0]["started"]
    assert started + 20.0 <= scramble["t"] < started + 40.0, scramble
    refused = chat_to(server, current.players[0])
    assert any("scrambled lately" in line for line in refused), refused
    counted = next(e["text"] for e in server.chat if "wants the teams scrambled" in e["text"])
    advised = counted.split("Type !", 1)[1].split()[0]
    assert f"sm_{advised}" in server.commands, counted


@sqlite_only
def test_vote_needs_its_min_players(live: LiveServer, pool: str, smx: Path) -> None:
    o = opts(
        live,
        pool,
        smx,
        mode="koth",
        players=4,
        round_seconds=60,
        convars={**NO_AUTO, "sm_synelo_vote_delay": "0"},
    )
    current = start(o)
    server = current.server

    play(current, o, 1, moments={20.0: lambda: everyone_votes(current)})
    record = finish(current)
    assert record["scrambles"] == []
    assert any("Too few players" in line for line in chat_to(server, current.players[0]))


# --- autobalance ---------------------------------------------------------------------------


def _f11_round(
    live: LiveServer, pool: str, smx: Path, protect: str
) -> tuple[dict[str, Any], Run, float, set[str], str]:
    """10 players 5 v 5; 20 s after the doors two RED players leave (3 v 5). BLU's players
    but one are protected (`protect`); the one left is the only one F11 may move, at once
    (sm_synelo_move_wait 0: test_emulator_moves.py tests the wait for a death)."""
    convars = {**NO_AUTO, "sm_synelo_move_wait": "0"}
    o = opts(live, pool, smx, mode="koth", players=10, round_seconds=120, convars=convars)
    current = start(o)
    server, game = current.server, current.game
    blue = [c for c in server.sorted_clients() if c.team == BLU]
    red = [c for c in server.sorted_clients() if c.team == RED]
    free = blue[-1]
    guarded = blue[:-1]
    left_at: list[float] = []
    for client in guarded:
        if protect == "immunity":
            client.flags = flag_bits("b")
        elif protect == "uber":
            client.tf_class, client.charge = MEDIC, 1.0
        elif protect == "intel":
            client.carrying = 300 + client.index  # m_hItem: the intelligence they carry
        elif protect == "building":
            client.tf_class = ENGINEER
            sentry = 400 + client.index
            server.entities[sentry] = Entity(sentry, "obj_sentrygun", {"m_hBuilder": client.index})
    if protect == "immunity":  # sm_reloadadmins: the admin cache is rebuilt
        server.call("OnRebuildAdminCache", 1)

    def gap() -> None:
        left_at.append(server.now)
        for client in red[:2]:
            game.leave(client)
        if protect == "captured":
            game.capture(guarded)

    play(current, o, 1, winner=RED, moments={20.0: gap})
    record = finish(current)
    return record, current, left_at[0], {c.steam_id for c in guarded}, free.steam_id


@sqlite_only
@pytest.mark.parametrize("protect", ["none", "immunity", "uber", "captured", "intel", "building"])
def test_f11_moves_10_s_after_the_gap_and_spares_the_protected(
    live: LiveServer, pool: str, smx: Path, protect: str
) -> None:
    """F11 at a size gap of 2: one move, sm_synelo_autobalance_delay (10 s) after the gap on
    the simulated clock. Immunity (admin flag a), a built über (a medic at charge 1.0; fault
    6: it was not protected), a capture in the last 30 s, the intelligence carried and an
    engineer's building keep a player from being moved. Who moved is read from the team
    changes the plugin made, as well as from its log."""
    record, current, left_at, guarded, free = _f11_round(live, pool, smx, protect)
    changed = [c for c in record["team_changes"] if c["t"] >= left_at]
    assert [(c["from"], c["to"]) for c in changed] == [("blue", "red")], changed
    assert 10.0 <= changed[0]["t"] - left_at <= 11.0, (changed, left_at)
    if protect != "none":
        assert changed[0]["player"] == free and changed[0]["player"] not in guarded
    moves = [m for m in record["moves"] if m["reason"] == "f11"]
    assert len(moves) == 1, record["moves"]
    (move,) = moves
    assert 10.0 <= move["t"] - left_at <= 11.0, (move, left_at)
    assert move["to"] == "red"
    if protect != "none":
        assert move["player"] == free and move["player"] not in guarded
    r = current.server.sorted_clients()
    assert sum(c.team == RED for c in r) == sum(c.team == BLU for c in r) == 4


@sqlite_only
def test_odd_joiner_and_placed_joiner(live: LiveServer, pool: str, smx: Path) -> None:
    """A joiner who picks a side mid-round plays on a team; a joiner on "auto" is placed by
    the service's odd-joiner rule at once."""
    o = opts(live, pool, smx, mode="koth", players=8, round_seconds=120, convars=NO_AUTO)
    current = start(o)
    server, game = current.server, current.game
    joined: dict[str, Any] = {}

    def picker() -> None:
        joined["picker"] = client = game.connect("picker")
        game.join_team(client, "blue")  # 4 v 5; equal ratings: the rule says RED

    def auto() -> None:
        joined["auto"] = client = game.connect("auto")
        game.join_team(client)

    play(current, o, 1, winner=RED, moments={20.0: picker, 50.0: auto})
    record = finish(current)
    picker = joined["picker"]  # ends on a team, the teams within one of each other
    assert picker.team in (RED, BLU)
    assert not [m for m in record["moves"] if m["reason"] == "f11"]
    auto_client = joined["auto"]
    assert auto_client.team in (RED, BLU)
    assert any("the balance puts you on" in line for line in chat_to(server, auto_client))


@sqlite_only
def test_team_lock_and_parties(live: LiveServer, pool: str, smx: Path) -> None:
    """Two players in a party (!synelo_party) play on one team after the waiting-for-players
    scramble; a player the scramble moved cannot `jointeam` the other team."""
    o = opts(live, pool, smx, mode="koth", players=12, round_seconds=60)
    current = start(o, wait=False)
    server = current.server
    a, b = current.players[0], current.players[1]
    server.advance(6.0)
    server.say(a.index, f"!synelo_party {b.name}")
    server.say(b.index, "!synelo_party accept")
    joined = {c.index: c.team for c in current.players}
    current.game.waiting_for_players()
    tried: dict[str, Any] = {}

    def switch() -> None:  # 5 s into round 1, just after the scramble at its start
        moved = [c for c in current.players if c.team != joined[c.index]]
        assert moved, "the scramble moved nobody"
        client = tried["client"] = moved[0]
        tried["team"] = client.team
        server.run_command(client.index, f"jointeam {'red' if client.team == BLU else 'blue'}")
        server._drain()
        tried["after"] = client.team

    play(current, o, 1, moments={5.0: switch})
    assert reasons(current.record()) == ["waiting_ended"]
    assert a.team == b.team and a.team in (RED, BLU)
    assert tried["after"] == tried["team"]
    assert any("change team in" in line for line in chat_to(server, tried["client"]))
    assert finish(current)["rounds"][0]["stored"]


# --- outages and restarts ------------------------------------------------------------------


@sqlite_and_matrix_postgresql
def test_401_while_set_up_then_the_token_fixed(live: LiveServer, pool: str, smx: Path) -> None:
    """Fault 6: reports refused with 401 while the server is set up were dropped; now they are
    kept, and delivered once the operator fixes sm_synelo_token."""
    o = opts(live, pool, smx, mode="koth", players=8, round_seconds=60, convars=NO_AUTO)
    o.token = "wrong-token"
    current = start(o)
    play(current, o, 1)
    play(current, o, 2)
    assert stored_ids(live, pool) == []
    current.server.set_convar("sm_synelo_token", SERVER)
    play(current, o, 3)
    record = finish(current)
    assert [r["stored"] for r in record["rounds"]] == [True, True, True]
    assert sorted(stored_ids(live, pool)) == sorted(r["round_id"] for r in record["rounds"])
    assert any(x["status"] == 401 for x in record["requests"])


@sqlite_and_matrix_postgresql
def test_reload_mid_map_and_a_map_change(live: LiveServer, pool: str, smx: Path) -> None:
    """`sm plugins reload synelo` mid-map (SourceMod replays no client forward on a late load)
    and a map change: teams, lookups and reports keep working."""
    o = opts(live, pool, smx, mode="koth", players=8, round_seconds=60, convars=NO_AUTO)
    current = start(o)
    server, game = current.server, current.game
    play(current, o, 1)
    server.unload()
    server.load(late=True)
    admin = current.players[0]
    admin.flags = flag_bits("b")
    play(current, o, 2)
    reply = server.run_command(admin.index, f"sm_synelo_rating #{current.players[1].userid}")
    assert reply and "unknown" not in reply.lower(), reply
    game.end_map()
    game.start_map()
    game.reconnect_all()
    game.waiting_for_players()
    play(current, o, 3)
    record = finish(current)
    assert [r["stored"] for r in record["rounds"]] == [True, True, True]
    assert_everyone_plays(record, 8)
    reports = [x.body for x in server.http.exchanges if x.url.endswith("/rounds")]
    assert {rostered(body) for body in reports} == {8}


# --- service answers -----------------------------------------------------------------------


def test_rank_top_and_balance_answer_with_the_services_numbers(
    live: LiveServer, admin: httpx.Client, smx: Path
) -> None:
    """!synelo_rank and !rank and !synelo_balance: each line holds the numbers of the
    service's own answer (a pool whose shadow period is 1 round)."""
    pool = f"t{uuid.uuid4().hex[:16]}"
    r = admin.post("/v1/pools", json={"name": pool, "team_size": 12, "params": {"t_shadow": 1}})
    assert r.status_code == 201, r.text
    o = opts(live, pool, smx, mode="koth", players=8, round_seconds=60, convars=NO_AUTO)
    current = start(o)
    server = current.server
    play(current, o, 1)
    play(current, o, 2)
    asker = current.players[0]
    server.advance(10.0)
    server.say(asker.index, "!synelo_rank")
    lookup = server.http.exchanges[-1]
    assert lookup.url.endswith("players/lookup") and lookup.status == 200
    answer = lookup.answer["players"][0]
    line = chat_to(server, asker)[-1]
    assert f"rating {answer['rating']}" in line and f"({answer['rounds_played']} rounds)" in line
    server.advance(10.0)
    server.say(asker.index, "!rank")
    assert chat_to(server, asker)[-1] == line
    server.advance(10.0)
    server.say(asker.index, "!synelo_balance")
    predict = server.http.exchanges[-1]
    assert predict.url.endswith("/predict") and predict.status == 200
    red = round(predict.answer["p_a"] * 100)
    expected_line = f"Chance to win now: RED {red} in 100, BLU {100 - red} in 100."
    assert chat_to(server, asker)[-1] == expected_line
    finish(current)


@sqlite_only
def test_admin_menu_scramble(live: LiveServer, pool: str, smx: Path) -> None:
    """The admin menu has synelo's category and items; choosing "scramble" schedules one for
    the next round start."""
    o = opts(live, pool, smx, mode="koth", players=8, round_seconds=60, admins=1, convars=NO_AUTO)
    current = start(o)
    server = current.server
    menu = server.handles.get(server.admin_menu, TopMenu)
    names = [obj["name"] for obj in menu.objects]
    assert names == ["synelo", "synelo_scramble", "synelo_status", "synelo_rating"]
    server.admin_menu_select(current.players[0].index, "synelo_scramble")
    play(current, o, 1)
    play(current, o, 2)
    record = finish(current)
    assert reasons(record) == ["admin"], record["scrambles"]


@sqlite_only
def test_top_is_a_menu_of_the_services_leaderboard(
    live: LiveServer, admin: httpx.Client, smx: Path
) -> None:
    pool = f"t{uuid.uuid4().hex[:16]}"
    r = admin.post("/v1/pools", json={"name": pool, "team_size": 12, "params": {"t_shadow": 1}})
    assert r.status_code == 201, r.text
    o = opts(live, pool, smx, mode="koth", players=8, round_seconds=60, convars=NO_AUTO)
    current = start(o)
    server = current.server
    play(current, o, 1)
    play(current, o, 2)
    asker = current.players[0]
    for command in ("!synelo_top", "!top"):
        server.advance(10.0)
        server.menus.pop(asker.index, None)
        server.say(asker.index, command)
        top = server.http.exchanges[-1]
        assert "leaderboard" in top.url and top.status == 200
        _, menu = server.menus[asker.index]
        expected = [f"{p['place']}. {p['name']}  {p['rating']}" for p in top.answer["players"]]
        assert [item[1] for item in menu.items] == expected and expected
