"""Profile runs: the report's figures, as inline SVG strings.

In the manner of the source's Figures 17–20 (Shet et al., §4: minimum and maximum overlap %
per message-size range), per run:

(1) overlap % per size bin: one stacked bar per rank inside each bin's group (up to 16
    ranks); above that, one bar for the whole job per bin with the spread across ranks
    (min / median / max) of both bounds drawn as whiskers;
(2) overlap % per rank, with the non-overlapped time per rank below it (above 1 024 ranks,
    each measure sorted over the ranks: their distribution);
(3) non-overlapped time by region and by MPI function, horizontal bars.

A bar of 100 % stacks: the minimum bound (overlapped for certain), the gap up to the
maximum bound (possibly overlapped) and the rest (not overlapped in any case). Figures
are built with matplotlib's object API (no pyplot, no global state), like
svg.py.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..rundir import Run
from .html import Figure, Section
from .profile_table import analysis_of, is_profile, unique_worst
from .svg import to_svg

MANY_RANKS = 16  # above this many ranks, bins show the spread across ranks, not each rank
LABELLED_RANKS = 8  # up to this many ranks, each bar of a bin carries its rank number
TOP_ENTRIES = 12  # bars per panel of the non-overlapped time chart
# Above this many ranks the per-rank chart draws areas, not one bar per rank: a bar is a
# matplotlib patch, and 1024 ranks' 4096 of them took 9 s to draw.
DENSE_RANKS = 128
# Above this many ranks the per-rank chart shows each measure sorted over the ranks (its
# distribution), read at this many points: 8 192 ranks' areas made a 3.4 MB SVG.
SORTED_RANKS = 1024
MIN_COLOUR = "#1b7f3b"  # overlapped for certain (minimum bound)
MAYBE_COLOUR = "#a8d5b0"  # possibly overlapped (between the bounds)
LOST_COLOUR = "#e9a39b"  # not overlapped in any case (transfer − maximum)
WORST_COLOUR = "#b42318"
NA_COLOUR = "0.55"
BOUNDS_CAPTION = (
    "Dark green: overlapped for certain (minimum bound); light green: possibly overlapped "
    "(up to the maximum bound); red: not overlapped in any case (transfer time − maximum "
    "bound). Percent of the transfer time of that bar."
)


def _legend_handles() -> list[Patch]:
    return [
        Patch(color=MIN_COLOUR, label="overlapped ≥ (min bound)"),
        Patch(color=MAYBE_COLOUR, label="possibly overlapped (≤ max bound)"),
        Patch(color=LOST_COLOUR, label="not overlapped (xfer − max)"),
    ]


def time_unit(seconds: float) -> tuple[str, float]:
    """A unit for an axis whose largest value is `seconds`: ('ms', 1e-3), ..."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def _stacked(
    ax: Axes, xs: np.ndarray, lo: list[float | None], hi: list[float | None], width: float
) -> None:
    """Stacked 100 % bars of the overlap bounds; a missing value draws no bar. Beyond
    DENSE_RANKS positions, the same as three step areas (a missing value: a gap)."""
    have = np.array([a is not None and b is not None for a, b in zip(lo, hi, strict=True)])
    if not have.any():
        return
    if len(xs) > DENSE_RANKS:
        mn = np.array([np.nan if v is None else v for v in lo], dtype=float)
        mx = np.array([np.nan if v is None else v for v in hi], dtype=float)
        for low, high, colour in ((0.0, mn, MIN_COLOUR), (mn, mx, MAYBE_COLOUR),
                                  (mx, 100.0, LOST_COLOUR)):
            ax.fill_between(xs, low, high, where=have, step="mid", color=colour, lw=0)
        return
    x = xs[have]
    mn = np.array([v for v, h in zip(lo, have, strict=True) if h], dtype=float)
    mx = np.array([v for v, h in zip(hi, have, strict=True) if h], dtype=float)
    ax.bar(x, mn, width, color=MIN_COLOUR, lw=0)
    ax.bar(x, mx - mn, width, bottom=mn, color=MAYBE_COLOUR, lw=0)
    ax.bar(x, 100.0 - mx, width, bottom=mx, color=LOST_COLOUR, lw=0)


