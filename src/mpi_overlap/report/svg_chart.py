"""Charts written as SVG text directly: every report's figures, the profile's
(profile_plots.py, profile_checks.py) and the benchmarks' (through svg_plot.py).

matplotlib took about 1 s to import and 0.5–1 s to lay out and write a profile's three
figures, where `profile` may add at most 1 s to its program (issue 38); `bench overhead
--quick` spent 3 s of its 9.6 s drawing its four figures with it (issue 37), the report
the test suite draws most, and each other benchmark's figures about 1 s of its report; so
no figure is drawn with matplotlib any more.
A chart here is data (panels of bars, areas, lines, error bars, marks and texts, in data
coordinates; linear, log or symlog axes, a second y axis on the right) that tests can
read, and `svg()` writes it: no script, no stylesheet, no ids (inlined figures share the
page's id namespace), numbers rounded to 0.01 px, so the same data always give the same
text.

Text widths are estimated (no font metrics): margins and legends leave room for
ESTIMATE × font size per character, which covers DejaVu Sans and the usual sans fonts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PT = 1.0  # px per point: matplotlib's SVG units, so sizes read as they did there
INCH = 72.0 * PT
ESTIMATE = 0.58  # average glyph width / font size for the labels' characters
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
GRID = "#e7e7e7"  # matplotlib's grid (#b0b0b0) at alpha 0.3 on white
AXIS = "#000000"
TICK_TEXT = "#000000"
MARKERS = ("o", "s", "^", "v", "<", ">", "D", "p", "*", "x")


def text_width(text: str, size: float) -> float:
    return ESTIMATE * size * max((len(line) for line in text.split("\n")), default=0)


@dataclass
class Bar:
    """A bar from `base` to `base + length` (vertical: y; horizontal: x) at `at`."""

    at: float
    length: float
    width: float
    colour: str
    base: float = 0.0


@dataclass
class Area:
    """Filled between `lo` and `hi` over `xs`; None in either: a gap. step: each value
    holds over its x ± half a step (matplotlib's step="mid")."""

    xs: list[float]
    lo: list[float | None]
    hi: list[float | None]
    colour: str
    step: bool = False


@dataclass
class Line:
    """A polyline; a None in `ys` breaks it (never bridged). dash: "" solid, "--" dashed,
    ":" dotted."""

    xs: list[float]
    ys: list[float | None]
    colour: str
    width: float = 1.5
    label: str = ""
    dash: str = ""
    right: bool = False  # ys on the panel's right axis (y2lim)


@dataclass
class Mark:
    """A marker at (x, y): "v" a triangle pointing down, "_" a horizontal tick,
    "|" a vertical segment from y to `to`; or one of MARKERS (matplotlib's letters: "o"
    a circle, "s" a square, "^" "<" ">" more triangles, "D" a diamond, "p" a pentagon, "*" a
    star, "x" a cross) `size` across (points), hollow: its outline only, `width` wide."""

    x: float
    y: float
    shape: str
    colour: str
    size: float = 6.0
    to: float | None = None
    width: float = 1.6
    hollow: bool = False
    right: bool = False  # y (and to) on the panel's right axis (y2lim)


@dataclass
class ErrorBar:
    """A vertical error bar at x from `lo` to `hi` (data units), capped `cap` points to
    each side."""

    x: float
    lo: float
    hi: float
    colour: str
    cap: float = 2.0
    width: float = 1.0


@dataclass
class Rule:
    """A line across the whole plot at x = `at` (axis "x": vertical) or y = `at`."""

    at: float
    axis: str
    colour: str
    width: float = 1.0
    dash: str = ""


@dataclass
class Span:
    """A band under the data across the whole plot's height from x = x0 to x1 (axis
    "x", axvspan), or across its width from y = x0 to x1 (axis "y", axhspan)."""

    x0: float
    x1: float
    colour: str
    axis: str = "x"


@dataclass
class Label:
    """Text at (x, y) in data coordinates, moved by (dx, dy) points; anchor: start,
    middle or end; va: bottom, middle or top; rotation in degrees, counter-clockwise."""

    x: float
    y: float
    text: str
    size: float = 7.0
    colour: str = "#4d4d4d"
    anchor: str = "middle"
    va: str = "bottom"
    rotation: float = 0.0
    dx: float = 0.0
    dy: float = 0.0


@dataclass
class Ticks:
    at: list[float]
    labels: list[str]
    size: float = 8.0
    rotation: float = 0.0  # degrees; rotated labels end under their tick
    colour: str = TICK_TEXT
    pad: float = 3.5  # points between the axis and the labels


@dataclass
class Panel:
    """One set of axes. horizontal: bars run along x and `yticks` name them, top down."""

    xlim: tuple[float, float]
    ylim: tuple[float, float]
    title: str = ""
    title_size: float = 11.0
    title_pad: float = 6.0  # points between the plot's top and the title
    xlabel: str = ""
    xlabel_size: float = 10.0
    ylabel: str = ""
    ylabel_size: float = 10.0
    xticks: Ticks | None = None
    minor_xticks: Ticks | None = None  # a second row of labels above xticks
    yticks: Ticks | None = None
    grid: str = ""  # "x", "y" or "both": grid lines at that axis' ticks
    yscale: str = "linear"  # "log", or "symlog": linear within ±linthresh, log beyond
    linthresh: float = 1.0
    y2lim: tuple[float, float] | None = None  # a second, linear y axis on the right (twinx)
    y2ticks: Ticks | None = None
    y2label: str = ""
    y2label_size: float = 10.0
    xscale: str = "linear"  # or "log", "symlog"
    xbase: float = 10.0  # a log axis' base: its ticks at powers of it
    ybase: float = 10.0
    xlinthresh: float = 1.0  # a symlog x axis' linear part, ±xlinthresh, xlinscale decades
    xlinscale: float = 1.0
    title_colour: str = TICK_TEXT
    title_loc: str = "left"  # or "center"
    horizontal: bool = False
    invert_y: bool = False
    bars: list[Bar] = field(default_factory=list)
    areas: list[Area] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    errors: list[ErrorBar] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    legend: list[Key] = field(default_factory=list)  # inside
    legend_at: str = "upper left"  # or "upper right", "lower left", "lower right", "best"
    legend_size: float = 8.0


@dataclass
class Key:
    """A legend entry: "patch" a filled square, "line" a segment (dash and marker as a
    Line's and a Mark's, "" none), "mark" a tick, "marker" a Mark's `marker` alone."""

    label: str
    colour: str
    kind: str = "patch"
    dash: str = ""
    marker: str = ""
    hollow: bool = False
    width: float = 1.6


@dataclass
class Chart:
    """Panels in a grid (rows × columns, in reading order), `size` in inches as
    matplotlib's figsize; the legend outside, right of the panels (upper), below them or
    above them (rows of entries, centred); xlabel, ylabel: the whole grid's (supxlabel,
    supylabel)."""

    size: tuple[float, float]
    panels: list[Panel]
    rows: int = 1
    cols: int = 1
    heights: list[float] | None = None  # relative row heights
    legend: list[Key] = field(default_factory=list)
    legend_at: str = "right"  # or "bottom", "top"
    legend_size: float = 8.0
    xlabel: str = ""
    ylabel: str = ""
    label_size: float = 8.5
    title: str = ""  # above everything, centred (suptitle)
    title_size: float = 10.0

    def svg(self) -> str:
        return _render(self)


# ---------------------------------------------------------------- axes: scales and ticks

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
MINUS = "−"  # as matplotlib writes a negative tick label


def scaled(v: float, scale: str, linthresh: float = 1.0, base: float = 10.0,
           linscale: float = 1.0) -> float:
    """Where `v` sits on a "linear", "log" (of `base`) or "symlog" axis, in that axis' own
    units; symlog as matplotlib's (base 10): linear within ±linthresh, that part
    `linscale` decades long."""
    if scale == "log":
        return math.log(v, base) if v > 0 else -1e9  # below the axis: clipped as log clips
    if scale == "symlog":
        stretch = linscale / (1.0 - 0.1)  # linscale / (1 - 1/base)
        a = abs(v)
        if a <= linthresh:
            return v * stretch
        return math.copysign(linthresh * (stretch + math.log10(a / linthresh)), v)
    return v


def unscaled(u: float, scale: str, linthresh: float = 1.0, base: float = 10.0,
             linscale: float = 1.0) -> float:
    """The inverse of scaled()."""
    if scale == "log":
        return base ** u
    if scale == "symlog":
        stretch = linscale / (1.0 - 0.1)
        if abs(u) <= linthresh * stretch:
            return u / stretch
        return math.copysign(linthresh * 10.0 ** (abs(u) / linthresh - stretch), u)
    return u


def padded(lo: float, hi: float, scale: str = "linear", linthresh: float = 1.0,
           margin: float = 0.05, base: float = 10.0,
           linscale: float = 1.0) -> tuple[float, float]:
    """Axis limits around data from `lo` to `hi`, `margin` of the span added each side in
    the axis' own units (matplotlib's autoscale margins)."""
    a, b = (scaled(v, scale, linthresh, base, linscale) for v in (lo, hi))
    span = b - a if b > a else (abs(a) or 1.0)
    return (unscaled(a - margin * span, scale, linthresh, base, linscale),
            unscaled(b + margin * span, scale, linthresh, base, linscale))


def size_positions(sizes: list[int]) -> dict[int, float]:
    """log2 positions of message sizes; 0 B has no logarithm, so it sits one step left of
    the smallest size."""
    positive = [s for s in sizes if s > 0]
    zero_at = math.log2(min(positive)) - 1 if positive else 0.0
    return {s: math.log2(s) if s > 0 else zero_at for s in sizes}


def linear_ticks(lo: float, hi: float, most: int = 9, size: float = 8.0) -> Ticks:
    """Ticks at multiples of 1, 2, 2.5 or 5 × 10^k inside [lo, hi], at most `most` of
    them, labelled with as many decimals as the step needs."""
    span = hi - lo if hi > lo else (abs(hi) or 1.0)
    raw = span / max(most - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0)
                if m * power >= raw and span / (m * power) < most)
    decimals = 0
    while decimals < 12 and abs(round(step, decimals) - step) > 1e-9 * step:
        decimals += 1
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    at = [i * step if i else 0.0 for i in range(first, last + 1)]  # no -0.0: no "−0"
    return Ticks(at, [f"{v:.{decimals}f}".replace("-", MINUS) for v in at], size=size)


