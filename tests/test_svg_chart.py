"""svg_chart's axes and marks beyond the profile's bars (what the overhead benchmark's
figures need): log and symlog scales as matplotlib places them, ticks a reader can read,
lines broken at a missing value, error bars cut at the plot's edge, markers."""

from __future__ import annotations

import math
import re

import pytest

from mpi_overlap.report.svg_chart import (
    Chart,
    ErrorBar,
    Key,
    Line,
    Mark,
    Panel,
    linear_ticks,
    log_ticks,
    padded,
    scaled,
    symlog_ticks,
    unscaled,
)


@pytest.mark.parametrize("scale", ["linear", "log", "symlog"])
@pytest.mark.parametrize("v", [0.003, 0.5, 1.0, 7.0, 420.0])
def test_unscaled_inverts_scaled(scale: str, v: float) -> None:
    assert unscaled(scaled(v, scale, 0.5), scale, 0.5) == pytest.approx(v)
    if scale == "symlog":
        assert unscaled(scaled(-v, scale, 0.5), scale, 0.5) == pytest.approx(-v)


def test_symlog_is_linear_inside_its_threshold_and_log_beyond() -> None:
    # matplotlib's SymmetricalLogTransform(base 10, linthresh 2, linscale 1)
    stretch = 1 / 0.9
    assert scaled(1.0, "symlog", 2.0) == pytest.approx(stretch)
    assert scaled(-2.0, "symlog", 2.0) == pytest.approx(-2 * stretch)
    assert scaled(200.0, "symlog", 2.0) == pytest.approx(2 * (stretch + 2))


def test_padded_adds_the_margin_in_the_axis_own_units() -> None:
    assert padded(0.0, 10.0) == pytest.approx((-0.5, 10.5))
    lo, hi = padded(1.0, 100.0, "log")  # two decades: a tenth of a decade each side
    assert (math.log10(lo), math.log10(hi)) == pytest.approx((-0.1, 2.1))


def test_ticks() -> None:
    t = linear_ticks(-2.0, 102.0)
    assert t.at == [0, 20, 40, 60, 80, 100] and t.labels[0] == "0"
    assert linear_ticks(0.0, 1.3, most=5).labels == ["0.0", "0.5", "1.0"]
    assert linear_ticks(-3.0, 3.0, most=4).labels == ["−2", "0", "2"]
    assert log_ticks(0.2, 330.0).labels == ["10⁰", "10¹", "10²"]
    s = symlog_ticks(-3.0, 400.0, 0.5)  # powers of ten from linthresh outwards, and 0
    assert s.labels == ["−10⁰", "0", "10⁰", "10¹", "10²"]
    assert s.at[:2] == [-1.0, 0.0]
    # none inside the linear part, where its label would run into "0"
    assert symlog_ticks(-200.0, 300.0, 0.06).labels == [
        "−10²", "−10¹", "−10⁰", "−10⁻¹", "0", "10⁻¹", "10⁰", "10¹", "10²"]
    assert symlog_ticks(-0.3, 5.0, 0.1).labels == ["−10⁻¹", "0", "10⁻¹", "10⁰"]


def _panel(**kw: object) -> Panel:
    return Panel(xlim=(0.0, 10.0), ylim=(1.0, 100.0), **kw)  # type: ignore[arg-type]


def test_a_line_is_broken_where_a_value_is_missing() -> None:
    p = _panel(lines=[Line([1, 2, 3, 4, 5], [2.0, 3.0, None, 5.0, 6.0], "#123456", dash="--")])
    svg = Chart((4, 3), [p]).svg()
    lines = re.findall(r'<polyline points="([^"]*)"[^>]*stroke="#123456"[^>]*>', svg)
    assert [len(pts.split()) for pts in lines] == [2, 2]
    assert svg.count("stroke-dasharray") == 2


def test_error_bars_are_cut_at_the_plot_edge_and_lose_that_cap() -> None:
    log = _panel(yscale="log", errors=[ErrorBar(5.0, -3.0, 10.0, "#abcdef")])
    svg = Chart((4, 3), [log]).svg()
    bars = re.findall(r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" '
                      r'stroke="#abcdef"', svg)
    assert len(bars) == 2  # the bar and the cap at 10; none at -3, below the axis
    frame = re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" '
                      r'fill="none"', svg)
    assert frame is not None
    bottom = float(frame[2]) + float(frame[4])
    assert float(bars[0][1]) == pytest.approx(bottom)


def test_markers_filled_and_hollow_and_their_keys() -> None:
    p = _panel(marks=[Mark(1, 2, "o", "#111111", 5.0), Mark(2, 3, "s", "#222222", 5.0),
                      Mark(3, 4, "*", "#333333", 8.0),
                      Mark(4, 5, "o", "#444444", 7.0, width=1.4, hollow=True)])
    keys = [Key("send", "#111111", "line", marker="o"),
            Key("not ok", "#444444", "marker", marker="o", hollow=True)]
    svg = Chart((4, 3), [p], legend=keys, legend_at="top", xlabel="x", ylabel="y").svg()
    assert svg.count('<circle') == 4  # two marks, two keys
    assert svg.count('fill="none" stroke="#444444"') == 2  # the hollow mark and its key
    assert '<rect x=' in svg and 'fill="#222222"' in svg
    assert svg.count('fill="#333333"') == 1  # the star
    key_y = re.search(r'<text x="[\d.]+" y="([\d.]+)"[^>]*>send</text>', svg)
    frame_y = re.search(r'<rect x="[\d.]+" y="([\d.]+)"[^>]*fill="none"', svg)
    assert key_y and frame_y and float(key_y[1]) < float(frame_y[1])  # legend above


def test_a_right_axis_has_its_own_scale_and_does_not_move_the_left_one() -> None:
    from mpi_overlap.report.svg_chart import fit_axes, linear_ticks

    p = Panel(xlim=(0.0, 1.0), ylim=(0.0, 1.0), y2lim=(0.0, 50.0),
              y2ticks=linear_ticks(0.0, 50.0), y2label="µs")
    p.lines.append(Line([0.0, 10.0], [0.0, 100.0], "#111111"))
    p.lines.append(Line([0.0, 10.0], [25.0, 50.0], "#222222", right=True))
    fit_axes(p, xlim=(0.0, 10.0))
    assert p.ylim == pytest.approx((-5.0, 105.0))  # the left line only
    svg = Chart((4, 3), [p], title="the figure").svg()
    frame = re.search(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" '
                      r'fill="none"', svg)
    right = re.search(r'<polyline points="[\d.]+,([\d.]+) [\d.]+,([\d.]+)"[^>]*#222222', svg)
    assert frame and right
    top, height = float(frame[1]), float(frame[2])
    assert float(right[1]) == pytest.approx(top + height / 2, abs=0.01)  # 25 of 0–50
    assert float(right[2]) == pytest.approx(top, abs=0.01)  # 50: the top
    assert ">the figure</text>" in svg and ">µs</text>" in svg


def test_symlog_x_with_a_short_linear_part() -> None:
    # linscale 0.5: the linear part ±linthresh spans half a decade's length
    assert scaled(0.1, "symlog", 0.1, linscale=0.5) == pytest.approx(0.1 * 0.5 / 0.9)
    assert unscaled(scaled(7.0, "symlog", 0.1, linscale=0.5), "symlog", 0.1,
                    linscale=0.5) == pytest.approx(7.0)