def _pct_axis(ax: Axes) -> None:
    ax.set_ylim(0, 100)
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.set_ylabel("% of transfer time")
    ax.grid(True, axis="y", alpha=0.3)


# ---------------------------------------------------------------- (1) per size bin


def bins_figure(a: dict[str, Any]) -> MplFigure | None:
    m = a.get("bins_by_rank") or {}
    bins, ranks = m.get("bins") or [], m.get("ranks") or []
    if not bins or not ranks:
        return None
    nb, nr = len(bins), len(ranks)
    fig = MplFigure(
        figsize=(min(14.0, max(8.0, 3.0 + 0.9 * nb + 0.05 * nb * min(nr, MANY_RANKS))), 6.8),
        layout="constrained",
    )
    ax, ax_abs = fig.subplots(2, 1, height_ratios=[3, 2])
    centres = np.arange(nb, dtype=float)
    label_ranks = nr <= LABELLED_RANKS and nr > 1
    if nr <= MANY_RANKS:
        width = 0.8 / nr
        minor: list[float] = []
        for j in range(nr):
            xs = centres - 0.4 + width * (j + 0.5)
            minor.extend(xs)
            _stacked(
                ax,
                xs,
                [row[j] for row in m["min_pct"]],
                [row[j] for row in m["max_pct"]],
                width * 0.92,
            )
        if label_ranks:  # rank numbers under each bar, bin names below them
            ax.set_xticks(
                minor,
                [str(ranks[j]) for j in range(nr) for _ in range(nb)],
                minor=True,
                fontsize=6.5,
                color="0.35",
            )
            ax.tick_params(axis="x", which="minor", length=0, pad=2)
            ax.tick_params(axis="x", which="major", length=0, pad=13)
    else:
        # the job as one bar per bin, and the spread of both bounds across ranks
        job_bins = {(b["lo"], b["hi"]): b for b in a["rankings"]["bins"]}
        lo = [job_bins.get((b["lo"], b["hi"]), {}).get("min_pct") for b in bins]
        hi = [job_bins.get((b["lo"], b["hi"]), {}).get("max_pct") for b in bins]
        _stacked(ax, centres, lo, hi, 0.5)
        for key, dx, colour in (("min_pct", -0.3, MIN_COLOUR), ("max_pct", 0.3, "#4f9a5c")):
            for i, row in enumerate(m[key]):
                vals = [v for v in row if v is not None]
                if not vals:
                    continue
                med = statistics.median(vals)
                ax.vlines(centres[i] + dx, min(vals), max(vals), color=colour, lw=1.6)
                ax.plot([centres[i] + dx], [med], marker="_", ms=9, mew=2, color="black")
    for i in range(nb):
        xfer = sum(m["xfer_s"][i])
        count = sum(m["transfers"][i])
        unit, scale = time_unit(xfer)
        ax.text(
            centres[i],
            101.5,
            f"{xfer / scale:.3g} {unit}\n{count:,} tr.",
            ha="center",
            va="bottom",
            fontsize=7,
            color="0.3",
        )
    ax.set_xticks(
        centres,
        [b["label"] for b in bins],
        rotation=30 if nb > 6 else 0,
        ha="right" if nb > 6 else "center",
        fontsize=8,
    )
    ax.set_xlim(-0.6, nb - 0.4)
    _pct_axis(ax)
    ax.set_xlabel("message size (bin)")
    ax.set_title(
        "Overlap by message size" + (" and rank" if nr <= MANY_RANKS else ""),
        fontsize=11,
        loc="left",
        pad=26,
    )
    handles: list[Any] = _legend_handles()
    if nr > MANY_RANKS:
        handles += [
            Line2D([], [], color=MIN_COLOUR, lw=1.6, label="min % across ranks (left)"),
            Line2D([], [], color="#4f9a5c", lw=1.6, label="max % across ranks (right)"),
            Line2D(
                [],
                [],
                color="black",
                marker="_",
                ms=9,
                mew=2,
                ls="none",
                label="median across ranks",
            ),
        ]
    fig.legend(handles=handles, fontsize=8, loc="outside right upper", frameon=False)
    _absolute_panel(ax_abs, a, bins, centres)
    return fig


