"""Importer of FIRST Robotics Competition match results (The Blue Alliance's CSV dumps).

A row is ``<event>_<match>, red…, blue…, red_score, blue_score`` with 2 or 3 teams a side
and no header. A "player" is an FRC team, a side is an alliance: red is side A, blue side B.
The choices this importer makes (the README's "Evaluating on your data" repeats them):

- **Order.** The files carry no dates, so a replay cannot follow the calendar. Matches are
  replayed by year, then by event key (alphabetical: not chronological within a year), then
  within an event qualifications (``qm``) by number, then the playoffs ``ef``, ``qf``, ``sf``,
  ``f`` by set and match number, so that an event's qualifications come before its playoffs.
  Matches carry no ``time``.
- **Ties** (equal scores) are draws (``"winner": "draw"``).
- **Unplayed** matches (a score of -1) are skipped.
- **2015** was not head-to-head (each alliance scored on its own), so a higher score is not a
  win. Its matches are skipped by default; with ``season_2015="learn"`` they are imported with
  the higher-scoring alliance as the winner and ``"scored": false``: the models learn from
  them, no score counts them.
- Rows that cannot be a match are skipped and counted: an odd number of teams (sides cannot
  be told apart), a team listed twice, the placeholder team ``frc0``, a malformed key.
- Type: ``qualification`` for ``qm``, ``playoff`` for the rest (alliances chosen, not drawn).
- **Seasons.** Each year is a new game, so each year after the first is a season: a bare
  ``{"event": "season"}`` line before its first match (the model's default share of the way
  back; docs/maths/seasons.md). ``seasons=False`` (``--no-seasons``) writes none.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from synelo.evaluation.history import AdminEvent, Match, Winner

Season2015 = Literal["skip", "learn"]
_KEY = re.compile(r"^(\d{4})([a-z0-9]+)_(qm|ef|qf|sf|f)(\d+)(?:m(\d+))?$")
_LEVELS = {"qm": 0, "ef": 1, "qf": 2, "sf": 3, "f": 4}
PLACEHOLDER = "frc0"


@dataclass(slots=True)
class FrcImport:
    """The matches in replay order and what was skipped, by reason."""

    matches: list[Match]
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)  # "file:line: reason" of malformed rows

    def notes(self, season_2015: Season2015, seasons: bool = True) -> list[str]:
        notes = [
            "order: year, then event key (alphabetical, not chronological: the data has no "
            "dates), then qualifications by number, then playoffs ef, qf, sf, f by set and "
            "match number",
            "ties (equal scores) are draws; unplayed matches (score -1) are skipped",
            "2015 (not head-to-head) "
            + (
                "skipped"
                if season_2015 == "skip"
                else "imported with the higher score as the winner, "
                "scored: false (learned from, never scored)"
            ),
            "red alliance = side A, blue alliance = side B",
            "each year after the first is a season (a bare season event before its first match)"
            if seasons
            else "no season events (--no-seasons): the years run on as one",
        ]
        if self.skipped:
            notes.append(
                "skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
            )
        return notes


def _winner(red: float, blue: float) -> Winner:
    if red > blue:
        return "A"
    return "B" if blue > red else "draw"


# Replay order: year, event, level (qualification first), match number, replay number.
SortKey = tuple[int, str, int, int, int]


def _row(row: list[str], season_2015: Season2015) -> tuple[SortKey, Match] | str:
    """(sort key, match) of one CSV row, or the reason it is skipped."""
    if len(row) < 3:
        return "malformed row"
    key, teams = row[0].strip(), [t.strip() for t in row[1:-2]]
    parsed = _KEY.match(key)
    if parsed is None:
        return "malformed match key"
    year, event, level, first, second = parsed.groups()
    try:
        red, blue = int(row[-2]), int(row[-1])
    except ValueError:
        return "malformed score"
    if red == -1 or blue == -1:
        return "unplayed (score -1)"
    if len(teams) % 2 or not teams:
        return "odd number of teams"
    if PLACEHOLDER in teams:
        return "placeholder team frc0"
    if len(set(teams)) != len(teams):
        return "team listed twice"
    scored = True
    if year == "2015":
        if season_2015 == "skip":
            return "2015 (not head-to-head)"
        scored = False
    half = len(teams) // 2
    match = Match(
        key,
        tuple(teams[:half]),
        tuple(teams[half:]),
        _winner(red, blue),
        type="qualification" if level == "qm" else "playoff",
        scores=(red, blue),
        scored=scored,
    )
    order = (int(year), event, _LEVELS[level], int(first), int(second or 0))
    return order, match


def import_frc(
    paths: Iterable[Path | str], season_2015: Season2015 = "skip", seasons: bool = True
) -> FrcImport:
    """Read FRC CSV files into matches in replay order, each year after the first a season
    unless `seasons` is False (see the module's notes)."""
    if season_2015 not in ("skip", "learn"):
        raise ValueError('season_2015 is "skip" or "learn"')
    keyed: list[tuple[SortKey, Match]] = []
    result = FrcImport([])
    seen: set[str] = set()
    for path in paths:
        path = Path(path)
        with path.open(newline="") as f:
            for number, row in enumerate(csv.reader(f), start=1):
                if not row:
                    continue
                out = _row(row, season_2015)
                if isinstance(out, str):
                    result.skipped[out] += 1
                    if out.startswith("malformed"):
                        result.errors.append(f"{path.name}:{number}: {out}")
                    continue
                if out[1].id in seen:
                    result.skipped["duplicate match key"] += 1
                    continue
                seen.add(out[1].id)
                keyed.append(out)
    keyed.sort(key=lambda item: item[0])
    result.matches = [match for _, match in keyed]
    if seasons:
        result.matches = with_seasons(result.matches)
    return result


def with_seasons(matches: list[Match]) -> list[Match]:
    """The matches with a bare season event before each year's first match but the first
    year's (a match's year is the first four digits of its key)."""
    out: list[Match] = []
    year = None
    for match in matches:
        if year is not None and match.id[:4] != year:
            match = replace(match, events=(*match.events, AdminEvent("season")))
        year = match.id[:4]
        out.append(match)
    return out
