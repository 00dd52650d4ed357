"""svg_plot: matplotlib's format strings, colours and plotting calls as svg_chart data,
so that a figure moved off matplotlib draws the same series in the same styles."""

from __future__ import annotations

import math

import pytest

from mpi_overlap.report.svg_chart import fit_axes
from mpi_overlap.report.svg_plot import (
    axes,
    axvspan,
    blend,
    colour,
    errorbar,
    fill_between,
    parse_fmt,
    plot,
)


@pytest.mark.parametrize(("fmt", "parsed"), [
    ("-", ("", "")), ("--o", ("--", "o")), (":^", (":", "^")), ("-.v", ("-.", "v")),
    ("o", (None, "o")), ("x", (None, "x")), ("-s", ("", "s")),
])
def test_format_strings(fmt: str, parsed: tuple[str | None, str]) -> None:
    assert parse_fmt(fmt) == parsed


def test_colours() -> None:
    assert colour("C0") == "#1f77b4" and colour(11) == colour("C1")
    assert colour("0.5") == "#808080" and colour("grey") == "#808080"
    assert blend("0.8", 0.6) == "#e0e0e0"  # 204 at 60 % over 255


def test_plot_breaks_its_line_at_a_missing_value_and_marks_the_rest() -> None:
    p = axes("x", "y")
    plot(p, [1, 2, 3], [1.0, math.nan, None], "--o", "C2", ms=3, label="a")
    plot(p, [1, 2], [5.0, 6.0], "x", "C3")
    (line,) = p.lines
    assert line.ys == [1.0, None, None] and line.dash == "--"
    assert [(m.shape, m.x) for m in p.marks] == [("o", 1.0), ("x", 1.0), ("x", 2.0)]
    assert [(k.label, k.kind, k.marker) for k in p.legend] == [("a", "line", "o")]


def test_fit_axes_covers_error_bars_areas_and_spans() -> None:
    p = axes(xscale="log", xbase=2.0, yscale="log")
    errorbar(p, [4, 8], [10.0, 20.0], [9.0, 1.0], [90.0, 5.0], "-o", "C0", capsize=2)
    fill_between(p, [4, 8], [5.0, None], [50.0, 60.0], "0.8", alpha=0.6)
    axvspan(p, 2, 3, "C1", alpha=0.25)
    fit_axes(p)
    assert p.xlim[0] < 2 and p.xlim[1] > 8
    assert p.ylim[0] < 1.0 and p.ylim[1] > 100.0  # 10 − 9 and 10 + 90
    assert p.xticks is not None and p.xticks.labels[0] == "2¹"
    assert p.yticks is not None and "10¹" in p.yticks.labels
