"""Overlap-validation benchmark: the report's figures, tables, sentences and JSON.

One figure per (pairing, size), drawn like the source's Figures 7-13 (Shet et al., §3): per
non-blocking side, the profiler's min % and max % overlap against the computation time
(left axis) and the side's MPI_Wait time (right axis). Everything comes from
analysis.json (analysis.py here); a run without it shows only its banner.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ...core.formatting import DASH, fmt_pct_cell, fmt_us
from ...core.sizes import format_size
from ...core.termsafe import Table
from ...report.html import Figure, HtmlTable, Section
from ...report.run_table import RunTable
from ...report.svg_chart import Chart, Label, Panel, fit_axes, linear_ticks, scaled, unscaled
from ...report.svg_plot import axes, axvline, colour, fill_between, legend_key, plot
from ...run.rundir import Run

BENCHMARK = "overlap-validation"
SIDE_ORDER = {"sender": 0, "receiver": 1}
MATCH_STYLE = {True: "green", False: "yellow", None: "dim"}
SUMMARY_HEADERS = (
    "pairing",
    "size",
    "side",
    "comp µs (last)",
    "max % first→last",
    "min % first→last",
    "min % own T",
    "MPI_Wait µs first→last",
    "min / wait trend",
    "source",
)
STEP_HEADERS = (
    "step",
    "comp µs",
    "post µs",
    "MPI_Wait µs",
    "peer µs",
    "xfer µs",
    "transfers",
    "min %",
    "max %",
    "min/max % own T",
)


def curves(run: Run) -> list[dict[str, Any]]:
    """analysis.json's curves, ordered by pairing, size, side."""
    found = [c for c in (run.analysis or {}).get("curves") or [] if isinstance(c, dict)]
    return sorted(
        found,
        key=lambda c: (
            str(c.get("pairing")),
            int(c.get("size", 0)),
            SIDE_ORDER.get(str(c.get("side")), 9),
        ),
    )


def _cases(run: Run) -> dict[tuple[str, int], list[dict[str, Any]]]:
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for c in curves(run):
        out.setdefault((str(c["pairing"]), int(c["size"])), []).append(c)
    return out


def _bounds(run: Run) -> dict[str, Any]:
    return (run.analysis or {}).get("bounds") or {}


def _source_cell(curve: dict[str, Any]) -> str:
    src = curve.get("source") or {}
    if src.get("matches") is True:
        return f"like {src.get('matched')}"
    if src.get("matches") is False:
        return f"differs ({src.get('figures')})"
    return f"n/a ({src.get('figures')})"


def _min_trend(c: dict[str, Any]) -> str | None:
    """The lower bound's trend the source comparison used (own T: marked)."""
    s = c.get("shape") or {}
    if (c.get("source") or {}).get("basis") == "own":
        trend = s.get("min_own_trend")
        return f"{trend} (own T)" if trend else None
    return s.get("min_trend")


def _summary_row(c: dict[str, Any]) -> tuple[str, ...]:
    s = c.get("shape") or {}
    pts = c.get("points") or []
    return (
        str(c.get("pairing")),
        format_size(int(c.get("size", 0))),
        f"{c.get('side')} ({c.get('call')})",
        fmt_us(pts[-1].get("comp_us") if pts else None),
        *(" → ".join(fmt_pct_cell(s.get(f"{k}_{end}"), 0) for end in ("first", "last"))
          for k in ("max_pct", "min_pct", "min_own")),
        f"{fmt_us(s.get('wait_first_us'))} → {fmt_us(s.get('wait_last_us'))}",
        f"{_min_trend(c) or DASH} / {s.get('wait_trend') or DASH}",
        _source_cell(c),
    )


def _step_rows(c: dict[str, Any]) -> list[tuple[str, ...]]:
    rows = []
    for p in c.get("points") or []:
        peer = p.get("peer_call_us") if p.get("peer_call_us") is not None else p.get("peer_wait_us")
        rows.append(
            (
                str(p.get("step")),
                fmt_us(p.get("comp_us")),
                fmt_us(p.get("post_us")),
                fmt_us(p.get("wait_us")),
                fmt_us(peer),
                fmt_us(p.get("xfer_us")),
                DASH if p.get("transfers") is None else str(p.get("transfers")),
                fmt_pct_cell(p.get("min_pct"), 0),
                fmt_pct_cell(p.get("max_pct"), 0),
                " / ".join(fmt_pct_cell(p.get(k), 0) for k in ("min_pct_own", "max_pct_own")),
            )
        )
    return rows



def _findings(run: Run) -> list[str]:
    return [str(c.get("finding")) for c in curves(run)]


def _bounds_missing(run: Run) -> str | None:
    bounds = _bounds(run)
    return None if bounds.get("available") else f"overlap bounds missing: {bounds.get('reason')}"


