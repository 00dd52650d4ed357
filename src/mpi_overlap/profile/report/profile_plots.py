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
are svg_chart.Chart data written as SVG text (no matplotlib: `profile`'s start-up,
issue 38).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from ...report.html import Figure, Section
from ...report.svg_chart import Area, Bar, Chart, Key, Label, Line, Mark, Panel, Ticks
from ...run.rundir import Run
from .profile_table import analysis_of, is_profile, unique_worst

MANY_RANKS = 16  # above this many ranks, bins show the spread across ranks, not each rank
LABELLED_RANKS = 8  # up to this many ranks, each bar of a bin carries its rank number
TOP_ENTRIES = 12  # bars per panel of the non-overlapped time chart
# Above this many ranks the per-rank chart draws areas, not one bar per rank (1024 ranks'
# 4096 bars made a large page for no more information).
DENSE_RANKS = 128
# Above this many ranks the per-rank chart shows each measure sorted over the ranks (its
# distribution), read at this many points: 8 192 ranks' areas made a 3.4 MB SVG.
SORTED_RANKS = 1024
MIN_COLOUR = "#1b7f3b"  # overlapped for certain (minimum bound)
MAYBE_COLOUR = "#a8d5b0"  # possibly overlapped (between the bounds)
LOST_COLOUR = "#e9a39b"  # not overlapped in any case (transfer − maximum)
WORST_COLOUR = "#b42318"
SPREAD_MAX_COLOUR = "#4f9a5c"  # the whisker of the maximum bound across ranks
NA_COLOUR = "#8c8c8c"
BOUNDS_CAPTION = (
    "Dark green: overlapped for certain (minimum bound); light green: possibly overlapped "
    "(up to the maximum bound); red: not overlapped in any case (transfer time − maximum "
    "bound). Percent of the transfer time of that bar."
)


def _legend_keys() -> list[Key]:
    return [
        Key("overlapped ≥ (min bound)", MIN_COLOUR),
        Key("possibly overlapped (≤ max bound)", MAYBE_COLOUR),
        Key("not overlapped (xfer − max)", LOST_COLOUR),
    ]


