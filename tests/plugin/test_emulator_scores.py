"""Each TF2 mode's margin, end to end (issue 38): the real synelo.smx on the emulated server
reads the round's scores from the game's entities, which plugin/emulate keeps as TF2 does,
and the service stores them with the round's report. plugin/README.md, "Scores", says what
they mean in each mode; every number below is worked out by hand from the round played.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin.emulate.engine import BLU, RED, Server
from plugin.emulate.game import Game
from plugin.emulate.ripext import Http
from plugin.emulate.scenario import Options, finish, play, start

from tests.conftest import SERVER, LiveServer

sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
NO_AUTO = {"sm_synelo_autoscramble_triggers": ""}  # no scramble in the way
WINNER = {RED: "A", BLU: "B", 0: "draw"}

# mode: the rounds played, each (winner, margin, timed out, the scores the service stores).
# Rounds of the default length (ROUND_SECONDS: KOTH 240 s with 180-s clocks; attack/defend and
# payload 500 s after a 60-s setup).
CASES: dict[str, list[tuple[int, float | None, bool, dict[str, int] | None]]] = {
    # captures: the winners reach tf_flag_caps_per_round (3)
    "ctf": [(RED, 1, False, {"A": 3, "B": 1}), (BLU, 0, False, {"A": 0, "B": 3})],
    "pass": [(RED, 2, False, {"A": 3, "B": 2})],
    # points held: BLU took all five back from RED, who had taken the middle and one more
    "cp": [(BLU, 2, False, {"A": 0, "B": 5})],
    # seconds held: RED's clock ran out (180); BLU held 10 s, or 170 s and nearly won; RED
    # never took the point
    "koth": [
        (RED, 10, False, {"A": 180, "B": 10}),
        (BLU, 170, False, {"A": 170, "B": 180}),
        (BLU, 0, False, {"A": 0, "B": 180}),
    ],
    # survivors: round 1 is the 1 v 1 duel, then 3 v 3 with 2 of BLU standing
    "arena": [(RED, None, False, {"A": 1, "B": 0}), (BLU, 2, False, {"A": 0, "B": 2})],
    # percent of the stage: BLU captured with 120 of 500 s left (76 % of the clock used);
    # then RED defended to the end, BLU having taken 1 of the stage's 2 points
    "ad": [(BLU, 120, False, {"A": 76, "B": 100}), (RED, 0.5, False, {"A": 100, "B": 50})],
    # RED held BLU's cart to 40 % of the track; then BLU finished with 50 of 500 s left
    "pl": [(RED, 0.4, False, {"A": 100, "B": 40}), (BLU, 50, False, {"A": 90, "B": 100})],
    # each cart's share of its track: RED's reached 30 %
    "plr": [(BLU, 0.3, False, {"A": 30, "B": 100})],
    # the logic's points: the winners reached m_nMaxPoints (the emulated maps' 100 and 300)
    "pd": [(RED, 40, False, {"A": 100, "B": 40})],
    "rd": [(BLU, 10, False, {"A": 10, "B": 300})],
    # Special Delivery: one delivery ends the round, no margin
    "sd": [(RED, None, False, None)],
}


def stored_reports(live: LiveServer, pool: str) -> dict[str, dict[str, Any]]:
    """Each stored round's report as the service keeps it, by round_id."""
    _, rounds, _ = live.store.journal_rounds(pool)
    return {r.round_id: r.report or {} for r in rounds}


