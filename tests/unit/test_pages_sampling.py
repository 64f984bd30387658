"""How a player's chart draws a long history: evenly sampled, every admin change and the
newest entry kept, voids placed among the points drawn."""

from __future__ import annotations

from synelo.domain import RatingStep, VoidedRound
from synelo.service.pages.public import sampled, void_marks


def entry(pk: int, kind: str = "round") -> RatingStep:
    return RatingStep(kind, pk if kind == "round" else None, 1000 + pk)  # type: ignore[arg-type]


def test_a_short_history_is_drawn_whole() -> None:
    entries = [entry(i) for i in range(1, 41)]
    assert sampled(entries, 500) == list(range(40))


def test_a_long_history_is_sampled_keeping_sets_and_the_newest() -> None:
    entries = [entry(i) for i in range(1, 2101)]
    entries[777] = entry(0, "set")
    kept = sampled(entries, 500)
    assert 500 <= len(kept) <= 502
    assert kept == sorted(set(kept)) and kept[0] == 0 and kept[-1] == 2099
    assert 777 in kept
    gaps = {b - a for a, b in zip(kept, kept[1:], strict=False)}
    assert max(gaps) <= 5  # even: 2,100 / 500 = 4.2 entries a point


def test_voids_fall_between_the_rounds_around_them() -> None:
    entries = [entry(s) for s in (1, 2, 4, 5)]  # round 3 voided, and round 6, the newest
    voids = [VoidedRound(3, "r3"), VoidedRound(6, "r6")]
    assert void_marks(entries, voids, complete=True) == [
        (1.5, "round r3 voided"),
        (3.5, "round r6 voided"),
    ]
    # older than the chart's first round: left out unless the chart has it all
    assert void_marks(entries[1:], [VoidedRound(1, "r0")], complete=False) == []
    assert void_marks(entries[1:], [VoidedRound(1, "r0")], complete=True) == [
        (-0.5, "round r0 voided")
    ]
