"""What the benchmark reporters share: the table of one run, declared once (`RunTable`:
its headers, text columns, rows and notes) and rendered to the terminal via rich and to
report.html via HtmlTable, whose tables csv_tables.py writes as CSV; the cross-run
comparison table's frame; and the summary and extent sentences of runs with and without
an analysis."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from ..core.formatting import fmt_num
from ..core.termsafe import Table
from ..run.rundir import Run
from .html import HtmlTable


def finding(run: Run) -> list[str]:
    """The analysis's one-sentence finding, as the note under a run's table."""
    return [str((run.analysis or {}).get("finding"))]


# A row's last cell's look where it is a verdict: (rich style, the page's CSS class).
CellStyle = tuple[str, str]


@dataclass(frozen=True)
class RunTable:
    """A benchmark's table of one run, declared once: `headers`; `text`, the indices of
    its text columns (left-aligned; the others are numbers, right-aligned); `rows` and
    `notes` from the run. In the terminal it is titled "<label> — <title>" with the notes
    dimmed below it; on the page "<label> — <caption>" (the caption names the CSV file)
    with `html_notes` (default: the notes) as its footnotes and `html_note` as its note.
    `verdicts` gives each row's last cell its look in both (a verdict's colour and CSS
    class); `wrap` the columns the terminal may wrap (None: any); a table of what the
    result holds, not the analysis, has `from_result` and is drawn for runs without an
    analysis too."""

    title: str | Callable[[Run], str]
    caption: str | Callable[[Run], str]
    headers: tuple[str, ...]
    rows: Callable[[Run], list[tuple[str, ...]]]
    text: Collection[int] = (0,)
    notes: Callable[[Run], list[str]] = finding
    html_notes: Callable[[Run], list[str]] | None = None
    html_note: Callable[[Run], str | None] | None = None
    verdicts: Callable[[Run], list[CellStyle]] | None = None
    wrap: Collection[int] | None = None
    from_result: bool = False

    def print(self, run: Run, console: Console) -> None:
        """The run's table and notes in the terminal; nothing for a run without an analysis
        (unless `from_result`), as on the page."""
        if run.analysis is None and not self.from_result:
            return
        t = Table(title=f"{run.label} — {_text(self.title, run)}", title_justify="left",
                  header_style="bold")
        for i, h in enumerate(self.headers):
            t.add_column(h, justify="left" if i in self.text else "right",
                         no_wrap=self.wrap is not None and i not in self.wrap)
        styles = self.verdicts(run) if self.verdicts else None
        for i, row in enumerate(self.rows(run)):
            if styles is None:
                t.add_row(*row)
            else:
                t.add_row(*row[:-1], Text(row[-1], style=styles[i][0]))
        console.print(t)
        for note in self.notes(run):
            console.print(Text(f"  {note}", style="dim"), highlight=False)

    def html(self, runs: list[Run]) -> list[HtmlTable]:
        """One HtmlTable per run with an analysis (or with rows, `from_result`)."""
        return [t for run in runs for t in [self._html(run)] if t is not None]

    def _html(self, run: Run) -> HtmlTable | None:
        rows = self.rows(run) if run.analysis is not None or self.from_result else None
        if rows is None or (self.from_result and not rows):
            return None
        css = tuple("left" if i in self.text else "num" for i in range(len(self.headers)))
        classes = [css] * len(rows)
        if self.verdicts:
            classes = [(*css[:-1], style[1]) for style in self.verdicts(run)]
        notes = self.html_notes or self.notes
        return HtmlTable(f"{run.label} — {_text(self.caption, run)}", self.headers, rows,
                         classes, notes(run), self.html_note(run) if self.html_note else None)


def _text(text: str | Callable[[Run], str], run: Run) -> str:
    return text(run) if callable(text) else text


def no_notes(run: Run) -> list[str]:
    """A table without notes (what it would say is printed elsewhere)."""
    return []


def compared(runs: list[Run], benchmark: str) -> list[Run]:
    """The runs of `benchmark` with an analysis, when there are at least two to compare;
    otherwise none."""
    mine = [r for r in runs if r.benchmark == benchmark and r.analysis is not None]
    return mine if len(mine) >= 2 else []


def comparison_table(
    title: str, runs: list[Run], keys: Sequence[str], right: Collection[int] = ()
) -> Table:
    """An empty rich table comparing runs: the key columns (left-aligned unless their
    index is in `right`), then one right-aligned column per run, headed by its label."""
    t = Table(title=title, title_justify="left", header_style="bold")
    for i, key in enumerate(keys):
        t.add_column(key, justify="right" if i in right else "left")
    for r in runs:
        t.add_column(r.label, justify="right")
    return t


def print_findings(title: str, rows: list[tuple[str, str]], console: Console) -> None:
    """Several runs' findings side by side: (run, finding) rows under `title`."""
    t = Table(title=title, title_justify="left", header_style="bold")
    t.add_column("run")
    t.add_column("finding")
    for row in rows:
        t.add_row(*row)
    console.print(t)


def figures_by_name(run: Run) -> dict[str, Any]:
    """A run's headline figures (analysis/figures.py) by name."""
    return {f["name"]: f for f in (run.analysis or {}).get("figures") or []
            if isinstance(f, dict) and "name" in f}


def print_figure_comparison(runs: list[Run], console: Console, bench: str, title: str) -> None:
    """The headline figures of several runs of `bench` (toolchains, settings) side by
    side, by run label."""
    runs = compared(runs, bench)
    if not runs:
        return
    t = comparison_table(title, runs, ("figure",))
    for name, f0 in figures_by_name(runs[0]).items():
        cells = [f"{f0.get('label')} ({f0.get('unit')})"]
        for r in runs:
            cells.append(fmt_num((figures_by_name(r).get(name) or {}).get("value"), ".2f"))
        t.add_row(*cells)
    console.print(t)


def summary_or_missing(run: Run, missing: str,
                       notes: Callable[[Run], list[str]] = finding) -> list[str]:
    """A reporter's summary: notes(run), or without an analysis "No analysis: <missing>
    not available for this run."."""
    if run.analysis is None:
        return [f"No analysis: {missing} not available for this run."]
    return notes(run)


def planned_extent(run: Run, what: str, key: str = "points") -> str:
    """What a partial result covers: "<n> of <planned> <what> measured", from the result's
    `<key>` list and its `<key>_planned` count."""
    res = (run.result or {}).get("results") or {}
    return f"{len(res.get(key) or [])} of {res.get(f'{key}_planned', '?')} {what} measured"
