"""Charts as SVG text, drawn on the server (no script, nothing fetched by the browser).

Each chart scales its data into a fixed view box that the page stretches to its width; the
figures are in <title> elements, so hovering a point or a bar shows them, and tests can count
the points and bars by their class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

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


def line_chart(points: Sequence[Point], title: str) -> Markup:
    """A line through the values in order, a circle at each (class "point", "mark" too when
    marked), the lowest and highest value written on the left."""
    if not points:
        return Markup("")
    values = [p.value for p in points]
    low, high = min(values), max(values)
    ax, bx = _scale(0, max(len(points) - 1, 1), WIDTH, False)
    ay, by = _scale(low, high, HEIGHT, True)
    xy = [(ax * i + bx, ay * p.value + by) for i, p in enumerate(points)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    dots = "".join(
        f'<circle class="point{" mark" if p.marked else ""}" cx="{x:.1f}" cy="{y:.1f}" '
        f'r="{4 if p.marked else 2.5}"><title>{escape(p.label)}</title></circle>'
        for p, (x, y) in zip(points, xy, strict=True)
    )
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text class="axis" x="2" y="{PAD - 8}">{high:.0f}</text>'
        f'<text class="axis" x="2" y="{HEIGHT - 6}">{low:.0f}</text>'
        f'<polyline class="line" points="{line}"/>{dots}</svg>'
    )


def histogram(values: Sequence[float], bins: int, title: str) -> Markup:
    """How many values fall in each of `bins` equal ranges from the lowest to the highest:
    one bar each (class "bar"), its range and count in its tooltip."""
    if not values:
        return Markup("")
    low, high = min(values), max(values)
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int((v - low) / width), bins - 1)] += 1
    top = max(counts)
    slot = (WIDTH - 2 * PAD) / bins
    bars = "".join(
        f'<rect class="bar" x="{PAD + i * slot:.1f}" y="{HEIGHT - PAD - h:.1f}" '
        f'width="{slot * 0.9:.1f}" height="{h:.1f}"><title>'
        f"{low + i * width:.0f}–{low + (i + 1) * width:.0f}: {n}</title></rect>"
        for i, n in enumerate(counts)
        for h in [(HEIGHT - 2 * PAD) * n / top]
    )
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text class="axis" x="{PAD}" y="{HEIGHT - 8}">{low:.0f}</text>'
        f'<text class="axis" x="{WIDTH - PAD - 40}" y="{HEIGHT - 8}">{high:.0f}</text>'
        f"{bars}</svg>"
    )
