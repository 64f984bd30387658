"""Rounds for the tests that run every model: with the optional fields some models need
(positions for `positional`, scoreboard points for `sectors-edge`); the others ignore them."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

from synelo.models import RoundFacts
from synelo.ratings.synelo import Winner

POSITIONS = ("offense", "defense")


def points(player: str) -> int:
    """A player's scoreboard points, fixed by their id (some on 0)."""
    return zlib.crc32(player.encode()) % 23


def round_fields(
    sides: Sequence[Sequence[str]], names: Sequence[str] = POSITIONS
) -> dict[str, Any]:
    """positions (each side cycling through `names`: offense, defense…) and player_scores
    for every player of `sides` (each side's rostered and rated players, in order)."""
    positions: dict[str, str] = {}
    for side in sides:
        for i, player in enumerate(dict.fromkeys(side)):
            positions[player] = names[i % len(names)]
    return {"positions": positions, "player_scores": {p: points(p) for p in positions}}


def round_facts(
    team_a: Sequence[str],
    team_b: Sequence[str],
    winner: Winner,
    participants_a: Sequence[str] | None = None,
    participants_b: Sequence[str] | None = None,
    scores: dict[str, int] | None = None,
    positions: Sequence[str] = POSITIONS,
) -> RoundFacts:
    """RoundFacts with `round_fields` in its extras (`scores`: the players' points instead;
    `positions`: the names each side cycles through)."""
    sides = [[*team_a, *(participants_a or ())], [*team_b, *(participants_b or ())]]
    extras = round_fields(sides, positions)
    if scores is not None:
        extras["player_scores"] = scores
    return RoundFacts(
        tuple(team_a),
        tuple(team_b),
        winner,
        None if participants_a is None else tuple(participants_a),
        None if participants_b is None else tuple(participants_b),
        extras,
    )
