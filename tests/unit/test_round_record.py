"""The store's record of a rated round: rows already stored decode to the outcome they record,
and a record encodes to the very text such a row holds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from synelo.domain import RatedPlayer, RatedRound, RoundReport
from synelo.service.api.rounds import round_json
from synelo.store.round_record import decode_record, encode_record

# Written by the release before this module (its HTTP answer, stored verbatim as the record).
STORED = (
    '{"round_id":"r2","seq":2,"winner":"draw","p_a":0.07762946255648838,"sum_a":1005,'
    '"sum_b":1995,"players":[{"steam_id":"76561197960265729","team":"A","before":1005,'
    '"after":1035,"delta":30,"k":71.99453146361748,"visible":false,"rounds_played":2},'
    '{"steam_id":"76561197960265731","team":"B","before":995,"after":965,"delta":-30,'
    '"k":71.99453146361748,"visible":false,"rounds_played":2},{"steam_id":"76561197960265732",'
    '"team":"B","before":1000,"after":970,"delta":-30,"k":72.0,"visible":false,'
    '"rounds_played":1}]}'
)

RATED = RatedRound(
    "r2",
    2,
    "draw",
    0.07762946255648838,
    1005,
    1995,
    (
        RatedPlayer("76561197960265729", "A", 1005, 1035, 30, 71.99453146361748, False, 2),
        RatedPlayer("76561197960265731", "B", 995, 965, -30, 71.99453146361748, False, 2),
        RatedPlayer("76561197960265732", "B", 1000, 970, -30, 72.0, False, 1),
    ),
)


def test_a_stored_row_decodes_to_the_round_it_records() -> None:
    assert decode_record(STORED) == RATED
    assert decode_record(STORED.encode()) == RATED


def test_a_record_is_the_text_stored_rows_hold() -> None:
    assert encode_record(RATED) == STORED


def test_the_answer_to_a_retry_is_the_answer_first_given() -> None:
    """The service's JSON of a decoded record is the answer the older release gave, byte for
    byte (that answer is what its row holds)."""
    assert round_json(decode_record(STORED)) == STORED.encode()


@pytest.mark.parametrize("p_a", [0.1, 1 / 3, 2**-1074, 1 - 2**-53, 0.5])
def test_floats_survive_the_record_exactly(p_a: float) -> None:
    rated = RatedRound(
        "x", 1, "A", p_a, 1, 2, (RatedPlayer("a", "A", 1, 2, 1, p_a * 72, True, 30),)
    )
    back = decode_record(encode_record(rated))
    assert back == rated
    assert back.p_a.hex() == p_a.hex() and back.players[0].k.hex() == (p_a * 72).hex()


def test_the_answer_is_the_documented_models_json() -> None:
    """round_json skips pydantic for speed; it must still say exactly what RoundOut says."""
    from synelo.schemas import RoundOut

    PLAYER_FIELDS = (
        "steam_id",
        "team",
        "before",
        "after",
        "delta",
        "k",
        "visible",
        "rounds_played",
    )
    model = RoundOut.model_validate(
        {
            "round_id": RATED.round_id,
            "seq": RATED.seq,
            "winner": RATED.winner,
            "p_a": RATED.p_a,
            "sum_a": RATED.sum_a,
            "sum_b": RATED.sum_b,
            "players": [dict(zip(PLAYER_FIELDS, c, strict=True)) for c in RATED.players],
        }
    )
    assert round_json(RATED) == model.model_dump_json().encode()


def test_a_plain_report_digests_as_before_and_extras_change_the_digest() -> None:
    """The digest of a report without optional fields is the one releases before them stored
    (written out here from that release's formula), so a retry of such a round is still a
    retry; any optional field, at any key order, is part of the digest."""
    plain = RoundReport(
        "r1",
        "srv1",
        "arena_well",
        "A",
        ("76561197960265730", "76561197960265729"),
        ("76561197960265731",),
        ("76561197960265729",),
        ("76561197960265731",),
    )
    assert plain.content_hash() == (
        "7ce1fe286ebd8a32760c1f6bbd1f5e439e21beeb022f15934e39d2801d35f538"
    )
    named = replace(plain, extras={"names": {"76561197960265729": "Ann"}, "mode": "koth"})
    reordered = replace(plain, extras={"mode": "koth", "names": {"76561197960265729": "Ann"}})
    renamed = replace(plain, extras={"mode": "koth", "names": {"76561197960265729": "Bo"}})
    assert named.content_hash() == reordered.content_hash() != plain.content_hash()
    assert renamed.content_hash() != named.content_hash()
