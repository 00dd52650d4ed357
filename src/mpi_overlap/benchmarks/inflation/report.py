"""inflation benchmark: the report's tables, figure, sentences and JSON, from
analysis.json (analysis.py here): per size the total time of one exchange against
the computation inside it, and the knee of the hinge fit."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num, fmt_range, opt_text
from ...core.sizes import format_size
from ...core.sources import cite
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    planned_extent,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_per_run
from ...report.summary_card import Figures, figure_of, max_share
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, axvline, plot
from ...run.rundir import Run

BENCHMARK = "inflation"
HEADERS = ("size", "exchange alone µs", "below knee µs", "knee µs", "95 % CI", "hidden %",
           "after knee µs", "slope", "slowdown %", "verdict")
LEFT = (0, len(HEADERS) - 1)  # text columns: size, verdict


def points(run: Run) -> list[dict[str, Any]]:
    return [p for p in (run.analysis or {}).get("points") or [] if isinstance(p, dict)]


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for p in points(run):
        k = p.get("knee") or {}
        knee_ci = k.get("knee_ci95") or (None, None)
        out.append((
            format_size(p["bytes"]),
            fmt_num(p.get("exchange_alone_us"), ".3g"),
            fmt_num(k.get("exposed_us"), ".3g"),
            fmt_num(k.get("knee_us"), ".3g"),
            fmt_range(knee_ci[0], knee_ci[1], ".3g", sep="…", missing="–"),
            fmt_num(k.get("hidden_pct"), ".0f"),
            fmt_num(k.get("after_knee_us"), ".3g"),
            fmt_num(k.get("slope"), ".2f"),
            fmt_num(p.get("compute_slowdown_pct"), "+.1f"),
            str(k.get("verdict")),
        ))
    return out


TABLE = RunTable(f"computation inflation: knee per size ({cite('004')})",
                 "knee per message size", HEADERS, rows, LEFT)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("inflation — comparison (knee µs, share of the exchange hidden %)",
                         runs, ("size",))
    for size in sorted({p["bytes"] for r in runs for p in points(r)}):
        cells = [format_size(size)]
        for r in runs:
            p = next((p for p in points(r) if p["bytes"] == size), None)
            k = (p or {}).get("knee") or {}
            knee, share = fmt_num(k.get("knee_us"), ".3g"), fmt_num(k.get("hidden_pct"), ".0f")
            cells.append(f"{knee} ({share} %)" if p else "–")
        t.add_row(*cells)
    console.print(t)


def _geomspace(lo: float, hi: float, n: int) -> list[float]:
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


def figure(run: Run) -> Chart | None:
    pts = [p for p in points(run) if p.get("steps")]
    if not pts:
        return None
    ax = axes("computation (work alone, median µs)", "total per exchange (median µs)",
              run.label, xscale="log", yscale="log", legend_size=7)
    lo, hi = math.inf, 0.0
    for i, p in enumerate(pts):
        steps = [s for s in p["steps"] if s.get("computation_us") and s.get("total_us")]
        if not steps:
            continue
        x = [s["computation_us"] for s in steps]
        y = [s["total_us"] for s in steps]
        lo, hi = min(lo, min(x)), max(hi, max(x))
        plot(ax, x, y, "o", f"C{i}", ms=3, label=format_size(p["bytes"]))
        par = (p.get("knee") or {}).get("params")
        if par:
            # a hinge is curved on log axes: drawn at 100 points, as before
            xs = _geomspace(min(x), max(x), 100)
            plot(ax, xs, [par["base"] + par["slope"] * max(0.0, v - par["knee"]) for v in xs],
                 "-", f"C{i}", lw=1)
        k = (p.get("knee") or {}).get("knee_us")
        if k and k > 0 and par:
            axvline(ax, k, f"C{i}", lw=0.8, ls=":")
            plot(ax, [k], [par["base"]], "v", f"C{i}", ms=6)
    if hi > 0 and math.isfinite(lo):
        xs = _geomspace(lo, hi, 2)  # y = x is straight on log-log axes
        plot(ax, xs, xs, "--", "0.6", lw=0.8, label="total = computation")
    fit_axes(ax, size=7)
    return Chart((6.5, 4.0), [ax])


FIGURES = figure_per_run(figure, lambda run: (
    f"{run.label}: total time of one exchange (Irecv + Isend, "
    "work, Waitall) against the computation inside it, per size; "
    "lines: hinge fit, triangles/dotted: the knee, above which "
    "total = computation + what the exchange still costs."))


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section(f"Computation inflation ({cite('004')})", runs, BENCHMARK, FIGURES,
                             TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the knees are")


def extent(run: Run) -> str | None:
    return planned_extent(run, "sizes")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {"finding": a.get("finding"), "figures": a.get("figures"),
            "points": [{k: p.get(k) for k in ("bytes", "knee", "compute_slowdown_pct")}
                       for p in points(run)]}


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    lo, hi = figure_of(f, "knee_us_smallest"), figure_of(f, "knee_us_largest")
    hidden = figure_of(f, "hidden_pct_largest")
    if lo is None and hi is None:
        return None
    text = (f"up to {opt_text(lo, '.2f')} µs of computation per exchange comes free at the "
            f"smallest size, {opt_text(hi, '.1f')} µs at the largest")
    return text + (f"; {hidden:.0f} % of the largest exchange hidden" if hidden is not None
                   else "")


card_share = max_share("hidden_pct_largest")