def _absolute_panel(ax: Axes, a: dict[str, Any], bins: list[dict[str, Any]],
                    centres: np.ndarray) -> None:
    """The same bins in seconds, the job's sums over ranks (the analysis' bin ranking): a
    bin whose transfers took nanoseconds is drawn that small, beside one that took most of
    the job's time (the percentages above give every bin the same height)."""
    job = {(b["lo"], b["hi"]): b for b in a["rankings"]["bins"]}
    def col(key: str) -> np.ndarray:
        return np.array([float(job.get((b["lo"], b["hi"]), {}).get(key) or 0.0) for b in bins])

    xfer, low, high = col("xfer_s"), col("min_s"), col("max_s")
    unit, scale = time_unit(float(xfer.max()) if xfer.size else 0.0)
    ax.bar(centres, low / scale, 0.5, color=MIN_COLOUR, lw=0)
    ax.bar(centres, (high - low) / scale, 0.5, bottom=low / scale, color=MAYBE_COLOUR, lw=0)
    ax.bar(centres, (xfer - high) / scale, 0.5, bottom=high / scale, color=LOST_COLOUR, lw=0)
    many = len(bins) > 6
    ax.set_xticks(centres, [b["label"] for b in bins], rotation=30 if many else 0,
                  ha="right" if many else "center", fontsize=8)
    ax.set_xlim(-0.6, len(centres) - 0.4)
    ax.set_ylabel(f"transfer time ({unit}),\nall ranks", fontsize=8)
    ax.set_title("The same bins by absolute transfer time", fontsize=9, loc="left")
    ax.grid(True, axis="y", alpha=0.3)


# ---------------------------------------------------------------- (2) per rank


def _sorted_curve(ranks: list[dict[str, Any]], key: str, at: np.ndarray) -> np.ndarray | None:
    """The values of `key` over the ranks (None left out), sorted, read at the percentages
    `at` of the ranks: values that ranks had, not interpolated between them."""
    values = np.array([r[key] for r in ranks if r[key] is not None], dtype=float)
    return np.percentile(values, at, method="inverted_cdf") if values.size else None


