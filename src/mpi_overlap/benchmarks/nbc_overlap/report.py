"""nbc-overlap benchmark: the report's tables, figure, sentences and JSON, from
analysis.json (analysis.py here): per collective, size and MPI_Test variant the OSU
and IMB overlap % beside the profiler's min/max bounds, with per-rank min/max."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    finding,
    planned_extent,
    print_figure_comparison,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_per_run
from ...report.summary_card import Figures, figure_of, figure_range, max_share
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, fill_between, plot
from ...run.rundir import Run

BENCHMARK = "nbc-overlap"
HEADERS = ("collective", "bytes", "tests", "t_pure µs", "t_pure after µs", "t_pure p99 µs",
           "t_ovrl p99 µs", "OSU %", "OSU rank min–max", "IMB %", "profiler min %",
           "profiler max %", "slowdown %", "verdict")


def cases(run: Run) -> list[dict[str, Any]]:
    return [c for c in (run.analysis or {}).get("cases") or [] if isinstance(c, dict)]


def _range(lo: Any, hi: Any) -> str:
    return f"{fmt_num(lo, '.0f')}–{fmt_num(hi, '.0f')}"


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for c in cases(run):
        for v in c.get("variants") or []:
            out.append((
                str(c.get("collective")),
                fmt_num(c.get("bytes"), "d"),
                fmt_num(v.get("tests"), "d"),
                fmt_num(c.get("t_pure_us"), ".1f"),
                fmt_num(c.get("t_pure_after_us"), ".1f"),
                fmt_num(c.get("t_pure_p99_us"), ".1f"),
                fmt_num(v.get("t_overall_p99_us"), ".1f"),
                fmt_num(v.get("osu_pct"), ".0f") + (" (clipped)" if v.get("osu_clipped") else ""),
                _range(v.get("osu_rank_min_pct"), v.get("osu_rank_max_pct")),
                fmt_num(v.get("imb_pct"), ".0f"),
                fmt_num(v.get("profiler_min_pct"), ".0f"),
                fmt_num(v.get("profiler_max_pct"), ".0f"),
                fmt_num(v.get("compute_slowdown_pct"), ".1f"),
                str(c.get("verdict") or "—"),
            ))
    return out


def print_comparison(runs: list[Run], console: Console) -> None:
    print_figure_comparison(runs, console, BENCHMARK, "nbc-overlap — comparison")


def figure(runs: list[Run]) -> Chart | None:
    """Overlap % against size per collective: OSU (solid), IMB (dashed), profiler bounds
    (shaded), without and with MPI_Test calls; one panel per variant."""
    runs = [r for r in runs if r.benchmark == BENCHMARK and cases(r)]
    if not runs:
        return None
    run = runs[0]  # html_sections draws one figure per run
    tests = sorted({v["tests"] for c in cases(run) for v in c.get("variants") or []})
    panels = [axes("bytes per block", title=f"{t} MPI_Test calls" if t else "no MPI_Test",
                   xscale="log", xbase=2.0) for t in tests]
    colls = list(dict.fromkeys(str(c["collective"]) for c in cases(run)
                               if c["collective"] != "Ibarrier"))
    for ax, t in zip(panels, tests, strict=True):
        for i, name in enumerate(colls):
            pts = [(c["bytes"], v) for c in cases(run) if c["collective"] == name
                   for v in c["variants"] if v["tests"] == t]
            pts.sort(key=lambda p: p[0])
            x = [max(p[0], 1) for p in pts]
            plot(ax, x, [p[1].get("osu_pct") for p in pts], "-o", f"C{i % 10}", ms=3, lw=1,
                 label=name if t == tests[0] else None)
            plot(ax, x, [p[1].get("imb_pct") for p in pts], "--", f"C{i % 10}", lw=0.8)
        # the profiler's bounds, averaged over the collectives at each size
        sizes = sorted({c["bytes"] for c in cases(run) if c["collective"] != "Ibarrier"})
        lo: list[float | None] = []
        hi: list[float | None] = []
        for s in sizes:
            vs = [v for c in cases(run) if c["bytes"] == s and c["collective"] != "Ibarrier"
                  for v in c["variants"] if v["tests"] == t and v.get("profiler_max_pct")
                  is not None]
            lo.append(sum(v["profiler_min_pct"] for v in vs) / len(vs) if vs else None)
            hi.append(sum(v["profiler_max_pct"] for v in vs) / len(vs) if vs else None)
        if any(h is not None for h in hi):
            fill_between(ax, [max(s, 1) for s in sizes], lo, hi, "0.8", alpha=0.6,
                         label="profiler min–max (mean)" if t == tests[0] else None)
        fit_axes(ax, ylim=(-3.0, 103.0), size=7)
    panels[0].ylabel = "overlap % (— OSU, -- IMB)"
    for ax in panels[1:]:  # sharey: the y values are read off the first panel
        if ax.yticks:
            ax.yticks.labels = [""] * len(ax.yticks.at)
    legend, panels[0].legend = panels[0].legend, []  # the figure's legend, right of it
    return Chart((7.5, 3.4), panels, cols=len(panels), legend=legend, legend_size=6)


def _html_notes(run: Run) -> list[str]:
    notes = finding(run)
    notes += [f"{c.get('collective')} {c.get('bytes')} B {c.get('verdict')}: {c.get('reason')}"
              for c in cases(run) if c.get("verdict") not in (None, "ok")][:12]
    if any(v.get("osu_clipped") for c in cases(run) for v in c.get("variants") or []):
        notes.append("clipped: the OSU formula fell below 0 even at the favourable quartile "
                     "of the non-overlapped time (it exceeded the whole t_pure) and max(0, ...) "
                     "made it 0")
    note = ((run.analysis or {}).get("bounds") or {}).get("note")
    if note:
        notes.append(str(note))
    return notes


TABLE = RunTable("non-blocking collective overlap",
                 "overlap % per collective, size and variant", HEADERS, rows,
                 html_notes=_html_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


FIGURES = figure_per_run(lambda run: figure([run]), lambda run: (
    f"Overlap % of each non-blocking collective ({run.label}) "
    "by the OSU formula (solid, mean over ranks) and the IMB formula "
    "(dashed, rank with the largest overlapped time), and the overlap "
    "profiler's min–max bounds of the same loops (grey band, mean "
    "over collectives); left without, right with MPI_Test calls "
    "spread through the computation."))


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section("Non-blocking collective overlap (OSU, IMB, profiler bounds)",
                             runs, BENCHMARK, FIGURES, TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the overlap percentages are")


def extent(run: Run) -> str | None:
    return planned_extent(run, "cases", "cases")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {
        "finding": a.get("finding"),
        "figures": a.get("figures"),
        "checks": a.get("checks"),
        "cases": [
            {"collective": c.get("collective"), "bytes": c.get("bytes"),
             "t_pure_us": c.get("t_pure_us"), "t_pure_after_us": c.get("t_pure_after_us"),
             "t_pure_p99_us": c.get("t_pure_p99_us"),
             "verdict": c.get("verdict"), "reason": c.get("reason"),
             "variants": [{k: v.get(k) for k in ("tests", "osu_pct", "osu_rank_min_pct",
                                                 "osu_rank_max_pct", "osu_clipped", "imb_pct",
                                                 "profiler_min_pct", "profiler_max_pct",
                                                 "compute_slowdown_pct", "t_overall_p99_us")}
                          for v in c.get("variants") or []]}
            for c in cases(run)
        ],
    }


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    r = figure_range(figure_of(f, "osu_overlap_min_pct"), figure_of(f, "osu_overlap_max_pct"), "%")
    if r is None:
        return None
    tests = figure_of(f, "osu_overlap_pct_largest_tests")
    plain = figure_of(f, "osu_overlap_pct_largest")
    if tests is not None and plain is not None:
        r += f" (largest size: {plain:.0f} %, with MPI_Test calls {tests:.0f} %)"
    return r


card_share = max_share("osu_overlap_pct_largest", "osu_overlap_pct_largest_tests")
