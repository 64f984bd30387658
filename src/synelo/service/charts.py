"""Charts as SVG text, drawn on the server (no script, nothing fetched by the browser).

Each chart scales its data into a fixed view box that the page stretches to its width; the
figures are in <title> elements, so hovering a point or a bar shows them, and tests can count
the points and bars by their class.

The module sits below the API and the pages rather than in `pages`: a pool's health figures
(`synelo.service.api.reports`) are kept with their charts, drawn once for every reader.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from markupsafe import Markup, escape

from synelo.ratings.distribution import equal_bins

WIDTH, HEIGHT, PAD = 640, 220, 28
# the plot area of a chart with axes: room on the left for the values' labels, below for
# the ticks' labels and what the axis counts
LEFT, RIGHT, TOP, BOTTOM = 52, 14, 22, 44
TICKS = 6  # an axis's labelled ticks, at most


@dataclass(frozen=True, slots=True)
class Point:
    """One value of a line chart, with what its tooltip says and whether it is marked (an
    admin's set or reset, say)."""

    value: float
    label: str
    marked: bool = False


def nice_ticks(low: float, high: float, most: int = TICKS) -> list[float]:
    """Round values from `low` to `high` for an axis's labels: the multiples inside it of
    the smallest step of 1, 2, 2.5 or 5 × 10ⁿ that leaves at most `most` of them."""
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        return []
    if high == low:
        return [low]
    power = 10.0 ** math.floor(math.log10((high - low) / most))
    for step in (m * power * scale for scale in (1, 10, 100) for m in (1, 2, 2.5, 5)):
        first = math.ceil(low / step - 1e-9)
        last = math.floor(high / step + 1e-9)
        if last - first + 1 <= most:
            return [round(i * step, 12) for i in range(first, last + 1)]
    return [low, high]  # not reached: a step of 10 × (high − low) / most leaves one


def tick_label(value: float, ticks: Sequence[float]) -> str:
    """A tick's value with the decimals its axis's step needs (2.5 steps: one more)."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = next((d for d in range(7) if abs(round(step, d) - step) <= 1e-9 * step), 6)
    return f"{value:.{decimals}f}"


def ticks_along(
    values: Sequence[float], most: int = TICKS, whole: bool = False
) -> list[tuple[float, str]]:
    """The ticks of an x axis whose points (0, 1, 2…) carry the non-decreasing `values`
    (a player's round count at each of a chart's points, say): each round value between the
    first and the last (`whole`: whole numbers only, as counts are), at the fractional
    point index where the values reach it."""
    if not values:
        return []
    ticks = [t for t in nice_ticks(values[0], values[-1], most) if not whole or t == int(t)]
    out = []
    for tick in ticks:
        i = bisect.bisect_left(values, tick)
        if i >= len(values):
            continue
        at = float(i)
        if i > 0 and values[i] > values[i - 1]:  # between two points: where it is reached
            at = i - 1 + (tick - values[i - 1]) / (values[i] - values[i - 1])
        out.append((at, tick_label(tick, ticks)))
    return out


def _onto(low: float, high: float, start: float, end: float) -> tuple[float, float]:
    """(a, b) so that a·v + b maps low…high onto start…end (a lone value: the middle)."""
    if high == low:
        return 0.0, (start + end) / 2
    a = (end - start) / (high - low)
    return a, start - a * low


def _y_axis(ay: float, by: float, low: float, high: float, label: str, whole: bool = False) -> str:
    """Grid lines at the round values from `low` to `high` (`whole`: whole numbers only, as
    counts are), each labelled on the left, and what the axis counts above them."""
    ticks = [t for t in nice_ticks(low, high) if not whole or t == int(t)]
    parts = [
        f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"/>'
        f'<text class="axis tick-y" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
        f"{tick_label(t, ticks)}</text>"
        for t in ticks
        for y in [ay * t + by]
    ]
    if label:
        parts.append(f'<text class="axis label" x="2" y="{TOP - 8}">{escape(label)}</text>')
    return "".join(parts)


def _x_axis(ticks: Sequence[tuple[float, str]], ax: float, bx: float, label: str) -> str:
    """The x axis: its line, a mark and a label at each tick, what it counts below them."""
    base = HEIGHT - BOTTOM
    parts = [f'<line class="frame" x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}"/>']
    for at, text in ticks:
        x = ax * at + bx
        parts.append(
            f'<line class="frame" x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}"/>'
            f'<text class="axis tick-x" x="{x:.1f}" y="{base + 17}" text-anchor="middle">'
            f"{escape(text)}</text>"
        )
    if label:
        parts.append(
            f'<text class="axis label" x="{(LEFT + WIDTH - RIGHT) / 2:.1f}" y="{HEIGHT - 4}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    return "".join(parts)


def _svg(title: str, inner: str) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>{inner}</svg>'
    )


def line_chart(
    points: Sequence[Point],
    title: str,
    *,
    guide: float | None = None,
    worse: Literal["above", "below"] = "above",
    events: Sequence[tuple[float, str]] = (),
    x_ticks: Sequence[tuple[float, str]] = (),
    x_label: str = "",
    y_label: str = "",
) -> Markup:
    """A line through the values in order, a circle at each (class "point", "mark" too when
    marked), over grid lines at round values labelled on the left (`y_label` says what
    they are); `x_ticks` label the x axis at fractional point indexes (`ticks_along`),
    `x_label` says what it counts.

    `guide`: a horizontal line at that value (class "guide", a target such as F6's 0.25),
    the points on its `worse` side classed "worse" too. `events`: vertical lines (class
    "event") at fractional point indexes, each with its label as tooltip (a voided round
    between two entries, say)."""
    if not points:
        return Markup("")
    values = [p.value for p in points]
    low, high = min(values), max(values)
    if guide is not None:
        low, high = min(low, guide), max(high, guide)
    # the x axis spans the points and any event beside them (a void after the newest)
    first = min([0.0, *(at for at, _ in events)])
    last = max([len(points) - 1.0, *(at for at, _ in events)])
    ax, bx = _onto(first, max(last, first + 1), LEFT + 6, WIDTH - RIGHT - 6)
    ay, by = _onto(low, high, HEIGHT - BOTTOM - 6, TOP + 6)
    xy = [(ax * i + bx, ay * p.value + by) for i, p in enumerate(points)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    parts = [_y_axis(ay, by, low, high, y_label), _x_axis(x_ticks, ax, bx, x_label)]
    if guide is not None:
        y = ay * guide + by
        parts.append(
            f'<line class="guide" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}">'
            f"<title>{guide:g}</title></line>"
        )
    for at, label in events:
        x = ax * at + bx
        parts.append(
            f'<line class="event" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" '
            f'y2="{HEIGHT - BOTTOM}"><title>{escape(label)}</title></line>'
        )

    def classes(p: Point) -> str:
        out = "point"
        if p.marked:
            out += " mark"
        if guide is not None and (p.value > guide if worse == "above" else p.value < guide):
            out += " worse"
        return out

    dots = "".join(
        f'<circle class="{classes(p)}" cx="{x:.1f}" cy="{y:.1f}" '
        f'r="{4 if p.marked else 2.5}"><title>{escape(p.label)}</title></circle>'
        for p, (x, y) in zip(points, xy, strict=True)
    )
    return _svg(title, f'{"".join(parts)}<polyline class="line" points="{line}"/>{dots}')


def histogram(
    values: Sequence[float],
    bins: int,
    title: str,
    digits: int = 0,
    x_label: str = "",
    y_label: str = "",
) -> Markup:
    """How many values fall in each of `bins` equal ranges from the lowest to the highest:
    one bar each (class "bar"), its range (`digits` decimals) and count in its tooltip."""
    low, high, counts = equal_bins(values, bins)
    return counted_histogram(low, high, counts, title, digits, x_label, y_label)


def counted_histogram(
    low: float,
    high: float,
    counts: Sequence[int],
    title: str,
    digits: int = 0,
    x_label: str = "",
    y_label: str = "",
) -> Markup:
    """A histogram of counts already made: bar i counts the values in the i-th of
    len(counts) equal ranges from `low` to `high`. Its x axis is labelled at round values
    of the range (`x_label` says what), its y axis at round counts (`y_label`)."""
    if not counts or not any(counts):
        return Markup("")
    bins = len(counts)
    width = (high - low) / bins or 1.0
    top = max(counts)
    ax, bx = _onto(low, low + bins * width, LEFT, WIDTH - RIGHT)
    ay, by = _onto(0, top, HEIGHT - BOTTOM, TOP)
    slot = ax * width
    bars = "".join(
        f'<rect class="bar" x="{LEFT + i * slot:.1f}" y="{HEIGHT - BOTTOM - h:.1f}" '
        f'width="{slot * 0.9:.1f}" height="{h:.1f}"><title>'
        f"{low + i * width:.{digits}f}–{low + (i + 1) * width:.{digits}f}: {n}</title></rect>"
        for i, n in enumerate(counts)
        for h in [(HEIGHT - BOTTOM - TOP) * n / top]
    )
    ticks = nice_ticks(low, high)
    return _svg(
        title,
        _y_axis(ay, by, 0, top, y_label, whole=True)
        + _x_axis([(t, tick_label(t, ticks)) for t in ticks], ax, bx, x_label)
        + bars,
    )


def bar_chart(bars: Sequence[tuple[str, float]], title: str) -> Markup:
    """One bar per (label, value) in order, from zero up to the largest value (class "bar",
    "empty" too for a zero), the label and value in its tooltip; the first and last labels
    written under the bars, the largest value on the left."""
    if not bars:
        return Markup("")
    top = max(v for _, v in bars) or 1.0
    slot = (WIDTH - 2 * PAD) / len(bars)
    drawn = "".join(
        f'<rect class="bar{" empty" if v == 0 else ""}" x="{PAD + i * slot:.1f}" '
        f'y="{HEIGHT - PAD - h:.1f}" width="{max(slot * 0.8, 0.5):.1f}" height="{h:.1f}">'
        f"<title>{escape(label)}: {v:g}</title></rect>"
        for i, (label, v) in enumerate(bars)
        for h in [(HEIGHT - 2 * PAD) * v / top]
    )
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text class="axis" x="2" y="{PAD - 8}">{top:g}</text>'
        f'<text class="axis" x="{PAD}" y="{HEIGHT - 8}">{escape(bars[0][0])}</text>'
        f'<text class="axis" x="{WIDTH - PAD}" y="{HEIGHT - 8}" text-anchor="end">'
        f"{escape(bars[-1][0])}</text>{drawn}</svg>"
    )


@dataclass(frozen=True, slots=True)
class Bin:
    """One bin of a reliability diagram: the predictions in [low, high), how many there
    were, their mean and the observed frequency of the predicted outcome among them."""

    low: float
    high: float
    count: int
    predicted: float
    observed: float


SIDE = 320  # a reliability diagram's square view box


def reliability_chart(bins: Sequence[Bin], title: str) -> Markup:
    """A reliability (calibration) diagram: each non-empty bin's mean predicted probability
    against the observed frequency (a circle, class "bin", its area growing with its count,
    the figures in its tooltip), joined in order (class "line"), over the diagonal (class
    "diagonal") where a calibrated forecast's bins lie."""
    shown = [b for b in bins if b.count]
    if not shown:
        return Markup("")
    span = SIDE - 2 * PAD
    top = max(b.count for b in shown)

    def at(p: float, o: float) -> tuple[float, float]:
        return PAD + span * p, SIDE - PAD - span * o

    xy = [at(b.predicted, b.observed) for b in shown]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    dots = "".join(
        f'<circle class="bin" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}">'
        f"<title>predicted {b.low:.1f}–{b.high:.1f}: {b.count} rounds, mean prediction "
        f"{b.predicted:.3f}, observed {b.observed:.3f}</title></circle>"
        for b, (x, y) in zip(shown, xy, strict=True)
        for r in [2.5 + 5.5 * (b.count / top) ** 0.5]
    )
    (x0, y0), (x1, y1) = at(0, 0), at(1, 1)
    return Markup(
        f'<svg class="chart square" viewBox="0 0 {SIDE} {SIDE}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<rect class="frame" x="{PAD}" y="{PAD}" width="{span}" height="{span}"/>'
        f'<line class="diagonal" x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}"/>'
        f'<text class="axis" x="{PAD}" y="{SIDE - 8}">0</text>'
        f'<text class="axis" x="{SIDE - PAD}" y="{SIDE - 8}" text-anchor="end">predicted 1</text>'
        f'<text class="axis" x="2" y="{PAD + 4}">1</text>'
        f'<polyline class="line" points="{line}"/>{dots}</svg>'
    )
