"""The store's record of a rated round (``rounds.result``), replayed to a retry.

A retry of a rated round gets the outcome as it was rated then, not as the players stand
now, so the store keeps it. The record is a JSON object:

    {"round_id", "seq", "winner", "p_a", "sum_a", "sum_b",
     "players": [{"steam_id", "team", "before", "after", "delta", "k", "visible",
                  "rounds_played"}, …]}

with the player key (text ids too) under "steam_id". This is the storage format and it is
frozen: rows written by every release so far hold exactly it (it began as a copy of the HTTP
answer, which is now encoded by the service and may change without touching stored rows).
Keeping it also lets a release from before this module replay the rows written after it.
JSON keeps every float exactly (orjson writes the shortest text that reads back the same),
so a decoded record is the outcome as rated, to the last bit.
"""

from __future__ import annotations

import orjson

from synelo.domain import RatedPlayer, RatedRound


def encode_record(rated: RatedRound) -> str:
    """The record of a rated round, as ``rounds.result`` keeps it."""
    return orjson.dumps(
        {
            "round_id": rated.round_id,
            "seq": rated.seq,
            "winner": rated.winner,
            "p_a": rated.p_a,
            "sum_a": rated.sum_a,
            "sum_b": rated.sum_b,
            "players": [
                {
                    "steam_id": player,
                    "team": team,
                    "before": before,
                    "after": after,
                    "delta": delta,
                    "k": k,
                    "visible": visible,
                    "rounds_played": rounds_played,
                }
                # unpacked: an eighth faster than reading each field by name
                for player, team, before, after, delta, k, visible, rounds_played in rated.players
            ],
        }
    ).decode()


def decode_record(text: str | bytes) -> RatedRound:
    """A rated round from its record (`encode_record`)."""
    d = orjson.loads(text)
    return RatedRound(
        d["round_id"],
        d["seq"],
        d["winner"],
        d["p_a"],
        d["sum_a"],
        d["sum_b"],
        tuple(
            RatedPlayer(
                c["steam_id"],
                c["team"],
                c["before"],
                c["after"],
                c["delta"],
                c["k"],
                c["visible"],
                c["rounds_played"],
            )
            for c in d["players"]
        ),
    )
