"""Figures as inline SVG, shared by the report modules that draw with matplotlib (every
command's but the profile's, whose figures svg_chart.py writes without it): matplotlib's
object API (no pyplot) renders through Agg/SVG without a display and without global
figure state (a size axis' positions: svg_chart.size_positions).

Log axes are labelled with plain text (10³, 2⁻¹, 5×10², −10¹) instead of matplotlib's
mathtext ($\\mathdefault{10^{3}}$): the labels read the same, but every mathtext label is
parsed by pyparsing once per renderer, and a figure is measured and drawn with three
renderers, so log tick labels were about a fifth of the CPU a report of
`characterize --quick` spends drawing its 22 figures."""

from __future__ import annotations

import io
import re

import matplotlib
from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import LogFormatterSciNotation


def to_svg(fig: MplFigure, key: str) -> str:
    """SVG text ready to inline in HTML.

    A fixed hash salt per figure keeps ids deterministic yet distinct between the
    figures of one page (ids share a namespace once inlined); text stays text so the
    page is small and searchable.
    """
    _plain_log_labels(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": key}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


# the only forms LogFormatterSciNotation writes: ±b^{e}, ±c\times b^{e}, 0 (and a plain
# number below axes.formatter.min_exponent)
_MATHTEXT = re.compile(r"\$\\mathdefault\{(?P<body>[^$]*)\}\$")
_POWER = re.compile(r"\^\{(-?\d+)\}")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def plain_math_label(label: str) -> str:
    """A log tick label's mathtext as plain text that reads the same (10^{-2} -> 10⁻²,
    2\\times10^{1} -> 2×10¹, a leading minus as mathtext draws it, −); any other
    label, or mathtext this does not know, is returned unchanged (still drawn right)."""
    match = _MATHTEXT.fullmatch(label)
    if match is None:
        return label
    body = _POWER.sub(lambda p: p[1].translate(_SUPERSCRIPT), match["body"])
    body = body.replace("\\times", "×")
    if any(c in body for c in "\\{}^_$"):
        return label
    return body.replace("-", "−")


class _PlainLogFormatter(LogFormatterSciNotation):
    """The log scales' own formatter (same ticks labelled, same minor-label choice),
    writing plain text."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return plain_math_label(super().__call__(x, pos))


def _plain_log_labels(fig: MplFigure) -> None:
    """Give every log or symlog axis of the figure the plain-text formatter; the
    formatter's state (base, which minor ticks get labels) is kept as the scale set it."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for fmt in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if type(fmt) is LogFormatterSciNotation:
                    fmt.__class__ = _PlainLogFormatter
