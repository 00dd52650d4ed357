"""threads-procs report: rate against worker count, processes and threads, one plot."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num
from ...report.html import Section
from ...report.run_table import RunTable, no_notes
from ...report.sections import run_sections
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, axvline, errorbar, legend_key
from ...run.rundir import Run

BENCHMARK = "threads-procs"
PLOT_FILE = "threads-procs.svg"


def _a(run: Run) -> dict[str, Any]:
    return run.analysis or {}


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for kind in ("processes", "threads"):
        for s in _a(run).get(kind) or []:
            r, sp = s["rate"], s["speedup"]
            out.append((kind, str(s["workers"]),
                        fmt_num(r["median"] and r["median"] / 1e6, ".2f"),
                        fmt_num(sp["ratio"], ".2f"),
                        f"{fmt_num(sp['ci95_low'], '.2f')}–{fmt_num(sp['ci95_high'], '.2f')}",
                        str(r["n"])))
    return out


HEADERS = ("workers", "count", "M msgs/s (median)", "x one", "95 % CI", "samples")


TABLE = RunTable("MPI_Send(0 B, MPI_PROC_NULL) rate", "rate per worker count", HEADERS, rows,
                 (0,), no_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    return None


def figure(run: Run) -> Chart | None:
    a = _a(run)
    if not (a.get("processes") or a.get("threads")):
        return None
    ax = axes("workers", "M messages/s (all workers)", label_size=10, legend_size=10)
    for i, (kind, marker) in enumerate((("processes", "o"), ("threads", "s"))):
        series = [s for s in a.get(kind) or [] if s["rate"]["median"] is not None]
        if series:
            x = [s["workers"] for s in series]
            med = [s["rate"]["median"] for s in series]
            low = [s["rate"]["ci95_low"] or m for s, m in zip(series, med, strict=True)]
            high = [s["rate"]["ci95_high"] or m for s, m in zip(series, med, strict=True)]
            y = [m / 1e6 for m in med]
            lo = [max(0.0, (m - v) / 1e6) for m, v in zip(med, low, strict=True)]
            hi = [max(0.0, (v - m) / 1e6) for m, v in zip(med, high, strict=True)]
            # errorbar's colours follow the cycle: processes C0, threads C1
            errorbar(ax, x, y, lo, hi, "-" + marker, f"C{i}", capsize=3, label=kind)
    if a.get("online_cpus"):
        axvline(ax, a["online_cpus"], "grey", ls=":")
        ax.legend.append(legend_key("online CPUs", ":", "grey"))
    fit_axes(ax, size=10)
    return Chart((6, 3.4), [ax])


def html_sections(runs: list[Run]) -> list[Section]:
    return run_sections(runs, lambda run: f"Threads against processes ({run.label})", figure,
                        "Aggregate rate of 0-byte MPI_Send to MPI_PROC_NULL: "
                        "processes (MPI_THREAD_SINGLE) and threads of one process "
                        "(MPI_THREAD_MULTIPLE); bars: 95 % CI of the mean.", PLOT_FILE, TABLE)


def summary(run: Run) -> list[str]:
    finding = _a(run).get("finding")
    return [finding] if finding else []


def extent(run: Run) -> str | None:
    a = _a(run)
    procs, threads = len(a.get("processes") or []), len(a.get("threads") or [])
    return f"{procs} process counts, {threads} thread counts"


def to_json(run: Run) -> dict[str, Any]:
    return {"analysis": run.analysis}