def power_label(exponent: int, negative: bool = False, base: float = 10.0) -> str:
    """10^k as plain text (10³, −10⁻², 2¹⁰), as svg.py labels matplotlib's log axes."""
    return (MINUS if negative else "") + f"{base:g}" + str(exponent).translate(_SUPERSCRIPT)


def log_ticks(lo: float, hi: float, size: float = 8.0, base: float = 10.0,
              most: int = 11) -> Ticks:
    """The powers of `base` inside [lo, hi] (lo > 0), every n-th of them when there are
    more than `most` (as matplotlib's LogLocator thins them)."""
    first = math.ceil(math.log(lo, base) - 1e-9)
    last = math.floor(math.log(hi, base) + 1e-9)
    stride = max(1, math.ceil((last - first + 1) / most))
    exps = [k for k in range(first, last + 1) if k % stride == 0]
    return Ticks([base ** k for k in exps], [power_label(k, base=base) for k in exps],
                 size=size)


def symlog_ticks(lo: float, hi: float, linthresh: float, size: float = 8.0) -> Ticks:
    """0 and ±10^k from the first power of ten at or above `linthresh` outwards, inside
    [lo, hi]. Not the powers inside the linear part (matplotlib's locator starts at the
    decade below linthresh): there they sit a fraction of a decade from 0, and their
    labels ran into "0" (the overhead figure's 10⁻², 0, −10⁻² at linthresh 0.06)."""
    start = math.ceil(math.log10(linthresh) - 1e-9)
    pos = [k for k in range(start, math.floor(math.log10(hi) + 1e-9) + 1)] if hi > 0 else []
    neg = [k for k in range(start, math.floor(math.log10(-lo) + 1e-9) + 1)] if lo < 0 else []
    at = [-(10.0 ** k) for k in reversed(neg)] + [0.0] + [10.0 ** k for k in pos]
    labels = [power_label(k, True) for k in reversed(neg)] + ["0"] + \
        [power_label(k) for k in pos]
    kept = [(a, t) for a, t in zip(at, labels, strict=True) if lo <= a <= hi]
    return Ticks([a for a, _ in kept], [t for _, t in kept], size=size)


