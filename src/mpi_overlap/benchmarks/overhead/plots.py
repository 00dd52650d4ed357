"""Overhead benchmark: the report's figures, as inline SVG strings.

(1) overhead and (2) availability against message size for all runs, and (3) per run
and direction, small multiples of iter_t against work_t with the fitted hinge, so a
reader can see how each knee was found. Figures are built with matplotlib's
object API (no pyplot), which renders through Agg/SVG without a display and without
global figure state.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D

from ...core.sizes import format_size
from ...core.values import num
from ...report.html import Figure, Section
from ...report.svg import size_positions, to_svg
from ...run.rundir import Run
from .report import (
    BENCHMARK,
    analysis_sizes,
    classic_of,
    comparable,
    est,
    result_sizes,
)

DIRECTION_STYLE = {"send": ("-", "o"), "recv": ("--", "s")}
NOT_OK_GREY = "0.62"
MAX_TICKS = 12
GRID_COLS = 6
# iter_t (µs) from which a panel's y axis may get an offset text ("1e6") at its top, which
# matplotlib's title search would move the title above
TITLE_SEARCH_FROM_US = 5e5


def _size_axis(ax: Axes, positions: dict[int, float]) -> None:
    ordered = sorted(positions.items(), key=lambda kv: kv[1])
    step = max(1, math.ceil(len(ordered) / MAX_TICKS))
    ticks = ordered[::step]
    ax.set_xticks(
        [p for _, p in ticks],
        [format_size(s) for s, _ in ticks],
        rotation=45,
        ha="right",
        fontsize=8,
    )
    ax.set_xlabel("message size")


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


def _metric_figure(runs: list[Run], key: str, ylabel: str, title: str) -> MplFigure | None:
    all_sizes = {s for r in runs for d in analysis_sizes(r).values() for s in d}
    if not all_sizes:
        return None
    pos = size_positions(sorted(all_sizes))
    fig = MplFigure(figsize=(10, 4.4), layout="constrained")
    ax = fig.add_subplot()
    colours = matplotlib.colormaps["tab10"].colors
    drawn: list[float] = []
    handles: list[Line2D] = []
    for i, run in enumerate(runs):
        label = run.label
        colour = colours[i % len(colours)]
        for direction in analysis_sizes(run):
            sizes, vals, lo, hi, ok = _series(run, direction, key)
            if not sizes:
                continue
            drawn.extend(vals)
            line, marker = DIRECTION_STYLE.get(direction, (":", "^"))
            xs = np.array([pos[s] for s in sizes])
            y, err, good = np.array(vals), np.array([lo, hi]), np.array(ok)
            # the line is broken where an estimate is null, so it never bridges a gap
            entries = sorted(analysis_sizes(run)[direction].items())
            gapped = [est(e, key) for _, e in entries]
            ax.plot(
                [pos[s] for s, _ in entries],
                [np.nan if v is None else v for v in gapped],
                line,
                color=colour,
                lw=1.4,
            )
            ax.errorbar(
                xs[good],
                y[good],
                yerr=err[:, good],
                fmt=marker,
                color=colour,
                ms=5,
                capsize=2,
                lw=1,
            )
            # not-ok points go on top, unfilled, so an ok point beneath stays visible
            ax.errorbar(
                xs[~good],
                y[~good],
                yerr=err[:, ~good],
                fmt=marker,
                ms=7,
                mew=1.4,
                mfc="none",
                mec=NOT_OK_GREY,
                ecolor=NOT_OK_GREY,
                capsize=2,
                lw=1,
                zorder=4,
            )
            handles.append(
                Line2D(
                    [], [], ls=line, marker=marker, color=colour, ms=5, label=f"{label} {direction}"
                )
            )
    _size_axis(ax, pos)
    positive = [v for v in drawn if v > 0]
    # overheads span µs to ms once a library stops progressing in the background: a log
    # axis, or symlog (linear around 0) when some overheads are 0 or negative, so that a
    # few large sizes do not flatten every small one
    if key == "overhead_us" and positive and max(positive) / min(positive) > 30:
        if len(positive) == len(drawn):
            ax.set_yscale("log")
        else:
            ax.set_yscale("symlog", linthresh=min(positive))
    if key == "availability_pct":
        # a list, so that a plot with nothing drawn (every size untrustworthy) still works
        ax.set_ylim(min([-2.0, *drawn]), max([102.0, *drawn]))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11, loc="left")
    ax.grid(True, alpha=0.3)
    handles.append(
        Line2D(
            [],
            [],
            ls="none",
            marker="o",
            mfc="none",
            mec=NOT_OK_GREY,
            mew=1.4,
            ms=7,
            label="verdict not ok",
        )
    )
    fig.legend(handles=handles, fontsize=8, loc="outside right upper", frameon=False)
    return fig


def _hinge(b: float, k: float, s: float, x: np.ndarray) -> np.ndarray:
    return b + s * np.maximum(0.0, x - k)


def _panel(ax: Axes, size: int, r_entry: dict[str, Any], a_entry: dict[str, Any] | None) -> None:
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
    ax.vlines(xs, lo, hi, color="0.7", lw=2.2)
    ax.plot(xs, ys, "o", color="C0", ms=2.8)
    b, k, s = (est(a_entry, key) for key in ("base_t_us", "knee_work_us", "slope"))
    if b is not None and k is not None and s is not None and xs:
        grid = np.linspace(0.0, max(max(xs), k) * 1.03, 200)
        ax.plot(grid, _hinge(b, k, s, grid), color="C1", lw=1.3)
        ax.axvline(k, color="C1", ls=":", lw=0.9)
    classic = classic_of(a_entry, r_entry)
    cx, cy = num(classic.get("work_t_us")), num(classic.get("iter_t_us"))
    if classic.get("found") and cx is not None and cy is not None:
        ax.plot([cx], [cy], marker="*", color="C3", ms=8, ls="none")
    verdict = (a_entry or {}).get("verdict", "not analysed")
    # Nothing is drawn above a panel (x ticks at the bottom; the y axis, from 0, has no
    # offset text below 1e6), so the title is placed where matplotlib's search would put
    # it (y=1) instead of searched: the search measures the y axis again for every
    # title each time the grid is laid out or drawn, a third of drawing a grid.
    placed = {"y": 1.0} if ax.dataLim.ymax < TITLE_SEARCH_FROM_US else {}
    ax.set_title(
        f"{format_size(size)} · {verdict}",
        fontsize=8,
        color="black" if verdict == "ok" else "#b03a00",
        **placed,
    )
    ax.tick_params(labelsize=6.5)
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)


def fit_grid(run: Run, direction: str) -> MplFigure | None:
    measured = result_sizes(run).get(direction, {})
    if not measured:
        return None
    fits = analysis_sizes(run).get(direction, {})
    ncols = min(GRID_COLS, len(measured))
    nrows = math.ceil(len(measured) / ncols)
    fig = MplFigure(figsize=(1.95 * ncols + 0.4, 1.65 * nrows + 0.7), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, (size, entry) in zip(axes, sorted(measured.items()), strict=False):
        _panel(ax, size, entry, fits.get(size))
    for ax in axes[len(measured) :]:
        ax.set_visible(False)
    fig.supxlabel("work_t (µs): same work without a message", fontsize=8.5)
    fig.supylabel("iter_t (µs): post, work, wait", fontsize=8.5)
    fig.legend(
        handles=[
            Line2D([], [], marker="o", color="C0", ms=3, ls="none", label="median iter_t"),
            Line2D([], [], color="0.7", lw=2.2, label="sample range"),
            Line2D([], [], color="C1", lw=1.3, label="hinge fit b + s·max(0, x − k)"),
            Line2D([], [], color="C1", ls=":", lw=0.9, label="knee k"),
            Line2D([], [], marker="*", color="C3", ms=8, ls="none", label="classic point"),
        ],
        loc="outside upper center",
        ncols=5,
        fontsize=7.5,
        frameon=False,
    )
    return fig


def _figure(fig: MplFigure | None, key: str, caption: str) -> list[Figure]:
    return [] if fig is None else [Figure(to_svg(fig, key), caption)]


def summary_sections(runs: list[Run]) -> list[Section]:
    runs = comparable(runs)
    if not runs:
        return []
    hollow = "Hollow grey points: verdict not ok (see the tables for the reason)."
    figures = _figure(
        _metric_figure(runs, "overhead_us", "host overhead (µs)", "Host overhead"),
        "overhead",
        "Overhead = base time − knee: the time the host spends in MPI per "
        f"message. Error bars: 95 % CI. Solid: send, dashed: receive. {hollow}",
    ) + _figure(
        _metric_figure(runs, "availability_pct", "availability (%)", "Application availability"),
        "availability",
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
                f"fit-{label}-{direction}",
                f"{label}, {direction}: each panel is one message size; iter_t stays at "
                "the base time b until the work passes the knee k, then rises with slope s.",
            )
        if figures:
            sections.append(Section(f"How the knee was found — {label}", None, figures))
    return sections
