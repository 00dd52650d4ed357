"""The summary card: one short line per question a user brings (how fast are small
messages, where is the eager limit, does this MPI progress on its own, how much
computation can hide communication, what do queues cost, what does the profiler cost),
per run label (toolchain, or toolchain plus settings), side by side.

Every cell is built from the headline figures ("figures") of that label's analyses, so
the card shows only what the runs measured; a benchmark that was not run or gave no
number shows why instead, and so does an oversubscribed run (the run guard's verdict
decides before the item does; a disturbed run's cell is marked).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console

from ..core.formatting import DASH
from ..core.termsafe import Table
from ..run import run_guard
from ..run.rundir import Run, placement_label
from .card_item import CardItem, Figures
from .html import HtmlTable, Section

ANCHOR = "summary-card"


# The card's colours: a share of at least GOOD % hidden (or of the CPU free) is green, at
# least FAIR % amber, below it red. Round numbers, not a standard: the sentence gives the
# figure.
GOOD, FAIR = 70.0, 30.0


def grade(share: float | None) -> str | None:
    """"good", "fair" or "poor" for a share in %, None when there is none."""
    if share is None:
        return None
    return "good" if share >= GOOD else "fair" if share >= FAIR else "poor"


def max_share(*names: str, scale: float = 1.0) -> Callable[[dict[str, Any]], float | None]:
    """The largest of some figures (times scale), as a share for the colour."""
    def share(analysis: dict[str, Any]) -> float | None:
        figs = analysis_figures(analysis)
        values = [v * scale for v in (figure_of(figs, n) for n in names) if v is not None]
        return max(values) if values else None
    return share


def figure_of(figs: Figures, name: str) -> float | None:
    v = figs.get(name)
    return v if isinstance(v, (int, float)) else None


def figure_range(lo: float | None, hi: float | None, unit: str, spec: str = ".0f") -> str | None:
    if lo is None or hi is None:
        return None
    if f"{lo:{spec}}" == f"{hi:{spec}}":
        return f"{lo:{spec}} {unit}"
    return f"{lo:{spec}}–{hi:{spec}} {unit}"


def _figure_list(analysis: dict[str, Any]) -> list[dict[str, Any]]:
    """The analysis' headline figures (analysis/figures.py), the malformed left out."""
    return [f for f in analysis.get("figures") or [] if isinstance(f, dict) and "name" in f]


def figure_entry(analysis: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The whole figure (value, interval, pairs) of an analysis by name."""
    return next((f for f in _figure_list(analysis) if f["name"] == name), None)


def analysis_figures(analysis: dict[str, Any]) -> Figures:
    return {f["name"]: f.get("value") for f in _figure_list(analysis)}


def _figures(run: Run) -> Figures:
    return analysis_figures(run.analysis or {})


def _card_label(run: Run) -> str:
    """The column of a run: its label, or for one of several launches (--launches) the
    label the launches share, so that they fill one column (the last launch shows; the
    replication section gives the spread)."""
    tag = run.meta.get("replicate")
    if isinstance(tag, dict) and tag.get("label"):
        return placement_label(str(tag["label"]), run.meta.get("nodes"))
    return run.label


def _labels(runs: list[Run]) -> list[str]:
    labels: list[str] = []
    for run in runs:
        if _card_label(run) not in labels:
            labels.append(_card_label(run))
    return labels


def _cell_run(item: CardItem, runs: list[Run], label: str) -> Run | None:
    """The run a cell is built from: the column's last run of the item's benchmark."""
    mine = [r for r in runs if _card_label(r) == label and r.benchmark == item.benchmark]
    return mine[-1] if mine else None


def _cell(item: CardItem, runs: list[Run], label: str) -> str:
    """The cell's sentence. The run guard decides before the item does (run_guard.py, the
    one voice of every command): an oversubscribed run's cell says so and gives no
    figure, a disturbed run's figure is marked."""
    run = _cell_run(item, runs, label)
    if run is None:
        return "not run"
    if run_guard.withheld(run.meta):
        return "withheld: the run was oversubscribed (see its notice)"
    text = _measured_cell(item, run)
    if text is None:
        return DASH if run.status == "complete" else f"{run.status}: {_why_not(run)}"
    mark = run_guard.disturbed_note(run.meta)
    return f"{text} ({mark})" if mark else text


