"""The page sections the benchmark reporters share: one section for all of a benchmark's
runs (its figures, then its tables), or one section per run with the run's figure also
saved beside its data. The figures come from the benchmark's own plotting functions;
here only how they are laid out."""

from __future__ import annotations

from collections.abc import Callable

from ..core.file_output import write_text
from ..run.rundir import Run
from .html import Figure, HtmlTable, Section
from .run_table import RunTable
from .svg_chart import Chart

Figures = Callable[[list[Run]], list[Figure]]


def figure_of_all(plot: Callable[[list[Run]], Chart | None], caption: str) -> Figures:
    """One figure drawn from every run (None from `plot`: no figure)."""
    def figures(runs: list[Run]) -> list[Figure]:
        chart = plot(runs)
        return [] if chart is None else [Figure(chart.svg(), caption)]
    return figures


def figure_per_run(plot: Callable[[Run], Chart | None],
                   caption: Callable[[Run], str]) -> Figures:
    """One figure per run (a toolchain or a setting)."""
    def figures(runs: list[Run]) -> list[Figure]:
        out = []
        for run in runs:
            chart = plot(run)
            if chart is not None:
                out.append(Figure(chart.svg(), caption(run)))
        return out
    return figures


def benchmark_section(title: str, runs: list[Run], benchmark: str, figures: Figures,
                      tables: Callable[[list[Run]], list[HtmlTable]]) -> list[Section]:
    """One section of all the runs of `benchmark`: its figures, then its tables (e.g. a
    RunTable's html); none without such runs."""
    mine = [r for r in runs if r.benchmark == benchmark]
    return [Section(title, None, figures(mine), tables(mine))] if mine else []


def run_sections(runs: list[Run], title: Callable[[Run], str],
                 plot: Callable[[Run], Chart | None], caption: str, plot_file: str,
                 table: RunTable) -> list[Section]:
    """One section per run, introduced by its finding: its figure, also written to
    `plot_file` in its run directory, and its table."""
    sections = []
    for run in runs:
        chart = plot(run)
        figures = []
        if chart is not None:
            svg = chart.svg()
            write_text(run.path / plot_file, svg)
            figures.append(Figure(svg, caption))
        sections.append(Section(title(run), (run.analysis or {}).get("finding"), figures,
                                table.html([run])))
    return sections
