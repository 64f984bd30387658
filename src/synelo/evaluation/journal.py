"""Importer of a pool's own rounds from the service's database (its journal).

Each rated round becomes a match: its participants as the journal recorded them, by side,
the winner, the time it was rated and its map. The history's header carries the pool's
rating parameters, so that `synelo replay --model synelo` replays with the pool's own Θ,
K_max, window… and reproduces the stored ratings.

What a journal cannot give back: the rosters at round start when they differed from the
participants (a mid-round joiner or a leaver), since only the round-start sums are kept;
such rounds are imported with the participants as the teams and counted (`roster_differs`,
found by comparing the participants' ratings before the round with the stored sums).
Admin changes (set, reset) are not matches; they are counted, and a replay does not apply
them, so the players they touched end with other ratings than the service's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from synelo.evaluation.history import Match
from synelo.store.repository import Store


@dataclass(slots=True)
class JournalImport:
    matches: list[Match]
    header: dict[str, Any]
    roster_differs: int
    admin_changes: int


def import_journal(store: Store, pool_name: str) -> JournalImport:
    """The pool's rated rounds, in `seq` order, as a history (see the module)."""
    pool, rounds, admin = store.journal_rounds(pool_name)
    matches: list[Match] = []
    differs = 0
    for rnd in rounds:
        team_a = tuple(key for key, team, _, _ in rnd.participants if team == "A")
        team_b = tuple(key for key, team, _, _ in rnd.participants if team == "B")
        before_a = sum(before for _, team, before, _ in rnd.participants if team == "A")
        before_b = sum(before for _, team, before, _ in rnd.participants if team == "B")
        if (before_a, before_b) != (rnd.sum_a, rnd.sum_b) or not team_a or not team_b:
            differs += 1
        if not team_a or not team_b:
            continue  # a side with no participant cannot be a match of the history format
        matches.append(
            Match(
                rnd.round_id, team_a, team_b, rnd.winner, time=rnd.created_at, map=rnd.map or None
            )
        )
    notes = [
        f"pool {pool.name}: {len(rounds)} rated rounds in seq order, participants as the teams"
    ]
    if differs:
        notes.append(
            f"{differs} rounds had round-start rosters other than their "
            "participants (not stored): their replayed P will differ"
        )
    if admin:
        notes.append(f"{admin} admin changes (set/reset) are not part of the history")
    header = {
        "source": f"journal of pool {pool.name}",
        "notes": notes,
        "params": pool.params.to_dict(),
        "team_size": pool.team_size,
    }
    return JournalImport(matches, header, differs, admin)
