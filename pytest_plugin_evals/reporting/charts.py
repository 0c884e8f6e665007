"""The HTML report's charts, as inline SVG text (pure: numbers and names in, markup out).

Every chart is drawn here, on the server, so the page needs no script and no library to show
them, and prints as it looks. Every text that goes into a chart (case names above all: they
come from suites) is escaped here; what these functions return is markup the template may
insert as is.

* :func:`score_row` and :func:`delta_row` draw one case's row of the overview table: its
  scores with and without the plugin, each with its 95% interval (whiskers), and its Δ with
  its interval, against a line at 0. Stacked in the table, the Δ rows are a forest plot that
  grows one row per case. :func:`axis` draws a column's scale for the table's head,
  :func:`mean_row` the suite's mean Δ as a diamond for its foot.
* :func:`histogram` draws how a quantity (latency, cost) spreads over the runs, the two arms
  stacked; :func:`strip` draws one case's runs as dots on the suite's scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

#: A closed interval ``(low, high)``, as :mod:`pytest_plugin_evals.stats.intervals` gives them.
Interval = tuple[float, float]

#: A row of the overview table: its width and height in pixels, and the margin left on each
#: side so that a mark at either end of the scale is drawn whole.
ROW_WIDTH = 180
ROW_HEIGHT = 22
MARGIN = 14


@dataclass(frozen=True)
class Scale:
    """A linear map from values in ``[low, high]`` to x in ``[left, right]`` (pixels).

    Values outside the domain are drawn at its edge.
    """

    low: float
    high: float
    left: float
    right: float

    def x(self, value: float) -> float:
        value = min(self.high, max(self.low, value))
        return self.left + (value - self.low) / (self.high - self.low) * (self.right - self.left)


#: Scores and pass rates, 0 to 1.
SCORES = Scale(0.0, 1.0, MARGIN, ROW_WIDTH - MARGIN)
#: Differences of scores (Δ, a change between sessions), -1 to +1.
DELTAS = Scale(-1.0, 1.0, MARGIN, ROW_WIDTH - MARGIN)


@dataclass(frozen=True)
class Estimate:
    """A value and its 95% interval (None: there is none, e.g. a single run of scores in
    between 0 and 1)."""

    value: float
    interval: Interval | None = None


def num(value: float) -> str:
    """A coordinate as SVG text: at most one decimal, no trailing zeros, never ``-0``."""
    text = f"{round(value, 1) + 0.0:g}"
    return "0" if text == "-0" else text


def pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def pts(value: float) -> str:
    """A difference of scores in points: ``+12.5 pts``, ``-3.0 pts``, ``±0.0 pts``."""
    text = f"{value * 100:+.1f}"
    return ("±0.0" if text in ("+0.0", "-0.0") else text) + " pts"


def interval_text(interval: Interval | None, fmt: Callable[[float], str]) -> str:
    """``95% 51%–88%``, or an empty string without an interval."""
    return "" if interval is None else f"95% {fmt(interval[0])} to {fmt(interval[1])}"


def _svg(cls: str, width: float, height: float, title: str, body: str) -> str:
    return (
        f'<svg class="{cls}" width="{num(width)}" height="{num(height)}" '
        f'viewBox="0 0 {num(width)} {num(height)}" role="img">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def _grid(scale: Scale, values: Sequence[float], height: float, cls: str = "grid") -> str:
    path = "".join(f"M{num(scale.x(v))} 0V{num(height)}" for v in values)
    return f'<path class="{cls}" d="{path}"/>'


def _zero(height: float) -> str:
    """The line at Δ = 0."""
    return f'<path class="zero" d="M{num(DELTAS.x(0.0))} 0V{num(height)}"/>'


def _whisker(scale: Scale, interval: Interval, y: float, cls: str) -> str:
    """An interval as a line with a cap at each end."""
    x1, x2 = num(scale.x(interval[0])), num(scale.x(interval[1]))
    cy, y1, y2 = num(y), num(y - 3), num(y + 3)
    return (
        f'<line class="ci {cls}" x1="{x1}" y1="{cy}" x2="{x2}" y2="{cy}"/>'
        f'<path class="cap {cls}" d="M{x1} {y1}V{y2}M{x2} {y1}V{y2}"/>'
    )


def _described(label: str, estimate: Estimate | None, fmt: Callable[[float], str]) -> str:
    if estimate is None:
        return f"{label} —"
    text = f"{label} {fmt(estimate.value)}"
    if estimate.interval is not None:
        text += f" ({interval_text(estimate.interval, fmt)})"
    return text


def score_row(
    name: str,
    with_: Estimate | None,
    without: Estimate | None = None,
    *,
    threshold: float | None = None,
    two_arm: bool = True,
    second: str = "without plugin",
) -> str:
    """One case's scores on a 0-100% scale: with the plugin a filled dot, the second arm
    (``second``: without the plugin, or the baseline plugin) a ring,
    each with its 95% interval as whiskers; the threshold a dashed line."""
    mid = ROW_HEIGHT / 2
    parts = [_grid(SCORES, (0.0, 0.25, 0.5, 0.75, 1.0), ROW_HEIGHT)]
    if threshold is not None:
        x = num(SCORES.x(threshold))
        parts.append(f'<path class="threshold" d="M{x} 0V{num(ROW_HEIGHT)}"/>')
    marks = [("with", with_, mid - 3 if two_arm else mid)]
    if two_arm:
        marks.append(("without", without, mid + 3))
    for cls, estimate, y in marks:
        if estimate is None:
            continue
        if estimate.interval is not None:
            parts.append(_whisker(SCORES, estimate.interval, y, f"whisker {cls}"))
        parts.append(
            f'<circle class="mark {cls}" cx="{num(SCORES.x(estimate.value))}" cy="{num(y)}" '
            f'r="3.5"/>'
        )
    described = [_described("with plugin" if two_arm else "score", with_, pct)]
    if two_arm:
        described.append(_described(second, without, pct))
    title = f"{name}: " + "; ".join(described)
    return _svg("chart score-row", ROW_WIDTH, ROW_HEIGHT, title, "".join(parts))


def significance(interval: Interval | None, significant: bool | None) -> str:
    """``up`` or ``down`` for a significant difference, else an empty string."""
    if not significant or interval is None:
        return ""
    return "up" if interval[0] > 0 else "down"


def delta_row(
    name: str,
    delta: Estimate | None,
    significant: bool | None,
    *,
    note: str | None = None,
    label: str = "Δ",
) -> str:
    """One case's Δ on a -100..+100 pts scale: a square at Δ, a line for its interval, a line
    at 0. A significant Δ (its interval excludes 0) is filled and classed ``sig up`` or
    ``sig down``; another is hollow."""
    parts = [_grid(DELTAS, (-1.0, -0.5, 0.5, 1.0), ROW_HEIGHT), _zero(ROW_HEIGHT)]
    mid = ROW_HEIGHT / 2
    if delta is None:
        title = f"{name}: {label} —" + (f" ({note})" if note else "")
    else:
        direction = significance(delta.interval, significant)
        if delta.interval is not None:
            parts.append(_whisker(DELTAS, delta.interval, mid, "whisker delta"))
        cls = f"mark delta sig {direction}" if direction else "mark delta"
        x = DELTAS.x(delta.value)
        parts.append(
            f'<rect class="{cls}" x="{num(x - 4)}" y="{num(mid - 4)}" width="8" height="8"/>'
        )
        title = f"{name}: " + _described(label, delta, pts)
        if delta.interval is not None:
            title += ", significant" if direction else ", not significant"
    return _svg("chart delta-row", ROW_WIDTH, ROW_HEIGHT, title, "".join(parts))


def mean_row(name: str, mean: Estimate | None, significant: bool | None) -> str:
    """The suite's mean Δ as a diamond spanning its interval, for the forest plot's foot."""
    parts = [_grid(DELTAS, (-1.0, -0.5, 0.5, 1.0), ROW_HEIGHT), _zero(ROW_HEIGHT)]
    mid = ROW_HEIGHT / 2
    if mean is None:
        title = f"{name}: —"
    else:
        direction = significance(mean.interval, significant)
        low, high = mean.interval or (mean.value, mean.value)
        x1, x, x2 = DELTAS.x(low), DELTAS.x(mean.value), DELTAS.x(high)
        x1, x2 = min(x1, x - 4), max(x2, x + 4)
        cls = f"mark mean sig {direction}" if direction else "mark mean"
        corners = ((x1, mid), (x, mid - 6), (x2, mid), (x, mid + 6))
        points = " ".join(f"{num(cx)},{num(cy)}" for cx, cy in corners)
        parts.append(f'<polygon class="{cls}" points="{points}"/>')
        title = f"{name}: " + _described("mean Δ", mean, pts)
        if mean.interval is not None:
            title += ", significant" if direction else ", not significant"
    return _svg("chart delta-row mean-row", ROW_WIDTH, ROW_HEIGHT, title, "".join(parts))


def axis(scale: Scale, ticks: Sequence[float], fmt: Callable[[float], str], title: str) -> str:
    """A scale's ticks and labels, for a chart column's head."""
    height = 18
    parts = [f'<path class="axis" d="M{num(scale.left)} {height - 1}H{num(scale.right)}"/>']
    for value in ticks:
        x = scale.x(value)
        parts.append(f'<path class="tick" d="M{num(x)} {height - 4}V{height - 1}"/>')
        parts.append(f'<text x="{num(x)}" y="{height - 6}">{escape(fmt(value))}</text>')
    return _svg("chart axis", ROW_WIDTH, height, title, "".join(parts))


# -- distributions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """Values of one arm: ``cls`` (``with``, ``without``, ``single``) colours them."""

    label: str
    cls: str
    values: tuple[float, ...]


def nice_step(span: float, count: int) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) that cuts ``span`` in about
    ``count`` parts."""
    raw = span / max(1, count)
    if not raw > 0 or not math.isfinite(raw):
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * magnitude * (1 + 1e-9):
            return factor * magnitude
    return 10 * magnitude  # pragma: no cover - the loop ends at 10


