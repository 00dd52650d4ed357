"""Matching benchmark: the report's tables, figures, sentences and JSON.

Everything comes from analysis.json (analysis.py here): per queue, the receive time
against M (N = 1) and against N (M = 1), the cost per queued request, and the verdict
on whether it grows with the queue length.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import DASH, fmt_num
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    finding,
    planned_extent,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_of_all
from ...report.summary_card import Figures, figure_of
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, axhline, plot
from ...run.rundir import Run

BENCHMARK = "matching"
HEADERS = ("queue", "ns / request", "95 % CI", "lower half", "upper half", "verdict",
           "empty queue ns", "ns / extra peer")
LEFT = (0, 5)  # text columns: queue, verdict


def queues(run: Run) -> list[dict[str, Any]]:
    return [q for q in (run.analysis or {}).get("queues") or [] if isinstance(q, dict)]


def _slope(fit: dict[str, Any] | None) -> float | None:
    return None if fit is None else fit.get("slope_ns")


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for q in queues(run):
        fit = q.get("fit_m")
        ci = (fit or {}).get("slope_ci95")
        out.append((
            str(q.get("queue")),
            fmt_num(_slope(fit), ".2f"),
            DASH if not ci else f"{ci[0]:.2f}–{ci[1]:.2f}",
            fmt_num(_slope(q.get("fit_lower")), ".2f"),
            fmt_num(_slope(q.get("fit_upper")), ".2f"),
            str(q.get("verdict")),
            fmt_num(q.get("baseline_ns"), ".0f"),
            fmt_num(_slope(q.get("fit_n")), ".1f"),
        ))
    return out


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("Matching — comparison (ns per queued request)", runs, ("queue",))
    names = sorted({q["queue"] for r in runs for q in queues(r)})
    for name in names:
        cells = [name]
        for r in runs:
            q = next((q for q in queues(r) if q["queue"] == name), None)
            cells.append(fmt_num(_slope((q or {}).get("fit_m")), ".2f"))
        t.add_row(*cells)
    console.print(t)


def figure(runs: list[Run]) -> Chart | None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and queues(r)]
    if not runs:
        return None
    ax_m = axes("M (queued requests, N = 1)", "receive time (µs)", "Time vs M", xscale="log",
                yscale="log", xbase=2.0, legend_size=7)
    ax_per = axes("M (queued requests, N = 1)", "(time − empty queue) / M (ns)",
                  "Cost per queued request", xscale="log", xbase=2.0, legend_size=7)
    ax_n = axes("N (peers, M = 1)", "receive time (µs)", "Time vs N", legend_size=7)
    for ax in (ax_m, ax_per, ax_n):
        ax.title_size = 9
    for i, run in enumerate(runs):
        for q in queues(run):
            style = "-o" if q["queue"] == "posted" else "--s"
            label = f"{run.label} {q['queue']}" if len(runs) > 1 else q["queue"]
            pts = [p for p in q.get("m_points") or []
                   if p.get("time_ns") is not None and p["m"] > 0]
            if pts:
                plot(ax_m, [p["m"] for p in pts], [p["time_ns"] / 1e3 for p in pts], style,
                     f"C{i}", ms=3, label=label)
            per = [p for p in pts if p.get("per_request_ns") is not None]
            if per:
                plot(ax_per, [p["m"] for p in per], [p["per_request_ns"] for p in per], style,
                     f"C{i}", ms=3, label=label)
            npts = [p for p in q.get("n_points") or [] if p.get("time_ns") is not None]
            if npts:
                plot(ax_n, [p["n"] for p in npts], [p["time_ns"] / 1e3 for p in npts], style,
                     f"C{i}", ms=3, label=label)
    axhline(ax_per, 0, "0.6", lw=0.8)
    for ax in (ax_m, ax_per, ax_n):
        fit_axes(ax, size=7, most=7)
    return Chart((11, 3.4), [ax_m, ax_per, ax_n], cols=3)


def _html_notes(run: Run) -> list[str]:
    a = run.analysis or {}
    notes = finding(run)
    if a.get("oversubscribed"):
        notes.append(f"Oversubscribed: {a.get('ranks')} ranks on {a.get('cores')} cores.")
    return notes


TABLE = RunTable("matching cost per queued request", "ns per queued request", HEADERS, rows,
                 LEFT, html_notes=_html_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


FIGURES = figure_of_all(
    figure,
    "Time to receive the one tag-T1 message after it has arrived, with M "
    "requests queued ahead of it (posted receives or unexpected "
    "messages), medians; middle: the added time per queued request; "
    "right: M = 1 request from each of N peers.",
)


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section("Matching queues: cost per queued request",
                             runs, BENCHMARK, FIGURES, TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the matching costs are")


def extent(run: Run) -> str | None:
    return planned_extent(run, "points")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {
        "finding": a.get("finding"),
        "oversubscribed": a.get("oversubscribed"),
        "queues": [
            {k: q.get(k) for k in ("queue", "baseline_ns", "fit_m", "fit_lower", "fit_upper",
                                   "growth_ratio", "verdict", "fit_n")}
            for q in queues(run)
        ],
    }


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    parts = []
    for key, noun in (("posted", "posted receive"), ("unexpected", "unexpected message")):
        v = figure_of(f, f"{key}_ns_per_request")
        if v is not None:
            parts.append(f"{v:.1f} ns per {noun}")
    return ", ".join(parts) or None
