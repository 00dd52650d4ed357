"""Case-study report (analysis.py here): per size and mode the run time, MPI time and
overlap bounds, each mode against the baseline with the profiler's prediction verdict,
the profiler's cost on the app, and a figure of MPI time and bounds per mode."""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure as MplFigure
from rich.console import Console

from ...analysis.figures import resolved_text
from ...core.formatting import fmt_pct, fmt_s_as_ms
from ...report.html import Figure, Section
from ...report.run_table import RunTable, print_findings
from ...report.summary_card import analysis_figures, figure_entry, figure_of
from ...report.svg import to_svg
from ...run.rundir import Run
from . import SPECS

BENCHMARKS = tuple(spec.name for spec in SPECS)
HEADERS = ("size", "mode", "run time ms", "MPI time ms", "overlap min–max", "non-overlapped ms",
           "vs baseline: MPI", "run", "bounds allow", "measured", "with profiler")


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for size in (run.analysis or {}).get("sizes") or []:
        cmps = {c["mode"]: c for c in size.get("comparisons") or []}
        for cell in size.get("cells") or []:
            c = cmps.get(cell["mode"])
            ratio = cell.get("profiler_ratio")
            out.append((
                f"{size['local']}^3 ({size['face_bytes'] // 1024} KiB)",
                cell["mode"],
                fmt_s_as_ms(cell.get("run_time_s")),
                fmt_s_as_ms(cell.get("mpi_time_s")),
                f"{fmt_pct(cell.get('min_pct'), 0)}–{fmt_pct(cell.get('max_pct'), 0)}",
                fmt_s_as_ms(cell.get("nonoverlap_s")),
                "baseline" if c is None else fmt_pct(c["mpi_time_change_pct"], 0, sign=True),
                "" if c is None else fmt_pct(c["run_time_change_pct"], 1, sign=True),
                "" if c is None else c["prediction"],
                "" if c is None else c["verdict"],
                fmt_pct(None if ratio is None else 100 * (ratio - 1), 1, sign=True),
            ))
    return out


def _baseline(run: Run) -> str:
    return str((run.analysis or {}).get("baseline"))


def _conclusions(run: Run) -> list[str]:
    return list((run.analysis or {}).get("conclusions") or [])


def _html_notes(run: Run) -> list[str]:
    ov = (run.analysis or {}).get("profiler_overhead") or {}
    return [*_conclusions(run), f"Profiler cost on the app (run time, {ov.get('pairs', 0)} "
            f"pairs): " + fmt_pct(ov.get("overhead_pct"), 2, sign=True) + " (target ≤ 1 %)."]


TABLE = RunTable(lambda run: f"{run.benchmark}: modes against {_baseline(run)}",
                 lambda run: f"modes against {_baseline(run)}", HEADERS, rows,
                 (0, 1, 8, 9), _conclusions, _html_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    mine = [r for r in runs if r.analysis is not None]
    if len(mine) < 2:
        return
    print_findings("Case study — comparison", [(f"{r.label} ({r.benchmark})",
                                                str((r.analysis or {}).get("finding")))
                                               for r in mine], console)


def figure(run: Run) -> MplFigure | None:
    sizes = (run.analysis or {}).get("sizes") or []
    if not sizes:
        return None
    fig = MplFigure(figsize=(3.4 * len(sizes), 3.4), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, size in zip(axes, sizes, strict=True):
        cells = size["cells"]
        names = [c["mode"] for c in cells]
        x = range(len(cells))
        mpi = [(c.get("mpi_time_s") or 0) * 1e3 for c in cells]
        run_t = [(c.get("run_time_s") or 0) * 1e3 for c in cells]
        ax.bar(x, run_t, color="0.85", label="run time")
        ax.bar(x, mpi, color="C3", label="MPI time")
        ax.set_xticks(list(x), names, rotation=35, ha="right", fontsize=7)
        ax.set_ylabel("ms", fontsize=8)
        ax.set_title(f"{size['local']}^3 per rank", fontsize=8)
        ax.tick_params(labelsize=7)
        twin = ax.twinx()
        for i, c in enumerate(cells):
            lo, hi = c.get("min_pct"), c.get("max_pct")
            if lo is not None and hi is not None:
                twin.vlines(i, lo, hi, color="C0", lw=3)
                twin.plot([i, i], [lo, hi], "_", color="C0", ms=10)
        twin.set_ylim(0, 105)
        twin.set_ylabel("overlap bounds % (blue)", fontsize=7)
        twin.tick_params(labelsize=7)
    axes[0].legend(fontsize=7, frameon=False, loc="upper left")
    return fig


def html_sections(runs: list[Run]) -> list[Section]:
    mine = [r for r in runs if r.benchmark in BENCHMARKS]
    out = []
    for run in mine:
        if run.analysis is None:
            continue
        figures = []
        fig = figure(run)
        if fig is not None:
            figures.append(Figure(to_svg(fig, run.benchmark),
                                  "Per mode: run time (grey) and MPI time (red) without the "
                                  "profiler, medians over repetitions; blue bars: the range "
                                  "between the profiler's min and max overlap bounds (% of "
                                  "transfer time) in the same modes."))
        a = run.analysis
        out.append(Section(f"Case study: {a.get('app')} ({run.label})", str(a.get("finding")),
                           figures, TABLE.html([run])))
    return out


def summary(run: Run) -> list[str]:
    if run.analysis is None:
        return ["No analysis: the case study's figures are not available for this run."]
    return [str(run.analysis.get("finding"))]


def extent(run: Run) -> str | None:
    res = run.result or {}
    launches = res.get("launches") or []
    planned = (res.get("reps") or 0) * len(res.get("sizes") or []) * 2
    return f"{len(launches)} of {planned} launches done"


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {k: a.get(k) for k in ("finding", "conclusions", "profiler_overhead", "prediction",
                                  "sizes")}


# ---- the summary card (spec.CardLine in __init__.py)

def card_from_analysis(a: dict[str, Any]) -> str | None:
    f = analysis_figures(a)
    cut, cost = figure_of(f, "best_mpi_saving_pct"), figure_of(f, "app_profiler_overhead_pct")
    if cut is None and cost is None:
        return None
    if cut is None:
        moved = "no mode compared"
    elif cut > 0:
        moved = f"best mode cuts MPI time {cut:.0f} %"
    else:
        moved = f"no mode cuts MPI time (best {-cut:+.0f} %)"
    fig = figure_entry(a, "app_profiler_overhead_pct")
    if fig is not None and "ci95" not in fig:  # a study analysed before figures had intervals
        lo = figure_of(f, "app_profiler_overhead_ci_low_pct")
        hi = figure_of(f, "app_profiler_overhead_ci_high_pct")
        fig = {**fig, "ci95": [lo, hi]}
    said = resolved_text(fig, 1.0, " %", "+.2f")
    return f"{moved}; profiler cost on the app {said}" if said else moved