def _scale(p: Panel, axis: str) -> tuple[str, float, float, float]:
    """An axis' (scale, linthresh, base, linscale), as scaled() takes them."""
    if axis == "x":
        return p.xscale, p.xlinthresh, p.xbase, p.xlinscale
    return p.yscale, p.linthresh, p.ybase, 1.0


def _extent(p: Panel, axis: str) -> list[float]:
    """Every value the panel draws along `axis` ("x" or "y"), as matplotlib's data limits
    count them."""
    if axis == "x":
        vals = [x for ln in p.lines for x, y in zip(ln.xs, ln.ys, strict=True) if y is not None]
        vals += [m.x for m in p.marks] + [e.x for e in p.errors]
        vals += [x for a in p.areas for x in a.xs]
        vals += [v for s in p.spans if s.axis == "x" for v in (s.x0, s.x1)]
        vals += [v for b in p.bars for v in (b.at - b.width / 2, b.at + b.width / 2)]
        return vals
    vals = [y for ln in p.lines if not ln.right for y in ln.ys if y is not None]
    vals += [v for m in p.marks if not m.right for v in (m.y, m.to) if v is not None]
    vals += [v for e in p.errors for v in (e.lo, e.hi)]
    vals += [v for a in p.areas for v in a.lo + a.hi if v is not None]
    vals += [v for b in p.bars for v in (b.base, b.base + b.length)]
    vals += [v for s in p.spans if s.axis == "y" for v in (s.x0, s.x1)]
    return vals


def axis_ticks(lo: float, hi: float, scale: str, size: float = 8.0, base: float = 10.0,
               linthresh: float = 1.0, most: int = 9) -> Ticks:
    if scale == "log":
        return log_ticks(lo, hi, size, base, most)
    if scale == "symlog":
        return symlog_ticks(lo, hi, linthresh, size)
    return linear_ticks(lo, hi, most, size)