def bins(values: Sequence[float], count: int = 12, unit: float = 1.0) -> tuple[float, int]:
    """Bins for ``values`` (0 and up): their width and how many, from 0. Without any spread
    (no value above 0) one bin of width ``unit``."""
    top = max(values, default=0.0)
    if top <= 0:
        return unit, 1
    step = nice_step(top, count)
    return step, max(1, math.floor(top / step + 1e-9) + 1)


def decimals(step: float) -> int:
    """Enough decimals to tell ticks ``step`` apart."""
    return max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0


def seconds(value: float, places: int = 1) -> str:
    return f"{value:.{places}f}s"


def dollars(value: float, places: int = 2) -> str:
    return f"${value:.{max(2, places)}f}"


def histogram(
    title: str,
    series: Sequence[Series],
    fmt: Callable[[float, int], str],
    *,
    unit: float = 1.0,
    markers: Sequence[tuple[str, float]] = (),
    width: int = 460,
    height: int = 150,
) -> str:
    """How ``series``' values (0 and up) spread over bins from 0, the series stacked in each
    bin; ``markers`` are labelled dashed lines (p50, p95). ``fmt(value, decimals)`` writes a
    value; ``unit`` is the width of the one bin when no value is above 0."""
    kept = [tuple(v for v in s.values if math.isfinite(v) and v >= 0) for s in series]
    step, count = bins([v for values in kept for v in values], unit=unit)
    places = decimals(step)
    counts = [[0] * count for _ in series]
    for index, values in enumerate(kept):
        for value in values:
            counts[index][min(count - 1, math.floor(value / step + 1e-9))] += 1
    top = max((sum(c[b] for c in counts) for b in range(count)), default=0) or 1
    left, right, upper, lower = 30.0, width - 12.0, 18.0, height - 20.0
    xs = Scale(0.0, step * count, left, right)
    y_step = max(1, math.ceil(nice_step(top, 4)))
    y_top = y_step * math.ceil(top / y_step)
    ys = Scale(0.0, float(y_top), lower, upper)  # counts grow upward
    parts = []
    for tick in range(0, y_top + 1, y_step):
        y = num(ys.x(tick))
        parts.append(f'<path class="grid" d="M{num(left)} {y}H{num(right)}"/>')
        parts.append(f'<text class="y" x="{num(left - 4)}" y="{y}" dy="3.5">{tick}</text>')
    parts.append(f'<path class="axis" d="M{num(left)} {num(lower)}H{num(right)}"/>')
    label_every = max(1, math.ceil(count / 6))
    for b in range(0, count + 1, label_every):
        x = num(xs.x(b * step))
        parts.append(f'<path class="tick" d="M{x} {num(lower)}V{num(lower + 3)}"/>')
        parts.append(f'<text x="{x}" y="{num(lower + 14)}">{escape(fmt(b * step, places))}</text>')
    for b in range(count):
        x1, x2 = xs.x(b * step) + 1, xs.x((b + 1) * step) - 1
        span = f"{fmt(b * step, places)} to {fmt((b + 1) * step, places)}"
        base = 0
        for index, s in enumerate(series):
            n = counts[index][b]
            if not n:
                continue
            y_low, y_high = ys.x(base), ys.x(base + n)
            parts.append(
                f'<rect class="bin {escape(s.cls)}" x="{num(x1)}" y="{num(y_high)}" '
                f'width="{num(max(1.0, x2 - x1))}" height="{num(y_low - y_high)}">'
                f"<title>{escape(f'{span}: {n} run(s) {s.label}')}</title></rect>"
            )
            base += n
    for index, (label, value) in enumerate(markers):
        x = num(xs.x(value))
        anchor, dx = ("end", -3) if index % 2 == 0 else ("start", 3)
        parts.append(f'<path class="marker" d="M{x} {num(upper - 6)}V{num(lower)}"/>')
        parts.append(
            f'<text class="marker" x="{x}" dx="{dx}" y="{num(upper - 8)}" '
            f'text-anchor="{anchor}">{escape(label)} {escape(fmt(value, places + 1))}</text>'
        )
    runs = ", ".join(f"{s.label} {len(v)} run(s)" for s, v in zip(series, kept, strict=True))
    return _svg("chart histogram", width, height, f"{title}: {runs}", "".join(parts))


def strip(
    title: str, series: Sequence[Series], top: float, fmt: Callable[[float, int], str]
) -> str:
    """``series``' values as dots on a ``0..top`` scale, a line per series (one case's runs on
    the suite's scale)."""
    width, line = 160, 10
    height = line * len(series) + 2
    scale = Scale(0.0, top if top > 0 else 1.0, 4.0, width - 4.0)
    parts = [f'<path class="grid" d="M4 0V{height}M{width - 4} 0V{height}"/>']
    described = []
    for index, s in enumerate(series):
        y = num(1 + line * index + line / 2)
        parts.append(f'<path class="axis" d="M4 {y}H{width - 4}"/>')
        for value in s.values:
            parts.append(
                f'<circle class="dot {escape(s.cls)}" cx="{num(scale.x(value))}" cy="{y}" r="3"/>'
            )
        described.append(f"{s.label} " + (", ".join(fmt(v, 2) for v in s.values) or "—"))
    return _svg("chart strip", width, height, f"{title}: " + "; ".join(described), "".join(parts))
