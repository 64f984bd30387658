"""The FRC importer on the slice in tests/data/frc: order, ties, unplayed, 2015, 2v2."""

from __future__ import annotations

from pathlib import Path

import pytest

from synelo.evaluation.frc import import_frc

DATA = Path(__file__).parents[1] / "data" / "frc"


def rows(name: str) -> list[list[str]]:
    return [line.split(",") for line in (DATA / name).read_text().splitlines()]


def test_2016_slice() -> None:
    result = import_frc([DATA / "2016.csv"])
    raw = rows("2016.csv")
    unplayed = [r for r in raw if r[-1] == "-1" or r[-2] == "-1"]
    assert len(unplayed) > 0
    assert len(result.matches) == len(raw) - len(unplayed)
    assert result.skipped == {"unplayed (score -1)": len(unplayed)}
    ties = {r[0] for r in raw if r[-1] == r[-2] != "-1"}
    assert {m.id for m in result.matches if m.winner == "draw"} == ties
    first = result.matches[0]
    # 2016abca before 2016arlr; qm1 first (not f1m1, the file's first row)
    assert first.id == "2016abca_qm1" and first.type == "qualification"
    line = next(r for r in raw if r[0] == "2016abca_qm1")
    assert first.team_a == tuple(line[1:4]) and first.team_b == tuple(line[4:7])
    assert first.scores == (int(line[7]), int(line[8]))
    assert first.winner == ("A" if int(line[7]) > int(line[8]) else "B")
    ids = [m.id for m in result.matches]
    abca = [i for i in ids if i.startswith("2016abca")]
    assert abca[:3] == ["2016abca_qm1", "2016abca_qm2", "2016abca_qm3"]  # numeric, not text
    assert abca.index("2016abca_qm10") == 9
    last_qm = max(i for i, x in enumerate(abca) if "_qm" in x)
    assert all("_qm" not in x for x in abca[last_qm + 1 :])  # playoffs after qualifications
    playoffs = [x.split("_")[1] for x in abca[last_qm + 1 :]]
    assert playoffs[0].startswith("qf") and playoffs[-1].startswith("f")
    assert ids.index("2016arlr_qm1") > ids.index(abca[-1])


def test_2015_is_skipped_or_learned_unscored() -> None:
    skipped = import_frc([DATA / "2015.csv"])
    assert skipped.matches == [] and skipped.skipped == {"2015 (not head-to-head)": 30}
    learned = import_frc([DATA / "2015.csv"], season_2015="learn")
    assert len(learned.matches) == 30
    assert not any(m.scored for m in learned.matches)
    for m in learned.matches:
        a, b = m.scores
        assert m.winner == ("A" if a > b else "B" if b > a else "draw")
    with pytest.raises(ValueError):
        import_frc([DATA / "2015.csv"], season_2015="score")  # type: ignore[arg-type]


def test_2v2_years_and_malformed_rows(tmp_path: Path) -> None:
    result = import_frc([DATA / "2004.csv"])
    raw = {r[0]: r for r in rows("2004.csv")}
    assert len(result.matches) == len(raw)
    # 2004 qualifications are 2v2; this event's playoff alliances had 3 teams
    for m in result.matches:
        assert m.size == {7: "2v2", 9: "3v3"}[len(raw[m.id])]
    assert {m.size for m in result.matches if m.type == "qualification"} == {"2v2"}
    odd = tmp_path / "odd.csv"
    odd.write_text(
        "2004wpi_f1m1,frc782,frc571,frc596,frc181,frc177,80,105\n"
        "2016x_qm1,frc1,frc2,frc3,frc1,frc5,frc6,1,2\n"
        "2016x_qm2,frc1,frc2,frc3,frc0,frc0,frc0,5,0\n"
        "garbage,frc1,frc2,1,2\n"
        "2016x_qm3,frc1,frc2,frc3,frc4,frc5,frc6,x,2\n"
    )
    bad = import_frc([odd])
    assert bad.matches == []
    assert bad.skipped == {
        "odd number of teams": 1,
        "team listed twice": 1,
        "placeholder team frc0": 1,
        "malformed match key": 1,
        "malformed score": 1,
    }
    assert bad.errors == ["odd.csv:4: malformed match key", "odd.csv:5: malformed score"]


def test_the_dumps_event_files_give_the_same_history(tmp_path: Path) -> None:
    """docs/evaluation.md imports a season from The Blue Alliance's per-event files
    (`events/<year>/<event>/<event>_matches.csv`) or from one file of them all: the importer
    orders the matches itself, so both give the same history, whatever order the files come in."""
    events: dict[str, list[str]] = {}
    for line in (DATA / "2016.csv").read_text().splitlines():
        events.setdefault(line.split("_")[0], []).append(line)
    assert len(events) == 2
    files = []
    for event, lines in events.items():
        folder = tmp_path / "events" / "2016" / event
        folder.mkdir(parents=True)
        (folder / f"{event}_matches.csv").write_text("\n".join(reversed(lines)) + "\n")
        files.append(folder / f"{event}_matches.csv")
    whole = import_frc([DATA / "2016.csv"])
    assert import_frc(reversed(files)).matches == whole.matches
    assert import_frc(files).skipped == whole.skipped
