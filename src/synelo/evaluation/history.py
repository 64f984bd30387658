"""Match histories: synelo's JSON Lines format, its reader and its writer.

One match per line, in the order the matches were played::

    {"id": "2016casj_qm1", "teams": {"A": ["frc254", "frc971"], "B": ["frc1678", "frc604"]},
     "winner": "A", "time": "2016-03-25T10:00:00Z", "type": "qualification",
     "scores": {"A": 157, "B": 117}, "map": "...", "mode": "...",
     "time_played": {"frc254": 1.0, "frc971": 0.5}, "scored": true}

Required: ``id`` (a unique non-empty string), ``teams`` (the rosters at the match's start:
sides ``A`` and ``B``, each a non-empty list of distinct player ids; no player on both sides)
and ``winner`` (``"A"``, ``"B"`` or ``"draw"``). Optional: ``participants`` (the players
rated, by side, when they differ from ``teams``: a mid-round joiner, a leaver), ``time``
(ISO 8601; ``started_at`` is read as it), ``type`` (the match type the replay groups its
scores by), ``scores`` (numbers per side), ``map``, ``mode``, ``time_played`` (per player: the
fraction played from the start, 0–1, or ``{"from": s, "to": s}``), ``scored`` (false: the
models learn from the match but it is left out of every score), and the other fields of a
service round report, kept as they are for the models that use them: ``ended_at``,
``duration``, ``sides``, ``commanders``, ``positions``, ``player_scores``, ``names``, and
``rosters_known`` (false: a pool's round stored before rosters were kept, whose participants
stand in for its rosters). Other keys are ignored.

Event lines record what an admin changed, where it happened among the matches:

    {"event": "set", "player": "76561198000000001", "rating": 1700, "time": "...",
     "by": "ops", "reason": "smurf"}
    {"event": "reset", "player": "76561198000000001"}
    {"event": "void", "round": "r17", "reason": "server crashed"}
    {"event": "unvoid", "round": "r17"}
    {"event": "season", "fraction": 0.3, "reason": "summer league"}

A set or reset applies to the player's rating before the next match (a replay applies it
there), and so does a season to every rating: each is pulled ``fraction`` (0–1) of the way
back toward the pool's mean, the model's default share when the line names none (a bare
``{"event": "season"}`` is valid; docs/maths/seasons.md). Voids and unvoids name an earlier
match: the history's last word on a match decides whether it counts, so a replay leaves a
voided match out entirely (not rated, not scored). ``time``, ``by`` and ``reason`` are
optional.

An optional first line ``{"synelo_history": 1, ...}`` is the header: where the history comes
from, the choices its importer made (``notes``) and, for a pool's journal, the pool's rating
parameters (``params``).

The reader reports a malformed line by its number and goes on, or stops at the first one
(``strict``); blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import orjson

Winner = Literal["A", "B", "draw"]
FORMAT_VERSION = 1
_WINNERS = ("A", "B", "draw")
# A service round report's fields that the history keeps as they are (Match.details).
DETAIL_KEYS = (
    "ended_at",
    "duration",
    "sides",
    "commanders",
    "positions",
    "player_scores",
    "names",
    "rosters_known",
)


EventKind = Literal["set", "reset", "void", "unvoid", "season"]
EVENT_KINDS = ("set", "reset", "void", "unvoid", "season")


@dataclass(frozen=True, slots=True)
class AdminEvent:
    """An admin change: a set or reset of `player` (to `rating`), a void or unvoid of the
    match `round`, or a new season (`fraction` of the way back; None: the model's default)."""

    kind: EventKind
    player: str | None = None
    rating: float | None = None
    round: str | None = None
    time: datetime | None = None
    by: str | None = None
    reason: str | None = None
    fraction: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.kind}
        for key in ("player", "rating", "round", "fraction", "by", "reason"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.time is not None:
            out["time"] = self.time.isoformat()
        return out


def parse_event(obj: dict[str, Any]) -> AdminEvent:
    """An AdminEvent from an event line; ValueError says what is wrong."""
    kind = obj["event"]
    if kind not in EVENT_KINDS:
        raise ValueError(
            f'event must be "set", "reset", "void", "unvoid" or "season", not {kind!r}'
        )
    known = {"event", "player", "rating", "round", "fraction", "time", "by", "reason"}
    if unknown := set(obj) - known:
        raise ValueError(f"unknown event field(s): {', '.join(sorted(unknown))}")
    player, target = obj.get("player"), obj.get("round")
    rating = None
    fraction = _fraction(obj, kind)
    if kind in ("set", "reset"):
        if not isinstance(player, str) or not player:
            raise ValueError(f"a {kind} event names its player")
        if kind == "set":
            rating = _number(obj.get("rating"), "rating")
    elif kind in ("void", "unvoid") and (not isinstance(target, str) or not target):
        raise ValueError(f"a {kind} event names its round")
    time = obj.get("time")
    if time is not None and not isinstance(time, str):
        raise ValueError("time must be an ISO 8601 string")
    return AdminEvent(
        kind,
        player if kind in ("set", "reset") else None,
        rating,
        target if kind in ("void", "unvoid") else None,
        None if time is None else datetime.fromisoformat(time),
        _optional_str(obj, "by"),
        _optional_str(obj, "reason"),
        fraction,
    )


def _fraction(obj: dict[str, Any], kind: str) -> float | None:
    """A season event's fraction (0–1; None when it names none); ValueError for a season
    that names a player, rating or round, or another event that names a fraction."""
    if kind != "season":
        if "fraction" in obj:
            raise ValueError("only a season event has a fraction")
        return None
    if named := {"player", "rating", "round"} & set(obj):
        raise ValueError(f"a season event names no {', '.join(sorted(named))}")
    if "fraction" not in obj:
        return None
    fraction = _number(obj["fraction"], "fraction")
    if not 0 <= fraction <= 1:
        raise ValueError("fraction must be within 0…1")
    return fraction


@dataclass(frozen=True, slots=True)
class Match:
    """One match: the two sides' players and the result, with what else is known."""

    id: str
    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    winner: Winner
    time: datetime | None = None
    type: str | None = None
    scores: tuple[float, float] | None = None
    map: str | None = None
    mode: str | None = None
    time_played: dict[str, Any] | None = None  # a fraction, or {"from": s, "to": s}
    scored: bool = True
    participants: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # None: the teams
    details: dict[str, Any] | None = None  # the report's other fields (DETAIL_KEYS)
    events: tuple[AdminEvent, ...] = ()  # admin changes made before this match
    voided: bool = False  # taken out by a void: neither rated nor scored

    def __post_init__(self) -> None:
        # the sides are tuples whatever was passed (the compiled rating loop reads tuples)
        if type(self.team_a) is not tuple:
            object.__setattr__(self, "team_a", tuple(self.team_a))
        if type(self.team_b) is not tuple:
            object.__setattr__(self, "team_b", tuple(self.team_b))

    @property
    def size(self) -> str:
        """The team sizes as "3v3"."""
        return f"{len(self.team_a)}v{len(self.team_b)}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "teams": {"A": list(self.team_a), "B": list(self.team_b)},
            "winner": self.winner,
        }
        if self.time is not None:
            out["time"] = self.time.isoformat()
        for key in ("type", "map", "mode", "time_played"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.scores is not None:
            out["scores"] = {"A": self.scores[0], "B": self.scores[1]}
        if not self.scored:
            out["scored"] = False
        if self.participants is not None:
            out["participants"] = {"A": list(self.participants[0]), "B": list(self.participants[1])}
        if self.details:
            out.update(self.details)
        return out


@dataclass(frozen=True, slots=True)
class HistoryError:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class HistoryFormatError(ValueError):
    """A malformed line met by a strict read (or a file that cannot be read at all)."""

    def __init__(self, path: Path | str, error: HistoryError) -> None:
        super().__init__(f"{path}: {error}")
        self.error = error


@dataclass(slots=True)
class History:
    """The matches of a history file in order, its header (or {}), and the lines skipped."""

    matches: list[Match]
    header: dict[str, Any] = field(default_factory=dict)
    errors: list[HistoryError] = field(default_factory=list)
    trailing: tuple[AdminEvent, ...] = ()  # admin changes after the last match
    lines: list[int] = field(default_factory=list)  # each match's line, to name it by

    @property
    def max_team_size(self) -> int:
        return max((max(len(m.team_a), len(m.team_b)) for m in self.matches), default=1)


def _side(value: Any, name: str, allow_empty: bool = False) -> tuple[str, ...]:
    where = name if "." in name else f"teams.{name}"
    if not isinstance(value, list) or not (value or allow_empty):
        raise ValueError(f"{where} must be a non-empty list of player ids")
    for player in value:
        if not isinstance(player, str) or not player:
            raise ValueError(f"{where}: player ids are non-empty strings, not {player!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"{where} lists a player twice")
    return tuple(value)


def _played(value: Any, what: str) -> float | dict[str, float]:
    """A time_played entry: a fraction 0–1, or {"from": s, "to": s} with 0 ≤ from ≤ to."""
    if isinstance(value, dict):
        if set(value) != {"from", "to"}:
            raise ValueError(f'{what} must be a fraction or {{"from": s, "to": s}}')
        start, end = _number(value["from"], f"{what}.from"), _number(value["to"], f"{what}.to")
        if not 0 <= start <= end:
            raise ValueError(f"{what} needs 0 ≤ from ≤ to")
        return {"from": start, "to": end}
    frac = _number(value, what)
    if not 0 <= frac <= 1:
        raise ValueError(f"{what} must be within 0…1")
    return frac


def _optional_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} must be a number")
    return float(value)


def parse_match(obj: Any) -> Match:  # noqa: C901
    """A Match from one decoded line; ValueError says what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError("a match is a JSON object")
    match_id = obj.get("id")
    if not isinstance(match_id, str) or not match_id:
        raise ValueError("id must be a non-empty string")
    teams = obj.get("teams")
    if not isinstance(teams, dict):
        raise ValueError('teams must be an object {"A": [...], "B": [...]}')
    team_a, team_b = _side(teams.get("A"), "A"), _side(teams.get("B"), "B")
    if both := set(team_a) & set(team_b):
        raise ValueError(f"player(s) on both sides: {', '.join(sorted(both))}")
    winner = obj.get("winner")
    if winner not in _WINNERS:
        raise ValueError(f'winner must be "A", "B" or "draw", not {winner!r}')
    participants = None
    if (raw_part := obj.get("participants")) is not None:
        if not isinstance(raw_part, dict) or set(raw_part) - {"A", "B"}:
            raise ValueError('participants must be an object {"A": [...], "B": [...]}')
        part_a = _side(raw_part.get("A", []), "participants.A", allow_empty=True)
        part_b = _side(raw_part.get("B", []), "participants.B", allow_empty=True)
        if not part_a and not part_b:
            raise ValueError("participants: at least one player is needed")
        if (
            both := (set(part_a) & set(part_b))
            | (set(part_a) & set(team_b))
            | (set(part_b) & set(team_a))
        ):
            raise ValueError(f"participant(s) on both sides: {', '.join(sorted(both))}")
        participants = (part_a, part_b)
    details = {key: obj[key] for key in DETAIL_KEYS if key in obj} or None
    time = None
    if (raw_time := obj.get("time", obj.get("started_at"))) is not None:
        if not isinstance(raw_time, str):
            raise ValueError("time must be an ISO 8601 string")
        time = datetime.fromisoformat(raw_time)
    scores = None
    if (raw_scores := obj.get("scores")) is not None:
        if not isinstance(raw_scores, dict) or set(raw_scores) != {"A", "B"}:
            raise ValueError('scores must be {"A": number, "B": number}')
        scores = (_number(raw_scores["A"], "scores.A"), _number(raw_scores["B"], "scores.B"))
    time_played = None
    if (raw_played := obj.get("time_played")) is not None:
        if not isinstance(raw_played, dict):
            raise ValueError("time_played must be an object {player: fraction}")
        time_played = {}
        for player, played in raw_played.items():
            time_played[player] = _played(played, f"time_played.{player}")
    scored = obj.get("scored", True)
    if not isinstance(scored, bool):
        raise ValueError("scored must be true or false")
    return Match(
        match_id,
        team_a,
        team_b,
        winner,
        time,
        _optional_str(obj, "type"),
        scores,
        _optional_str(obj, "map"),
        _optional_str(obj, "mode"),
        time_played,
        scored,
        participants,
        details,
    )


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                yield number, line


def read_history(path: Path | str, *, strict: bool = False) -> History:  # noqa: C901
    """Read a history file. A malformed line is recorded in `errors` with its number and
    skipped; with `strict` the first one raises HistoryFormatError instead."""
    path = Path(path)
    history = History([])
    seen: dict[str, int] = {}  # match id → its index
    pending: list[AdminEvent] = []
    voided: dict[str, bool] = {}
    for number, line in _lines(path):
        try:
            obj = orjson.loads(line)
            if number == 1 and isinstance(obj, dict) and "synelo_history" in obj:
                if obj["synelo_history"] != FORMAT_VERSION:
                    raise ValueError(f"unknown history format {obj['synelo_history']!r}")
                history.header = obj
                continue
            if isinstance(obj, dict) and "event" in obj:
                event = parse_event(obj)
                if event.round is not None:
                    if event.round not in seen:
                        raise ValueError(f"{event.kind}: no earlier match {event.round!r}")
                    voided[event.round] = event.kind == "void"
                pending.append(event)
                continue
            match = parse_match(obj)
            if match.id in seen:
                raise ValueError(f"id {match.id!r} was used by an earlier match")
        except ValueError as exc:  # orjson.JSONDecodeError is a ValueError
            error = HistoryError(number, str(exc))
            if strict:
                raise HistoryFormatError(path, error) from None
            history.errors.append(error)
            continue
        if pending:
            match = replace(match, events=tuple(pending))
            pending.clear()
        seen[match.id] = len(history.matches)
        history.matches.append(match)
        history.lines.append(number)
    history.trailing = tuple(pending)
    for match_id, void in voided.items():
        at = seen[match_id]
        history.matches[at] = replace(history.matches[at], voided=void)
    return history


def write_history(
    path: Path | str,
    matches: Iterable[Match],
    header: dict[str, Any] | None = None,
    trailing: Iterable[AdminEvent] = (),
) -> int:
    """Write a history file (header first when given), each match's admin events before it
    and the `trailing` ones last; the number of matches written."""
    n = 0
    with Path(path).open("wb") as f:
        if header is not None:
            f.write(orjson.dumps({"synelo_history": FORMAT_VERSION, **header}) + b"\n")
        for match in matches:
            for event in match.events:
                f.write(orjson.dumps(event.to_json()) + b"\n")
            f.write(orjson.dumps(match.to_json()) + b"\n")
            n += 1
        for event in trailing:
            f.write(orjson.dumps(event.to_json()) + b"\n")
    return n