# One row per curve; its last cell (where the peer's call comes from) coloured by whether
# it matches the program's own timing, in the terminal only.
CURVES_TABLE = RunTable(
    "overlap validation", "curves", SUMMARY_HEADERS,
    lambda run: [_summary_row(c) for c in curves(run)], (0, 1, 2, 8, 9), _findings,
    html_note=_bounds_missing, wrap=(9,),
    verdicts=lambda run: [(MATCH_STYLE.get((c.get("source") or {}).get("matches"), "dim"),
                           "left") for c in curves(run)])

# ---------------------------------------------------------------- terminal


def print_run(run: Run, console: Console) -> None:
    if run.analysis is None:
        return
    bounds = _bounds(run)
    if not bounds.get("available"):
        console.print(
            Text(
                f"  overlap bounds missing: {bounds.get('reason') or 'see problems'}",
                style="yellow",
            )
        )
    for problem in bounds.get("problems") or []:
        console.print(Text(f"  {problem}", style="yellow"))
    CURVES_TABLE.print(run, console)


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = [r for r in runs if r.benchmark == BENCHMARK and r.analysis is not None]
    if len(runs) < 2:
        return
    headers, rows = comparison(runs)
    t = Table(
        title="Overlap validation — comparison (last step)",
        title_justify="left",
        header_style="bold",
    )
    for i, header in enumerate(headers):
        t.add_column(header, justify="left" if i < 3 else "right")
    for row in rows:
        t.add_row(*row)
    console.print(t)


