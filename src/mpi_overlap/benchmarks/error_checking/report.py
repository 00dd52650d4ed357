"""error-checking report: cost per message with argument checking on and off."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ...core.formatting import fmt_num
from ...report.html import Section
from ...report.run_table import RunTable, no_notes
from ...report.sections import run_sections
from ...report.svg_chart import Bar, Chart, Key, Ticks, fit_axes, padded
from ...report.svg_plot import axes, colour
from ...run.rundir import Run

BENCHMARK = "error-checking"
PLOT_FILE = "error-checking.svg"
HEADERS = ("test", "off: ns/msg", "on: ns/msg", "on − off (ns)", "95 % CI", "%")


def _a(run: Run) -> dict[str, Any]:
    return run.analysis or {}


def rows(run: Run) -> list[tuple[str, ...]]:
    return [(t["name"], fmt_num(t["off"]["median"], ".1f"), fmt_num(t["on"]["median"], ".1f"),
             fmt_num(t["diff"], ".1f"),
             f"{fmt_num(t['ci95_low'], '.1f')} – {fmt_num(t['ci95_high'], '.1f')}",
             fmt_num(t["pct"], ".0f"))
            for t in _a(run).get("tests") or []]


TABLE = RunTable("argument checking on against off", "cost per message", HEADERS, rows, (0,),
                 no_notes)
# The run's view in the terminal: its table (none without an analysis).
print_run = TABLE.print


def print_comparison(runs: list[Run], console: Console) -> None:
    return None


def figure(run: Run) -> Chart | None:
    tests = [t for t in _a(run).get("tests") or [] if t["on"]["n"] and t["off"]["n"]]
    if not tests:
        return None
    ax = axes(ylabel="ns per message (median)", yscale="log", label_size=10, legend_size=10)
    for i, (key, shift) in enumerate((("off", -0.2), ("on", 0.2))):
        ax.bars += [Bar(j + shift, t[key]["median"], 0.4, colour(i))
                    for j, t in enumerate(tests)]
        ax.legend.append(Key(key, colour(i)))
    # a log axis has no 0: the bars rise from the bottom of the axis, as matplotlib's
    heights = [t[k]["median"] for t in tests for k in ("off", "on") if t[k]["median"] > 0]
    fit_axes(ax, ylim=padded(min(heights, default=1.0), max(heights, default=10.0), "log"),
             size=10)
    ax.xticks = Ticks([float(j) for j in range(len(tests))], [t["name"] for t in tests],
                      size=10)
    return Chart((6, 3.4), [ax])


def html_sections(runs: list[Run]) -> list[Section]:
    return run_sections(runs, lambda run: f"Error checking ({run.label})", figure,
                        "Median ns per message with the MPI's argument checking "
                        "off and on (the setting read back via MPI_T).", PLOT_FILE, TABLE)


def summary(run: Run) -> list[str]:
    finding = _a(run).get("finding")
    return [finding] if finding else []


def extent(run: Run) -> str | None:
    return f"{len(_a(run).get('launches') or [])} launches"


def to_json(run: Run) -> dict[str, Any]:
    return {"analysis": run.analysis}
