"""The page sections the benchmark reporters share: one section for all of a benchmark's
runs (its figures, then its tables), or one section per run with the run's figure also
saved beside its data. The figures come from the benchmark's own plotting functions;
here only how they are laid out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.file_output import write_text
from ..run.rundir import Run
from .html import Figure, HtmlTable, Section
from .run_table import RunTable
from .svg_chart import Chart

Figures = Callable[[list[Run]], list[Figure]]


def to_svg(fig: Any, key: str) -> str:
    """A figure's SVG: an svg_chart Chart writes itself; a matplotlib figure goes through
    svg.to_svg, imported only then (matplotlib's import is a second of a report)."""
    if isinstance(fig, Chart):
        return fig.svg()
    from .svg import to_svg as matplotlib_svg
    return matplotlib_svg(fig, key)


def figure_of_all(plot: Callable[[list[Run]], Any], key: str, caption: str) -> Figures:
    """One figure drawn from every run (None from `plot`: no figure); `key` salts its SVG
    ids (svg.to_svg)."""
    def figures(runs: list[Run]) -> list[Figure]:
        fig = plot(runs)
        return [] if fig is None else [Figure(to_svg(fig, key), caption)]
    return figures


def figure_per_run(plot: Callable[[Run], Any], key: str,
                   caption: Callable[[Run], str]) -> Figures:
    """One figure per run (a toolchain or a setting), its SVG ids salted "<key>-<i>"."""
    def figures(runs: list[Run]) -> list[Figure]:
        out = []
        for i, run in enumerate(runs):
            fig = plot(run)
            if fig is not None:
                out.append(Figure(to_svg(fig, f"{key}-{i}"), caption(run)))
        return out
    return figures


def benchmark_section(title: str, runs: list[Run], benchmark: str, figures: Figures,
                      tables: Callable[[list[Run]], list[HtmlTable]]) -> list[Section]:
    """One section of all the runs of `benchmark`: its figures, then its tables (e.g. a
    RunTable's html); none without such runs."""
    mine = [r for r in runs if r.benchmark == benchmark]
    return [Section(title, None, figures(mine), tables(mine))] if mine else []


def run_sections(runs: list[Run], title: Callable[[Run], str], plot: Callable[[Run], Any],
                 key: str, caption: str, plot_file: str, table: RunTable) -> list[Section]:
    """One section per run, introduced by its finding: its figure (SVG ids salted
    "<key>-<label>"), also written to `plot_file` in its run directory, and its table."""
    sections = []
    for run in runs:
        fig = plot(run)
        figures = []
        if fig is not None:
            svg = to_svg(fig, f"{key}-{run.label}")
            write_text(run.path / plot_file, svg)
            figures.append(Figure(svg, caption))
        sections.append(Section(title(run), (run.analysis or {}).get("finding"), figures,
                                table.html([run])))
    return sections
