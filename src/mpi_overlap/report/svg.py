"""Figures as inline SVG, shared by the report modules that draw with matplotlib (every
command's but the profile's, whose figures svg_chart.py writes without it): matplotlib's
object API (no pyplot) renders through Agg/SVG without a display and without global
figure state; and the log2 positions of a size axis."""

from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.figure import Figure as MplFigure


def to_svg(fig: MplFigure, key: str) -> str:
    """SVG text ready to inline in HTML.

    A fixed hash salt per figure keeps ids deterministic yet distinct between the
    figures of one page (ids share a namespace once inlined); text stays text so the
    page is small and searchable.
    """
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": key}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def size_positions(sizes: list[int]) -> dict[int, float]:
    """log2 positions; 0 B has no logarithm, so it sits one step left of the smallest size."""
    positive = [s for s in sizes if s > 0]
    zero_at = math.log2(min(positive)) - 1 if positive else 0.0
    return {s: math.log2(s) if s > 0 else zero_at for s in sizes}