def fit_axes(p: Panel, xlim: tuple[float, float] | None = None,
             ylim: tuple[float, float] | None = None, size: float = 8.0,
             most: int = 9) -> None:
    """Limits around what the panel draws (5 % margins in each axis' own units, as
    matplotlib autoscales) where not given, and ticks for both axes of `size` points."""
    for axis, given in (("x", xlim), ("y", ylim)):
        scale, linthresh, base, linscale = _scale(p, axis)
        vals = [v for v in _extent(p, axis) if math.isfinite(v) and (scale != "log" or v > 0)]
        lim = given or (padded(min(vals), max(vals), scale, linthresh, base=base,
                               linscale=linscale) if vals
                        else (1.0, 10.0) if scale == "log" else (0.0, 1.0))
        ticks = axis_ticks(*lim, scale, size, base, linthresh, most)
        if axis == "x":
            p.xlim, p.xticks = lim, ticks
        else:
            p.ylim, p.yticks = lim, ticks


# ---------------------------------------------------------------- rendering


def _n(v: float) -> str:
    """A coordinate: 0.01 px, no trailing zeros, no "-0"."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _text(x: float, y: float, text: str, size: float, colour: str = TICK_TEXT,
          anchor: str = "middle", rotation: float = 0.0, va: str = "bottom") -> str:
    """SVG text; several lines stack upwards from the baseline for va=bottom."""
    lines = text.split("\n")
    shift = {"bottom": -0.25 * size - 1.15 * size * (len(lines) - 1),
             "middle": 0.35 * size - 0.575 * size * (len(lines) - 1),
             "top": 0.9 * size}[va]
    attrs = (f'x="{_n(x)}" y="{_n(y + shift)}" font-size="{_n(size)}" '
             f'fill="{colour}"' + (f' text-anchor="{anchor}"' if anchor != "start" else ""))
    if rotation:
        attrs += f' transform="rotate({_n(-rotation)} {_n(x)} {_n(y)})"'
    if len(lines) == 1:
        return f"<text {attrs}>{escape(text)}</text>"
    spans = "".join(f'<tspan x="{_n(x)}" dy="{_n(0 if i == 0 else 1.15 * size)}">'
                    f"{escape(line)}</tspan>" for i, line in enumerate(lines))
    return f"<text {attrs}>{spans}</text>"


@dataclass
class _Box:
    x: float
    y: float
    w: float
    h: float
    panel: Panel

    def px(self, v: float) -> float:
        scale = _scale(self.panel, "x")
        lo, hi = (scaled(w, *scale) for w in self.panel.xlim)
        return self.x + (scaled(v, *scale) - lo) / (hi - lo) * self.w if hi != lo else self.x

    def py2(self, v: float) -> float:
        """y on the right axis (linear)."""
        lo, hi = self.panel.y2lim or (0.0, 1.0)
        return self.y + (1.0 - (v - lo) / (hi - lo)) * self.h if hi != lo else self.y + self.h

    def py(self, v: float) -> float:
        p = self.panel
        scale = _scale(p, "y")
        lo, hi = (scaled(w, *scale) for w in p.ylim)
        if hi == lo:
            return self.y + self.h
        t = (scaled(v, *scale) - lo) / (hi - lo)
        return self.y + (t if p.invert_y else 1.0 - t) * self.h


def _tick_extent(t: Ticks | None) -> float:
    """How far rotated or plain x tick labels reach below their pad."""
    if t is None or not t.labels:
        return 0.0
    if t.rotation:
        widest = max(text_width(s, t.size) for s in t.labels)
        a = math.radians(t.rotation)
        return widest * math.sin(a) + t.size * math.cos(a)
    return t.size * 1.2 * max(s.count("\n") + 1 for s in t.labels)


def _ytick_width(p: Panel) -> float:
    """How far the widest y tick label reaches left of its tick."""
    return max((text_width(s, p.yticks.size) for s in p.yticks.labels), default=0.0) \
        if p.yticks else 0.0


def _margins(p: Panel) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) points around the plot area of `p`."""
    ylabel_lines = p.ylabel.count("\n") + 1 if p.ylabel else 0
    left = 6 + _ytick_width(p) + 6 + ylabel_lines * p.ylabel_size * 1.2
    top = (p.title_size * 1.3 + p.title_pad) if p.title else 6.0
    bottom = 6.0
    if p.minor_xticks:
        bottom += p.minor_xticks.pad + p.minor_xticks.size * 1.2
    if p.xticks:
        bottom += p.xticks.pad + _tick_extent(p.xticks)
    if p.xlabel:
        bottom += p.xlabel_size * 1.4
    right = 10.0
    if p.horizontal and p.labels:  # value labels past the bars' ends
        right += 6.0
    if p.y2ticks:
        right += 6 + max((text_width(t, p.y2ticks.size) for t in p.y2ticks.labels),
                         default=0.0)
    if p.y2label:
        right += 6 + p.y2label_size * 1.2
    return left, top, right, bottom


def _legend_width(keys: list[Key], size: float) -> float:
    return max((text_width(k.label, size) for k in keys), default=0.0) + 2.6 * size + 12


