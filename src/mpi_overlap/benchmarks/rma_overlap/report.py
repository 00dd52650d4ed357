"""rma-overlap benchmark: the report's table, figure, sentences and JSON, from analysis.json
(analysis.py here): per window, sync, op and size the overlap % and the time of
the completion call after the work against the call alone."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    planned_extent,
    print_figure_comparison,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_per_run
from ...report.summary_card import Figures, figure_of, figure_range, max_share
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, plot
from ...run.rundir import Run

BENCHMARK = "rma-overlap"
HEADERS = ("window", "sync", "op", "bytes", "t_pure µs", "t_cpu µs", "t_overall µs",
           "OSU %", "IMB %", "completion alone µs", "completion after work µs")
LEFT = (0, 1, 2)  # text columns: window, sync, op


def cases(run: Run) -> list[dict[str, Any]]:
    return [c for c in (run.analysis or {}).get("cases") or [] if isinstance(c, dict)]


def rows(run: Run) -> list[tuple[str, ...]]:
    return [(
        str(c.get("window")), str(c.get("sync")), str(c.get("op")),
        fmt_num(c.get("size"), "d"),
        fmt_num(c.get("t_pure_us"), ".2f"),
        fmt_num(c.get("t_cpu_us"), ".2f"),
        fmt_num(c.get("t_overall_us"), ".2f"),
        fmt_num(c.get("osu_pct"), ".0f"),
        fmt_num(c.get("imb_pct"), ".0f"),
        fmt_num(c.get("t_complete_alone_us"), ".2f"),
        fmt_num(c.get("t_complete_us"), ".2f"),
    ) for c in cases(run)]


TABLE = RunTable("one-sided overlap", "one-sided overlap per case", HEADERS, rows, LEFT)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    print_figure_comparison(runs, console, BENCHMARK, "rma-overlap — comparison")


def figure(runs: list[Run]) -> Chart | None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and cases(r)]
    if not runs:
        return None
    run = runs[0]  # html_sections draws one figure per run
    ax_pct, ax_done = (axes("bytes", xscale="log", xbase=2.0) for _ in range(2))
    keys = list(dict.fromkeys((c["window"], c["sync"], c["op"]) for c in cases(run)))
    for i, key in enumerate(keys):
        pts = sorted((c for c in cases(run) if (c["window"], c["sync"], c["op"]) == key),
                     key=lambda c: c["size"])
        x = [max(c["size"], 1) for c in pts]
        label = "/".join(key)
        plot(ax_pct, x, [c.get("osu_pct") for c in pts], "-o", f"C{i}", ms=3, lw=1,
             label=label)
        plot(ax_done, x, [c.get("t_complete_alone_us") for c in pts], ":", f"C{i}", lw=1)
        plot(ax_done, x, [c.get("t_complete_us") for c in pts], "-s", f"C{i}", ms=3, lw=1)
    ax_pct.ylabel = "overlap % (OSU formula)"
    ax_done.yscale = "log"
    ax_done.ylabel = "completion call µs (: alone, — after work)"
    fit_axes(ax_pct, ylim=(-3.0, 103.0), size=7)
    fit_axes(ax_done, size=7)
    legend, ax_pct.legend = ax_pct.legend, []  # the figure's legend, right of it
    return Chart((7.5, 3.2), [ax_pct, ax_done], cols=2, legend=legend, legend_size=6)


FIGURES = figure_per_run(lambda run: figure([run]), lambda run: (
    f"Left: overlap % of MPI_Put / MPI_Get ({run.label}) by the "
    "OSU formula, per window kind (MPI_Win_allocate, MPI_Win_create) "
    "and completion (MPI_Win_flush in a lock_all epoch, "
    "MPI_Win_fence). Right: time of the completion call after the "
    "work (solid) against the same call right after the operation "
    "(dotted): the part of the transfer left for the call."))


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section("One-sided (RMA) overlap: Put/Get with flush or fence",
                             runs, BENCHMARK, FIGURES, TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the overlap percentages are")


def extent(run: Run) -> str | None:
    return planned_extent(run, "cases", "cases")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {"finding": a.get("finding"), "figures": a.get("figures"), "checks": a.get("checks"),
            "cases": cases(run)}


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    r = figure_range(figure_of(f, "osu_overlap_min_pct"), figure_of(f, "osu_overlap_max_pct"), "%")
    flush = figure_of(f, "osu_overlap_pct_largest_flush")
    fence = figure_of(f, "osu_overlap_pct_largest_fence")
    if r is not None and flush is not None and fence is not None:
        r += f" (largest size: flush {flush:.0f} %, fence {fence:.0f} %)"
    return r


card_share = max_share("osu_overlap_pct_largest_flush", "osu_overlap_pct_largest_fence")
