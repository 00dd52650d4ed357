"""Overhead benchmark: the numbers of a run, as table rows, summary sentences and JSON.

One set of rows feeds both the terminal (rich) and the HTML tables, so the two always
show the same figures. Every figure comes from analysis.json, or from result.json for
the classic columns and for sizes that were never analysed; a missing value prints as
"—" and the row says why.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from ...core.formatting import DASH, fmt_pct_cell, fmt_us, fmt_with_ci
from ...core.sizes import format_size
from ...core.termsafe import Table
from ...core.values import num
from ...report.html import HtmlTable, Section
from ...report.summary_card import Figures, figure_of, figure_range, max_share
from ...run.rundir import Run

BENCHMARK = "overhead"
DIRECTIONS = ("send", "recv")
ESTIMATES = (
    "base_t_us",
    "knee_work_us",
    "overhead_us",
    "availability_pct",
    "slope",
    "compute_slowdown_pct",
)
HEADERS = (
    "size",
    "base_t µs",
    "overhead µs [CI]",
    "availability % [CI]",
    "knee µs",
    "slowdown %",
    "verdict",
    "classic overhead µs",
    "classic avail. %",
)
# Colours say how far a verdict can be trusted: yellow = a value exists but is shaky,
# red = no usable value.
VERDICT_STYLE = {
    "ok": "green",
    "noisy": "yellow",
    "odd-shape": "yellow",
    "no-knee": "red",
    "incomplete": "red",
}
NOT_ANALYSED = "not analysed"


def est(entry: dict[str, Any] | None, key: str, part: str = "value") -> float | None:
    """One part (value, ci95_low, ci95_high) of an estimate; the estimate may be null."""
    estimate = (entry or {}).get(key)
    return num(estimate.get(part)) if isinstance(estimate, dict) else None


def est_ci(
    entry: dict[str, Any] | None, key: str
) -> tuple[float | None, float | None, float | None]:
    """An estimate's value, ci95_low and ci95_high (None where missing)."""
    return est(entry, key), est(entry, key, "ci95_low"), est(entry, key, "ci95_high")


def analysis_sizes(run: Run) -> dict[str, dict[int, dict[str, Any]]]:
    """analysis.json as {direction: {size: entry}}; empty when there is no analysis."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for d in (run.analysis or {}).get("directions") or []:
        sizes = {int(s["size"]): s for s in d.get("sizes") or [] if "size" in s}
        out[str(d.get("direction"))] = sizes
    return out


def result_sizes(run: Run) -> dict[str, dict[int, dict[str, Any]]]:
    """result.json's per-size data as {direction: {size: entry}}."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    results = (run.result or {}).get("results") or {}
    for d in results.get("directions") or []:
        sizes = {int(s["size"]): s for s in d.get("sizes") or [] if "size" in s}
        out[str(d.get("direction"))] = sizes
    return out


def directions_of(run: Run) -> list[str]:
    found = set(analysis_sizes(run)) | set(result_sizes(run))
    return [d for d in DIRECTIONS if d in found] + sorted(found - set(DIRECTIONS))


@dataclass(frozen=True)
class SizeRow:
    size: int
    verdict: str
    reason: str | None
    cells: tuple[str, ...]  # formatted, in HEADERS order, verdict cell without footnote mark


@dataclass(frozen=True)
class DirectionTable:
    run_label: str
    direction: str
    rows: list[SizeRow]
    note: str | None

    @property
    def caption(self) -> str:
        return f"{self.run_label} — {self.direction}"

    def footnotes(self) -> list[tuple[int, SizeRow]]:
        """Rows that need explaining (anything not 'ok'), numbered from 1."""
        flagged = [r for r in self.rows if r.verdict != "ok"]
        return list(enumerate(flagged, start=1))


def classic_of(a_entry: dict[str, Any] | None, r_entry: dict[str, Any] | None) -> dict[str, Any]:
    # analysis.json repeats result.json's classic block; fall back for unanalysed sizes
    for entry in (a_entry, r_entry):
        if isinstance(entry, dict) and isinstance(entry.get("classic"), dict):
            return entry["classic"]
    return {}


def _row(
    size: int, a_entry: dict[str, Any] | None, r_entry: dict[str, Any] | None, has_analysis: bool
) -> SizeRow:
    if a_entry is not None:
        verdict, reason = str(a_entry.get("verdict", DASH)), a_entry.get("reason")
    else:
        verdict = NOT_ANALYSED
        reason = "size absent from analysis.json" if has_analysis else "analysis.json missing"
    classic = classic_of(a_entry, r_entry)
    c_over, c_avail = num(classic.get("overhead_us")), num(classic.get("availability_pct"))
    if classic and classic.get("found") is False:
        classic_over = classic_avail = f"{DASH} (not found)"
    else:
        classic_over, classic_avail = fmt_us(c_over), fmt_pct_cell(c_avail)
    cells = (
        format_size(size),
        fmt_with_ci(*est_ci(a_entry, "base_t_us"), fmt_us),
        fmt_with_ci(*est_ci(a_entry, "overhead_us"), fmt_us),
        fmt_with_ci(*est_ci(a_entry, "availability_pct"), fmt_pct_cell),
        fmt_us(est(a_entry, "knee_work_us")),
        fmt_pct_cell(est(a_entry, "compute_slowdown_pct")),
        verdict,
        classic_over,
        classic_avail,
    )
    return SizeRow(size, verdict, str(reason) if reason else None, cells)