def _legend(keys: list[Key], x: float, y: float, size: float, rows: bool = True) -> list[str]:
    """Entries from (x, y) down (rows) or left to right, a swatch then the label."""
    out = []
    for k in keys:
        c = k.colour
        mid = y + 0.7 * size
        if k.kind == "patch":
            out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(1.8 * size)}" '
                       f'height="{_n(1.4 * size)}" fill="{c}"/>')
        elif k.kind == "line":
            out.append(f'<line x1="{_n(x)}" y1="{_n(mid)}" x2="{_n(x + 1.8 * size)}" '
                       f'y2="{_n(mid)}" stroke="{c}" stroke-width="{_n(k.width)}"'
                       f'{_dash(k.dash, k.width)}/>')
            if k.marker:
                out.append(_shape(k.marker, x + 0.9 * size, mid, 0.6 * size, c, k.hollow))
        elif k.kind == "marker":
            out.append(_shape(k.marker, x + 0.9 * size, mid, 0.8 * size, c, k.hollow,
                              k.width))
        else:  # a median tick
            out.append(f'<line x1="{_n(x + 0.4 * size)}" y1="{_n(mid)}" '
                       f'x2="{_n(x + 1.4 * size)}" y2="{_n(mid)}" stroke="{c}" '
                       f'stroke-width="2"/>')
        out.append(_text(x + 2.4 * size, mid, k.label, size, anchor="start", va="middle"))
        if rows:
            y += 1.9 * size
        else:
            x += 2.4 * size + text_width(k.label, size) + 1.5 * size
    return out


def _entry_width(k: Key, size: float) -> float:
    return 2.4 * size + text_width(k.label, size) + 1.5 * size


def _legend_rows(keys: list[Key], width: float, size: float) -> list[list[Key]]:
    """Entries left to right, a new row where the next would pass `width`."""
    rows: list[list[Key]] = [[]]
    used = 0.0
    for k in keys:
        w = _entry_width(k, size)
        if rows[-1] and used + w > width:
            rows.append([])
            used = 0.0
        rows[-1].append(k)
        used += w
    return rows


def _render(chart: Chart) -> str:
    width, height = chart.size[0] * INCH, chart.size[1] * INCH
    legend_w = _legend_width(chart.legend, chart.legend_size) \
        if chart.legend and chart.legend_at == "right" else 0.0
    rows = _legend_rows(chart.legend, width - 8, chart.legend_size) \
        if chart.legend and chart.legend_at in ("top", "bottom") else []
    rows_h = (len(rows) * 1.9 + 0.5) * chart.legend_size if rows else 0.0
    top_h = (rows_h if chart.legend_at == "top" else 0.0) + \
        (chart.title_size * 1.5 if chart.title else 0.0)
    legend_h = rows_h if chart.legend_at == "bottom" else 0.0
    label_h = chart.label_size * 1.6
    left_w = label_h if chart.ylabel else 0.0
    area_w = width - legend_w - 8 - left_w
    area_h = height - legend_h - top_h - 8 - (label_h if chart.xlabel else 0.0)
    heights = chart.heights or [1.0] * chart.rows
    cell_w = area_w / chart.cols
    out: list[str] = []
    if chart.title:
        out.append(_text(width / 2, 4.0, chart.title, chart.title_size, va="top"))
    first_row = 4.0 + (chart.title_size * 1.5 if chart.title else 0.0) \
        if chart.legend_at == "top" else height - legend_h
    for i, row in enumerate(rows):  # each row centred
        used = sum(_entry_width(k, chart.legend_size) for k in row)
        out += _legend(row, max(4.0, (width - used) / 2),
                       first_row + i * 1.9 * chart.legend_size, chart.legend_size, rows=False)
    boxes = []
    y0 = 4.0 + top_h
    for r in range(chart.rows):
        cell_h = area_h * heights[r] / sum(heights)
        for c in range(chart.cols):
            i = r * chart.cols + c
            if i >= len(chart.panels):
                break
            p = chart.panels[i]
            left, top, right, bottom = _margins(p)
            boxes.append(_Box(4 + left_w + c * cell_w + left, y0 + top,
                              max(cell_w - left - right, 10.0),
                              max(cell_h - top - bottom, 10.0), p))
        y0 += cell_h
    # panels of one column share their plot's left edge (sharex reads so)
    if chart.cols == 1 and boxes:
        x = max(b.x for b in boxes)
        right_edge = min(b.x + b.w for b in boxes)
        for b in boxes:
            b.x, b.w = x, right_edge - x
    for b in boxes:
        out += _panel(b)
    if chart.xlabel:
        out.append(_text(4 + left_w + area_w / 2, y0 + 0.3 * chart.label_size, chart.xlabel,
                         chart.label_size, va="top"))
    if chart.ylabel:
        out.append(_text(4 + 0.9 * chart.label_size, 4 + top_h + area_h / 2, chart.ylabel,
                         chart.label_size, rotation=90, va="middle"))
    if chart.legend and chart.legend_at == "right":
        out += _legend(chart.legend, width - legend_w, 4 + (boxes[0].y - 4 if boxes else 0),
                       chart.legend_size)
    label = escape(chart.title or next((p.title for p in chart.panels if p.title), ""),
                   quote=True)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}pt" '
            f'height="{_n(height)}pt" viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
            f'aria-label="{label}" font-family="{FONT}">')
    return "\n".join([head, f'<rect width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>',
                      *out, "</svg>"]) + "\n"


