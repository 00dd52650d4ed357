"""comm-overlap benchmark: the report's tables, figures, sentences and JSON, from
analysis.json (analysis.py here): per size T_message + T_workload against
T_overlap with equation (1), and the better test's per-rank T_total statistics."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num, opt_text
from ...core.sizes import format_size
from ...core.sources import cite
from ...report.html import HtmlTable, Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    no_notes,
    planned_extent,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_per_run
from ...report.summary_card import Figures, figure_of, max_share
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, errorbar, plot
from ...run.rundir import Run

BENCHMARK = "comm-overlap"
HEADERS = ("size", "work (nominal) µs", "T_message µs", "T_workload µs", "T_msg+T_work µs",
           "T_overlap µs", "eq. (1) %", "95 % CI", "hidden %", "slowdown %",
           "better r0 %", "better r1 %")
# The basic test's columns are medians; "better r0/r1" is equation (1) on the medians of
# T_total (the averages, as in the paper, are in the better-test table).
BETTER_HEADERS = ("size", "rank", "version", "min µs", "max µs", "avg µs", "stdev µs",
                  "median µs", "eq. (1) avg %", "eq. (1) median %")


def points(run: Run) -> list[dict[str, Any]]:
    return [p for p in (run.analysis or {}).get("points") or []
            if isinstance(p, dict) and (p.get("basic") or {}).get("complete")]


def _rank(p: dict[str, Any], r: int) -> dict[str, Any]:
    return next((x for x in p.get("better") or [] if x.get("rank") == r), {})


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for p in points(run):
        b = p["basic"]
        ci = b.get("improvement_ci95") or [None, None]
        out.append((
            format_size(p["bytes"]),
            fmt_num(p.get("work_us_nominal"), ".3g"),
            fmt_num(b.get("message_us"), ".3g"),
            fmt_num(b.get("workload_us"), ".3g"),
            fmt_num(b.get("nonoverlap_us"), ".3g"),
            fmt_num(b.get("overlap_us"), ".3g"),
            fmt_num(b.get("improvement_pct"), "+.1f"),
            "–" if ci[0] is None or ci[1] is None else f"{ci[0]:+.1f}…{ci[1]:+.1f}",
            fmt_num(b.get("hidden_pct"), ".0f"),
            fmt_num(b.get("compute_slowdown_pct"), "+.1f"),
            fmt_num(_rank(p, 0).get("improvement_pct_median"), "+.1f"),
            fmt_num(_rank(p, 1).get("improvement_pct_median"), "+.1f"),
        ))
    return out


def better_rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for p in points(run):
        for r in p.get("better") or []:
            for version in ("nonoverlap", "overlap"):
                s = r.get(version) or {}
                out.append((
                    format_size(p["bytes"]), str(r.get("rank")), version,
                    fmt_num(s.get("min"), ".3g"), fmt_num(s.get("max"), ".3g"),
                    fmt_num(s.get("mean"), ".3g"), fmt_num(s.get("stdev"), ".3g"),
                    fmt_num(s.get("median"), ".3g"),
                    fmt_num(r.get("improvement_pct"), "+.1f") if version == "overlap" else "",
                    (fmt_num(r.get("improvement_pct_median"), "+.1f")
                     if version == "overlap" else ""),
                ))
    return out


TABLE = RunTable(f"communication-computation overlap ({cite('002')})",
                 "T_message + T_workload against T_overlap", HEADERS, rows)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print
# The better test's table is on the page only.
BETTER_TABLE = RunTable("", "better test, T_total per rank", BETTER_HEADERS, better_rows, (0, 2),
                        no_notes)


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("comm-overlap — comparison (message time hidden %, better test r0/r1 %)",
                         runs, ("size",))
    sizes = sorted({p["bytes"] for r in runs for p in points(r)})
    for size in sizes:
        cells = [format_size(size)]
        for r in runs:
            p = next((p for p in points(r) if p["bytes"] == size), None)
            if p is None:
                cells.append("–")
                continue
            cells.append(f"{fmt_num(p['basic'].get('hidden_pct'), '.0f')} "
                         f"({fmt_num(_rank(p, 0).get('improvement_pct_median'), '+.0f')}/"
                         f"{fmt_num(_rank(p, 1).get('improvement_pct_median'), '+.0f')})")
        t.add_row(*cells)
    console.print(t)


def figure(run: Run) -> Chart | None:
    """One run: the basic test (left) and the better test per rank (middle, right)."""
    pts = points(run)
    if not pts:
        return None
    ax, *rank_axes = (axes("message size (bytes)", xscale="log", yscale="log", xbase=2.0)
                      for _ in range(3))
    x = [p["bytes"] for p in pts]
    plot(ax, x, [p["basic"]["nonoverlap_us"] for p in pts], "--o", "C0", ms=3,
         label="T_message + T_workload")
    plot(ax, x, [p["basic"]["overlap_us"] for p in pts], "-s", "C1", ms=3, label="T_overlap")
    plot(ax, x, [p["basic"]["message_us"] for p in pts], ":", "0.5", lw=1, label="T_message")
    ax.title = f"{run.label}: basic test (rank 0, medians)"
    ax.ylabel = "µs"
    ax.legend_size = 7
    for r_i, rax in enumerate(rank_axes):
        for c, (version, style) in enumerate((("nonoverlap", "--o"), ("overlap", "-s"))):
            both = [(p["bytes"], _rank(p, r_i).get(version) or {}) for p in pts]
            both = [(b, st) for b, st in both if st.get("mean") is not None]
            if not both:
                continue
            xs = [b for b, _ in both]
            mean = [st["mean"] for _, st in both]
            below = [st["mean"] - st["min"] for _, st in both]
            above = [st.get("stdev") or 0.0 for _, st in both]
            errorbar(rax, xs, mean, below, above, style, f"C{c}", ms=3, lw=1, capsize=2,
                     label=f"{version} (avg; bar: min … avg+stdev)" if r_i == 0 else None)
            plot(rax, xs, [st["median"] for _, st in both], "x", f"C{c}", ms=4)
        rax.title = f"better test, rank {r_i} (x: median)"
    for a in (ax, *rank_axes):
        fit_axes(a, size=7, most=6)  # a third of the width: fewer ticks, as matplotlib
    return Chart((9.0, 3.4), [ax, *rank_axes], cols=3)


FIGURES = figure_per_run(figure, lambda run: (
    f"{run.label}. Left, basic test (rank 0): the message alone (Isend + Wait) plus "
    "the calibrated work alone, against Isend + the same work + Wait; where "
    "T_overlap lies below the sum, part of the message was hidden behind the work. "
    "Middle and right, better test (both ranks Irecv + Isend): T_total per rank of "
    "the non-overlap version (post, Waitall, work) and of the overlap version "
    "(post, work, Waitall)."))


def _tables(runs: list[Run]) -> list[HtmlTable]:
    """Per run: the basic test's table, then the better test's."""
    return [t for run in runs for t in TABLE.html([run]) + BETTER_TABLE.html([run])]


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section(f"Communication–computation overlap ({cite('002', '§III-B, §IV-B')})",
                             runs, BENCHMARK, FIGURES, _tables)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the overlap figures are")


def extent(run: Run) -> str | None:
    return planned_extent(run, "sizes")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {"finding": a.get("finding"), "figures": a.get("figures"), "points": points(run)}


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    hidden = figure_of(f, "hidden_pct_largest")
    if hidden is None:
        return None
    b0 = figure_of(f, "better_improvement_pct_rank0")
    b1 = figure_of(f, "better_improvement_pct_rank1")
    if hidden >= 0:
        text = f"{hidden:.0f} % of a one-way message's time hidden behind computation"
    else:  # the two together took longer than one after the other
        text = (f"none of a one-way message's time hidden: computing beside it took "
                f"{-hidden:.0f} % of the message's time longer than one after the other")
    text += " (largest size)"
    if b0 is not None and b1 is not None:
        text += (f"; both ranks non-blocking: total time {opt_text(b0, '+.0f')} % / "
                 f"{opt_text(b1, '+.0f')} % (rank 0 / 1) against no overlap, below 0 when "
                 "overlap paid")
    return text


card_share = max_share("hidden_pct_largest")
