"""Overhead benchmark: the report's figures, as inline SVG strings.

(1) overhead and (2) availability against message size for all runs, and (3) per run
and direction, small multiples of iter_t against work_t with the fitted hinge, so a
reader can see how each knee was found. Figures are svg_chart.Chart data written as SVG
text: matplotlib drew them in 3 of the 9.6 s `bench overhead --quick` took, the report
the test suite draws most (issue 37).
"""

from __future__ import annotations

import math
from typing import Any

from ...core.sizes import format_size
from ...core.values import num
from ...report.html import Figure, Section
from ...report.svg_chart import (
    Chart,
    ErrorBar,
    Key,
    Line,
    Mark,
    Panel,
    Ticks,
    linear_ticks,
    log_ticks,
    padded,
    size_positions,
    symlog_ticks,
)
from ...run.rundir import Run
from .report import (
    BENCHMARK,
    analysis_sizes,
    classic_of,
    comparable,
    est,
    result_sizes,
)

DIRECTION_STYLE = {"send": ("", "o"), "recv": ("--", "s")}
OTHER_STYLE = (":", "^")
NOT_OK_GREY = "#9e9e9e"  # matplotlib's grey "0.62"
RANGE_GREY = "#b3b3b3"  # "0.7"
TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
MEDIAN_COLOUR, FIT_COLOUR, CLASSIC_COLOUR = TAB10[0], TAB10[1], TAB10[3]
NOT_OK_TITLE = "#b03a00"
MAX_TICKS = 12
TICK_SIZE = 10.0  # matplotlib's default tick labels, as the y axis had them
GRID_COLS = 6


def _size_ticks(positions: dict[int, float]) -> Ticks:
    ordered = sorted(positions.items(), key=lambda kv: kv[1])
    step = max(1, math.ceil(len(ordered) / MAX_TICKS))
    ticks = ordered[::step]
    return Ticks([p for _, p in ticks], [format_size(s) for s, _ in ticks], size=8,
                 rotation=45)


def _series(
    run: Run, direction: str, key: str
) -> tuple[list[int], list[float], list[float], list[float], list[bool]]:
    sizes, vals, lo, hi, ok = [], [], [], [], []
    for size, entry in sorted(analysis_sizes(run).get(direction, {}).items()):
        value = est(entry, key)
        if value is None:
            continue  # null estimate: nothing to draw; the table says why
        sizes.append(size)
        vals.append(value)
        # a missing CI bound collapses that side of the error bar onto the value;
        # 0.0 is a bound (clipped availability), so test for None, not falsiness
        low, high = est(entry, key, "ci95_low"), est(entry, key, "ci95_high")
        lo.append(max(0.0, value - (value if low is None else low)))
        hi.append(max(0.0, (value if high is None else high) - value))
        ok.append(entry.get("verdict") == "ok")
    return sizes, vals, lo, hi, ok


def _y_axis(panel: Panel, key: str, drawn: list[float], extent: list[float]) -> None:
    """The y scale, limits and ticks. Overheads span µs to ms once a library stops
    progressing in the background: a log axis, or symlog (linear around 0) when some
    overheads are 0 or negative, so that a few large sizes do not flatten every small
    one. `extent`: the values and their error bars' ends."""
    positive = [v for v in drawn if v > 0]
    if key == "overhead_us" and positive and max(positive) / min(positive) > 30:
        if len(positive) == len(drawn):
            panel.yscale = "log"
        else:
            panel.yscale, panel.linthresh = "symlog", min(positive)
    shown = [v for v in extent if v > 0] if panel.yscale == "log" else extent
    lo, hi = padded(min(shown, default=0.0), max(shown, default=1.0), panel.yscale,
                    panel.linthresh)
    if key == "availability_pct":
        # a list, so that a plot with nothing drawn (every size untrustworthy) still works
        lo, hi = min([-2.0, *drawn]), max([102.0, *drawn])
    panel.ylim = (lo, hi)
    panel.yticks = (log_ticks(lo, hi, TICK_SIZE) if panel.yscale == "log"
                    else symlog_ticks(lo, hi, panel.linthresh, TICK_SIZE)
                    if panel.yscale == "symlog" else linear_ticks(lo, hi, size=TICK_SIZE))


