"""The service's way of rating a match history, for tests that compare a replay with it."""

from __future__ import annotations

from collections.abc import Sequence

from synelo.evaluation.history import Match
from synelo.ratings import PlayerRecord, SynEloParams, apply_change, new_window, rate_round


def rate_like_the_service(
    matches: Sequence[Match], params: SynEloParams
) -> tuple[list[float], dict[str, PlayerRecord], set[float]]:
    """Each match through `rate_round` + `apply_change`, as the store rates a round (every
    player a participant, windows as the store makes them): P_A of each match, the players'
    records at the end, and every C used."""
    records: dict[str, PlayerRecord] = {}
    p_a: list[float] = []
    used_c: set[float] = set()
    for m in matches:
        for p in m.team_a + m.team_b:
            records.setdefault(p, PlayerRecord(params.r0, 0, new_window(params)))
        parts = [(p, "A", records[p]) for p in m.team_a] + [(p, "B", records[p]) for p in m.team_b]
        rated = rate_round(
            [records[p].rating for p in m.team_a],
            [records[p].rating for p in m.team_b],
            parts,
            m.winner,
            params,
        )
        used_c.update(
            c for c in (records[p].convergence for p in m.team_a + m.team_b) if c is not None
        )
        for change in rated.changes:
            apply_change(records[change.player], change)
        p_a.append(rated.p_a)
    return p_a, records, used_c