def _panel(b: _Box) -> list[str]:
    p = b.panel
    out: list[str] = []
    # bands first (axvspan, axhspan), then the grid over them, under the data
    for span in p.spans:
        if span.axis == "x":
            x0, x1 = sorted((b.px(span.x0), b.px(span.x1)))
            y0, y1 = b.y, b.y + b.h
        else:
            x0, x1 = b.x, b.x + b.w
            y0, y1 = sorted((b.py(span.x0), b.py(span.x1)))
        out.append(f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(x1 - x0)}" '
                   f'height="{_n(y1 - y0)}" fill="{span.colour}"/>')
    if p.grid in ("y", "both") and p.yticks:
        out += [f'<line x1="{_n(b.x)}" y1="{_n(b.py(v))}" x2="{_n(b.x + b.w)}" '
                f'y2="{_n(b.py(v))}" stroke="{GRID}" stroke-width="0.8"/>'
                for v in p.yticks.at]
    if p.grid in ("x", "both") and p.xticks:
        out += [f'<line x1="{_n(b.px(v))}" y1="{_n(b.y)}" x2="{_n(b.px(v))}" '
                f'y2="{_n(b.y + b.h)}" stroke="{GRID}" stroke-width="0.8"/>'
                for v in p.xticks.at]
    for area in p.areas:
        out += _area(b, area)
    for bar in p.bars:
        out += _bar(b, bar)
    for line in p.lines:
        out += _line(b, line)
    for r in p.rules:
        x0, y0, x1, y1 = ((b.px(r.at), b.y, b.px(r.at), b.y + b.h) if r.axis == "x"
                          else (b.x, b.py(r.at), b.x + b.w, b.py(r.at)))
        out.append(f'<line x1="{_n(x0)}" y1="{_n(y0)}" x2="{_n(x1)}" y2="{_n(y1)}" '
                   f'stroke="{r.colour}" stroke-width="{_n(r.width)}"{_dash(r.dash, r.width)}/>')
    for e in p.errors:
        out += _error_bar(b, e)
    for m in p.marks:
        out.append(_mark(b, m))
    for t in p.labels:
        out.append(_text(b.px(t.x) + t.dx, b.py(t.y) - t.dy, t.text, t.size, t.colour,
                         t.anchor, t.rotation, t.va))
    # the frame, ticks and their labels
    out.append(f'<rect x="{_n(b.x)}" y="{_n(b.y)}" width="{_n(b.w)}" height="{_n(b.h)}" '
               f'fill="none" stroke="{AXIS}" stroke-width="0.8"/>')
    below = b.y + b.h
    if p.minor_xticks:
        t = p.minor_xticks
        for v, s in zip(t.at, t.labels, strict=True):
            out.append(_text(b.px(v), below + t.pad, s, t.size, t.colour, va="top"))
        below += t.pad + t.size * 1.2
    if p.xticks:
        t = p.xticks
        for v, s in zip(t.at, t.labels, strict=True):
            x = b.px(v)
            if not p.minor_xticks:
                out.append(f'<line x1="{_n(x)}" y1="{_n(b.y + b.h)}" x2="{_n(x)}" '
                           f'y2="{_n(b.y + b.h + 3.5)}" stroke="{AXIS}" stroke-width="0.8"/>')
            if t.rotation:
                out.append(_text(x, below + t.pad + 0.8 * t.size, s, t.size, t.colour,
                                 anchor="end", rotation=t.rotation, va="middle"))
            else:
                out.append(_text(x, below + t.pad, s, t.size, t.colour, va="top"))
        below += t.pad + _tick_extent(t)
    if p.yticks:
        out += _y_ticks(b, p.yticks, right=False)
    if p.y2ticks:
        out += _y_ticks(b, p.y2ticks, right=True)
    if p.y2label:
        widest = max((text_width(t, p.y2ticks.size) for t in p.y2ticks.labels), default=0.0) \
            if p.y2ticks else 0.0
        out.append(_text(b.x + b.w + 12 + widest + p.y2label_size * 0.9, b.y + b.h / 2,
                         p.y2label, p.y2label_size, rotation=90, va="middle"))
    if p.xlabel:
        out.append(_text(b.x + b.w / 2, below + 4, p.xlabel, p.xlabel_size, va="top"))
    if p.ylabel:
        x = b.x - _ytick_width(p) - 12 - p.ylabel_size * 0.3 * (p.ylabel.count("\n"))
        out.append(_text(x, b.y + b.h / 2, p.ylabel, p.ylabel_size, rotation=90))
    if p.title:
        centred = p.title_loc == "center"
        out.append(_text(b.x + b.w / 2 if centred else b.x, b.y - p.title_pad, p.title,
                         p.title_size, p.title_colour, anchor="middle" if centred else "start"))
    if p.legend:
        out += _legend(p.legend, *_legend_corner(b), p.legend_size)
    return out


