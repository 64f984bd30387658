"""A history file rated into a pool as the round route rates reports, for `synelo pool
import`: the bulk path that the per-token round limit (50 a second) is not meant for.

Every match is first read as a round report's body (`RoundIn`) and checked as the route
checks one (`to_report`, the pool's model's own check), so a bad line is named, with its
field, before anything is rated. The reports then go, in the file's order, to a
`RoundWriter`: the service's own write path, with its group commit and its locks (the pool's
row, then its players'), so an import and a running service rate one pool side by side as
two workers do. A round_id the pool has already, with the same content, is not rated again:
a second import of a file adds nothing.

The history's seasons are started at their places, as `POST /v1/pools/{pool}/season` starts
one: once every round before it is rated, and only when this import rated the round just
before it, so that a second import adds no season either (a season before the file's first
round is left out, and counted). Its other admin events (sets,
resets, voids, unvoids) are not applied: the matches it voids are left out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from synelo.domain import Pool, RoundConflict, RoundReport, SubmitResult, pool_model
from synelo.evaluation.history import AdminEvent, HistoryError, Match, read_history
from synelo.models import RoundError
from synelo.models.rounds import UNDATED, report_facts
from synelo.schemas import RoundIn
from synelo.service.api.round_body import check_round, to_report
from synelo.store.repository import Store
from synelo.store.writer import RoundWriter

IN_FLIGHT = 256  # rounds handed to the writer and not yet answered, at most
# SQLite: rounds a transaction, and the pause after each, which lets the service's writer
# (polling for the lock every 100 ms at the most) in between them (`RoundWriter`)
SQLITE_BATCH, SQLITE_PAUSE_S = 64, 0.1
# a history's names for a report's fields, where they differ
HISTORY_NAME = {"round_id": "id", "started_at": "time"}


@dataclass(slots=True)
class ImportPlan:
    """A history file's matches as the pool's round reports, each with its line; its seasons
    by the number of reports before them; and what will not be rated: the bad lines, the
    matches the history voids, its other admin events."""

    reports: list[tuple[int, RoundReport]] = field(default_factory=list)
    errors: list[HistoryError] = field(default_factory=list)
    voided: int = 0
    events: int = 0
    seasons: dict[int, list[AdminEvent]] = field(default_factory=dict)
    leading: int = 0  # seasons before the first round, left out


@dataclass(slots=True)
class ImportOutcome:
    """What rating the plan did: rounds new to the pool, rounds it had already, and the
    rounds refused (a round_id the pool has with other content)."""

    new: int = 0
    known: int = 0
    refused: list[HistoryError] = field(default_factory=list)
    seasons: int = 0  # seasons started
    last_new: bool = False  # whether the round answered last was new to the pool

    def add(self, line: int, report: RoundReport, answer: Future[SubmitResult]) -> None:
        """Count a round's answer from the writer (waiting for it)."""
        self.last_new = False
        try:
            result = answer.result()
        except RoundConflict:
            message = f"id: the pool has round {report.round_id!r} with other content"
            self.refused.append(HistoryError(line, message))
        except RoundError as exc:  # the pool's model changed since the check
            self.refused.append(HistoryError(line, f"{'.'.join(exc.field)}: {exc.message}"))
        else:
            if result.created:
                self.new += 1
                self.last_new = True
            else:
                self.known += 1


def report_body(match: Match, server_id: str) -> dict[str, Any]:
    """A match as a round report's JSON body: its `time` as `started_at`, whole scores as
    integers, its rosters, participants and the report's other fields as they are."""
    body: dict[str, Any] = {
        "round_id": match.id,
        "server_id": server_id,
        "map": match.map or "",
        "winner": match.winner,
        "teams": {"A": list(match.team_a), "B": list(match.team_b)},
    }
    if match.participants is not None:
        body["participants"] = {"A": list(match.participants[0]), "B": list(match.participants[1])}
    if match.time is not None:
        body["started_at"] = match.time.isoformat()
    if match.mode is not None:
        body["mode"] = match.mode
    if match.scores is not None:
        body["scores"] = {side: _whole(v) for side, v in zip("AB", match.scores, strict=True)}
    if match.time_played is not None:
        body["time_played"] = match.time_played
    # rosters_known: false says the participants stand in for the rosters, as they do here
    body.update({k: v for k, v in (match.details or {}).items() if k != "rosters_known"})
    return body


