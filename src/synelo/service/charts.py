"""Charts as SVG text, drawn on the server (no script, nothing fetched by the browser).

Each chart scales its data into a fixed view box that the page stretches to its width; the
figures are in <title> elements, so hovering a point or a bar shows them, and tests can count
the points and bars by their class.

The module sits below the API and the pages rather than in `pages`: a pool's health figures
(`synelo.service.api.reports`) are kept with their charts, drawn once for every reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from markupsafe import Markup, escape

from synelo.ratings.distribution import equal_bins

WIDTH, HEIGHT, PAD = 640, 220, 28


@dataclass(frozen=True, slots=True)
class Point:
    """One value of a line chart, with what its tooltip says and whether it is marked (an
    admin's set or reset, say)."""

    value: float
    label: str
    marked: bool = False


def _scale(low: float, high: float, size: float, flip: bool) -> tuple[float, float]:
    """(a, b) so that a·v + b maps low…high onto the drawing area of `size`."""
    span = high - low or 1.0
    a = (size - 2 * PAD) / span
    return (-a, size - PAD + a * low) if flip else (a, PAD - a * low)


def line_chart(
    points: Sequence[Point],
    title: str,
    *,
    guide: float | None = None,
    worse: Literal["above", "below"] = "above",
    events: Sequence[tuple[float, str]] = (),
    digits: int = 0,
) -> Markup:
    """A line through the values in order, a circle at each (class "point", "mark" too when
    marked), the lowest and highest value written on the left with `digits` decimals.

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
    ax, bx = _scale(first, max(last, first + 1), WIDTH, False)
    ay, by = _scale(low, high, HEIGHT, True)
    xy = [(ax * i + bx, ay * p.value + by) for i, p in enumerate(points)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    parts = []
    if guide is not None:
        y = ay * guide + by
        parts.append(
            f'<line class="guide" x1="{PAD}" y1="{y:.1f}" x2="{WIDTH - PAD}" y2="{y:.1f}">'
            f"<title>{guide:.{digits}f}</title></line>"
            f'<text class="axis" x="{WIDTH - 2}" y="{y + 4:.1f}" text-anchor="end">'
            f"{guide:.{digits}f}</text>"
        )
    for at, label in events:
        x = ax * at + bx
        parts.append(
            f'<line class="event" x1="{x:.1f}" y1="{PAD}" x2="{x:.1f}" y2="{HEIGHT - PAD}">'
            f"<title>{escape(label)}</title></line>"
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
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text class="axis" x="2" y="{PAD - 8}">{high:.{digits}f}</text>'
        f'<text class="axis" x="2" y="{HEIGHT - 6}">{low:.{digits}f}</text>'
        f'{"".join(parts)}<polyline class="line" points="{line}"/>{dots}</svg>'
    )


def histogram(values: Sequence[float], bins: int, title: str, digits: int = 0) -> Markup:
    """How many values fall in each of `bins` equal ranges from the lowest to the highest:
    one bar each (class "bar"), its range (`digits` decimals) and count in its tooltip."""
    low, high, counts = equal_bins(values, bins)
    return counted_histogram(low, high, counts, title, digits)


def counted_histogram(
    low: float, high: float, counts: Sequence[int], title: str, digits: int = 0
) -> Markup:
    """A histogram of counts already made: bar i counts the values in the i-th of
    len(counts) equal ranges from `low` to `high`."""
    if not counts or not any(counts):
        return Markup("")
    bins = len(counts)
    width = (high - low) / bins or 1.0
    top = max(counts)
    slot = (WIDTH - 2 * PAD) / bins
    bars = "".join(
        f'<rect class="bar" x="{PAD + i * slot:.1f}" y="{HEIGHT - PAD - h:.1f}" '
        f'width="{slot * 0.9:.1f}" height="{h:.1f}"><title>'
        f"{low + i * width:.{digits}f}–{low + (i + 1) * width:.{digits}f}: {n}</title></rect>"
        for i, n in enumerate(counts)
        for h in [(HEIGHT - 2 * PAD) * n / top]
    )
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text class="axis" x="{PAD}" y="{HEIGHT - 8}">{low:.{digits}f}</text>'
        f'<text class="axis" x="{WIDTH - PAD - 40}" y="{HEIGHT - 8}">{high:.{digits}f}</text>'
        f"{bars}</svg>"
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
