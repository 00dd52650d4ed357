"""stack-floor report: MPI latency against the core-to-core floor, the stack's added time
with its largest step marked, and the cost of requests (blocking vs non-blocking).

One figure (two panels: latency vs size, log-log, with the floors; the added time with the
jump) and one request-overhead figure for all runs; per run a table and the findings.
The figure is also written as stack-floor.svg beside each run's report.
"""

from __future__ import annotations

import contextlib
from typing import Any

from matplotlib.figure import Figure as MplFigure
from rich.console import Console
from rich.text import Text

from ...core.file_output import WriteError, write_text
from ...core.formatting import DASH, fmt_s_as_us
from ...core.sizes import format_size
from ...report.html import Figure, Section
from ...report.run_table import RunTable, no_notes, print_findings
from ...report.summary_card import analysis_figures, figure_of
from ...report.svg import to_svg
from ...report.svg_chart import size_positions
from ...run.rundir import Run
from .analysis import floor_name

BENCHMARK = "stack-floor"
PLOT_FILE = "stack-floor.svg"
# The request-overhead plot shows the small sizes (the source's experiment): above them
# the difference is a small number on top of a large, noisy latency.
REQUEST_PLOT_MAX = 65536
HEADERS = ("size", "MPI one-way µs", "MPI p99 µs", "floor µs", "floor from", "shm µs",
           "memcpy µs", "added µs [95 % CI]", "non-blocking − blocking µs [95 % CI]")


def _runs(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.benchmark == BENCHMARK and r.analysis is not None]


def _ci(e: dict[str, Any]) -> str:
    if e.get("median_s") is None:
        return DASH
    med, lo, hi = (fmt_s_as_us(e[k], ".3f") for k in ("median_s", "ci95_low_s", "ci95_high_s"))
    return f"{med} [{lo}, {hi}]"


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for s in (run.analysis or {}).get("sizes", []):
        blocking, p99, floor, shm, memcpy = (fmt_s_as_us(t, ".3f") for t in (
            s["mpi_blocking"]["median_s"], s.get("mpi_blocking_p99_s"), s["floor"]["median_s"],
            s["shm"]["median_s"], s["memcpy"]["median_s"]))
        out.append((format_size(s["bytes"]), blocking, p99, floor, s["floor_kind"], shm, memcpy,
                    _ci(s["added"]), _ci(s["request_overhead"])))
    return out


def _lower(run: Run) -> str:
    low = (run.analysis or {}).get("lower_layer") or {}
    return f"Layer below MPI: {low.get('status')} ({low.get('detail')})."


def _checks(run: Run) -> list[str]:
    return [f"{'ok' if c['ok'] else 'FAILED'}: {c['name']} ({c['detail']})"
            for c in (run.analysis or {}).get("checks", [])]


# The summary sentences follow the table in the terminal; the page has the checks and the
# layer below MPI under it.
TABLE = RunTable("MPI stack against the floor (one way)", "one-way times per size", HEADERS,
                 rows, (0, 4), no_notes, html_notes=lambda run: [*_checks(run), _lower(run)])


def print_run(run: Run, console: Console) -> None:
    if run.analysis is None:
        console.print(Text("  no analysis.json: figures not available", style="yellow"))
        return
    TABLE.print(run, console)
    for line in summary(run):
        console.print(line, highlight=False, markup=False)


def print_comparison(runs: list[Run], console: Console) -> None:
    comp = _runs(runs)
    if len(comp) < 2:
        return
    print_findings("Stack floor — comparison",
                   [(run.label, str((run.analysis or {}).get("finding"))) for run in comp],
                   console)


def _x(sizes: list[dict[str, Any]]) -> tuple[list[float], dict[int, float]]:
    pos = size_positions([s["bytes"] for s in sizes])
    return [pos[s["bytes"]] for s in sizes], pos