def time_unit(seconds: float) -> tuple[str, float]:
    """A unit for an axis whose largest value is `seconds`: ('ms', 1e-3), ..."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def nice_ticks(top: float) -> tuple[float, Ticks]:
    """An axis from 0 to a little above `top` (5 % headroom, as matplotlib's margins) and
    its ticks at 1, 2, 2.5 or 5 × 10^k apart, four to nine of them: (limit, ticks)."""
    limit = top * 1.05 if top > 0 else 1.0
    raw = limit / 8
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw)
    decimals = 0  # as many as the step needs (2.5: one; 0.025: three)
    while decimals < 12 and abs(round(step, decimals) - step) > 1e-9 * step:
        decimals += 1
    count = int(limit / step + 1e-9)
    at = [i * step for i in range(count + 1)]
    return limit, Ticks(at, [f"{v:.{decimals}f}" for v in at])


def _stacked(panel: Panel, xs: list[float], lo: list[float | None], hi: list[float | None],
             width: float) -> None:
    """Stacked 100 % bars of the overlap bounds; a missing value draws no bar. Beyond
    DENSE_RANKS positions, the same as three step areas (a missing value: a gap)."""
    have = [a is not None and b is not None for a, b in zip(lo, hi, strict=True)]
    if not any(have):
        return
    if len(xs) > DENSE_RANKS:
        mn = [v if h else None for v, h in zip(lo, have, strict=True)]
        mx = [v if h else None for v, h in zip(hi, have, strict=True)]
        zero = [0.0 if h else None for h in have]
        full = [100.0 if h else None for h in have]
        for low, high, colour in ((zero, mn, MIN_COLOUR), (mn, mx, MAYBE_COLOUR),
                                  (mx, full, LOST_COLOUR)):
            panel.areas.append(Area(list(xs), low, high, colour, step=True))
        return
    kept = [(x, a, b) for x, a, b, h in zip(xs, lo, hi, have, strict=True) if h]
    panel.bars += [Bar(x, a, width, MIN_COLOUR) for x, a, _ in kept]
    panel.bars += [Bar(x, b - a, width, MAYBE_COLOUR, base=a) for x, a, b in kept]
    panel.bars += [Bar(x, 100.0 - b, width, LOST_COLOUR, base=b) for x, _, b in kept]


def pct_ticks() -> Ticks:
    """A percentage axis by quarters (this module's figures and the checks' figure)."""
    return Ticks([0, 25, 50, 75, 100], ["0", "25", "50", "75", "100"])


def bin_ticks(labels: list[str]) -> Ticks:
    """Size bins at 0, 1, ... under their labels, slanted beyond six (this module's figures
    and the checks' figure)."""
    return Ticks([float(i) for i in range(len(labels))], labels, size=8,
                 rotation=30 if len(labels) > 6 else 0)


def _pct_axis(panel: Panel) -> None:
    panel.ylim = (0.0, 100.0)
    panel.yticks = pct_ticks()
    panel.ylabel = "% of transfer time"
    panel.grid = "y"


# ---------------------------------------------------------------- (1) per size bin


def bins_figure(a: dict[str, Any]) -> Chart | None:
    m = a.get("bins_by_rank") or {}
    bins, ranks = m.get("bins") or [], m.get("ranks") or []
    if not bins or not ranks:
        return None
    nb, nr = len(bins), len(ranks)
    centres = [float(i) for i in range(nb)]
    ax = Panel(xlim=(-0.6, nb - 0.4), ylim=(0.0, 100.0), title_pad=26.0,
               title="Overlap by message size" + (" and rank" if nr <= MANY_RANKS else ""),
               xlabel="message size (bin)", xticks=bin_ticks([b["label"] for b in bins]))
    label_ranks = nr <= LABELLED_RANKS and nr > 1
    if nr <= MANY_RANKS:
        width = 0.8 / nr
        minor: list[float] = []
        for j in range(nr):
            xs = [c - 0.4 + width * (j + 0.5) for c in centres]
            minor.extend(xs)
            _stacked(ax, xs, [row[j] for row in m["min_pct"]],
                     [row[j] for row in m["max_pct"]], width * 0.92)
        if label_ranks:  # rank numbers under each bar, bin names below them
            ax.minor_xticks = Ticks(minor, [str(ranks[j]) for j in range(nr) for _ in range(nb)],
                                    size=6.5, colour="#595959", pad=2)
    else:
        # the job as one bar per bin, and the spread of both bounds across ranks
        job_bins = {(b["lo"], b["hi"]): b for b in a["rankings"]["bins"]}
        lo = [job_bins.get((b["lo"], b["hi"]), {}).get("min_pct") for b in bins]
        hi = [job_bins.get((b["lo"], b["hi"]), {}).get("max_pct") for b in bins]
        _stacked(ax, centres, lo, hi, 0.5)
        for key, dx, colour in (("min_pct", -0.3, MIN_COLOUR),
                                ("max_pct", 0.3, SPREAD_MAX_COLOUR)):
            for i, row in enumerate(m[key]):
                vals = [v for v in row if v is not None]
                if not vals:
                    continue
                x = centres[i] + dx
                ax.marks.append(Mark(x, min(vals), "|", colour, to=max(vals), width=1.6))
                ax.marks.append(Mark(x, statistics.median(vals), "_", "#000000", size=9,
                                     width=2))
    for i in range(nb):
        xfer = sum(m["xfer_s"][i])
        count = sum(m["transfers"][i])
        unit, scale = time_unit(xfer)
        ax.labels.append(Label(centres[i], 101.5, f"{xfer / scale:.3g} {unit}\n{count:,} tr.",
                               size=7, colour="#4d4d4d"))
    _pct_axis(ax)
    keys = _legend_keys()
    if nr > MANY_RANKS:
        keys += [Key("min % across ranks (left)", MIN_COLOUR, "line"),
                 Key("max % across ranks (right)", SPREAD_MAX_COLOUR, "line"),
                 Key("median across ranks", "#000000", "mark")]
    width_in = min(14.0, max(8.0, 3.0 + 0.9 * nb + 0.05 * nb * min(nr, MANY_RANKS)))
    return Chart(size=(width_in, 6.8), panels=[ax, _absolute_panel(a, bins, centres)],
                 rows=2, heights=[3, 2], legend=keys)


def _absolute_panel(a: dict[str, Any], bins: list[dict[str, Any]],
                    centres: list[float]) -> Panel:
    """The same bins in seconds, the job's sums over ranks (the analysis' bin ranking): a
    bin whose transfers took nanoseconds is drawn that small, beside one that took most of
    the job's time (the percentages above give every bin the same height)."""
    job = {(b["lo"], b["hi"]): b for b in a["rankings"]["bins"]}

    def col(key: str) -> list[float]:
        return [float(job.get((b["lo"], b["hi"]), {}).get(key) or 0.0) for b in bins]

    xfer, low, high = col("xfer_s"), col("min_s"), col("max_s")
    unit, scale = time_unit(max(xfer, default=0.0))
    top, yticks = nice_ticks(max(xfer, default=0.0) / scale)
    ax = Panel(xlim=(-0.6, len(centres) - 0.4), ylim=(0.0, top), yticks=yticks, grid="y",
               title="The same bins by absolute transfer time", title_size=9,
               ylabel=f"transfer time ({unit}),\nall ranks", ylabel_size=8,
               xticks=bin_ticks([b["label"] for b in bins]))
    ax.bars += [Bar(x, lo / scale, 0.5, MIN_COLOUR) for x, lo in zip(centres, low, strict=True)]
    ax.bars += [Bar(x, (hi - lo) / scale, 0.5, MAYBE_COLOUR, base=lo / scale)
                for x, lo, hi in zip(centres, low, high, strict=True)]
    ax.bars += [Bar(x, (t - hi) / scale, 0.5, LOST_COLOUR, base=hi / scale)
                for x, hi, t in zip(centres, high, xfer, strict=True)]
    return ax


# ---------------------------------------------------------------- (2) per rank


def _sorted_curve(ranks: list[dict[str, Any]], key: str, at: list[float]) -> list[float] | None:
    """The values of `key` over the ranks (None left out), sorted, read at the percentages
    `at` of the ranks: values that ranks had, not interpolated between them (numpy's
    percentile, method "inverted_cdf")."""
    values = sorted(float(r[key]) for r in ranks if r[key] is not None)
    n = len(values)
    if not n:
        return None
    return [values[min(n - 1, max(0, math.ceil(n * p / 100.0) - 1))] for p in at]


def sorted_ranks_figure(ranks: list[dict[str, Any]], worst: int | None) -> Chart:
    """Many ranks: each measure sorted over the ranks, a distribution in place of a bar
    per rank. x: the share of ranks at or below the value."""
    at = [100.0 * i / (SORTED_RANKS - 1) for i in range(SORTED_RANKS)]
    pct_ticks = Ticks([0, 20, 40, 60, 80, 100], ["0", "20", "40", "60", "80", "100"])
    top = Panel(xlim=(0.0, 100.0), ylim=(0.0, 100.0),
                title=f"Overlap across {len(ranks)} ranks, each bound sorted")
    for key, colour, name in (("min_pct", MIN_COLOUR, "minimum bound"),
                              ("max_pct", MAYBE_COLOUR, "maximum bound")):
        curve = _sorted_curve(ranks, key, at)
        if curve is not None:
            top.lines.append(Line(at, curve, colour, width=2, label=name))
            top.legend.append(Key(name, colour, "line"))
    _pct_axis(top)
    lost = _sorted_curve(ranks, "nonoverlap_s", at)
    peak = lost[-1] if lost is not None else 0.0
    unit, scale = time_unit(peak)
    limit, yticks = nice_ticks(peak / scale)
    bottom = Panel(xlim=(0.0, 100.0), ylim=(0.0, limit), yticks=yticks, grid="y",
                   ylabel=f"not overlapped ({unit})", xticks=pct_ticks,
                   xlabel="% of ranks at or below the value")
    if lost is not None:
        bottom.areas.append(Area(at, [0.0] * len(at), [v / scale for v in lost], LOST_COLOUR))
    if worst is not None:
        bottom.marks.append(Mark(100.0, peak / scale, "v", WORST_COLOUR))
        bottom.labels.append(Label(100.0, peak / scale, f"rank {worst}", size=8,
                                   colour=WORST_COLOUR, anchor="end", dx=-6, dy=4))
    return Chart(size=(10.0, 5.2), panels=[top, bottom], rows=2, heights=[3, 2])


def _included(a: dict[str, Any]) -> list[dict[str, Any]]:
    """The ranks the per-rank figure draws: those in the job's totals."""
    return [r for r in a.get("ranks") or [] if r["in_totals"]]


def _sorted_view(ranks: list[dict[str, Any]]) -> bool:
    """Whether the per-rank figure shows each measure sorted (many ranks)."""
    return len(ranks) > SORTED_RANKS


def ranks_figure(a: dict[str, Any]) -> Chart | None:
    ranks = _included(a)
    if not ranks:
        return None
    if _sorted_view(ranks):
        return sorted_ranks_figure(ranks, unique_worst(a))
    n = len(ranks)
    xs = [float(i) for i in range(n)]
    top = Panel(xlim=(-0.6, n - 0.4), ylim=(0.0, 100.0), title="Overlap per rank")
    _stacked(top, xs, [r["min_pct"] for r in ranks], [r["max_pct"] for r in ranks], 0.75)
    for x, r in zip(xs, ranks, strict=True):
        if r["min_pct"] is None and n <= DENSE_RANKS:  # many ranks: the gap says it
            top.labels.append(Label(x, 3, "no transfers", size=7, colour=NA_COLOUR,
                                    rotation=90, anchor="start", va="middle"))
    _pct_axis(top)
    worst = unique_worst(a)
    lost = [float(r["nonoverlap_s"]) for r in ranks]
    unit, scale = time_unit(max(lost, default=0.0))
    limit, yticks = nice_ticks(max(lost, default=0.0) / scale)
    step = 1 if n <= 32 else 4 if n <= DENSE_RANKS else max(1, n // 16)
    bottom = Panel(xlim=(-0.6, n - 0.4), ylim=(0.0, limit), yticks=yticks, grid="y",
                   ylabel=f"not overlapped ({unit})", xlabel="rank",
                   xticks=Ticks(xs[::step], [str(r["rank"]) for r in ranks][::step]))
    if n > DENSE_RANKS:
        bottom.areas.append(Area(xs, [0.0] * n, [v / scale for v in lost], LOST_COLOUR,
                                 step=True))
        bottom.marks += [Mark(x, r["nonoverlap_s"] / scale, "v", WORST_COLOUR)
                         for x, r in zip(xs, ranks, strict=True) if r["rank"] == worst]
    else:
        bottom.bars += [Bar(x, v / scale, 0.75,
                            WORST_COLOUR if r["rank"] == worst else LOST_COLOUR)
                        for x, v, r in zip(xs, lost, ranks, strict=True)]
    keys = _legend_keys()
    if worst is not None:
        keys.append(Key(f"worst rank ({worst})", WORST_COLOUR))
    return Chart(size=(min(14.0, max(8.0, 4.0 + 0.22 * n)), 5.2), panels=[top, bottom],
                 rows=2, heights=[3, 2], legend=keys)


# ---------------------------------------------------------------- (3) where time is lost


def _lost_panel(entries: list[dict[str, Any]], name_key: str, title: str, scale: float,
                unit: str) -> Panel:
    losing = [e for e in entries if e["nonoverlap_s"] > 0]
    shown = losing[:TOP_ENTRIES]
    ys = [float(i) for i in range(len(shown))]
    values = [e["nonoverlap_s"] / scale for e in shown]
    limit = (max(values) if values else 1.0) * 1.3
    _, xticks = nice_ticks(limit / 1.05)  # ticks up to `limit`, none beyond
    rest = len(losing) - len(shown)
    panel = Panel(xlim=(0.0, limit), ylim=(-0.6, max(len(shown), 1) - 0.4), horizontal=True,
                  invert_y=True, grid="x", xticks=xticks,
                  yticks=Ticks(ys, [str(e[name_key]) for e in shown]),
                  xlabel=f"not overlapped, at least ({unit})", title_size=10,
                  title=title + (f" (top {len(shown)}; {rest} more in the table)"
                                 if rest else ""))
    panel.bars += [Bar(y, v, 0.7, LOST_COLOUR) for y, v in zip(ys, values, strict=True)]
    for y, v, e in zip(ys, values, shown, strict=True):
        share = f" ({e['share_pct']:.0f} %)" if e["share_pct"] is not None else ""
        panel.labels.append(Label(v, y, f" {v:.3g}{share}", size=7.5, colour="#404040",
                                  anchor="start", va="middle"))
    return panel


def lost_figure(a: dict[str, Any]) -> Chart | None:
    regions = a["rankings"]["regions"]
    functions = a["rankings"]["functions"]
    if a["job"]["nonoverlap_s"] <= 0:
        return None
    unit, scale = time_unit(max(e["nonoverlap_s"] for e in regions + functions))
    panels = [(regions, "region", "by region"), (functions, "fn", "by MPI function (posting)")]
    rows = max(min(TOP_ENTRIES, len([e for e in p[0] if e["nonoverlap_s"] > 0])) for p in panels)
    return Chart(size=(11, 1.3 + 0.32 * max(rows, 2)), cols=2,
                 panels=[_lost_panel(entries, key, title, scale, unit)
                         for entries, key, title in panels])


# ---------------------------------------------------------------- sections


def _figure(chart: Chart | None, caption: str) -> list[Figure]:
    return [] if chart is None else [Figure(chart.svg(), caption)]


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
                per_bin
                + "Above each bin: its transfer time and transfers, all ranks. "
                + BOUNDS_CAPTION,
            )
            + _figure(ranks_figure(a), _ranks_caption(a))
            + _figure(
                lost_figure(a),
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