def plan_import(path: Path, pool: Pool, server_id: str) -> ImportPlan:
    """Read a history file and check each match as the pool's round route would."""
    history = read_history(path)
    plan = ImportPlan(errors=list(history.errors))
    model = None if pool.is_synelo else pool_model(pool)
    for line, match in zip(history.lines, history.matches, strict=True):
        _place_events(plan, match.events)
        if match.voided:
            plan.voided += 1
            continue
        try:
            report = to_report(RoundIn.model_validate(report_body(match, server_id)), pool)
            if match.time is None:  # received now, but played at no time the history says
                report = replace(report, extras={**report.extras, UNDATED: True})
            if model is not None:
                check_round(model, report_facts(report.stored()))
        except (ValidationError, RequestValidationError) as exc:
            plan.errors += [HistoryError(line, _named(error)) for error in exc.errors()]
            continue
        plan.reports.append((line, report))
    _place_events(plan, history.trailing)
    plan.errors.sort(key=lambda e: e.line)
    return plan


def _place_events(plan: ImportPlan, events: Sequence[AdminEvent]) -> None:
    """A match's admin events: its seasons at their place among the reports, the others
    counted (they are not applied)."""
    for event in events:
        if event.kind != "season":
            plan.events += 1
        elif not plan.reports:
            plan.leading += 1
        else:
            plan.seasons.setdefault(len(plan.reports), []).append(event)


def rate_reports(
    store: Store,
    pool_name: str,
    reports: Iterable[tuple[int, RoundReport]],
    rated: Callable[[], None] = lambda: None,
    seasons: Mapping[int, Sequence[AdminEvent]] | None = None,
    who: str = "import",
) -> ImportOutcome:
    """Rate the reports into the pool in their order through a `RoundWriter`, `IN_FLIGHT`
    at most waiting; `rated` is called as each one is answered. The `seasons` (by the
    number of reports before them) are started where they fall (see the module), in the
    admin log as `who`'s unless an event names its author. A pool deleted meanwhile raises
    UnknownPool; stopped so (or interrupted), the rounds rated stay, each whole, and the
    writer takes no more: a second run goes on from there."""
    run = _Run(store, pool_name, rated, seasons or {}, who)
    try:
        count = 0
        for count, (line, report) in enumerate(reports, start=1):
            run.season(count - 1)
            run.submit(line, report)
        run.season(count)
        run.drain()
    except BaseException:  # stopped (an interrupt, a pool deleted): rate no more of them
        run.cancel()
        raise
    finally:
        run.writer.close()
    return run.outcome


class _Run:
    """One import's rating: the writer, the rounds waiting for its answer, the seasons."""

    def __init__(
        self,
        store: Store,
        pool_name: str,
        rated: Callable[[], None],
        seasons: Mapping[int, Sequence[AdminEvent]],
        who: str,
    ) -> None:
        self.store, self.pool_name, self.rated = store, pool_name, rated
        self.seasons, self.who = seasons, who
        self.outcome = ImportOutcome()
        self.waiting: deque[tuple[int, RoundReport, Future[SubmitResult]]] = deque()
        self.writer = _writer(store)

    def submit(self, line: int, report: RoundReport) -> None:
        if len(self.waiting) >= IN_FLIGHT:
            self.settle()
        self.waiting.append((line, report, self.writer.submit(self.pool_name, report)))

    def settle(self) -> None:
        self.outcome.add(*self.waiting.popleft())
        self.rated()

    def drain(self) -> None:
        while self.waiting:
            self.settle()

    def season(self, index: int) -> None:
        """The seasons before report `index`, once every report before it is answered, if
        this import rated the one just before it (see the module)."""
        events = self.seasons.get(index)
        if not events:
            return
        self.drain()
        if not self.outcome.last_new:
            return
        for event in events:
            by = event.by or self.who
            self.store.start_season(
                self.pool_name, event.fraction, by, event.reason, view=lambda pool, done: done
            )
            self.outcome.seasons += 1

    def cancel(self) -> None:
        for _, _, future in self.waiting:
            future.cancel()


def _writer(store: Store) -> RoundWriter:
    """The import's writer: on SQLite with its pause after each transaction; PostgreSQL
    queues the writers waiting for the pool's row, and needs none."""
    if store.engine.dialect.name == "sqlite":
        return RoundWriter(store, SQLITE_BATCH, IN_FLIGHT + 1, SQLITE_PAUSE_S)
    return RoundWriter(store, max_queued=IN_FLIGHT + 1)


def _whole(score: float) -> float | int:
    """A history's score (read as a float) as the report's integer when it is whole; a
    fraction stays one, and the report's check names it."""
    return int(score) if float(score).is_integer() else score


def _named(error: Any) -> str:
    """A validation error as "field: message", the field as the history names it."""
    loc = [str(part) for part in error["loc"] if part != "body"]
    if loc:
        loc[0] = HISTORY_NAME.get(loc[0], loc[0])
    msg = str(error["msg"]).removeprefix("Value error, ")
    return f"{'.'.join(loc)}: {msg}" if loc else msg
