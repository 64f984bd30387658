"""Importer of a pool's own rounds from the service's database (its journal).

Each rated round becomes a match, in `seq` order, from the report the pool stored: the
rosters at round start as the teams, the participants where they differ, the winner, the
map, the time (`started_at` if reported, else `ended_at`, else when it was rated, none for a
round imported without one) and every optional field.
The history's header names the pool's rating model and carries its parameters, so that
`synelo replay --model <the pool's model>` replays with the pool's own parameters (SynElo's
Θ, K_max, window…; Elo's K…) and reproduces the stored ratings.

Rounds stored before reports were kept (migration 0004) have only their participants: they
are imported with the participants as the teams and marked ``rosters_known: false``; those
whose rosters differed from their participants (a mid-round joiner, a leaver: found by
comparing the participants' ratings before the round with the stored sums) are counted
(`roster_differs`), as their replayed P will differ.

The pool's admin log becomes event lines at their place among the rounds: sets, resets and
seasons, which a replay applies before the next match (a season with the fraction it was
given, or bare: the model's default), and voids and unvoids, whose last word on a round
decides whether the replay counts it. With them, replaying the export with the pool's
model and parameters gives back every stored rating.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from synelo.domain import Change, JournalRound
from synelo.evaluation.history import DETAIL_KEYS, AdminEvent, Match
from synelo.models.rounds import UNDATED
from synelo.store.repository import Store


@dataclass(slots=True)
class JournalImport:
    matches: list[Match]
    header: dict[str, Any]
    roster_differs: int
    admin_changes: int
    trailing: tuple[AdminEvent, ...] = ()  # admin changes after the last round


EVENTS = ("set", "reset", "void", "unvoid", "season")  # the admin log's kinds a history has


def _event(change: Change) -> AdminEvent:
    value = change.value or {}
    rating, fraction = value.get("rating"), value.get("fraction")
    return AdminEvent(
        change.kind,  # type: ignore[arg-type]  # one of EVENTS (not patch)
        change.player_key,
        None if rating is None else float(rating),
        change.round_id,
        change.created_at,
        change.actor,
        change.reason,
        None if fraction is None else float(fraction),
    )


def _from_report(rnd: JournalRound, report: dict[str, Any]) -> Match:
    """A match from a stored report (`RoundReport.stored`): everything it holds."""
    teams, part = report["teams"], report["participants"]
    team_a, team_b = tuple(teams["A"]), tuple(teams["B"])
    participants = (tuple(part["A"]), tuple(part["B"]))
    # a report's time may be its end only: the match's time is never after its ended_at
    played = report.get("started_at") or report.get("ended_at")
    scores = report.get("scores")
    return Match(
        rnd.round_id,
        team_a,
        team_b,
        rnd.winner,
        time=datetime.fromisoformat(played) if played else _received(rnd, report),
        scores=None if scores is None else (scores["A"], scores["B"]),
        map=rnd.map or None,
        mode=report.get("mode"),
        time_played=report.get("time_played"),
        participants=None if participants == (team_a, team_b) else participants,
        details={key: report[key] for key in DETAIL_KEYS if key in report} or None,
    )


def _received(rnd: JournalRound, report: dict[str, Any]) -> datetime | None:
    """When the round was rated, as its time, unless it was imported without one (`UNDATED`):
    then it has none, as in the history it came from."""
    return None if report.get(UNDATED) else rnd.created_at


def import_journal(store: Store, pool_name: str) -> JournalImport:
    """The pool's stored rounds, in `seq` order, and its admin log, as a history (see the
    module)."""
    pool, rounds, log = store.journal_rounds(pool_name)
    events = [c for c in log if c.kind in EVENTS]
    matches: list[Match] = []
    differs = unknown = 0
    at = 0  # the next admin event to place
    for rnd in rounds:
        before: list[AdminEvent] = []
        while at < len(events) and events[at].seq < rnd.seq:
            before.append(_event(events[at]))
            at += 1
        match = _match(rnd)
        if rnd.report is None or rnd.report.get("rosters_known") is False:
            unknown += 1
            if _roster_differs(rnd):
                differs += 1
        if match is None:
            continue  # a side with no participant cannot be a match of the history format
        matches.append(replace(match, events=tuple(before), voided=rnd.voided))
    trailing = tuple(_event(c) for c in events[at:])
    notes = [f"pool {pool.name}: {len(rounds)} rounds in seq order, as reported"]
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
    admin = sum(c.kind in ("set", "reset") for c in events)
    if events:
        notes.append(
            f"{len(events)} admin changes (sets, resets, voids, unvoids, seasons) are event "
            "lines at their place"
        )
    header = {
        "source": f"journal of pool {pool.name}",
        "notes": notes,
        "model": pool.model,
        "params": dict(pool.model_params),
        "team_size": pool.team_size,
    }
    return JournalImport(matches, header, differs, admin, trailing)


def _match(rnd: JournalRound) -> Match | None:
    """A round as a match: from its report, else from its participants (None: a side
    without one)."""
    if rnd.report is not None:
        return _from_report(rnd, rnd.report)
    team_a = tuple(key for key, team, _, _ in rnd.participants if team == "A")
    team_b = tuple(key for key, team, _, _ in rnd.participants if team == "B")
    if not team_a or not team_b:
        return None
    return Match(
        rnd.round_id,
        team_a,
        team_b,
        rnd.winner,
        time=rnd.created_at,
        map=rnd.map or None,
        details={"rosters_known": False},
    )


def _roster_differs(rnd: JournalRound) -> bool:
    """Whether a round stored without its rosters had other rosters than its participants:
    their ratings before the round do not add up to the stored round-start sums."""
    if not rnd.participants:
        return False  # voided: its participants are not in the journal in force
    before_a = sum(before for _, team, before, _ in rnd.participants if team == "A")
    before_b = sum(before for _, team, before, _ in rnd.participants if team == "B")
    sides = {team for _, team, _, _ in rnd.participants}
    return (before_a, before_b) != (rnd.sum_a, rnd.sum_b) or sides != {"A", "B"}
