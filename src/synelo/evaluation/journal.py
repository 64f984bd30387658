"""Importer of a pool's own rounds from the service's database (its journal).

Each rated round becomes a match, in `seq` order, from the report the pool stored: the
rosters at round start as the teams, the participants where they differ, the winner, the
map, the time (`started_at` if reported, else when it was rated) and every optional field.
The history's header names the pool's rating model and carries its parameters, so that
`synelo replay --model <the pool's model>` replays with the pool's own parameters (SynElo's
Θ, K_max, window…; Elo's K…) and reproduces the stored ratings.

Rounds stored before reports were kept (migration 0004) have only their participants: they
are imported with the participants as the teams and marked ``rosters_known: false``; those
whose rosters differed from their participants (a mid-round joiner, a leaver: found by
comparing the participants' ratings before the round with the stored sums) are counted
(`roster_differs`), as their replayed P will differ. Admin changes (set, reset) are not
matches; they are counted, and a replay does not apply them, so the players they touched end
with other ratings than the service's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from synelo.evaluation.history import DETAIL_KEYS, Match
from synelo.store.repository import Store
from synelo.store.typedefs import JournalRound


@dataclass(slots=True)
class JournalImport:
    matches: list[Match]
    header: dict[str, Any]
    roster_differs: int
    admin_changes: int


def _from_report(rnd: JournalRound, report: dict[str, Any]) -> Match:
    """A match from a stored report (`RoundReport.stored`): everything it holds."""
    teams, part = report["teams"], report["participants"]
    team_a, team_b = tuple(teams["A"]), tuple(teams["B"])
    participants = (tuple(part["A"]), tuple(part["B"]))
    started = report.get("started_at")
    scores = report.get("scores")
    return Match(
        rnd.round_id,
        team_a,
        team_b,
        rnd.winner,
        time=datetime.fromisoformat(started) if started else rnd.created_at,
        scores=None if scores is None else (scores["A"], scores["B"]),
        map=rnd.map or None,
        mode=report.get("mode"),
        time_played=report.get("time_played"),
        participants=None if participants == (team_a, team_b) else participants,
        details={key: report[key] for key in DETAIL_KEYS if key in report} or None,
    )


def import_journal(store: Store, pool_name: str) -> JournalImport:
    """The pool's rated rounds, in `seq` order, as a history (see the module)."""
    pool, rounds, admin = store.journal_rounds(pool_name)
    matches: list[Match] = []
    differs = unknown = 0
    for rnd in rounds:
        if rnd.report is not None:
            matches.append(_from_report(rnd, rnd.report))
            continue
        unknown += 1
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
                rnd.round_id,
                team_a,
                team_b,
                rnd.winner,
                time=rnd.created_at,
                map=rnd.map or None,
                details={"rosters_known": False},
            )
        )
    notes = [f"pool {pool.name}: {len(rounds)} rated rounds in seq order, as reported"]
    if unknown:
        notes.append(
            f"{unknown} rounds were stored before reports were kept: their participants "
            "stand in for their round-start rosters (rosters_known: false)"
        )
    if differs:
        notes.append(
            f"{differs} of them had round-start rosters other than their "
            "participants (not stored): their replayed P will differ"
        )
    if admin:
        notes.append(f"{admin} admin changes (set/reset) are not part of the history")
    header = {
        "source": f"journal of pool {pool.name}",
        "notes": notes,
        "model": pool.model,
        "params": dict(pool.model_params),
        "team_size": pool.team_size,
    }
    return JournalImport(matches, header, differs, admin)