def _metric_figure(runs: list[Run], key: str, ylabel: str, title: str) -> Chart | None:
    all_sizes = {s for r in runs for d in analysis_sizes(r).values() for s in d}
    if not all_sizes:
        return None
    pos = size_positions(sorted(all_sizes))
    panel = Panel(xlim=padded(min(pos.values()), max(pos.values())), ylim=(0.0, 1.0),
                  title=title, xlabel="message size", ylabel=ylabel, grid="both",
                  xticks=_size_ticks(pos))
    drawn: list[float] = []
    extent: list[float] = []
    keys: list[Key] = []
    for i, run in enumerate(runs):
        colour = TAB10[i % len(TAB10)]
        for direction in analysis_sizes(run):
            sizes, vals, lo, hi, ok = _series(run, direction, key)
            if not sizes:
                continue
            drawn.extend(vals)
            dash, marker = DIRECTION_STYLE.get(direction, OTHER_STYLE)
            # the line is broken where an estimate is null, so it never bridges a gap
            entries = sorted(analysis_sizes(run)[direction].items())
            panel.lines.append(Line([pos[s] for s, _ in entries],
                                    [est(e, key) for _, e in entries], colour, 1.4,
                                    dash=dash))
            for s, v, down, up, good in zip(sizes, vals, lo, hi, ok, strict=True):
                extent += [v - down, v + up]
                bar_colour = colour if good else NOT_OK_GREY
                panel.errors.append(ErrorBar(pos[s], v - down, v + up, bar_colour))
            # not-ok points go on top, unfilled, so an ok point beneath stays visible
            panel.marks += [Mark(pos[s], v, marker, colour, 6.0)  # ms 5 + its 1 pt edge
                            for s, v, good in zip(sizes, vals, ok, strict=True) if good]
            panel.marks += [Mark(pos[s], v, marker, NOT_OK_GREY, 7.0, width=1.4, hollow=True)
                            for s, v, good in zip(sizes, vals, ok, strict=True) if not good]
            keys.append(Key(f"{run.label} {direction}", colour, "line", dash=dash,
                            marker=marker))
    _y_axis(panel, key, drawn, extent)
    keys.append(Key("verdict not ok", NOT_OK_GREY, "marker", marker="o", hollow=True,
                    width=1.4))
    return Chart((10, 4.4), [panel], legend=keys, legend_at="right")


def _hinge(b: float, k: float, s: float, x: float) -> float:
    return b + s * max(0.0, x - k)


def _panel(size: int, r_entry: dict[str, Any], a_entry: dict[str, Any] | None) -> Panel:
    xs, ys, lo, hi = [], [], [], []
    for step in r_entry.get("steps") or []:
        x = num((step.get("work_t_us") or {}).get("median"))
        y = num((step.get("iter_t_us") or {}).get("median"))
        samples = [v for v in (num(s) for s in step.get("iter_samples_us") or []) if v is not None]
        if x is None or y is None:
            continue
        xs.append(x)
        ys.append(y)
        lo.append(min(samples, default=y))
        hi.append(max(samples, default=y))
    verdict = (a_entry or {}).get("verdict", "not analysed")
    panel = Panel(xlim=(0.0, 1.0), ylim=(0.0, 1.0), title=f"{format_size(size)} · {verdict}",
                  title_size=8.0, title_pad=4.0, title_loc="center",
                  title_colour="#000000" if verdict == "ok" else NOT_OK_TITLE)
    panel.marks += [Mark(x, a, "|", RANGE_GREY, to=c, width=2.2)
                    for x, a, c in zip(xs, lo, hi, strict=True)]
    panel.marks += [Mark(x, y, "o", MEDIAN_COLOUR, 3.8) for x, y in zip(xs, ys, strict=True)]
    right, top = max(xs, default=1.0), max(hi + ys, default=1.0)
    b, k, s = (est(a_entry, key) for key in ("base_t_us", "knee_work_us", "slope"))
    knee_at = None
    if b is not None and k is not None and s is not None and xs:
        # a hinge is straight on each side of its knee: three points draw it exactly
        end = max(max(xs), k) * 1.03
        fit_xs = sorted({0.0, min(max(k, 0.0), end), end})
        fit_ys = [_hinge(b, k, s, x) for x in fit_xs]
        panel.lines.append(Line(fit_xs, list(fit_ys), FIT_COLOUR, 1.3))
        right, top = max(right, end), max(top, *fit_ys)
        knee_at = k
    classic = classic_of(a_entry, r_entry)
    cx, cy = num(classic.get("work_t_us")), num(classic.get("iter_t_us"))
    if classic.get("found") and cx is not None and cy is not None:
        panel.marks.append(Mark(cx, cy, "*", CLASSIC_COLOUR, 9.0))
        right, top = max(right, cx), max(top, cy)
    panel.xlim = (0.0, padded(0.0, right)[1])
    panel.ylim = (0.0, padded(0.0, top)[1])
    panel.xticks = linear_ticks(*panel.xlim, most=5, size=6.5)
    panel.yticks = linear_ticks(*panel.ylim, most=6, size=6.5)
    if knee_at is not None:  # the knee's line spans the axis, as axvline
        panel.lines.append(Line([knee_at, knee_at], list(panel.ylim), FIT_COLOUR, 0.9,
                                dash=":"))
    return panel