def _y_ticks(b: _Box, t: Ticks, right: bool) -> list[str]:
    """Tick marks outside the left (or right) edge, labels beside them."""
    out = []
    edge, py, side = (b.x + b.w, b.py2, 1.0) if right else (b.x, b.py, -1.0)
    for v, s in zip(t.at, t.labels, strict=True):
        y = py(v)
        x1, x2 = sorted((edge, edge + side * 3.5))
        out.append(f'<line x1="{_n(x1)}" y1="{_n(y)}" x2="{_n(x2)}" y2="{_n(y)}" '
                   f'stroke="{AXIS}" stroke-width="0.8"/>')
        out.append(_text(edge + side * 6, y, s, t.size, t.colour,
                         anchor="start" if right else "end", va="middle"))
    return out


def _legend_corner(b: _Box) -> tuple[float, float]:
    """Where a panel's legend starts: its corner, or for "best" the corner whose legend
    would cover the fewest of the panel's points (matplotlib's order breaks ties)."""
    p, size = b.panel, b.panel.legend_size
    w = _legend_width(p.legend, size) - 8
    h = 1.9 * size * len(p.legend)
    corners = {"upper left": (b.x + 8, b.y + 6), "upper right": (b.x + b.w - w - 4, b.y + 6),
               "lower left": (b.x + 8, b.y + b.h - h - 4),
               "lower right": (b.x + b.w - w - 4, b.y + b.h - h - 4)}
    if p.legend_at != "best":
        return corners[p.legend_at]
    points = [(b.px(m.x), (b.py2 if m.right else b.py)(m.y)) for m in p.marks]
    points += [(b.px(e.x), b.py(e.lo + t * (e.hi - e.lo))) for e in p.errors
               for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
    for line in p.lines:  # its points and four more along each segment
        py = b.py2 if line.right else b.py
        drawn = [(b.px(x), py(y)) if y is not None else None
                 for x, y in zip(line.xs, line.ys, strict=True)]
        for a, c in zip(drawn, [*drawn[1:], None], strict=True):
            if a is not None:
                points += [(a[0] + t * (c[0] - a[0]), a[1] + t * (c[1] - a[1]))
                           for t in (0.0, 0.2, 0.4, 0.6, 0.8)] if c is not None else [a]
    order = ("upper right", "upper left", "lower left", "lower right")
    return corners[min(order, key=lambda c: sum(
        corners[c][0] <= x <= corners[c][0] + w and corners[c][1] <= y <= corners[c][1] + h
        for x, y in points))]


def _bar(b: _Box, bar: Bar) -> list[str]:
    if bar.length <= 0:
        return []
    if b.panel.horizontal:
        x0, x1 = sorted((b.px(bar.base), b.px(bar.base + bar.length)))
        y0, y1 = sorted((b.py(bar.at - bar.width / 2), b.py(bar.at + bar.width / 2)))
    else:
        x0, x1 = sorted((b.px(bar.at - bar.width / 2), b.px(bar.at + bar.width / 2)))
        ends = [bar.base, bar.base + bar.length]
        if b.panel.yscale != "linear":  # a log axis has no 0: cut the bar at the axis
            bottom, top = sorted(b.panel.ylim)
            ends = [min(max(v, bottom), top) for v in ends]
        y0, y1 = sorted(b.py(v) for v in ends)
    return [f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(x1 - x0)}" height="{_n(y1 - y0)}" '
            f'fill="{bar.colour}"/>']


def _area(b: _Box, area: Area) -> list[str]:
    """One path of a polygon per run of points without a gap."""
    runs: list[list[int]] = [[]]
    for i, (lo, hi) in enumerate(zip(area.lo, area.hi, strict=True)):
        if lo is None or hi is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(i)
    paths = []
    xs = area.xs
    for idx in (r for r in runs if r):
        if area.step:
            def edges(i: int) -> tuple[float, float]:
                left = (xs[i] - xs[i - 1]) / 2 if i > 0 else (xs[1] - xs[0]) / 2 if len(xs) > 1 \
                    else 0.5
                right = (xs[i + 1] - xs[i]) / 2 if i + 1 < len(xs) else left
                return xs[i] - left, xs[i] + right
            top = [(x, area.hi[i]) for i in idx for x in edges(i)]
            low = [(x, area.lo[i]) for i in reversed(idx) for x in reversed(edges(i))]
        else:
            top = [(xs[i], area.hi[i]) for i in idx]
            low = [(xs[i], area.lo[i]) for i in reversed(idx)]
        pts = " ".join(f"{_n(b.px(x))},{_n(b.py(y))}" for x, y in top + low
                       if y is not None)
        paths.append(f'<polygon points="{pts}" fill="{area.colour}"/>')
    return paths


