"""sync-overlap report: per size, whether MPI_Isend completed without the receiver and
rank 0's wait, T_P1/T_P0 of the seed test (Colmenares et al., Figure 1), with the detected
limit and the MPI-reported limit marked (analysis.py here)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.file_output import write_text
from ...core.formatting import DASH, fmt_num, fmt_pct_cell, fmt_range
from ...core.sources import cite
from ...report.html import Figure, Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    no_notes,
    summary_or_missing,
)
from ...report.summary_card import Figures, figure_of
from ...report.svg_chart import Chart, Ticks, fit_axes
from ...report.svg_plot import axes, axhline, axvline, axvspan, legend_key, plot
from ...run.rundir import Run

BENCHMARK = "sync-overlap"
PLOT_FILE = "sync-overlap.svg"
HEADERS = ("bytes", "phase", "send done %", "wait (µs)", "95 % CI", "MPI_Isend (µs)",
           "Fig. 1 test: recv alone %", "T_P1/T_P0", "slowdown %")
FIGURE_HEADERS = ("figure", "value", "unit", "kind")


def _a(run: Run) -> dict[str, Any]:
    return run.analysis or {}


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for p in _a(run).get("points") or []:
        done, alone = (None if f is None else 100 * f for f in
                       (p.get("completed_fraction"), p.get("seed_alone_fraction")))
        wait_ci = p.get("wait_ci95_us") or (None, None)
        out.append((
            fmt_num(p.get("bytes"), "d"),
            str(p.get("phase") or DASH),
            fmt_pct_cell(done, 0),
            fmt_num(p.get("wait_us"), ".1f"),
            fmt_range(wait_ci[0], wait_ci[1], ".1f"),
            fmt_num(p.get("isend_us"), ".2f"),
            fmt_pct_cell(alone, 0),
            fmt_num(p.get("tp1_ratio"), ".2f"),
            fmt_num(p.get("compute_slowdown_pct"), ".1f"),
        ))
    return out


def _limit_text(run: Run) -> str:
    lim = _a(run).get("limit") or {}
    if lim.get("status") != "bracketed":
        return str(lim.get("status") or DASH)
    return f"{lim['last_yes_bytes']}–{lim['first_no_bytes']} B"


def figure_rows(run: Run) -> list[tuple[str, ...]]:
    return [(str(f.get("label")), fmt_num(f.get("value"), ".4g"), str(f.get("unit")),
             str(f.get("kind"))) for f in _a(run).get("figures") or []]


def _notes(run: Run) -> list[str]:
    rep = _a(run).get("reported") or {}
    return [f"detected limit {_limit_text(run)}; MPI reports {rep.get('source') or 'nothing'} "
            f"= {rep.get('bytes')}", str(_a(run).get("finding"))]


def _html_notes(run: Run) -> list[str]:
    return [str(_a(run).get("finding")), f"MPI: {(_a(run).get('reported') or {}).get('note')}"]


TABLE = RunTable(f"MPI_Isend completion without the receiver ({cite('002', '§III-A')})",
                 "per size", HEADERS, rows, (1,), _notes, _html_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print
# The headline figures are on the page only.
FIGURE_TABLE = RunTable("", "figures", FIGURE_HEADERS, figure_rows, (0, 2, 3), no_notes)


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("sync-overlap — comparison", runs, ("figure",))
    names = [f["name"] for f in _a(runs[0]).get("figures") or []]
    for name in names:
        cells = [name]
        for r in runs:
            f = next((f for f in _a(r).get("figures") or [] if f["name"] == name), {})
            cells.append(fmt_num(f.get("value"), ".4g", f" {f.get('unit', '')}"))
        t.add_row(*cells)
    console.print(t)


def figure(runs: list[Run]) -> Chart | None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and _a(r).get("points")]
    if not runs:
        return None
    ax = axes(ylabel="rank 0 MPI_Wait (µs, median, 95 % CI)", xscale="log", yscale="log",
              xbase=2.0)
    ax2 = axes("message size (bytes)", "fraction of samples", xscale="log", xbase=2.0)
    ax2.legend_at = "lower left"
    for i, run in enumerate(runs):
        color = f"C{i}"
        pts = [p for p in _a(run)["points"] if p.get("bytes")]
        prefix = f"{run.label}: " if len(runs) > 1 else ""
        waits = [p for p in pts if p.get("wait_us") is not None]
        plot(ax, [p["bytes"] for p in waits], [max(p["wait_us"], 1e-3) for p in waits], "o",
             color, ms=3, label=f"{prefix}rank 0 MPI_Wait after its work")
        for p in waits:
            lo, hi = p.get("wait_ci95_us") or (None, None)
            if lo is not None and hi is not None:
                plot(ax, [p["bytes"]] * 2, [max(lo, 1e-3), max(hi, 1e-3)], "-", color, lw=0.8)
        done = [p for p in pts if p.get("completed_fraction") is not None]
        plot(ax2, [p["bytes"] for p in done], [p["completed_fraction"] for p in done], "o",
             color, ms=3, label=f"{prefix}send completed before the receive was posted")
        alone = [p for p in pts if p.get("seed_alone_fraction") is not None]
        plot(ax2, [p["bytes"] for p in alone], [p["seed_alone_fraction"] for p in alone], "x",
             color, ms=4,
             label=f"{prefix}Fig. 1 test: receive done before the sender's MPI_Wait")
        lim = _a(run).get("limit") or {}
        if lim.get("status") == "bracketed":
            for a in (ax, ax2):
                axvspan(a, max(lim["last_yes_bytes"], 1), lim["first_no_bytes"], color, 0.25)
                axvline(a, lim["last_yes_bytes"], color, lw=1.0)
            span = f"{lim['last_yes_bytes']}–{lim['first_no_bytes']} B"
            ax.legend.append(legend_key(f"{prefix}detected limit {span}", "-", color, 1.0))
        rep = _a(run).get("reported") or {}
        if rep.get("bytes"):
            for a in (ax, ax2):
                axvline(a, rep["bytes"], color, lw=1.0, ls="--")
            ax.legend.append(legend_key(f"{prefix}MPI-reported {rep['source']} = "
                                        f"{rep['bytes']} B", "--", color, 1.0))
    axhline(ax2, 0.5, "grey", lw=0.6, ls=":")
    fit_axes(ax2, ylim=(-0.05, 1.25), size=7)
    fit_axes(ax, xlim=ax2.xlim, size=7)  # sharex
    ax.xticks = Ticks(ax2.xticks.at, [""] * len(ax2.xticks.at), size=7) if ax2.xticks else None
    return Chart((7.0, 5.2), [ax, ax2], rows=2)


def html_sections(runs: list[Run]) -> list[Section]:
    mine = [r for r in runs if r.benchmark == BENCHMARK]
    if not mine:
        return []
    figures = []
    fig = figure(mine)
    if fig is not None:
        svg = fig.svg()
        if len(mine) == 1:
            write_text(mine[0].path / PLOT_FILE, svg)
        figures.append(Figure(svg, "Top: rank 0's MPI_Wait after MPI_Isend and its work, "
                                   "rank 1 having done nothing until rank 0's MPI_Test calls "
                                   "ended: near 0 when the send completed without the "
                                   "receiver, about the "
                                   "receiver's delay (the same work) when it did not. Shaded: the "
                                   "detected limit [last completing, first not]; dashed: the limit "
                                   "the MPI reports (MPI_T). Bottom: share of samples whose send "
                                   "completed before the receive was posted (the limit's data), "
                                   "and of the samples of the Fig. 1 test whose receive (after "
                                   "a quarter of the work) returned before rank 0 called "
                                   "MPI_Wait."))
    tables = []
    for run in mine:
        if run.analysis is None:
            continue
        tables += TABLE.html([run]) + FIGURE_TABLE.html([run])
    return [Section("Synchronization–computation overlap and the eager limit "
                    f"({cite('002', '§III-A, §IV-A')})", None, figures, tables)]


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the eager limit is")


def extent(run: Run) -> str | None:
    res = (run.result or {}).get("results") or {}
    return f"{len(res.get('points') or [])} sizes measured"


def to_json(run: Run) -> dict[str, Any]:
    a = _a(run)
    return {k: a.get(k) for k in ("finding", "figures", "limit", "reported", "agrees",
                                  "seed_limit", "mpi_cvars")}


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    v = figure_of(f, "eager_limit_bytes")
    if v is None:
        return None
    first_no = figure_of(f, "eager_limit_first_no_bytes")
    if first_no is not None:
        text = f"{int(v):,} B (from {int(first_no):,} B MPI_Isend needs the receiver)"
    else:  # no size needed the receiver: the limit lies above the sweep
        text = f"above {int(v):,} B (no size measured needed the receiver)"
    reported = figure_of(f, "mpi_reported_limit_bytes")
    if reported is not None:
        agrees = figure_of(f, "limit_agrees")
        verdict = "" if agrees is None else (", agrees" if agrees else ", disagrees")
        text += f"; the MPI reports {int(reported):,} B{verdict}"
    return text