def _measured_cell(item: CardItem, run: Run) -> str | None:
    """The item's sentence from the run's analysis, None when it gave no number."""
    if not run.analysis:
        return None
    if item.from_analysis is not None:
        return item.from_analysis(run.analysis)
    return item.render(_figures(run)) if item.render is not None else None


def _why_not(run: Run, limit: int = 140) -> str:
    """The reason a run did not complete, as its program said it (the part after its
    "error: "), shortened for a cell; else where to look."""
    message = str(run.meta.get("message") or "")
    reason = message.rsplit("error: ", 1)[-1].strip() if "error: " in message else ""
    if not reason:
        return f"see {run.benchmark}"
    return reason if len(reason) <= limit else reason[:limit - 1].rstrip() + "…"


def card_rows(runs: list[Run], items: Sequence[CardItem]) -> list[tuple[str, ...]]:
    """One row per item (the benchmarks' lines in order: discovery.card_items, handed in:
    the kit does not look the benchmarks up): its label, then one cell per run label."""
    labels = _labels(runs)
    return [(item.label, *[_cell(item, runs, lab) for lab in labels]) for item in items]


def _cell_figures(item: CardItem, runs: list[Run], label: str) -> list[dict[str, Any]]:
    """The numbers behind a cell, for scripts: the headline figures (name, label, value,
    unit, kind) of the run the cell was built from; [] when it was not run."""
    run = _cell_run(item, runs, label)
    return [dict(f) for f in _figure_list(run.analysis or {})] if run else []


def _cell_grade(item: CardItem, runs: list[Run], label: str) -> str | None:
    """The cell's colour ("good", "fair", "poor"), or None: not graded, not run, or no
    share measured."""
    run = _cell_run(item, runs, label)
    if item.share is None or run is None or not run.analysis or run_guard.withheld(run.meta):
        return None
    return grade(item.share(run.analysis))


def card_json(runs: list[Run], items: Sequence[CardItem]) -> dict[str, Any]:
    """The card for report.json: per item its sentence per label ("cells") and the
    numbers it was built from ("figures", the same labels)."""
    labels = _labels(runs)
    return {"labels": labels,
            "items": [{"item": item.label, "benchmark": item.benchmark,
                       "cells": dict(zip(labels, row[1:], strict=True)),
                       "grades": {lab: _cell_grade(item, runs, lab) for lab in labels},
                       "figures": {lab: _cell_figures(item, runs, lab) for lab in labels}}
                      for item, row in zip(items, card_rows(runs, items), strict=True)]}


def card_section(runs: list[Run], items: Sequence[CardItem]) -> Section:
    labels = _labels(runs)
    rows = card_rows(runs, items)
    intro = ("What this MPI overlaps and what it costs, from this run's measurements; "
             "details, method and uncertainty in the sections below.")
    if len(labels) > 1:
        intro += (" Columns compare the toolchains (and settings, and placements: ranks on "
                  "one node or spread over several) side by side.")
    if any(r.meta.get("replicate") for r in runs):
        intro += (" Of several launches the card shows the last; the replication sections "
                  "give every launch and the spread between them.")
    intro += (f" Colours: green when at least {GOOD:.0f} % of the time was hidden (or the "
              f"CPU free), amber from {FAIR:.0f} %, red below; costs and facts are not "
              "coloured.")
    css = [("left", *[f"left grade-{_cell_grade(item, runs, lab) or 'none'}"
                      for lab in labels]) for item in items]
    return Section("Summary card", intro, [], [HtmlTable(
        "Summary card", ("", *labels), rows, css)], anchor=ANCHOR)


def print_card(runs: list[Run], items: Sequence[CardItem], console: Console) -> None:
    t = Table(title="Summary card", title_justify="left", header_style="bold", show_lines=True)
    t.add_column("")
    for label in _labels(runs):
        t.add_column(label)
    for row in card_rows(runs, items):
        t.add_row(*row)
    console.print(t)
