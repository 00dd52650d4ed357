"""Case-study report (analysis.py here): per size and mode the run time, MPI time and
overlap bounds, each mode against the baseline with the profiler's prediction verdict,
the profiler's cost on the app, and a figure of MPI time and bounds per mode."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_pct, fmt_s_as_ms
from ...report.html import Figure, Section
from ...report.run_table import RunTable, print_findings
from ...report.summary_card import analysis_figures, figure_entry, figure_of
from ...report.svg_chart import Bar, Chart, Key, Mark, Ticks, fit_axes, linear_ticks, padded
from ...report.svg_plot import axes, colour
from ...run.rundir import Run
from . import SPECS
from .analysis import INSIDE_LAUNCHES, PER_COMPUTATION, cost_words, pct_with_ci

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
    per = ov.get("per_computation") or {}
    return [*_conclusions(run), f"Profiler cost on the app (run time, {ov.get('pairs', 0)} "
            f"pairs): " + fmt_pct(ov.get("overhead_pct"), 2, sign=True)
            + (f"; per unit of its computation {pct_with_ci(per)}" if per else "")
            + " (target ≤ 1 %)."]


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


def figure(run: Run) -> Chart | None:
    sizes = (run.analysis or {}).get("sizes") or []
    if not sizes:
        return None
    panels = []
    for size in sizes:
        cells = size["cells"]
        ax = axes(ylabel="ms", title=f"{size['local']}^3 per rank", legend_size=7)
        ax.legend_at = "upper left"
        mpi = [(c.get("mpi_time_s") or 0) * 1e3 for c in cells]
        run_t = [(c.get("run_time_s") or 0) * 1e3 for c in cells]
        ax.bars += [Bar(float(i), v, 0.8, colour("0.85")) for i, v in enumerate(run_t)]
        ax.bars += [Bar(float(i), v, 0.8, colour("C3")) for i, v in enumerate(mpi)]
        # the overlap bounds on the right axis (twinx), 0–105 %
        for i, c in enumerate(cells):
            lo, hi = c.get("min_pct"), c.get("max_pct")
            if lo is not None and hi is not None:
                ax.marks.append(Mark(float(i), lo, "|", colour("C0"), to=hi, width=3.0,
                                     right=True))
                ax.marks += [Mark(float(i), v, "_", colour("C0"), 10.0, width=1.0, right=True)
                             for v in (lo, hi)]
        fit_axes(ax, ylim=(0.0, padded(0.0, max(run_t + mpi, default=1.0))[1]), size=7)
        ax.xticks = Ticks([float(i) for i in range(len(cells))], [c["mode"] for c in cells],
                          size=7, rotation=35)
        ax.y2lim, ax.y2label, ax.y2label_size = (0.0, 105.0), "overlap bounds % (blue)", 7.0
        ax.y2ticks = linear_ticks(0.0, 105.0, size=7)
        panels.append(ax)
    panels[0].legend = [Key("run time", colour("0.85")), Key("MPI time", colour("C3"))]
    return Chart((3.4 * len(sizes), 3.4), panels, cols=len(panels))


def html_sections(runs: list[Run]) -> list[Section]:
    mine = [r for r in runs if r.benchmark in BENCHMARKS]
    out = []
    for run in mine:
        if run.analysis is None:
            continue
        figures = []
        fig = figure(run)
        if fig is not None:
            figures.append(Figure(fig.svg(),
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
    done = len(res.get("launches") or []) + len(res.get("cost_launches") or [])
    # with and without the profiler, and the cost launch, per repetition and size; a run
    # from before the cost launches planned two
    per = 3 if "cost_launches" in res else 2
    planned = (res.get("reps") or 0) * len(res.get("sizes") or []) * per
    return f"{done} of {planned} launches done"


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
    said = cost_words(fig, figure_entry(a, PER_COMPUTATION), figure_entry(a, INSIDE_LAUNCHES))
    return f"{moved}; profiler cost on the app {said}" if said else moved
