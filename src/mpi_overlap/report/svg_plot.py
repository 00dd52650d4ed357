"""The few matplotlib plotting calls the benchmarks' figures were written with (plot with
a format string such as "--o", errorbar, fill_between, axvline, axhline, axvspan; colours
"C0".."C9" and grey levels "0.7"), as svg_chart data: a figure moved off matplotlib keeps
its series, styles and legend meanings line for line, and no longer imports matplotlib
(1 s of a report's start, issue 37)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .svg_chart import MARKERS, Area, ErrorBar, Key, Line, Mark, Panel, Rule, Span

TAB10 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
NAMED = {"grey": "#808080", "gray": "#808080", "black": "#000000", "white": "#ffffff"}
DASHES = ("--", "-.", "-", ":")  # longest first: "-." before "-"

Value = float | int | None


def colour(spec: str | int) -> str:
    """A matplotlib colour as SVG: "C3" (or 3) from the default cycle, "0.7" a grey
    level, a name, or "#rrggbb" unchanged."""
    if isinstance(spec, int):
        return TAB10[spec % len(TAB10)]
    if spec.startswith("C") and spec[1:].isdigit():
        return TAB10[int(spec[1:]) % len(TAB10)]
    if spec.replace(".", "", 1).isdigit():
        level = round(float(spec) * 255)
        return f"#{level:02x}{level:02x}{level:02x}"
    return NAMED.get(spec, spec)


def blend(spec: str | int, alpha: float) -> str:
    """`spec` at `alpha` over white, as one opaque colour (matplotlib's alpha on a white
    figure)."""
    c = colour(spec)
    rgb = [int(c[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - alpha * (255 - v)):02x}" for v in rgb)


def parse_fmt(fmt: str) -> tuple[str | None, str]:
    """matplotlib's format string as (dash, marker): dash "" solid, "--", "-.", ":" or
    None (markers only, as "o" alone draws no line); marker "" none."""
    marker = next((c for c in fmt if c in MARKERS), "")
    rest = fmt.replace(marker, "") if marker else fmt
    dash = next((d for d in DASHES if d in rest), None)
    if dash is None:
        return (None if marker else ""), marker
    return ("" if dash == "-" else dash), marker


def _value(v: Value) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def plot(panel: Panel, xs: Sequence[float], ys: Sequence[Value], fmt: str = "-",
         colour_: str | int = "C0", ms: float = 6.0, lw: float = 1.5,
         label: str | None = None, hollow: bool = False, right: bool = False) -> None:
    """ax.plot: a line broken at each missing value, a marker at each value (hollow:
    mfc="none", its edge only; right: on the panel's right axis, as on ax.twinx())."""
    dash, marker = parse_fmt(fmt)
    c = colour(colour_)
    values = [_value(y) for y in ys]
    if dash is not None and xs:
        panel.lines.append(Line([float(x) for x in xs], values, c, lw, dash=dash, right=right))
    if marker:  # a filled marker has an edge of its colour, 1 point wide (markeredgewidth)
        size = ms if marker == "x" or hollow else ms + 1.0
        panel.marks += [Mark(float(x), y, marker, c, size, width=1.0, hollow=hollow,
                             right=right)
                        for x, y in zip(xs, values, strict=True) if y is not None]
    if label:
        panel.legend.append(legend_key(label, fmt, colour_, lw))


def legend_key(label: str, fmt: str, colour_: str | int, lw: float = 1.5) -> Key:
    """The legend entry of what plot(fmt) draws (also for an entry without data, as
    ax.plot([], [], label=...))."""
    dash, marker = parse_fmt(fmt)
    if dash is None:
        return Key(label, colour(colour_), "marker", marker=marker)
    return Key(label, colour(colour_), "line", dash=dash, marker=marker, width=lw)


def errorbar(panel: Panel, xs: Sequence[float], ys: Sequence[float],
             below: Sequence[float], above: Sequence[float], fmt: str = "-",
             colour_: str | int = "C0", ms: float = 6.0, lw: float = 1.5, capsize: float = 0.0,
             label: str | None = None) -> None:
    """ax.errorbar(yerr=[below, above]): the series as plot(fmt), a bar from y − below to
    y + above at each point."""
    c = colour(colour_)
    panel.errors += [ErrorBar(float(x), y - lo, y + hi, c, capsize, lw)
                     for x, y, lo, hi in zip(xs, ys, below, above, strict=True)]
    plot(panel, xs, ys, fmt, colour_, ms, lw, label)


def fill_between(panel: Panel, xs: Sequence[float], lo: Sequence[Value],
                 hi: Sequence[Value], colour_: str | int, alpha: float = 1.0,
                 label: str | None = None) -> None:
    """ax.fill_between: a gap where either bound is missing."""
    c = blend(colour_, alpha)
    panel.areas.append(Area([float(x) for x in xs], [_value(v) for v in lo],
                            [_value(v) for v in hi], c))
    if label:
        panel.legend.append(Key(label, c))


def axvline(panel: Panel, x: float, colour_: str | int, lw: float = 1.5, ls: str = "-") -> None:
    panel.rules.append(Rule(float(x), "x", colour(colour_), lw, "" if ls == "-" else ls))


def axhline(panel: Panel, y: float, colour_: str | int, lw: float = 1.5, ls: str = "-") -> None:
    panel.rules.append(Rule(float(y), "y", colour(colour_), lw, "" if ls == "-" else ls))


def axvspan(panel: Panel, x0: float, x1: float, colour_: str | int, alpha: float = 1.0) -> None:
    panel.spans.append(Span(float(x0), float(x1), blend(colour_, alpha)))


def axhspan(panel: Panel, y0: float, y1: float, colour_: str | int, alpha: float = 1.0) -> None:
    panel.spans.append(Span(float(y0), float(y1), blend(colour_, alpha), "y"))


def axes(xlabel: str = "", ylabel: str = "", title: str = "", xscale: str = "linear",
         yscale: str = "linear", xbase: float = 10.0, ybase: float = 10.0,
         label_size: float = 8.0, legend_size: float = 6.0) -> Panel:
    """A panel as the benchmarks' figures set up their axes: labels and a centred title
    of `label_size` points (fontsize=8), the legend where it covers the fewest points
    (loc="best"); its limits and ticks come from fit_axes once it is drawn."""
    return Panel((0.0, 1.0), (0.0, 1.0), title=title, title_size=label_size,
                 title_loc="center", xlabel=xlabel, xlabel_size=label_size, ylabel=ylabel,
                 ylabel_size=label_size, xscale=xscale, yscale=yscale, xbase=xbase,
                 ybase=ybase, legend_at="best", legend_size=legend_size)
