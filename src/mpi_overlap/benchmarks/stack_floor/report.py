"""stack-floor report: MPI latency against the core-to-core floor, the stack's added time
with its largest step marked, and the cost of requests (blocking vs non-blocking).

One figure (two panels: latency vs size, log-log, with the floors; the added time with the
jump) and one request-overhead figure for all runs; per run a table and the findings.
The figure is also written as stack-floor.svg beside each run's report.
"""

from __future__ import annotations

import contextlib
from typing import Any

from rich.console import Console
from rich.text import Text

from ...core.file_output import WriteError, write_text
from ...core.formatting import DASH, fmt_s_as_us
from ...core.sizes import format_size
from ...report.html import Figure, Section
from ...report.run_table import RunTable, no_notes, print_findings
from ...report.summary_card import analysis_figures, figure_of
from ...report.svg_chart import Chart, Label, Panel, Ticks, fit_axes, size_positions
from ...report.svg_plot import axes, axhline, axvspan, errorbar, plot
from ...report.svg_plot import colour as svg_colour
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


def _ticks(sizes: list[int]) -> Ticks:
    pos = size_positions(sizes)
    step = max(1, len(sizes) // 10)
    shown = sizes[::step]
    return Ticks([pos[s] for s in shown], [format_size(s).replace(" ", "") for s in shown],
                 size=7, rotation=45)


def _size_axes(ax: Panel, sizes: list[int], **kw: Any) -> None:
    """Limits around the data, the sizes' own ticks (log2 positions) under them."""
    fit_axes(ax, size=10, **kw)
    ax.xticks = _ticks(sizes)


def latency_figure(runs: list[Run]) -> Chart | None:
    # only runs with a floor measured at some size (a run refused across nodes has none)
    comp = [r for r in _runs(runs)
            if any(s["floor"]["median_s"] is not None for s in r.analysis.get("sizes") or [])]
    if not comp:
        return None
    ax1 = axes("message size (0 B drawn left of the smallest)", "one-way time (µs)",
               "latency against the floors; shaded: protocol switch", yscale="log",
               label_size=10, legend_size=7)
    ax2 = axes("message size (0 B drawn left of the smallest)", "added time per message (µs)",
               "MPI stack's added time; shaded: largest step", yscale="log", label_size=10,
               legend_size=7)
    all_sizes: set[int] = set()
    for k, run in enumerate(comp):
        sizes = [s for s in run.analysis["sizes"] if s["floor"]["median_s"] is not None]
        if not sizes:
            continue
        all_sizes |= {s["bytes"] for s in sizes}
        x, pos = _x(sizes)
        color = f"C{k}"
        plot(ax1, x, [s["mpi_blocking"]["median_s"] * 1e6 for s in sizes], "-o", color, ms=3,
             label=f"{run.label}: MPI")
        plot(ax1, x, [s["shm"]["median_s"] * 1e6 for s in sizes], "--", color,
             label=f"{run.label}: "
                   + ("TCP floor" if run.analysis.get("floor_path") == "tcp" else "shm floor"))
        plot(ax1, x, [s["memcpy"]["median_s"] * 1e6 for s in sizes], ":", color,
             label=f"{run.label}: memcpy floor")
        added = [max(s["added"]["median_s"], 1e-10) * 1e6 for s in sizes]
        plot(ax2, x, added, "-o", color, ms=3, label=f"{run.label}: MPI − floor")
        switch = run.analysis.get("switch") or {}
        if switch.get("found"):
            axvspan(ax1, pos[switch["below_bytes"]], pos[switch["above_bytes"]], color, 0.15)
        jump = run.analysis.get("jump")
        if jump:
            xa, xb = pos[jump["below_bytes"]], pos[jump["above_bytes"]]
            axvspan(ax2, xa, xb, color, 0.15)
            top = max(jump["added_above_s"], 1e-10) * 1e6
            ax2.labels.append(Label((xa + xb) / 2, top, f"{jump['ratio']:.2g}×", 8.0,
                                    svg_colour(color)))
    for ax in (ax1, ax2):
        ax.title_size, ax.grid = 9, "both"
        _size_axes(ax, sorted(all_sizes))
    return Chart((10, 4.2), [ax1, ax2], cols=2)


def request_figure(runs: list[Run]) -> Chart | None:
    comp = _runs(runs)
    if not comp:
        return None
    ax = axes("message size", "non-blocking − blocking (µs/msg)", label_size=10,
              legend_size=7)
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
        errorbar(ax, x, med, lo, hi, "-o", f"C{k}", ms=3, capsize=2, label=run.label)
    axhline(ax, 0.0, "0.5", lw=0.8)
    ax.grid = "both"
    _size_axes(ax, sorted(all_sizes))
    return Chart((6.5, 3.6), [ax])


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    fig = latency_figure(runs)
    if fig is not None:
        svg = fig.svg()
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
            figures.append(Figure(rfig.svg(),
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
