"""The JSON Lines history format: reader (line-numbered errors, strict), writer, round trip."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from synelo.evaluation.history import (
    HistoryFormatError,
    Match,
    parse_match,
    read_history,
    write_history,
)

GOOD = '{"id": "m1", "teams": {"A": ["a", "b"], "B": ["c", "d"]}, "winner": "A"}'


def write_lines(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    matches = [
        Match("m1", ("a", "b"), ("c", "d"), "A"),
        Match(
            "m2",
            ("a",),
            ("c",),
            "draw",
            time=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
            type="qualification",
            scores=(3, 3),
            map="arena_well",
            mode="arena",
            time_played={"a": 1.0, "c": 0.25},
            scored=False,
        ),
    ]
    path = tmp_path / "h.jsonl"
    assert write_history(path, matches, {"source": "test", "notes": ["n"]}) == 2
    back = read_history(path, strict=True)
    assert back.matches == matches
    assert back.header == {"synelo_history": 1, "source": "test", "notes": ["n"]}
    assert back.errors == [] and back.max_team_size == 2


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "expected"),
        ("[1, 2]", "JSON object"),
        ('{"teams": {"A": ["a"], "B": ["b"]}, "winner": "A"}', "id"),
        ('{"id": "x", "teams": {"A": [], "B": ["b"]}, "winner": "A"}', "teams.A"),
        ('{"id": "x", "teams": {"A": ["a", "a"], "B": ["b"]}, "winner": "A"}', "twice"),
        ('{"id": "x", "teams": {"A": ["a"], "B": ["a"]}, "winner": "A"}', "both sides"),
        ('{"id": "x", "teams": {"A": ["a"], "B": [7]}, "winner": "A"}', "strings"),
        ('{"id": "x", "teams": {"A": ["a"], "B": ["b"]}, "winner": "C"}', "winner"),
        (
            '{"id": "x", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A", "time": "soon"}',
            "isoformat",
        ),
        (
            '{"id": "x", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A", "scores": [1, 2]}',
            "scores",
        ),
        ('{"id": "x", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A", "scored": "no"}', "scored"),
        (
            '{"id": "x", "teams": {"A": ["a"], "B": ["b"]}, "winner": "A", '
            '"time_played": {"a": 2}}',
            "0…1",
        ),
    ],
)
def test_malformed_lines_are_reported_by_number_and_skipped(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write_lines(tmp_path, GOOD, "", line, GOOD.replace('"m1"', '"m2"'))
    history = read_history(path)
    assert [m.id for m in history.matches] == ["m1", "m2"]
    assert len(history.errors) == 1
    assert history.errors[0].line == 3  # the blank line 2 still counts
    assert message in history.errors[0].message
    with pytest.raises(HistoryFormatError, match="line 3"):
        read_history(path, strict=True)


def test_a_repeated_id_is_an_error(tmp_path: Path) -> None:
    history = read_history(write_lines(tmp_path, GOOD, GOOD))
    assert len(history.matches) == 1
    assert history.errors[0].line == 2 and "earlier match" in history.errors[0].message


def test_header_only_on_the_first_line(tmp_path: Path) -> None:
    header = '{"synelo_history": 1, "source": "s"}'
    assert read_history(write_lines(tmp_path, header, GOOD)).header["source"] == "s"
    late = read_history(write_lines(tmp_path, GOOD, header))
    assert late.header == {} and late.errors[0].line == 2
    with pytest.raises(HistoryFormatError, match="unknown history format"):
        read_history(write_lines(tmp_path, '{"synelo_history": 9}', GOOD), strict=True)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"participants": {"A": ["a"], "B": ["a"]}}, "participant(s) on both sides: a"),
        ({"participants": {"A": ["y"]}}, "participant(s) on both sides: y"),
        ({"participants": {"A": [], "B": []}}, "at least one player"),
        ({"participants": {"C": ["a"]}}, "participants must be an object"),
        ({"time_played": {"a": {"from": 9, "to": 3}}}, "0 ≤ from ≤ to"),
        ({"time_played": {"a": {"from": 0}}}, 'a fraction or {"from": s, "to": s}'),
    ],
)
def test_report_fields_are_checked(extra: dict, message: str) -> None:
    line = {"id": "m", "teams": {"A": ["a", "b"], "B": ["x", "y"]}, "winner": "A", **extra}
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_match(line)


def test_report_fields_round_trip() -> None:
    """participants, spans, started_at (read as time) and the other report fields survive."""
    line = {
        "id": "m",
        "teams": {"A": ["a"], "B": ["x"]},
        "winner": "draw",
        "participants": {"A": ["a", "b"], "B": ["x"]},
        "started_at": "2026-11-25T10:00:00Z",
        "time_played": {"b": {"from": 30.0, "to": 60.0}, "a": 1.0},
        "sides": {"A": "marines", "B": "aliens"},
        "commanders": {"A": "a", "B": "x"},
        "names": {"a": "Ann"},
    }
    match = parse_match(line)
    assert match.participants == (("a", "b"), ("x",))
    assert match.time is not None and match.time.isoformat() == "2026-11-25T10:00:00+00:00"
    assert parse_match(match.to_json()) == match
    assert match.details == {
        "sides": {"A": "marines", "B": "aliens"},
        "commanders": {"A": "a", "B": "x"},
        "names": {"a": "Ann"},
    }