def sorted_ranks_figure(ranks: list[dict[str, Any]], worst: int | None) -> MplFigure:
    """Many ranks: each measure sorted over the ranks, a distribution in place of a bar
    per rank. x: the share of ranks at or below the value."""
    at = np.linspace(0.0, 100.0, SORTED_RANKS)
    fig = MplFigure(figsize=(10.0, 5.2), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    for key, colour, name in (("min_pct", MIN_COLOUR, "minimum bound"),
                              ("max_pct", MAYBE_COLOUR, "maximum bound")):
        curve = _sorted_curve(ranks, key, at)
        if curve is not None:
            top.plot(at, curve, color=colour, lw=2, label=name)
    _pct_axis(top)
    top.set_title(f"Overlap across {len(ranks)} ranks, each bound sorted", fontsize=11,
                  loc="left")
    top.legend(fontsize=8, frameon=False, loc="upper left")
    lost = _sorted_curve(ranks, "nonoverlap_s", at)
    peak = float(lost[-1]) if lost is not None else 0.0
    unit, scale = time_unit(peak)
    if lost is not None:
        bottom.fill_between(at, 0.0, lost / scale, color=LOST_COLOUR, lw=0)
    if worst is not None:
        bottom.plot([100.0], [peak / scale], "v", color=WORST_COLOUR, ms=6)
        bottom.annotate(f"rank {worst}", (100.0, peak / scale), textcoords="offset points",
                        xytext=(-6, 4), ha="right", fontsize=8, color=WORST_COLOUR)
    bottom.set_ylabel(f"not overlapped ({unit})")
    bottom.grid(True, axis="y", alpha=0.3)
    bottom.set_xlabel("% of ranks at or below the value")
    bottom.set_xlim(0.0, 100.0)
    return fig


def _included(a: dict[str, Any]) -> list[dict[str, Any]]:
    """The ranks the per-rank figure draws: those in the job's totals."""
    return [r for r in a.get("ranks") or [] if r["in_totals"]]


def _sorted_view(ranks: list[dict[str, Any]]) -> bool:
    """Whether the per-rank figure shows each measure sorted (many ranks)."""
    return len(ranks) > SORTED_RANKS


def ranks_figure(a: dict[str, Any]) -> MplFigure | None:
    ranks = _included(a)
    if not ranks:
        return None
    if _sorted_view(ranks):
        return sorted_ranks_figure(ranks, unique_worst(a))
    n = len(ranks)
    fig = MplFigure(figsize=(min(14.0, max(8.0, 4.0 + 0.22 * n)), 5.2), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    xs = np.arange(n, dtype=float)
    _stacked(top, xs, [r["min_pct"] for r in ranks], [r["max_pct"] for r in ranks], 0.75)
    for x, r in zip(xs, ranks, strict=True):
        if r["min_pct"] is None and n <= DENSE_RANKS:  # many ranks: the gap says it
            top.text(
                x,
                3,
                "no transfers",
                rotation=90,
                ha="center",
                va="bottom",
                fontsize=7,
                color=NA_COLOUR,
            )
    _pct_axis(top)
    top.set_title("Overlap per rank", fontsize=11, loc="left")
    worst = unique_worst(a)
    lost = np.array([r["nonoverlap_s"] for r in ranks])
    unit, scale = time_unit(float(lost.max()) if lost.size else 0.0)
    if n > DENSE_RANKS:
        bottom.fill_between(xs, 0.0, lost / scale, step="mid", color=LOST_COLOUR, lw=0)
        for x, r in zip(xs, ranks, strict=True):
            if r["rank"] == worst:
                bottom.plot([x], [r["nonoverlap_s"] / scale], "v", color=WORST_COLOUR, ms=6)
    else:
        colours = [WORST_COLOUR if r["rank"] == worst else LOST_COLOUR for r in ranks]
        bottom.bar(xs, lost / scale, 0.75, color=colours, lw=0)
    bottom.set_ylabel(f"not overlapped ({unit})")
    bottom.grid(True, axis="y", alpha=0.3)
    step = 1 if n <= 32 else 4 if n <= DENSE_RANKS else max(1, n // 16)
    bottom.set_xticks(xs[::step], [str(r["rank"]) for r in ranks][::step], fontsize=8)
    bottom.set_xlabel("rank")
    bottom.set_xlim(-0.6, n - 0.4)
    handles = _legend_handles()
    if worst is not None:
        handles.append(Patch(color=WORST_COLOUR, label=f"worst rank ({worst})"))
    fig.legend(handles=handles, fontsize=8, loc="outside right upper", frameon=False)
    return fig


# ---------------------------------------------------------------- (3) where time is lost


def _lost_panel(
    ax: Axes, entries: list[dict[str, Any]], name_key: str, title: str, scale: float, unit: str
) -> None:
    losing = [e for e in entries if e["nonoverlap_s"] > 0]
    shown = losing[:TOP_ENTRIES]
    ys = np.arange(len(shown), dtype=float)
    values = np.array([e["nonoverlap_s"] for e in shown]) / scale
    ax.barh(ys, values, 0.7, color=LOST_COLOUR, lw=0)
    for y, v, e in zip(ys, values, shown, strict=True):
        share = f" ({e['share_pct']:.0f} %)" if e["share_pct"] is not None else ""
        ax.text(v, y, f" {v:.3g}{share}", va="center", ha="left", fontsize=7.5, color="0.25")
    ax.set_yticks(ys, [str(e[name_key]) for e in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, (float(values.max()) if values.size else 1.0) * 1.3)
    ax.set_xlabel(f"not overlapped, at least ({unit})")
    ax.grid(True, axis="x", alpha=0.3)
    rest = len(losing) - len(shown)
    ax.set_title(
        title + (f" (top {len(shown)}; {rest} more in the table)" if rest else ""),
        fontsize=10,
        loc="left",
    )


def lost_figure(a: dict[str, Any]) -> MplFigure | None:
    regions = a["rankings"]["regions"]
    functions = a["rankings"]["functions"]
    if a["job"]["nonoverlap_s"] <= 0:
        return None
    unit, scale = time_unit(max(e["nonoverlap_s"] for e in regions + functions))
    panels = [(regions, "region", "by region"), (functions, "fn", "by MPI function (posting)")]
    rows = max(min(TOP_ENTRIES, len([e for e in p[0] if e["nonoverlap_s"] > 0])) for p in panels)
    fig = MplFigure(figsize=(11, 1.3 + 0.32 * max(rows, 2)), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, (entries, key, title) in zip(axes, panels, strict=True):
        _lost_panel(ax, entries, key, title, scale, unit)
    return fig


# ---------------------------------------------------------------- sections


def _figure(fig: MplFigure | None, key: str, caption: str) -> list[Figure]:
    return [] if fig is None else [Figure(to_svg(fig, key), caption)]


def sections(runs: list[Run]) -> list[Section]:
    out = []
    for run in runs:
        if not is_profile(run):
            continue
        a = analysis_of(run)
        if a is None:
            continue
        label = run.label
        nr = len((a.get("bins_by_rank") or {}).get("ranks") or [])
        if nr <= MANY_RANKS:
            per_bin = (
                f"Each bin holds one bar per rank (rank {_first_rank(a)} on the left"
                + (", numbered under the bars" if 1 < nr <= LABELLED_RANKS else "")
                + "); a missing bar: that rank sent or received nothing of that size. "
            )
        else:
            per_bin = (
                "Bars: the whole job (sums over ranks). Whiskers: range of the "
                "minimum (left) and maximum (right) bound across ranks, tick at the "
                "median. "
            )
        figures = (
            _figure(
                bins_figure(a),
                f"profile-bins-{label}",
                per_bin
                + "Above each bin: its transfer time and transfers, all ranks. "
                + BOUNDS_CAPTION,
            )
            + _figure(ranks_figure(a), f"profile-ranks-{label}", _ranks_caption(a))
            + _figure(
                lost_figure(a),
                f"profile-lost-{label}",
                "Non-overlapped transfer time (transfer − maximum bound: the least time not "
                "hidden) summed over ranks, with its share of the job's non-overlapped time; "
                "functions are those that posted the transfers. Only entries that lose time are "
                "drawn.",
            )
        )
        if figures:
            out.append(Section(f"Overlap profile — {label}", None, figures))
    return out


def _ranks_caption(a: dict[str, Any]) -> str:
    worst = "" if unique_worst(a) is None else ", the worst rank in dark red"
    if _sorted_view(_included(a)):
        return ("Top: the minimum and maximum overlap bound of every rank, each sorted "
                "(x: the share of ranks at or below; a rank's two bounds may sit at different "
                "x). Bottom: non-overlapped time per rank (transfer time − maximum bound), "
                f"sorted{worst}. Read at {SORTED_RANKS} points; the per-rank table's CSV has "
                "every rank.")
    return ("Top: overlap bounds per rank. Bottom: non-overlapped time per rank (transfer "
            f"time − maximum bound){worst}. " + BOUNDS_CAPTION)


def _first_rank(a: dict[str, Any]) -> int:
    ranks = (a.get("bins_by_rank") or {}).get("ranks") or [0]
    return int(ranks[0])