def play_rounds(
    live: LiveServer,
    pool: str,
    smx: Path,
    mode: str,
    rounds: list[tuple[int, float | None, bool, Any]],
    convars: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Plays `rounds` on a 6-player server of `mode`; the stored report of each, in order."""
    o = Options(
        url=live.url,
        token=SERVER,
        pool=pool,
        smx=smx,
        mode=mode,
        players=6,
        rounds=len(rounds),
        convars={**NO_AUTO, **(convars or {})},
    )
    current = start(o)
    for number, (winner, margin, timed_out, _) in enumerate(rounds, start=1):
        play(current, o, number, winner=winner, margin=margin, timed_out=timed_out)
    record = finish(current)
    assert all(r["stored"] for r in record["rounds"]), record["rounds"]
    reports = stored_reports(live, pool)
    return [reports[r["round_id"]] for r in record["rounds"]]


@sqlite_only
@pytest.mark.parametrize("mode", list(CASES))
def test_the_service_stores_the_margin_each_mode_had(
    live: LiveServer, pool: str, compiled_smx: Path, mode: str
) -> None:
    rounds = CASES[mode]
    reports = play_rounds(live, pool, compiled_smx, mode, rounds)
    assert [r["winner"] for r in reports] == [WINNER[w] for w, *_ in rounds]
    assert [r.get("scores") for r in reports] == [expected for *_, expected in rounds]
    assert {r["mode"] for r in reports} == {mode}


@sqlite_only
def test_a_draw_and_a_contradicting_margin_carry_no_scores(
    live: LiveServer, pool: str, compiled_smx: Path
) -> None:
    """A CTF stalemate at 0 captures to 1 (mp_stalemate_enable 0: a draw) is stored without
    scores; then, on 5CP with sudden death, RED survives while BLU holds 3 points to RED's 2:
    the win is stored, its points (which would say BLU won) are not."""
    (draw,) = play_rounds(live, pool, compiled_smx, "ctf", [(RED, 1, True, None)])
    assert draw["winner"] == "draw" and "scores" not in draw, draw
    sudden = {"mp_stalemate_enable": "1"}
    (won,) = play_rounds(live, pool, compiled_smx, "cp", [(RED, 1, True, None)], sudden)
    assert won["winner"] == "A" and "scores" not in won, won


def offline(mode: str, smx: Path, players: int = 6) -> Game:
    """A server of `mode` whose service never answers, `players` on the teams, waiting for
    players over."""
    server = Server(smx)
    server.http = Http()
    server.http.down = True
    server.load()
    game = Game(server, mode)
    game.start_map()
    for n in range(players):
        game.join_team(game.connect(f"p{n}"))
    game.waiting_for_players()
    return game


def test_the_game_keeps_the_values_tf2_keeps(compiled_smx: Path) -> None:
    """Flag captures count the round's and start again at 0; KOTH's clocks are the game
    rules' m_hRedKothTimer and m_hBlueKothTimer, and the winner's runs out; control points
    change owner on the objective resource as they are captured."""
    ctf = offline("ctf", compiled_smx)
    ctf.play_round(winner=BLU, margin=2)
    assert (ctf.team_entity(RED).props["m_nFlagCaptures"], ctf._flags(BLU)) == (2, 3)
    ctf.begin_round()
    assert (ctf._flags(RED), ctf._flags(BLU)) == (0, 0)

    koth = offline("koth", compiled_smx)
    koth.play_round(winner=RED, margin=30)
    rules = koth._gamerules()
    red = koth.server.entities[rules["m_hRedKothTimer"]].props
    blu = koth.server.entities[rules["m_hBlueKothTimer"]].props
    assert blu["m_bTimerPaused"] == 1 and blu["m_flTimeRemaining"] == pytest.approx(150.0)
    assert red["m_nTimerLength"] == 180 and red["m_bTimerPaused"] == 0
    assert red["m_flTimerEndTime"] <= koth.server.game_time()  # ran out: RED won

    cp = offline("cp", compiled_smx)
    cp.play_round(winner=RED, margin=2, timed_out=True)  # a stalemate: the points stay
    assert cp.owners() == [RED, BLU, BLU, BLU, BLU]
    cp.begin_round()
    assert cp.owners() == [RED, RED, 0, BLU, BLU]
    with pytest.raises(ValueError, match="cp margin must be from 0 to 2"):
        cp.play_round(winner=RED, margin=3)