def comparison(runs: list[Run]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per curve: min % and MPI_Wait µs of the last step, one column pair per run."""
    keyed = [{(c["pairing"], c["size"], c["side"]): c for c in curves(r)} for r in runs]
    keys = sorted(set().union(*keyed), key=lambda k: (k[0], k[1], SIDE_ORDER.get(k[2], 9)))
    headers = (
        "pairing",
        "size",
        "side",
        *(h for r in runs for h in (f"min % {r.label}", f"MPI_Wait µs {r.label}")),
    )
    rows = []
    for key in keys:
        cells = [key[0], format_size(int(key[1])), key[2]]
        for entries in keyed:
            s = (entries.get(key) or {}).get("shape") or {}
            cells += [fmt_pct_cell(s.get("min_pct_last"), 0), fmt_us(s.get("wait_last_us"))]
        rows.append(tuple(cells))
    return headers, rows


# ---------------------------------------------------------------- figures


def _panel(c: dict[str, Any]) -> Panel:
    """One side's bounds (left axis, %) and MPI_Wait and peer times (right axis, µs)
    against the computation (symlog: 0 and the smallest measured step both show); its
    legend keys in the panel's legend, for the figure's."""
    pts = [p for p in c.get("points") or [] if p.get("comp_us") is not None]
    xs = [max(p["comp_us"], 0.0) for p in pts]
    positive = [x for x in xs if x > 0]
    ax = axes("computation between post and wait (µs, measured)",
              "overlap (% of transfer time)", f"{c.get('side')} ({c.get('call')})")
    ax.title_size, ax.grid, ax.xscale = 9, "both", "symlog"
    ax.xlinthresh, ax.xlinscale = (min(positive) if positive else 1.0), 0.5
    shape = c.get("shape") or {}
    if all(p.get("max_pct") is not None and p.get("min_pct") is not None for p in pts) and pts:
        mx = [p["max_pct"] for p in pts]
        mn = [p["min_pct"] for p in pts]
        fill_between(ax, xs, mn, mx, "C0", alpha=0.12)
        plot(ax, xs, mx, "-^", "C0", ms=4, lw=1.3, label="max overlap %")
        plot(ax, xs, mn, "-v", "C2", ms=4, lw=1.3, label="min overlap %")
    own = [p.get("min_pct_own") for p in pts]
    no_bounds = not (pts and all(v is not None for v in own))
    if not no_bounds:
        plot(ax, xs, own, ":", "C2", lw=1.1, label="min % with this run's transfer time")
    threshold = shape.get("threshold_us")
    if isinstance(threshold, (int, float)) and threshold > 0:
        axvline(ax, threshold, "0.5", lw=1, ls=":")
        ax.legend.append(legend_key(f"transfer time ({shape.get('threshold_from')})", ":",
                                    "0.5", 1.0))
    waits = [p.get("wait_us") for p in pts]
    if any(w is not None for w in waits):
        plot(ax, xs, waits, "--s", "C3", ms=3.5, lw=1.2, label="MPI_Wait µs (median)",
             right=True)
    peer = [p.get("peer_call_us") for p in pts]
    if any(v is not None for v in peer):
        plot(ax, xs, peer, ":o", "C7", ms=3, lw=1, label=f"peer {c.get('peer_call')} µs",
             right=True)
    fit_axes(ax, ylim=(-3.0, 105.0), size=7)
    # at least 0-1 µs, so that a wait of a few tens of ns does not fill the axis
    shown = [v for v in waits + peer if v is not None]
    ax.y2lim = (0.0, max(1.0, 1.08 * max(shown, default=0.0)))
    ax.y2ticks = linear_ticks(*ax.y2lim, size=7)
    ax.y2label, ax.y2label_size = "time per iteration (µs)", 8.0
    if no_bounds:  # in the middle of the axes (their 0.5, 0.55)
        x_mid = unscaled(sum(scaled(v, "symlog", ax.xlinthresh, linscale=0.5)
                             for v in ax.xlim) / 2, "symlog", ax.xlinthresh, linscale=0.5)
        ax.labels.append(Label(x_mid, -3.0 + 0.55 * 108.0, "no overlap bounds\n(profile missing)",
                               8.0, colour("0.4"), va="middle"))
    return ax


def case_figure(run: Run, pairing: str, size: int, group: list[dict[str, Any]]) -> Chart:
    panels = [_panel(c) for c in group]
    keys = max((p.legend for p in panels), key=len, default=[])
    for p in panels:
        p.legend = []  # the figure's legend, below the panels
    return Chart((5.2 * len(group) + 0.6, 3.9), panels, cols=len(panels), legend=keys,
                 legend_at="bottom", legend_size=7.5,
                 title=f"{run.label} — {pairing}, {format_size(size)}")


def figure_sections(runs: list[Run]) -> list[Section]:
    sections = []
    for run in runs:
        if run.benchmark != BENCHMARK or run.analysis is None:
            continue
        figures = []
        for (pairing, size), group in _cases(run).items():
            src = group[0].get("source") or {}
            figures.append(
                Figure(
                    case_figure(run, pairing, size, group).svg(),
                    f"{pairing}, {format_size(size)}: the profiler's bounds for the non-blocking "
                    f"side(s) and their MPI_Wait time against the computation inserted between "
                    f"post and wait. Source: {src.get('figures')} — {src.get('text')}.",
                )
            )
        bounds = _bounds(run)
        intro = (
            None
            if bounds.get("available")
            else (f"Overlap bounds missing: {bounds.get('reason') or 'see the problems listed'}.")
        )
        if figures:
            sections.append(Section(f"Overlap validation — {run.label}", intro, figures))
    return sections


def table_sections(runs: list[Run]) -> list[Section]:
    sections = []
    mine = [r for r in runs if r.benchmark == BENCHMARK and r.analysis is not None]
    if len(mine) >= 2:
        headers, rows = comparison(mine)
        css = [("left", "left", "left") + ("num",) * (len(headers) - 3)] * len(rows)
        sections.append(
            Section(
                "Overlap validation — comparison across runs",
                "Lower bound and MPI_Wait time at the largest computation, side by side.",
                tables=[HtmlTable("Last step", headers, rows, css)],
            )
        )
    for run in mine:
        tables = CURVES_TABLE.html([run])
        for c in curves(run):
            rows = _step_rows(c)
            tables.append(
                HtmlTable(
                    f"{run.label} — {c.get('pairing')} {format_size(int(c.get('size', 0)))}, "
                    f"{c.get('side')} ({c.get('call')}; peer {c.get('peer_call')})",
                    STEP_HEADERS,
                    rows,
                    [("num",) * len(STEP_HEADERS)] * len(rows),
                )
            )
        sections.append(
            Section(
                f"Overlap validation tables — {run.label}",
                "Medians per iteration. min/max % = the profiler's bounds of the step's region "
                "÷ the transfer time of its table (xfer µs); peer = the other side's blocking "
                "call or MPI_Wait.",
                tables=tables,
            )
        )
    return sections


# ---------------------------------------------------------------- summaries and JSON


def extent(run: Run) -> str | None:
    cases = ((run.result or {}).get("results") or {}).get("cases") or []
    if not cases:
        return "no (pairing, size) measured"
    done = sum(1 for c in cases if c.get("complete"))
    return f"{done} of {len(cases)} (pairing, size) cases measured to the last step"


def summary(run: Run) -> list[str]:
    if run.analysis is None:
        return ["No analysis: curves and shape checks are not available for this run."]
    cs = curves(run)
    bounds = _bounds(run)
    out = []
    if not bounds.get("available"):
        out.append(
            f"Overlap bounds missing ({bounds.get('reason') or 'see problems'}): "
            "only MPI_Wait times are shown."
        )
    checked = [c for c in cs if (c.get("source") or {}).get("matches") is not None]
    like = [c for c in checked if c["source"]["matches"]]
    if checked:
        out.append(
            f"{len(like)} of {len(checked)} checkable curves have the source's shape; "
            "the rest differ (see the findings)."
        )
    full = [c for c in cs if (c.get("shape") or {}).get("reaches_full") is True]
    if bounds.get("available"):
        out.append(
            f"Max overlap reaches ≥ 90 % once computation ≥ transfer time in "
            f"{len(full)} of {len(cs)} curves."
        )
    return out or ["analysis.json holds no curves."]


def to_json(run: Run) -> dict[str, Any]:
    return {
        "bounds": _bounds(run),
        "curves": [
            {k: c.get(k) for k in ("pairing", "size", "side", "call", "shape", "source", "finding")}
            for c in curves(run)
        ],
    }
