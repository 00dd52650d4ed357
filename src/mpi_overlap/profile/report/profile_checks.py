"""Profile runs: the checks on the bounds, as tables (terminal and HTML) and one figure.

The analysis's `checks` block (profile/analysis/profile_checks.py; docs/method.md, "Checks on the
bounds") shown together: both checks side by side (in-call transfers longer than their
call, across-call transfers longer than post → completion), per rank with the transfer
time beyond what the wall clock allows, and the flagged transfers per MPI function and
per size bin with the share of that entry's transfer time they carry. The terminal view
is the profile's tables followed by these; report.html gets a section of its own, after
the overlap tables. Grids come from profile_table, so both outputs show the same cells.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console

from ...core.formatting import fmt_pct_cell, fmt_time
from ...report.html import Figure, Section
from ...report.svg_chart import Bar, Chart, Key, Label, Panel
from ...run.rundir import Run
from ..analysis.profile_values import rank_list, ranks_text
from . import profile_table
from .profile_grid import Grid, fint, top_rows
from .profile_plots import bin_ticks, pct_ticks
from .profile_table import analysis_of, html_table, is_profile, print_grid

TERMINAL_ROWS = 10  # rows of each breakdown in the terminal; report.html lists all
CHECK_TITLE = {
    "in-call": "in-call: longer than the call that held it",
    "across-calls": "across calls: longer than post → completion",
}
IN_CALL_COLOUR = "#b42318"
ACROSS_COLOUR = "#f79009"
MEANING = (
    "A transfer is flagged when the table's transfer time does not fit the interval its "
    "events give it: an in-call transfer longer than the call that held it, an across-call "
    "transfer longer than the time from its post to its completion. A correct table never "
    "flags a transfer that lies inside that interval; a flagged one means the table "
    "overstates it, or its data moved outside the call (an eager message that arrived "
    "while the receiver computed, or left after a send returned), and its bounds are not "
    "trustworthy. Beyond the wall clock: per call, its longest in-call transfer minus the "
    "call's time, plus each flagged across-call transfer's excess (transfers of one call "
    "may run at once, so they are not summed)."
)


def _checks(a: dict[str, Any]) -> dict[str, Any] | None:
    checks = a.get("checks")
    return checks if isinstance(checks, dict) and checks.get("available") else None


# ---------------------------------------------------------------- grids


def summary_grid(c: dict[str, Any], label: str, *, explain: bool) -> Grid:
    total = c["xfer_s"]
    rows = []
    for key, part, beyond in (
        ("in-call", c["in_call"], c["in_call"]["beyond_s"]),
        ("across-calls", c["across_calls"], c["across_calls"]["excess_s"]),
    ):
        rows.append(
            (
                CHECK_TITLE[key],
                fint(part["transfers"]),
                fmt_time(part["xfer_s"]),
                fint(part["flagged_transfers"]),
                fmt_time(part["flagged_xfer_s"]),
                fmt_pct_cell(100.0 * part["flagged_xfer_s"] / total if total > 0 else None),
                fmt_time(part["excess_s"]),
                fmt_time(beyond),
            )
        )
    rows.append(
        (
            "both",
            fint(c["in_call"]["transfers"] + c["across_calls"]["transfers"]),
            fmt_time(c["in_call"]["xfer_s"] + c["across_calls"]["xfer_s"]),
            fint(c["flagged_transfers"]),
            fmt_time(c["flagged_xfer_s"]),
            fmt_pct_cell(c["flagged_pct"]),
            fmt_time(c["in_call"]["excess_s"] + c["across_calls"]["excess_s"]),
            fmt_time(c["beyond_s"]),
        )
    )
    notes = [MEANING] if explain else []
    if not c["flagged_transfers"]:
        notes.append("No transfer was flagged: every table time fits its interval.")
    elif c["flagged"]:
        notes.append(
            f"Flagged transfers carry more than {c['threshold_pct']:g} % of the job's "
            "transfer time: the findings say so."
        )
    if c["in_call"]["unchecked"]:
        notes.append(
            f"{c['in_call']['unchecked']:,} in-call transfers were not judged (the program "
            "ended inside their call)."
        )
    if c["ranks_without"]:
        notes.append(
            f"Ranks {rank_list(c['ranks_without'])} wrote profiles without checks (an older "
            "profiler)."
        )
    return Grid(
        f"{label} — checks on the bounds",
        (
            "check",
            "judged",
            "transfer time",
            "flagged",
            "flagged time",
            "% of the job's transfer time",
            "excess",
            "beyond wall clock",
        ),
        rows,
        note=" ".join(notes) or None,
    )


# Columns of the per-rank and breakdown grids: header, field, format.
Column = tuple[str, str, Callable[[Any], str]]
RANK_COLUMNS: tuple[Column, ...] = (
    ("rank", "rank", str),
    ("transfer time", "xfer_s", fmt_time),
    ("MPI call time", "call_s", fmt_time),
    ("in-call transfer time", "in_call_xfer_s", fmt_time),
    ("calls holding them", "in_call_calls", fint),
    ("their time", "in_call_call_s", fmt_time),
    ("longest per call, summed", "in_call_longest_s", fmt_time),
    ("calls shorter than their longest", "in_call_calls_beyond", fint),
    ("flagged", "flagged_transfers", fint),
    ("flagged % of transfer time", "flagged_pct", fmt_pct_cell),
    ("beyond wall clock", "beyond_s", fmt_time),
)
CELL_COLUMNS: tuple[Column, ...] = (
    ("check", "check", str),
    ("flagged", "transfers", fint),
    ("flagged time", "xfer_s", fmt_time),
    ("% of its transfer time", "pct", fmt_pct_cell),
    ("excess", "excess_s", fmt_time),
    ("ranks", "ranks_text", str),
)


def _table(entries: list[dict[str, Any]], columns: tuple[Column, ...]) -> list[tuple[str, ...]]:
    return [tuple(fmt(e[key]) for _, key, fmt in columns) for e in entries]


def rank_grid(c: dict[str, Any], label: str, limit: int | None) -> Grid:
    ranks = list(c["ranks"])
    note = (
        "in-call transfers of one call may run at once (MPI_Sendrecv): only each call's "
        "longest must fit the call"
    )
    if limit is not None and len(ranks) > limit:
        ranks = sorted(ranks, key=lambda r: (-r["beyond_s"], -r["flagged_xfer_s"], r["rank"]))
        ranks = sorted(ranks[:limit], key=lambda r: r["rank"])
        note = f"the {limit} ranks furthest beyond the wall clock; report.html lists all"
    return Grid(
        f"{label} — checks on the bounds per rank",
        tuple(h for h, _, _ in RANK_COLUMNS),
        _table(ranks, RANK_COLUMNS),
        note=note,
    )


def breakdown_grid(c: dict[str, Any], label: str, key: str, limit: int | None) -> Grid:
    """Flagged transfers per posting function (key "functions") or size bin ("bins")."""
    entries = [{**e, "ranks_text": ranks_text(e["ranks"], e.get("ranks_count"))}
               for e in c["by_function" if key == "functions" else "by_bin"]]
    entries, note = top_rows(entries, limit)
    first: Column = ("function", "fn", str) if key == "functions" else ("size", "label", str)
    columns = (first, *CELL_COLUMNS)
    rows = _table(entries, columns)
    what = "MPI function (posting)" if key == "functions" else "size"
    return Grid(
        f"{label} — flagged transfers by {what}",
        tuple(h for h, _, _ in columns),
        rows,
        left=(0, 1, len(columns) - 1),
        note=note or (None if rows else "none flagged"),
    )


def check_grids(a: dict[str, Any], label: str, *, terminal: bool) -> list[Grid]:
    """The grids of the checks; only the summary when nothing was flagged."""
    c = _checks(a)
    if c is None:
        return []
    grids = [summary_grid(c, label, explain=terminal)]
    if not c["flagged_transfers"]:
        return grids
    limit = TERMINAL_ROWS if terminal else None
    grids.append(rank_grid(c, label, limit))
    grids += [breakdown_grid(c, label, key, limit) for key in ("functions", "bins")]
    return grids


# ---------------------------------------------------------------- the figure


def bins_figure(a: dict[str, Any]) -> Chart | None:
    """Per size bin: the share of its transfer time that each check flagged (stacked)."""
    c = _checks(a)
    if c is None or not c["by_bin"]:
        return None
    bins = sorted({(e["lo"], e["hi"], e["label"]) for e in c["by_bin"]}, key=lambda b: b[0])
    xticks = bin_ticks([b[2] for b in bins])
    xs = xticks.at
    ax = Panel(xlim=(-0.6, len(bins) - 0.4), ylim=(0.0, 110.0), grid="y", yticks=pct_ticks(),
               ylabel="% of the bin's transfer time", xlabel="message size (bin)",
               xticks=xticks, title="Transfers flagged by the checks on the bounds")
    bottom = [0.0] * len(bins)
    flagged = [0.0] * len(bins)
    for check, colour in (("in-call", IN_CALL_COLOUR), ("across-calls", ACROSS_COLOUR)):
        cells = {(e["lo"], e["hi"]): e for e in c["by_bin"] if e["check"] == check}
        for i, b in enumerate(bins):
            share = cells.get(b[:2], {}).get("pct") or 0.0
            flagged[i] += cells.get(b[:2], {}).get("xfer_s", 0.0)
            ax.bars.append(Bar(xs[i], share, 0.6, colour, base=bottom[i]))
            bottom[i] += share
    for x, top, f in zip(xs, bottom, flagged, strict=True):
        ax.labels.append(Label(x, min(top, 100.0) + 1.5, fmt_time(float(f)), size=7,
                               colour="#4d4d4d"))
    return Chart(size=(min(12.0, max(8.0, 2.5 + 0.9 * len(bins))), 4.0), panels=[ax],
                 legend_at="bottom", legend=[
                     Key("in-call, longer than its call", IN_CALL_COLOUR),
                     Key("across calls, longer than post → completion", ACROSS_COLOUR)])


# ---------------------------------------------------------------- outputs


def print_run(run: Run, console: Console) -> None:
    """The profile's tables, then the checks on the bounds."""
    profile_table.print_run(run, console)
    a = analysis_of(run)
    if a is None:
        return
    for grid in check_grids(a, run.label, terminal=True):
        print_grid(grid, console)


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    for run in runs:
        a = analysis_of(run) if is_profile(run) else None
        if a is None or _checks(a) is None:
            continue
        chart = bins_figure(a)
        figures = [] if chart is None else [
            Figure(
                chart.svg(),
                "Per size bin, the share of its transfer time (all ranks) carried by "
                "transfers the checks flagged; above each bar, their transfer time.",
            )
        ]
        sections.append(
            Section(
                f"Checks on the bounds — {run.label}",
                MEANING,
                figures=figures,
                tables=[html_table(g) for g in check_grids(a, run.label, terminal=False)],
            )
        )
    return sections


def to_json(run: Run) -> dict[str, Any]:
    """The profile's report.json block with the checks on the bounds."""
    a = analysis_of(run)
    return {**profile_table.to_json(run), "checks": None if a is None else a.get("checks")}
