"""Waitany benchmark: the report's table, figure, sentences and JSON, from analysis.json
(analysis.py here): per call, the time against N and the cost per request."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import DASH, fmt_num
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    planned_extent,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_of_all
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, plot
from ...run.rundir import Run

BENCHMARK = "waitany"
HEADERS = ("call", "ns / request", "95 % CI", "N first", "ns at first", "N last", "ns at last")


def calls(run: Run) -> list[dict[str, Any]]:
    return [c for c in (run.analysis or {}).get("calls") or [] if isinstance(c, dict)]


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for c in calls(run):
        fit = c.get("fit") or {}
        ci = fit.get("slope_ci95")
        first, last = c.get("first") or {}, c.get("last") or {}
        out.append((
            str(c.get("call")),
            fmt_num(fit.get("slope_ns"), ".2f"),
            DASH if not ci else f"{ci[0]:.2f}–{ci[1]:.2f}",
            fmt_num(first.get("n"), "d"),
            fmt_num(first.get("time_ns"), ".0f"),
            fmt_num(last.get("n"), "d"),
            fmt_num(last.get("time_ns"), ".0f"),
        ))
    return out


TABLE = RunTable("Waitany / Testany / Waitsome against N", "cost per request", HEADERS, rows)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("Waitany — comparison (ns per request)", runs, ("call",))
    for key in ("waitany", "testany", "waitsome"):
        cells = [key]
        for r in runs:
            c = next((c for c in calls(r) if c["key"] == key), {})
            cells.append(fmt_num((c.get("fit") or {}).get("slope_ns"), ".2f"))
        t.add_row(*cells)
    console.print(t)


def figure(runs: list[Run]) -> Chart | None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and calls(r)]
    if not runs:
        return None
    ax = axes("N (posted requests; only the first completes)", "time of the call (µs)",
              xscale="log", yscale="log", xbase=2.0, legend_size=7)
    styles = {"waitany": "-o", "testany": "--s", "waitsome": ":^"}
    for i, run in enumerate(runs):
        for c in calls(run):
            pts = [p for p in c.get("points") or [] if p.get("time_ns") is not None]
            label = f"{run.label} {c['call']}" if len(runs) > 1 else c["call"]
            plot(ax, [p["n"] for p in pts], [p["time_ns"] / 1e3 for p in pts],
                 styles.get(c["key"], "-"), f"C{i}", ms=3, label=label)
    fit_axes(ax, size=7)
    return Chart((6.5, 3.6), [ax])


FIGURES = figure_of_all(
    figure,
    "Median time of MPI_Waitany, of MPI_Testany called until it "
    "succeeds, and of MPI_Waitsome over N receive requests of which "
    "only the first completes (its message has already arrived).",
)


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section("MPI_Waitany / MPI_Testany / MPI_Waitsome scaling",
                             runs, BENCHMARK, FIGURES, TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the per-request costs are")


def extent(run: Run) -> str | None:
    return planned_extent(run, "N values")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {
        "finding": a.get("finding"),
        "calls": [
            {k: c.get(k) for k in ("key", "call", "fit", "first", "last")} for c in calls(run)
        ],
    }