def direction_table(run: Run, direction: str) -> DirectionTable:
    ana = analysis_sizes(run).get(direction, {})
    res = result_sizes(run).get(direction, {})
    has_analysis = run.analysis is not None
    rows = [_row(s, ana.get(s), res.get(s), has_analysis) for s in sorted(set(ana) | set(res))]
    note = None
    if not has_analysis:
        note = "analysis.json missing: only the classic figures from result.json are shown"
    elif not rows:
        note = "no sizes measured for this direction"
    return DirectionTable(run.label, direction, rows, note)


def run_tables(run: Run) -> list[DirectionTable]:
    return [direction_table(run, d) for d in directions_of(run)]


def footnote_text(mark: int, row: SizeRow) -> str:
    return f"[{mark}] {row.cells[0]}: {row.verdict} — {row.reason or 'no reason given'}"


# ---------------------------------------------------------------- comparison across runs


def comparison(
    runs: list[Run], labels: list[str], direction: str
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Availability and overhead per size, one column pair per run, side by side.

    A value whose verdict is not 'ok' gets a trailing '?' so that a side-by-side reading
    does not silently compare a trustworthy number with an untrustworthy one.
    """
    per_run = [analysis_sizes(r).get(direction, {}) for r in runs]
    sizes = sorted(set().union(*per_run)) if per_run else []
    headers = ("size", *(h for lab in labels for h in (f"avail. % {lab}", f"overhead µs {lab}")))
    rows = []
    for size in sizes:
        cells = [format_size(size)]
        for entries in per_run:
            entry = entries.get(size)
            flag = "" if entry is None or entry.get("verdict") == "ok" else " ?"
            avail, over = est(entry, "availability_pct"), est(entry, "overhead_us")
            cells.append(fmt_pct_cell(avail) + (flag if avail is not None else ""))
            cells.append(fmt_us(over) + (flag if over is not None else ""))
        rows.append(tuple(cells))
    return headers, rows


def comparable(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.benchmark == BENCHMARK and r.analysis is not None]


# ---------------------------------------------------------------- terminal (rich)


def rich_table(table: DirectionTable) -> Table:
    t = Table(title=table.caption, title_justify="left", header_style="bold")
    for i, header in enumerate(HEADERS):
        t.add_column(header, justify="left" if i in (0, 6) else "right", no_wrap=True)
    marks = {row.size: mark for mark, row in table.footnotes()}
    for row in table.rows:
        cells: list[str | Text] = list(row.cells)
        style = VERDICT_STYLE.get(row.verdict, "dim")
        mark = f" [{marks[row.size]}]" if row.size in marks else ""
        cells[6] = Text(row.verdict + mark, style=style)
        t.add_row(*cells)
    return t


def print_run(run: Run, console: Console) -> None:
    for table in run_tables(run):
        console.print(rich_table(table))
        if table.note:
            console.print(Text(f"  {table.note}", style="yellow"))
        for mark, row in table.footnotes():
            style = VERDICT_STYLE.get(row.verdict, "dim")
            console.print(Text(f"  {footnote_text(mark, row)}", style=style))


def print_comparison(runs: list[Run], console: Console) -> None:
    runs = comparable(runs)
    if len(runs) < 2:
        return
    labels = [r.label for r in runs]
    for direction in DIRECTIONS:
        headers, rows = comparison(runs, labels, direction)
        if not rows:
            continue
        t = Table(title=f"Comparison — {direction}", title_justify="left", header_style="bold")
        for i, header in enumerate(headers):
            t.add_column(header, justify="left" if i == 0 else "right")
        for row in rows:
            t.add_row(*row)
        console.print(t)
    console.print(Text("  '?' marks a value whose verdict is not ok", style="dim"))


# ---------------------------------------------------------------- HTML tables


def _html_table(table: DirectionTable) -> HtmlTable:
    marks = {row.size: mark for mark, row in table.footnotes()}
    rows, css = [], []
    for row in table.rows:
        cells = list(row.cells)
        if row.size in marks:
            cells[6] = f"{row.verdict} [{marks[row.size]}]"
        rows.append(tuple(cells))
        verdict_css = "v-" + (row.verdict if row.verdict in VERDICT_STYLE else "none")
        css.append(
            tuple(
                ("left" if i == 0 else verdict_css if i == 6 else "num") for i in range(len(cells))
            )
        )
    notes = [footnote_text(m, r) for m, r in table.footnotes()]
    return HtmlTable(table.caption, HEADERS, rows, css, notes, table.note)


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    comp = comparable(runs)
    if len(comp) >= 2:
        labels = [r.label for r in comp]
        tables = []
        for direction in DIRECTIONS:
            headers, rows = comparison(comp, labels, direction)
            if rows:
                css = [("left",) + ("num",) * (len(headers) - 1)] * len(rows)
                tables.append(HtmlTable(f"Comparison — {direction}", headers, rows, css))
        sections.append(
            Section(
                "Comparison across runs",
                "Availability and overhead per message size, side by side. "
                "A trailing '?' marks a value whose verdict is not ok.",
                tables=tables,
            )
        )
    for run in runs:
        if run.benchmark != BENCHMARK:
            continue
        sections.append(
            Section(
                f"Tables — {run.label}",
                "Estimates with 95 % bootstrap confidence intervals from the hinge fit; "
                "the classic columns repeat the original mpi_overhead threshold method.",
                tables=[_html_table(t) for t in run_tables(run)],
            )
        )
    return sections


# ---------------------------------------------------------------- summaries and JSON


def extent(run: Run) -> str | None:
    """What the results cover, e.g. 'results up to 256 KiB' (for incomplete banners)."""
    reach = {}
    for direction, sizes in result_sizes(run).items():
        done = [s for s, e in sizes.items() if e.get("complete")]
        reach[direction] = format_size(max(done)) if done else None
    if not reach:
        return "no sizes in result.json"
    if len(set(reach.values())) == 1:  # the common case: one sweep cut at one size
        top = next(iter(reach.values()))
        return f"results up to {top}" if top else "no size finished"
    return "results up to " + ", ".join(f"{top or 'nothing'} ({d})" for d, top in reach.items())


def _range(values: list[float], fmt: Any, unit: str) -> str:
    lo, hi, med = min(values), max(values), statistics.median(values)
    return f"{fmt(lo)}–{fmt(hi)} {unit} (median {fmt(med)} {unit})"


def summary(run: Run) -> list[str]:
    """One sentence per direction, computed from analysis.json only."""
    if run.analysis is None:
        return ["No analysis: estimates and verdicts are not available for this run."]
    out = []
    for direction, sizes in analysis_sizes(run).items():
        ok = {s: e for s, e in sizes.items() if e.get("verdict") == "ok"}
        avail = [v for e in ok.values() if (v := est(e, "availability_pct")) is not None]
        over = [v for e in ok.values() if (v := est(e, "overhead_us")) is not None]
        bad = sorted(e.get("verdict", "?") for s, e in sizes.items() if s not in ok)
        counts = ", ".join(f"{bad.count(v)} {v}" for v in sorted(set(bad)))
        untrusted = (
            f"; {len(bad)} of {len(sizes)} sizes not trustworthy ({counts})"
            if bad
            else f"; all {len(sizes)} sizes ok"
        )
        if avail and over:
            out.append(
                f"{direction} availability ranges {_range(avail, fmt_pct_cell, '%')} and host "
                f"overhead {_range(over, fmt_us, 'µs')} over {len(ok)} trustworthy sizes "
                f"({format_size(min(ok))}–{format_size(max(ok))}){untrusted}."
            )
        else:
            out.append(f"{direction}: no size gave a trustworthy estimate{untrusted}.")
    return out or ["analysis.json holds no directions."]


def _estimate_json(entry: dict[str, Any], key: str) -> dict[str, float | None] | None:
    e = entry.get(key)
    if not isinstance(e, dict):
        return None
    return {p: e.get(p) for p in ("value", "ci95_low", "ci95_high")}


def to_json(run: Run) -> dict[str, Any]:
    """Per direction and size: the key figures as analysis.json has them, unrounded."""
    directions = []
    for direction in directions_of(run):
        ana = analysis_sizes(run).get(direction, {})
        res = result_sizes(run).get(direction, {})
        sizes = []
        for size in sorted(set(ana) | set(res)):
            a, r = ana.get(size), res.get(size)
            classic = classic_of(a, r)
            item: dict[str, Any] = {
                "size": size,
                "verdict": a.get("verdict") if a else None,
                "reason": a.get("reason") if a else ("not analysed"),
                "measured_complete": r.get("complete") if r else None,
            }
            item.update({k: _estimate_json(a, k) if a else None for k in ESTIMATES})
            item["classic"] = {
                k: classic.get(k) for k in ("found", "overhead_us", "availability_pct", "base_t_us")
            }
            sizes.append(item)
        directions.append({"direction": direction, "sizes": sizes})
    return {"method": (run.analysis or {}).get("method"), "directions": directions}


# ---- the summary card (spec.CardLine in __init__.py)

def card_cell(f: Figures) -> str | None:
    parts = []
    for d, noun in (("send", "a send's"), ("recv", "a receive's")):
        r = figure_range(figure_of(f, f"{d}_availability_min_pct"),
                         figure_of(f, f"{d}_availability_max_pct"), "%")
        if r is not None:
            parts.append(f"{r} of {noun}")
    if not parts:
        return None
    return "the CPU is free to compute for " + " and ".join(parts) + " transfer time (by size)"


card_share = max_share("send_availability_max_pct", "recv_availability_max_pct")