def fit_grid(run: Run, direction: str) -> Chart | None:
    measured = result_sizes(run).get(direction, {})
    if not measured:
        return None
    fits = analysis_sizes(run).get(direction, {})
    ncols = min(GRID_COLS, len(measured))
    nrows = math.ceil(len(measured) / ncols)
    panels = [_panel(size, entry, fits.get(size)) for size, entry in sorted(measured.items())]
    legend = [
        Key("median iter_t", MEDIAN_COLOUR, "marker", marker="o"),
        Key("sample range", RANGE_GREY, "line", width=2.2),
        Key("hinge fit b + s·max(0, x − k)", FIT_COLOUR, "line", width=1.3),
        Key("knee k", FIT_COLOUR, "line", dash=":", width=0.9),
        Key("classic point", CLASSIC_COLOUR, "marker", marker="*"),
    ]
    return Chart((1.95 * ncols + 0.4, 1.65 * nrows + 0.7), panels, rows=nrows, cols=ncols,
                 legend=legend, legend_at="top", legend_size=7.5,
                 xlabel="work_t (µs): same work without a message",
                 ylabel="iter_t (µs): post, work, wait")


def _figure(chart: Chart | None, caption: str) -> list[Figure]:
    return [] if chart is None else [Figure(chart.svg(), caption)]


def summary_sections(runs: list[Run]) -> list[Section]:
    runs = comparable(runs)
    if not runs:
        return []
    hollow = "Hollow grey points: verdict not ok (see the tables for the reason)."
    figures = _figure(
        _metric_figure(runs, "overhead_us", "host overhead (µs)", "Host overhead"),
        "Overhead = base time − knee: the time the host spends in MPI per "
        f"message. Error bars: 95 % CI. Solid: send, dashed: receive. {hollow}",
    ) + _figure(
        _metric_figure(runs, "availability_pct", "availability (%)", "Application availability"),
        "Availability = 100·(k − c)/(b − c), knee k, base time b, fixed "
        "loop cost c (barrier, timer): the share of the transfer time the application can "
        f"compute. Error bars: 95 % CI. {hollow}",
    )
    return [Section("Overhead and availability by message size", None, figures)]


def fit_sections(runs: list[Run]) -> list[Section]:
    sections = []
    for run in runs:
        if run.benchmark != BENCHMARK:
            continue
        label = run.label
        figures: list[Figure] = []
        for direction in result_sizes(run):
            figures += _figure(
                fit_grid(run, direction),
                f"{label}, {direction}: each panel is one message size; iter_t stays at "
                "the base time b until the work passes the knee k, then rises with slope s.",
            )
        if figures:
            sections.append(Section(f"How the knee was found — {label}", None, figures))
    return sections
