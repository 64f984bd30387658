"""The charts' axes: round tick values, their labels, ticks placed along a chart's points by
the values the points carry, and the axes a line chart and a histogram draw."""

from __future__ import annotations

import math
import random
import re

import pytest

from synelo.service.charts import (
    BOTTOM,
    HEIGHT,
    LEFT,
    TOP,
    Point,
    histogram,
    line_chart,
    nice_ticks,
    tick_label,
    ticks_along,
)


def texts(svg: str, cls: str) -> list[tuple[float, float, str]]:
    """(x, y, text) of the chart's texts of class `cls` (among others)."""
    found = re.findall(
        rf'<text class="[^"]*\b{cls}\b[^"]*" x="([\d.-]+)" y="([\d.-]+)"[^>]*>([^<]*)</text>', svg
    )
    return [(float(x), float(y), t) for x, y, t in found]


def test_ticks_are_round_values_inside_the_range() -> None:
    assert nice_ticks(990, 1010) == [990, 995, 1000, 1005, 1010]
    assert nice_ticks(1, 600) == [100, 200, 300, 400, 500, 600]
    assert nice_ticks(0.21, 0.26) == pytest.approx([0.21, 0.22, 0.23, 0.24, 0.25, 0.26])
    assert nice_ticks(1187, 1213) == [1190, 1195, 1200, 1205, 1210]
    assert nice_ticks(5, 5) == [5] and nice_ticks(2, 1) == []
    rng = random.Random(4)
    for _ in range(2000):
        low = rng.uniform(-1e4, 1e4)
        high = low + 10 ** rng.uniform(-4, 5)
        most = rng.randint(3, 8)
        ticks = nice_ticks(low, high, most)
        assert 2 <= len(ticks) <= most, (low, high, most)
        span = high - low
        assert all(low - 1e-9 * span <= t <= high + 1e-9 * span for t in ticks)
        steps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
        assert max(steps) - min(steps) <= 1e-6 * steps[0]  # evenly spaced
        mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
        assert any(mantissa == pytest.approx(m, rel=1e-6) for m in (1, 2, 2.5, 5, 10))


def test_a_tick_label_has_the_decimals_its_step_needs() -> None:
    assert [tick_label(t, [1000, 1500]) for t in (1000, 1500)] == ["1000", "1500"]
    ticks = [0.2, 0.225, 0.25]
    assert [tick_label(t, ticks) for t in ticks] == ["0.200", "0.225", "0.250"]
    assert tick_label(2.5, [0, 2.5, 5]) == "2.5"


def test_ticks_along_points_fall_where_the_points_reach_their_values() -> None:
    # a player's round count at each point of a chart (an admin's set: no new round)
    ticks = ticks_along([1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert ticks == [(1.0, "2"), (4.0, "4"), (6.0, "6"), (8.0, "8"), (10.0, "10")]
    # sampled points: a tick between two falls between them, in proportion
    sampled = ticks_along([0, 4, 8, 12])
    assert [label for _, label in sampled] == ["0.0", "2.5", "5.0", "7.5", "10.0"]
    assert [at for at, _ in sampled] == pytest.approx([0, 0.625, 1.25, 1.875, 2.5])
    counted = ticks_along([0, 4, 8, 12], whole=True)  # rounds: no 2.5th round
    assert counted == [(0.0, "0"), (1.25, "5"), (2.5, "10")]
    assert ticks_along([]) == []
    assert ticks_along([7]) == [(0.0, "7")]


def test_a_line_chart_labels_both_axes() -> None:
    points = [Point(v, str(v)) for v in (1000, 1040, 1020, 1100)]
    svg = line_chart(
        points, "r", x_ticks=[(0.0, "1"), (3.0, "4")], x_label="rounds", y_label="rating"
    )
    xs = [float(x) for x in re.findall(r'<circle class="point" cx="([\d.]+)"', svg)]
    ys = [float(y) for y in re.findall(r'<circle class="point" cx="[\d.]+" cy="([\d.]+)"', svg)]
    # the x ticks sit under the first and last points, labelled
    below = texts(svg, "tick-x")
    assert [(round(x, 1), t) for x, _, t in below] == [(xs[0], "1"), (xs[3], "4")]
    assert all(y > HEIGHT - BOTTOM for _, y, _ in below)
    # the y ticks are round ratings on the left, each level with where that value is drawn
    left = texts(svg, "tick-y")
    assert [t for _, _, t in left] == ["1000", "1020", "1040", "1060", "1080", "1100"]
    assert all(x < LEFT for x, _, _ in left)
    drawn = dict(zip((1000, 1040, 1020, 1100), ys, strict=True))
    for _, y, text in left:
        if int(text) in drawn:
            assert y - 4 == pytest.approx(drawn[int(text)], abs=0.1)
    assert svg.count('class="grid"') == 6
    assert [t for *_, t in texts(svg, "label")] == ["rating", "rounds"]


def test_a_histogram_has_its_axes() -> None:
    ratings = [1000 + 7 * i for i in range(100)]  # 1000 … 1693
    svg = histogram(ratings, 20, "ratings", x_label="rating", y_label="players")
    bars = [
        (float(x), float(w))
        for x, w in re.findall(r'<rect class="bar" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)
    ]
    assert len(bars) == 20
    below = texts(svg, "tick-x")
    assert [t for *_, t in below] == ["1000", "1200", "1400", "1600"]
    # each rating tick where that rating falls along the bars: 1000 at the first's left edge
    slot = bars[1][0] - bars[0][0]
    for x, _, text in below:
        assert x == pytest.approx(bars[0][0] + (int(text) - 1000) / 693 * 20 * slot, abs=0.2)
    counts = [t for *_, t in texts(svg, "tick-y")]
    assert counts[0] == "0" and all(c.isdigit() for c in counts)  # whole players only
    tops = [float(y) for y in re.findall(r'<rect class="bar" x="[\d.]+" y="([\d.]+)"', svg)]
    assert min(tops) == pytest.approx(TOP, abs=0.1)  # the tallest bar reaches the top
    assert [t for *_, t in texts(svg, "label")] == ["players", "rating"]
    one = histogram([5.0], 3, "one player")
    assert [t for *_, t in texts(one, "tick-y")] == ["0", "1"]  # not 0.2, 0.4…
