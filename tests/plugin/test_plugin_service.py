"""The request bodies the plugin's logic builds under the VM, sent to a real synelo service
(uvicorn on loopback, both databases): the round report is accepted and its retry changes
nothing, the splits request is answered and its answer fills the split cache, and the
autobalance request's moves are applied through the logic."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.conftest import steam
from tests.plugin.harness import SIDE, LogicVM, compile_logic

PLAYERS = [steam(n) for n in range(1, 8)]


@pytest.fixture(scope="module")
def smx(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return compile_logic(tmp_path_factory.mktemp("svc") / "logic_test.smx")


def _actions(vm: LogicVM, kind: int) -> list[str]:
    return [text for type_, *_, text in vm.drain() if type_ == kind]


def test_bodies_built_in_the_vm_are_the_services(
    smx: bytes, server: httpx.Client, pool: str
) -> None:
    vm = LogicVM(smx)
    vm.call("T_Reset", 3, 3, 2, 10000, 1000)  # koth
    for n, p in enumerate(PLAYERS[:6]):
        vm.call("T_Join", 0, p, SIDE["A" if n < 3 else "B"], 0, False)
    vm.call("T_RoundStart", 1000, SIDE["B"])
    vm.call("T_Damage", 2000, PLAYERS[0], PLAYERS[3])
    vm.call("T_Heal", 3000, PLAYERS[1])
    vm.call("T_Damage", 4000, "", PLAYERS[4])
    vm.call("T_Capture", 5000, SIDE["B"])
    vm.call("T_RoundEnd", 9000, SIDE["A"], True)
    (report,) = _actions(vm, 1)

    # the report: 201, and the same body again (a retry from the buffer) 200, unchanged
    headers = {"content-type": "application/json"}
    first = server.post(f"/v1/pools/{pool}/rounds", content=report, headers=headers)
    assert first.status_code == 201, first.text
    assert {p["steam_id"] for p in first.json()["players"]} == {
        PLAYERS[0],
        PLAYERS[1],
        PLAYERS[3],
        PLAYERS[4],
    }
    retry = server.post(f"/v1/pools/{pool}/rounds", content=report, headers=headers)
    assert retry.status_code == 200 and retry.content == first.content

    # the splits request for everyone eligible (a seventh player joins); 7 players are fewer
    # than the automatic scrambles' default minimum (8): this server allows 2
    vm.call("T_Scrambles", 2, 0, 0x7E, 0, 0)
    vm.call("T_Join", 10000, PLAYERS[6], SIDE["A"], 0, False)
    vm.call("T_WaitingEnded", 11000)  # request_splits, then the scramble (pending)
    splits_body = _actions(vm, 2)[0]
    assert sorted(json.loads(splits_body)["players"]) == sorted(PLAYERS)
    answer = server.post(f"/v1/pools/{pool}/splits", content=splits_body, headers=headers)
    assert answer.status_code == 200, answer.text
    vm.call("T_SCClear")
    for split in answer.json()["splits"]:
        s = vm.call("T_SCBegin", split["k"])
        for side in ("A", "B"):
            for p in split[side]:
                assert vm.call("T_SCAdd", s, SIDE[side], p)
    assert json.loads(splits_body)["mode"] == "all-play"  # koth: everyone plays
    (split,) = answer.json()["splits"]
    assert sorted([len(split["A"]), len(split["B"])]) == [3, 4] and split["bench"] == []
    vm.seats = {}
    assert vm.call("T_SCTakeScramble") == 3  # the all-play split of 7: 4 v 3, nobody waits
    assert sorted(vm.seats.values()) == [2, 2, 2, 2, 3, 3, 3] or sorted(vm.seats.values()) == [
        2,
        2,
        2,
        3,
        3,
        3,
        3,
    ]
    assert not vm.call("T_ScramblePending")


def test_autobalance_moves_from_the_service(smx: bytes, server: httpx.Client, pool: str) -> None:
    vm = LogicVM(smx)
    vm.call("T_Reset", 3, 3, 2, 10000, 1000)
    for n, p in enumerate(PLAYERS[:6]):
        vm.call("T_Join", 0, p, SIDE["A"] if n < 5 else SIDE["B"], 0, False)
    vm.call("T_RoundStart", 1000, SIDE["B"])  # 5v1 seen at doors up
    assert vm.call("T_Due") == 11000
    vm.call("T_Tick", 10999)
    assert vm.drain() == []
    vm.call("T_Tick", 12000)
    (body,) = _actions(vm, 5)
    answer = server.post(
        f"/v1/pools/{pool}/autobalance", content=body, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 200, answer.text
    moves = answer.json()["moves"]
    assert len(moves) == 2 and all(m["from"] == "A" and m["to"] == "B" for m in moves)
    for m in moves:
        assert vm.call("T_ApplyMove", 11000, m["steam_id"], SIDE[m["to"]])
    applied = [(text, to) for type_, _, t, _, to, _, text in vm.drain() if type_ == 4]
    assert applied == [(m["steam_id"], SIDE["B"]) for m in moves]
    for m in moves:  # the engine's team change that follows changes nothing
        vm.call("T_TeamChange", 13000, m["steam_id"], SIDE["B"])
    assert vm.drain() == [] and vm.call("T_Due") == -1


def _body(vm: LogicVM, function: str, *args: object) -> str:
    vm.raw = []
    vm.call(function, *args)
    return vm.raw[0][-1]


def test_names_parties_and_a_joiner_reach_the_service(
    smx: bytes, server: httpx.Client, pool: str
) -> None:
    """A report with names is stored with them (the lookup answers them); a party built by
    the community rules stays together in the service's splits; a joiner sent to
    /autobalance is placed."""
    vm = LogicVM(smx)
    vm.call("T_Reset", 3, 3, 2, 10000, 1000)
    vm.call("T_SGReset", 60, 6, 300000, 60000, False, 60000, True, 120000, True, 4, 5000)
    for n, p in enumerate(PLAYERS[:6]):
        side = SIDE["A" if n < 3 else "B"]
        vm.call("T_Join", 0, p, side, 0, False)
        vm.call("T_SGJoin", 0, p, side, False)
        vm.call("T_SetName", p, f'Player "{n}"')
    vm.call("T_RoundStart", 1000, SIDE["B"])
    vm.call("T_Damage", 2000, PLAYERS[0], PLAYERS[3])
    vm.call("T_RoundEnd", 9000, SIDE["A"], True)
    (report,) = _actions(vm, 1)
    headers = {"content-type": "application/json"}
    stored = server.post(f"/v1/pools/{pool}/rounds", content=report, headers=headers)
    assert stored.status_code == 201, stored.text
    found = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": PLAYERS[:6]})
    names = [p["name"] for p in found.json()["players"]]
    # the two who played are rated, so stored with their names; the others are not stored yet
    assert names == ['Player "0"', None, None, 'Player "3"', None, None]

    # a party across the teams (players 1 and 4): the splits keep it on one side
    vm.call("T_SGPartyInvite", 10000, PLAYERS[0], PLAYERS[3])
    vm.call("T_SGPartyAccept", 10000, PLAYERS[3])
    vm.call("T_SGDrain")
    body = _body(vm, "T_SplitsBodyWithParties")
    assert json.loads(body)["parties"] == [sorted([PLAYERS[0], PLAYERS[3]])]
    answer = server.post(f"/v1/pools/{pool}/splits", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    for split in answer.json()["splits"]:
        sides = [s for s in ("A", "B", "bench") if PLAYERS[0] in split[s]]
        assert sides and PLAYERS[3] in split[sides[0]], split

    # a seventh player joins from spectator mid-round: /autobalance places them
    vm.call("T_Join", 11000, PLAYERS[6], SIDE["none"], 0, False)
    body = _body(vm, "T_AutobalanceBodyWithParties", PLAYERS[6])
    assert json.loads(body)["joiner"] == PLAYERS[6]
    answer = server.post(f"/v1/pools/{pool}/autobalance", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    first = answer.json()["moves"][0]
    assert first["steam_id"] == PLAYERS[6] and first["from"] == "none" and first["to"] in "AB"


def test_the_lookup_and_predict_bodies_are_answered(
    smx: bytes, server: httpx.Client, pool: str
) -> None:
    """!rank's lookup (with the player's name) and !balance's /predict, built in the VM,
    answered by the service: the name is stored for a rated player, T and the place come
    back, and team A's chance is a probability."""
    vm = LogicVM(smx)
    vm.call("T_Reset", 3, 3, 2, 10000, 1000)
    for n, p in enumerate(PLAYERS[:4]):
        vm.call("T_Join", 0, p, SIDE["A" if n < 2 else "B"], 0, False)
    vm.call("T_RoundStart", 1000, SIDE["B"])
    vm.call("T_Damage", 2000, PLAYERS[0], PLAYERS[2])
    vm.call("T_RoundEnd", 9000, SIDE["A"], True)
    (report,) = _actions(vm, 1)
    headers = {"content-type": "application/json"}
    assert server.post(f"/v1/pools/{pool}/rounds", content=report, headers=headers).is_success
    vm.call("T_SetName", PLAYERS[0], "Ann")
    body = _body(vm, "T_LookupBody", PLAYERS[0])
    assert json.loads(body) == {"steam_ids": [PLAYERS[0]], "names": {PLAYERS[0]: "Ann"}}
    answer = server.post(f"/v1/pools/{pool}/players/lookup", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    (player,) = answer.json()["players"]
    assert player["name"] == "Ann" and player["place"] is None  # one round: still in shadow
    assert answer.json()["shadow_rounds"] == 50
    assert json.loads(_body(vm, "T_LookupBody", PLAYERS[1])) == {"steam_ids": [PLAYERS[1]]}

    body = _body(vm, "T_PredictBody")
    assert json.loads(body) == {"teams": {"A": PLAYERS[:2], "B": PLAYERS[2:4]}}
    answer = server.post(f"/v1/pools/{pool}/predict", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    assert 0.5 < answer.json()["p_a"] < 1  # A's player 1 won the round: A is favoured
