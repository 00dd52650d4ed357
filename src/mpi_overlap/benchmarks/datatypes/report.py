"""Datatypes and alignment benchmarks in the report: one table per run (time, slowdown
against the baseline with its CI, per-byte cost, receiver validation per case and size),
a figure per run (datatypes: slowdown vs size per case; alignment: time vs offset per
size), and the finding. Every number comes from analysis.json."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num, fmt_range, fmt_s_as_us
from ...core.values import num
from ...report.html import Figure, Section
from ...report.run_table import RunTable, no_notes
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, axhline, errorbar, plot
from ...run.rundir import Run

BENCHMARKS = ("datatypes", "alignment")
HEADERS = ("size", "case", "payload B", "one-way µs", "vs baseline", "95 % CI", "ns/B", "data")


def _sizes(run: Run) -> list[dict[str, Any]]:
    return (run.analysis or {}).get("sizes") or []


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for s in _sizes(run):
        for c in s["cases"]:
            t = num(c.get("one_way_s"))
            lo, hi = num(c.get("slowdown_ci_low")), num(c.get("slowdown_ci_high"))
            out.append(
                (
                    str(s.get("bytes")),
                    str(c.get("case")),
                    str(c.get("payload_bytes")),
                    fmt_s_as_us(t, ".2f"),
                    fmt_num(num(c.get("slowdown")), ".2f"),
                    fmt_range(lo, hi, ".2f"),
                    fmt_num(num(c.get("ns_per_byte")), ".3f"),
                    "ok" if c.get("valid") else "WRONG",
                )
            )
    return out


def _title(run: Run) -> str:
    base = "offset 0" if run.benchmark == "alignment" else "contiguous"
    return f"one-way time; slowdown vs {base} (side by side)"


TABLE = RunTable(_title, "per case and size", HEADERS, rows, (1, 7), no_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    for run in runs:
        if run.analysis:
            console.print(f"{run.label} ({run.benchmark}): {run.analysis.get('finding')}",
                          highlight=False, markup=False)


def figure(run: Run) -> Chart | None:
    sizes = _sizes(run)
    if not sizes:
        return None
    ax = axes(title=f"{run.label} — {run.benchmark}", xscale="log", yscale="log",
              label_size=10, legend_size=7)
    ax.title_size = 12
    series = 0  # each series the next colour of the cycle, as matplotlib's
    if run.benchmark == "alignment":
        for s in sizes:
            for kind, marker in (("vector_int", "o"), ("contig", "s")):
                pts = [
                    (c["offset"], num(c["one_way_s"]))
                    for c in s["cases"]
                    if c["kind"] == kind and num(c["one_way_s"]) is not None
                ]
                if pts:
                    xs = [p[0] + 1 for p in pts]  # log x: offset 0 drawn at 1
                    plot(ax, xs, [p[1] * 1e6 for p in pts], "-" + marker, series,
                         label=f"{kind}, {s['bytes']} B")
                    series += 1
        ax.xlabel = "buffer offset + 1 (bytes from a page boundary)"
        ax.ylabel = "one-way time (µs)"
    else:
        kinds: dict[str, list[tuple[int, float, float, float]]] = {}
        for s in sizes:
            for c in s["cases"]:
                r = num(c.get("slowdown"))
                if c["kind"] == "contig" or r is None:
                    continue
                lo = num(c.get("slowdown_ci_low")) or r
                hi = num(c.get("slowdown_ci_high")) or r
                kinds.setdefault(c["case"], []).append((s["bytes"], r, lo, hi))
        for name, pts in kinds.items():
            xs = [p[0] for p in pts]
            errorbar(ax, xs, [p[1] for p in pts], [p[1] - p[2] for p in pts],
                     [p[3] - p[1] for p in pts], "-o", series, capsize=2, label=name)
            series += 1
        axhline(ax, 1.0, "0.5", lw=1, ls="--")
        ax.xbase = 2.0
        ax.xlabel = "payload (bytes)"
        ax.ylabel = "time / contiguous time"
    fit_axes(ax, size=10)
    return Chart((7, 4), [ax])


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    for run in runs:
        if run.benchmark not in BENCHMARKS:
            continue
        figs = []
        fig = figure(run)
        if fig is not None:
            caption = (
                "One-way time against the buffers' offset from a page boundary, per case and size."
                if run.benchmark == "alignment"
                else "Median time of each case divided by the contiguous send of the same size, "
                "measured side by side; bars: 95 % bootstrap CI of the ratio of medians."
            )
            figs.append(Figure(fig.svg(), caption))
        tables = TABLE.html([run]) if rows(run) else []
        title = "Buffer alignment" if run.benchmark == "alignment" else "Derived datatypes"
        sections.append(Section(f"{title} — {run.label}", _finding(run), figs, tables))
    return sections


def _finding(run: Run) -> str | None:
    return (run.analysis or {}).get("finding")


def summary(run: Run) -> list[str]:
    a = run.analysis
    if a is None:
        return ["No analysis: slowdowns are not available for this run."]
    out = [f"Finding: {a.get('finding')}."]
    out.append(
        "Receivers found every payload correct."
        if a.get("all_valid")
        else "A receiver found WRONG data in at least one case (see the table)."
    )
    if run.benchmark == "datatypes":
        out.append(
            "MPI_Pack and the loop packed the same bytes (checksums match)."
            if a.get("checksums_match")
            else "MPI_Pack and the loop packed DIFFERENT bytes."
        )
    return out


def extent(run: Run) -> str | None:
    return f"{len(_sizes(run))} sizes measured"


def to_json(run: Run) -> dict[str, Any]:
    return dict(run.analysis or {})