def _ticks(ax: Any, sizes: list[int]) -> None:
    pos = size_positions(sizes)
    step = max(1, len(sizes) // 10)
    shown = sizes[::step]
    ax.set_xticks([pos[s] for s in shown])
    ax.set_xticklabels([format_size(s).replace(" ", "") for s in shown], rotation=45, fontsize=7)


def latency_figure(runs: list[Run]) -> MplFigure | None:
    # only runs with a floor measured at some size (a run refused across nodes has none)
    comp = [r for r in _runs(runs)
            if any(s["floor"]["median_s"] is not None for s in r.analysis.get("sizes") or [])]
    if not comp:
        return None
    fig = MplFigure(figsize=(10, 4.2), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    all_sizes: set[int] = set()
    for k, run in enumerate(comp):
        sizes = [s for s in run.analysis["sizes"] if s["floor"]["median_s"] is not None]
        if not sizes:
            continue
        all_sizes |= {s["bytes"] for s in sizes}
        x, pos = _x(sizes)
        color = f"C{k}"
        ax1.plot(x, [s["mpi_blocking"]["median_s"] * 1e6 for s in sizes], "-o", color=color,
                 ms=3, label=f"{run.label}: MPI")
        ax1.plot(x, [s["shm"]["median_s"] * 1e6 for s in sizes], "--", color=color,
                 label=f"{run.label}: "
                       + ("TCP floor" if run.analysis.get("floor_path") == "tcp" else "shm floor"))
        ax1.plot(x, [s["memcpy"]["median_s"] * 1e6 for s in sizes], ":", color=color,
                 label=f"{run.label}: memcpy floor")
        added = [max(s["added"]["median_s"], 1e-10) * 1e6 for s in sizes]
        ax2.plot(x, added, "-o", color=color, ms=3, label=f"{run.label}: MPI − floor")
        switch = run.analysis.get("switch") or {}
        if switch.get("found"):
            ax1.axvspan(pos[switch["below_bytes"]], pos[switch["above_bytes"]], color=color,
                        alpha=0.15)
        jump = run.analysis.get("jump")
        if jump:
            xa, xb = pos[jump["below_bytes"]], pos[jump["above_bytes"]]
            ax2.axvspan(xa, xb, color=color, alpha=0.15)
            top = max(jump["added_above_s"], 1e-10) * 1e6
            ax2.annotate(f"{jump['ratio']:.2g}×", ((xa + xb) / 2, top),
                         fontsize=8, ha="center", va="bottom", color=color)
    for ax in (ax1, ax2):
        ax.set_yscale("log")
        _ticks(ax, sorted(all_sizes))
        ax.set_xlabel("message size (0 B drawn left of the smallest)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    ax1.set_ylabel("one-way time (µs)")
    ax1.set_title("latency against the floors; shaded: protocol switch", fontsize=9)
    ax2.set_ylabel("added time per message (µs)")
    ax2.set_title("MPI stack's added time; shaded: largest step", fontsize=9)
    return fig


def request_figure(runs: list[Run]) -> MplFigure | None:
    comp = _runs(runs)
    if not comp:
        return None
    fig = MplFigure(figsize=(6.5, 3.6), layout="constrained")
    ax = fig.subplots()
    all_sizes: set[int] = set()
    for k, run in enumerate(comp):
        sizes = [s for s in run.analysis["sizes"] if s["request_overhead"]["median_s"] is not None
                 and s["bytes"] <= REQUEST_PLOT_MAX]
        all_sizes |= {s["bytes"] for s in sizes}
        x, _ = _x(sizes)
        med = [s["request_overhead"]["median_s"] * 1e6 for s in sizes]
        lo = [m - s["request_overhead"]["ci95_low_s"] * 1e6
              for m, s in zip(med, sizes, strict=True)]
        hi = [s["request_overhead"]["ci95_high_s"] * 1e6 - m
              for m, s in zip(med, sizes, strict=True)]
        ax.errorbar(x, med, yerr=[lo, hi], fmt="-o", ms=3, capsize=2, color=f"C{k}",
                    label=run.label)
    ax.axhline(0.0, color="0.5", lw=0.8)
    _ticks(ax, sorted(all_sizes))
    ax.set_ylabel("non-blocking − blocking (µs/msg)")
    ax.set_xlabel("message size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return fig


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    fig = latency_figure(runs)
    if fig is not None:
        svg = to_svg(fig, "stack-floor")
        for run in _runs(runs):
            with contextlib.suppress(WriteError):
                write_text(run.path / PLOT_FILE, svg)
        figures = [Figure(svg, "Left: median one-way time of the MPI ping-pong (Send/Recv), of a "
                               "ping-pong through one shared segment with atomic flags (no MPI "
                               "calls), and of a single-core memcpy. Right: MPI minus the floor "
                               "(the cheaper of the shm ping-pong and one cache-line hand-off "
                               "plus one memcpy), per sample, median; the shaded interval is "
                               "the largest step between neighbouring sizes.")]
        rfig = request_figure(runs)
        if rfig is not None:
            figures.append(Figure(to_svg(rfig, "stack-floor-req"),
                                  "Request overhead up to 64 KiB (the table has all "
                                  "sizes): Isend/Irecv/Waitall ping-pong minus Send/Recv "
                                  "ping-pong, paired samples, median and bootstrap 95 % "
                                  "interval."))
        sections.append(Section("MPI stack against the floor; request overhead", None, figures))
    for run in _runs(runs):
        sections.append(Section(f"Stack floor — {run.label}", " ".join(summary(run)),
                                tables=TABLE.html([run])))
    return sections


def summary(run: Run) -> list[str]:
    if run.analysis is None:
        return ["No analysis: the stack-floor figures are not available for this run."]
    a = run.analysis
    out = [f"{a['finding']}.", f"{a['request_finding'][0].upper()}{a['request_finding'][1:]}.",
           _lower(run)]
    failed = [c["name"] for c in a.get("checks", []) if not c["ok"]]
    if failed:
        out.append(f"Consistency checks failed: {'; '.join(failed)}.")
    return out


def extent(run: Run) -> str | None:
    res = (run.result or {}).get("results") or {}
    asked = ((run.result or {}).get("options") or {}).get("sizes")
    n = len(res.get("sizes") or [])
    return f"{n} sizes measured" + (f" of {asked}" if asked else "")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {k: a.get(k) for k in ("finding", "request_finding", "jump", "switch",
                                  "reported_switch", "switch_agrees", "lower_layer", "checks",
                                  "sizes")}


# ---- the summary card (spec.CardLine in __init__.py)

def card_from_analysis(analysis: dict[str, Any]) -> str | None:
    f = analysis_figures(analysis)
    v = figure_of(f, "latency_small_us")
    added = figure_of(f, "added_small_us")
    if v is None:
        return None
    return f"{v:.2f} µs" + (f" ({added:.2f} µs above the {floor_name(analysis)})"
                            if added is not None else "")
