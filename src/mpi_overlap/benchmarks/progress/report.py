"""Progress benchmark: the report's table, figure, sentences and JSON, from analysis.json
(analysis.py here): per size and ordering, did the data arrive without MPI calls?"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import DASH, fmt_num
from ...core.sizes import format_size
from ...report.html import Section
from ...report.run_table import (
    RunTable,
    compared,
    comparison_table,
    planned_extent,
    summary_or_missing,
)
from ...report.sections import benchmark_section, figure_of_all
from ...report.summary_card import max_share
from ...report.svg_chart import Chart, fit_axes
from ...report.svg_plot import axes, blend, plot
from ...run.rundir import Run

BENCHMARK = "progress"
CASES = (("receiver-first", "computes"), ("sender-first", "computes"),
         ("receiver-first", "waits"), ("sender-first", "waits"))
HEADERS = ("size", "one-way µs", "budget µs",
           *(f"{o}, sender {s}" for o, s in CASES), "slowdown %")


def points(run: Run) -> list[dict[str, Any]]:
    return [p for p in (run.analysis or {}).get("points") or [] if isinstance(p, dict)]


def _case(pt: dict[str, Any], ordering: str, sender: str) -> dict[str, Any]:
    return next((c for c in pt.get("cases") or []
                 if c.get("ordering") == ordering and c.get("sender") == sender), {})


def _cell(c: dict[str, Any]) -> str:
    if not c:
        return DASH
    v = str(c.get("verdict"))
    if c.get("arrival_us") is not None:
        return f"{v} {c['arrived_samples']}/{c['n']}, {c['arrival_us']:.0f} µs"
    return f"{v} {c.get('arrived_samples', 0)}/{c.get('n', 0)}"


def rows(run: Run) -> list[tuple[str, ...]]:
    out = []
    for pt in points(run):
        rf = _case(pt, "receiver-first", "computes")
        out.append((
            format_size(pt["size"]),
            fmt_num(pt.get("transfer_us"), ".1f"),
            fmt_num(pt.get("budget_us"), ".0f"),
            *(_cell(_case(pt, o, s)) for o, s in CASES),
            fmt_num(rf.get("compute_slowdown_pct"), "+.1f"),
        ))
    return out


def _notes(run: Run) -> list[str]:
    a = run.analysis or {}
    notes = [str(a.get("finding"))]
    if a.get("explanation"):
        notes.append(f"Why: {a['explanation']}")
    return notes


TABLE = RunTable("data in the receive buffer before MPI_Wait, no MPI calls (verdict, "
                 "samples with all data, median arrival after posting)",
                 "progress without MPI calls", HEADERS, rows, notes=_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = compared(runs, BENCHMARK)
    if not runs:
        return
    t = comparison_table("Progress — comparison (sender computing: verdict, median arrival)",
                         runs, ("size", "ordering"))
    sizes = sorted({p["size"] for r in runs for p in points(r)})
    for size in sizes:
        for ordering in ("receiver-first", "sender-first"):
            cells = [format_size(size), ordering]
            for r in runs:
                pt = next((p for p in points(r) if p["size"] == size), None)
                cells.append(_cell(_case(pt, ordering, "computes")) if pt else DASH)
            t.add_row(*cells)
    setting = ["setting", ""] + [str((r.analysis.get("async_progress") or {}).get("setting"))
                                 for r in runs]
    t.add_row(*setting)
    console.print(t)


def figure(runs: list[Run]) -> Chart | None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and points(r)]
    if not runs:
        return None
    ax_share, ax_time = (axes("message size (bytes)", xscale="log", xbase=2.0)
                         for _ in range(2))
    styles = {CASES[0]: "-o", CASES[1]: "--s", CASES[2]: ":^", CASES[3]: "-.v"}
    for i, run in enumerate(runs):
        pts = points(run)
        sizes = [p["size"] for p in pts]
        for key in CASES:
            cs = [_case(p, *key) for p in pts]
            label = f"{key[0]}, sender {key[1]}"
            if len(runs) > 1:
                label = f"{run.label} {label}"
            plot(ax_share, sizes, [100 * c.get("arrived_share", 0) for c in cs], styles[key],
                 f"C{i}", ms=3, label=label)
            xy = [(s, c["arrival_us"]) for s, c in zip(sizes, cs, strict=True)
                  if c.get("arrival_us") is not None]
            if xy:
                plot(ax_time, [x for x, _ in xy], [y for _, y in xy], styles[key], f"C{i}",
                     ms=3)
        plot(ax_time, sizes, [p["budget_us"] for p in pts], "-", blend(f"C{i}", 0.5), lw=0.8,
             label="budget" if i == 0 else None)
        plot(ax_time, sizes, [p["transfer_us"] for p in pts], ":", blend(f"C{i}", 0.7), lw=0.8,
             label="one-way ping-pong" if i == 0 else None)
    ax_share.ylabel = "samples with all data before MPI_Wait (%)"
    ax_time.yscale = "log"
    ax_time.ylabel = "arrival after posting (µs, median)"
    fit_axes(ax_share, ylim=(-5.0, 105.0), size=7)
    fit_axes(ax_time, size=7)
    return Chart((8.0, 3.4), [ax_share, ax_time], cols=2)


FIGURES = figure_of_all(
    figure,
    "Left: share of samples in which every watched byte of the receive "
    "buffer held the payload before MPI_Wait, while the receiver "
    "computed without MPI calls. Right: median time after posting "
    "MPI_Irecv at which it did, against the computation budget and "
    "the one-way ping-pong time.",
)


def html_sections(runs: list[Run]) -> list[Section]:
    return benchmark_section("Asynchronous progress (data arrival without MPI calls)",
                             runs, BENCHMARK, FIGURES, TABLE.html)


def summary(run: Run) -> list[str]:
    return summary_or_missing(run, "the progress verdicts are", _notes)


def extent(run: Run) -> str | None:
    return planned_extent(run, "sizes")


def to_json(run: Run) -> dict[str, Any]:
    a = run.analysis or {}
    return {k: a.get(k) for k in ("finding", "explanation", "verdict_ranges", "async_progress",
                                  "figures")}


# ---- the summary card (spec.CardLine in __init__.py)

def card_from_analysis(a: dict[str, Any]) -> str | None:
    ranges = a.get("verdict_ranges") or {}
    if not ranges:
        return None
    text = "; ".join(f"{order}: {text}" for order, text in ranges.items())
    setting = (a.get("async_progress") or {}).get("setting")
    return f"{text} ({setting})" if setting else text


card_share = max_share("arrived_large_receiver_first_pct", "arrived_large_sender_first_pct",
                       "arrived_small_receiver_first_pct")