def _dash(dash: str, width: float) -> str:
    """matplotlib's dash patterns, scaled by the line width as it does."""
    pattern = {"--": (3.7, 1.6), ":": (1.0, 1.65), "-.": (6.4, 1.6, 1.0, 1.6)}.get(dash)
    if pattern is None:
        return ""
    return f' stroke-dasharray="{",".join(_n(v * width) for v in pattern)}"'


def _line(b: _Box, line: Line) -> list[str]:
    """One polyline per run of points without a None."""
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in zip(line.xs, line.ys, strict=True):
        if y is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((x, y))
    py = b.py2 if line.right else b.py
    return [f'<polyline points="{" ".join(f"{_n(b.px(x))},{_n(py(y))}" for x, y in run)}" '
            f'fill="none" stroke="{line.colour}" stroke-width="{_n(line.width)}"'
            f'{_dash(line.dash, line.width)} stroke-linejoin="round"/>'
            for run in runs if run]


def _error_bar(b: _Box, e: ErrorBar) -> list[str]:
    """Cut at the plot's edges (below a log axis' bottom: a bar down to 0), a cap only
    where the bar ends inside."""
    bottom, top = sorted(b.panel.ylim)
    ends = [(min(max(v, bottom), top), bottom <= v <= top) for v in (e.lo, e.hi)]
    x = b.px(e.x)
    (lo, _), (hi, _) = ends
    stroke = f'stroke="{e.colour}" stroke-width="{_n(e.width)}"'
    out = [f'<line x1="{_n(x)}" y1="{_n(b.py(lo))}" x2="{_n(x)}" y2="{_n(b.py(hi))}" '
           f'{stroke}/>']
    if e.cap:
        out += [f'<line x1="{_n(x - e.cap)}" y1="{_n(b.py(y))}" x2="{_n(x + e.cap)}" '
                f'y2="{_n(b.py(y))}" {stroke}/>' for y, inside in ends if inside]
    return out


def _shape(shape: str, x: float, y: float, size: float, colour: str, hollow: bool = False,
           width: float = 1.0) -> str:
    """A filled (or hollow) marker of `size` points across centred on (x, y)."""
    paint = (f'fill="none" stroke="{colour}" stroke-width="{_n(width)}"' if hollow
             else f'fill="{colour}"')
    h = size / 2
    if shape == "o":
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(h)}" {paint}/>'
    if shape == "s":
        return (f'<rect x="{_n(x - h)}" y="{_n(y - h)}" width="{_n(size)}" '
                f'height="{_n(size)}" {paint}/>')
    if shape == "x":
        return (f'<path d="M{_n(x - h)},{_n(y - h)}L{_n(x + h)},{_n(y + h)}'
                f'M{_n(x - h)},{_n(y + h)}L{_n(x + h)},{_n(y - h)}" stroke="{colour}" '
                f'stroke-width="{_n(width)}"/>')
    if shape == "*":  # five points, the inner radius as matplotlib's star
        pts = [(x + r * math.sin(math.pi * i / 5), y - r * math.cos(math.pi * i / 5))
               for i, r in ((i, h if i % 2 == 0 else h * 0.381966) for i in range(10))]
    elif shape == "p":
        pts = [(x + h * math.sin(2 * math.pi * i / 5), y - h * math.cos(2 * math.pi * i / 5))
               for i in range(5)]
    elif shape == "D":
        pts = [(x, y - h), (x + h * 0.7, y), (x, y + h), (x - h * 0.7, y)]
    else:  # triangles: "^" up, "v" down, "<" left, ">" right
        pts = {"^": [(x, y - h), (x + h, y + h), (x - h, y + h)],
               "<": [(x - h, y), (x + h, y - h), (x + h, y + h)],
               ">": [(x + h, y), (x - h, y - h), (x - h, y + h)]}.get(
                   shape, [(x - h, y - h), (x + h, y - h), (x, y + h)])
    return f'<polygon points="{" ".join(f"{_n(a)},{_n(c)}" for a, c in pts)}" {paint}/>'


def _mark(b: _Box, m: Mark) -> str:
    py = b.py2 if m.right else b.py
    x, y, c = b.px(m.x), py(m.y), m.colour
    if m.shape in MARKERS:
        return _shape(m.shape, x, y, m.size, c, m.hollow, m.width)
    if m.shape == "|":
        y2 = py(m.to if m.to is not None else m.y)
        return (f'<line x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x)}" y2="{_n(y2)}" stroke="{c}" '
                f'stroke-width="{_n(m.width)}"/>')
    h = m.size / 2  # "_"
    return (f'<line x1="{_n(x - h)}" y1="{_n(y)}" x2="{_n(x + h)}" y2="{_n(y)}" stroke="{c}" '
            f'stroke-width="{_n(m.width)}"/>')
