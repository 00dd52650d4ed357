"""Polling benchmark: the report's table, figure, sentences and JSON, from analysis.json
(analysis.py here): availability and bandwidth against the poll interval, per size."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import DASH, fmt_num
from ...core.sizes import format_size
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    planned_extent,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_of_all
from ...report.summary_card import Figures, figure_of, max_share
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, plot
from ...run.rundir import Run

BENCHMARK = "polling"
HEADERS = ("size", "MPI_Test every (µs)", "availability", "95 % CI", "GB/s", "msgs / poll",
           "ns lost / poll", "loop µs", "dry µs")


def series(run: Run) -> list[dict[str, Any]]:
    return [s for s in (run.analysis or {}).get("series") or [] if isinstance(s, dict)]


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for s in series(run):
        for p in s.get("points") or []:
            ci = p.get("availability_ci95") or [None, None]
            out.append((
                format_size(p["size"]),
                fmt_num(p.get("interval_us"), "g"),
                fmt_num(p.get("availability"), ".3f"),
                DASH if None in ci else f"{ci[0]:.3f}–{ci[1]:.3f}",
                fmt_num(p.get("bandwidth_gbs"), ".3f"),
                fmt_num(p.get("messages_per_poll"), ".2f"),
                fmt_num(p.get("cost_per_poll_ns"), ".0f"),
                fmt_num(p.get("work_us"), ".0f"),
                fmt_num(p.get("dry_us"), ".0f"),
            ))
    return out


def _notes(run: Run) -> list[str]:
    a = run.analysis or {}
    return [str(a.get("finding")), *(f"Note: {n}" for n in a.get("notes") or [])]


TABLE = RunTable("polling: availability and bandwidth against the MPI_Test interval",
                 "polling method", HEADERS, rows, notes=_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("Polling — comparison (availability / GB/s)",
                         runs, ("size", "every µs"), right=(1,))
    keys = sorted({(p["size"], p["interval_us"]) for r in runs for s in series(r)
                   for p in s.get("points") or []})
    for size, interval in keys:
        cells = [format_size(size), f"{interval:g}"]
        for r in runs:
            p = next((p for s in series(r) for p in s.get("points") or []
                      if p["size"] == size and p["interval_us"] == interval), None)
            cells.append(DASH if p is None else
                         f"{fmt_num(p.get('availability'), '.2f')} / "
                         f"{fmt_num(p.get('bandwidth_gbs'), '.2f')}")
        t.add_row(*cells)
    console.print(t)


def figure(runs: list[Run]) -> Chart | None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and series(r)]
    if not runs:
        return None
    ax_a, ax_b = (axes("MPI_Test every (µs of work)", xscale="log") for _ in range(2))
    marks = "os^vD<>p"
    for i, run in enumerate(runs):
        for j, s in enumerate(series(run)):
            pts = [p for p in s.get("points") or [] if p.get("availability") is not None]
            label = format_size(s["size"]) if len(runs) == 1 else \
                f"{run.label} {format_size(s['size'])}"
            x = [p["interval_us"] for p in pts]
            color = f"C{j}" if len(runs) == 1 else f"C{i}"
            ls = "-" if len(runs) == 1 else ("-", "--", ":", "-.")[j % 4]
            fmt = ls + marks[j % len(marks)]
            plot(ax_a, x, [p["availability"] for p in pts], fmt, color, ms=3, label=label)
            plot(ax_b, x, [p["bandwidth_gbs"] for p in pts], fmt, color, ms=3)
    ax_a.ylabel = "availability (dry / with messaging)"
    ax_b.yscale = "log"
    ax_b.ylabel = "bandwidth (GB/s)"
    fit_axes(ax_a, ylim=(0.0, 1.1), size=7)
    fit_axes(ax_b, size=7)
    return Chart((8.0, 3.4), [ax_a, ax_b], cols=2)


FIGURES = figure_of_all(
    figure,
    "A work loop calls MPI_Test on its outstanding receives every k "
    "units of calibrated work while the partner keeps sends in "
    "flight. Left: availability = time of the same loop without "
    "messages / time with them. Right: bytes received / loop time.",
)


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section("Polling method (MPI_Test in the work loop)",
                             runs, BENCHMARK, FIGURES, TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "availability and bandwidth are", _notes)


def extent(run: Run) -> str | None:
    return planned_extent(run, "points")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {k: a.get(k) for k in ("finding", "notes", "headline_size", "figures")}


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    avail = figure_of(f, "availability_fast_poll")
    interval = figure_of(f, "available_interval_us")
    if avail is None:
        return None
    text = f"{avail:.2f} when polling fastest"
    if interval is not None:
        text += f"; ≥ 0.9 from every {interval:g} µs"
        bw = figure_of(f, "bandwidth_available_gbs")
        text += f" at {bw:.2f} GB/s" if bw is not None else ""
    return text


card_share = max_share("availability_fast_poll", scale=100.0)
