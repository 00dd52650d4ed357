"""Log axes of the report's figures are labelled with plain text (report/svg.py): the
same ticks and the same words as matplotlib's mathtext labels, without mathtext."""

from __future__ import annotations

import re

from matplotlib.figure import Figure as MplFigure

from mpi_overlap.report.svg import plain_math_label, to_svg


def test_mathtext_log_labels_become_plain_text() -> None:
    assert plain_math_label(r"$\mathdefault{10^{3}}$") == "10³"
    assert plain_math_label(r"$\mathdefault{2^{10}}$") == "2¹⁰"
    assert plain_math_label(r"$\mathdefault{10^{-2}}$") == "10⁻²"
    assert plain_math_label(r"$\mathdefault{-10^{-1}}$") == "−10⁻¹"
    assert plain_math_label(r"$\mathdefault{5\times10^{2}}$") == "5×10²"
    assert plain_math_label(r"$\mathdefault{0}$") == "0"


def test_other_labels_are_left_as_they_are() -> None:
    assert plain_math_label("1 KiB") == "1 KiB"
    assert plain_math_label("") == ""
    # mathtext this does not know stays mathtext, which matplotlib still draws right
    assert plain_math_label(r"$\mathdefault{e^{x}}$") == r"$\mathdefault{e^{x}}$"
    assert plain_math_label(r"$\mathdefault{10^{0.30}}$") == r"$\mathdefault{10^{0.30}}$"


def test_a_log_axis_is_drawn_without_mathtext() -> None:
    fig = MplFigure(figsize=(4, 3))
    ax = fig.add_subplot()
    ax.plot([0.01, 10.0, 1000.0], [1.0, 2.0, 3.0])
    ax.set_xscale("log")
    svg = to_svg(fig, "t")
    assert "mathdefault" not in svg
    labels = set(re.findall(r">([^<>]+)</text>", svg))
    assert {"10⁻²", "10⁰", "10²"} <= labels, labels
