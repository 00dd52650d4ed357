"""Analysis of a polling run (COMB's polling method): availability and bandwidth against
the poll interval and the message size.

Per (size, interval) over the samples, each a messaging loop and a dry loop run side by
side:
  availability = median(dry loop time) / median(loop time with messaging)
                 (95 % bootstrap interval of that ratio of medians),
  bandwidth    = median over samples of bytes received in the loop / loop time (GB/s),
  messages per poll (at most the window: the bound every sample must keep),
  cost per poll = (median loop time - median dry time) / polls.
docs/benchmarks.md, section polling.
"""

from __future__ import annotations

import statistics
from itertools import pairwise
from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.stats import median_bootstrap_ci
from ...core.formatting import fmt_period
from ...core.sizes import format_size

HEADLINE_SIZE = 64 * 1024  # the finding speaks of the measured size nearest to this
AVAILABLE = 0.9  # "available": the dry loop takes at least 90 % of the messaging loop's time
NOISE = 1.25  # more frequent polling "lowers" bandwidth only beyond this factor


def _point(p: dict[str, Any], window: int) -> dict[str, Any]:
    samples = [s for s in p.get("samples") or []
               if s.get("work_ns") and s.get("dry_ns") and s["work_ns"] > 0]
    size = int(p["size"])
    out: dict[str, Any] = {"size": size, "interval_us": p["interval_us"], "n": len(samples),
                           "chunks": p.get("chunks")}
    if not samples:
        out.update(availability=None, availability_ci95=[None, None], bandwidth_gbs=None,
                   messages_per_poll=None, cost_per_poll_ns=None, work_us=None, dry_us=None,
                   bound_ok=True)
        return out
    work = np.array([s["work_ns"] for s in samples], dtype=float)
    dry = np.array([s["dry_ns"] for s in samples], dtype=float)
    avail, lo, hi = median_bootstrap_ci(dry, work, np.divide)
    bw = statistics.median(s["messages"] * size / s["work_ns"] for s in samples)
    mpp = statistics.median(s["messages"] / s["polls"] for s in samples if s.get("polls"))
    polls = statistics.median(s["polls"] for s in samples)
    out.update(
        availability=avail,
        availability_ci95=[lo, hi],
        bandwidth_gbs=bw,  # bytes per ns = GB/s
        messages_per_poll=mpp,
        cost_per_poll_ns=((float(np.median(work)) - float(np.median(dry))) / polls
                          if polls else None),
        work_us=float(np.median(work)) / 1e3,
        dry_us=float(np.median(dry)) / 1e3,
        # each poll tests `window` requests: it can complete at most that many messages
        bound_ok=all(s["messages"] <= s["polls"] * window for s in samples),
    )
    return out


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    window = int(res.get("window") or 1)
    pts = [_point(p, window) for p in res.get("points") or []]
    pts.sort(key=lambda p: (p["size"], p["interval_us"]))
    sizes = sorted({p["size"] for p in pts})
    series = []
    notes = []
    for size in sizes:
        row = [p for p in pts if p["size"] == size]
        violations = []
        for a, b in pairwise(row):  # a: more frequent polling than b
            if (a["bandwidth_gbs"] is not None and b["bandwidth_gbs"] is not None
                    and a["bandwidth_gbs"] * NOISE < b["bandwidth_gbs"]):
                violations.append([a["interval_us"], b["interval_us"]])
        available = next((p for p in row if p["availability"] is not None
                          and p["availability"] >= AVAILABLE), None)
        series.append({"size": size, "points": row, "bandwidth_drops_with_polling": violations,
                       "available_interval_us": available["interval_us"] if available else None})
        for a_us, b_us in violations:
            notes.append(f"{format_size(size)}: polling every {fmt_period(a_us)} moved less "
                         f"than every {fmt_period(b_us)} (beyond a factor {NOISE})")
    if not series:
        return {"schema": "mpi-overlap/analysis", "schema_version": 1, "benchmark": "polling",
                "window": window, "series": [], "notes": [], "finding": "no points measured",
                "figures": []}

    head = min(series, key=lambda s: abs(s["size"] - HEADLINE_SIZE))
    row = [p for p in head["points"] if p["availability"] is not None]
    first, last = (row[0], row[-1]) if row else ({}, {})
    avail_pt = next((p for p in row if p["interval_us"] == head["available_interval_us"]), None)
    parts = []
    for p in [first] + ([avail_pt] if avail_pt and avail_pt not in (first, last) else []) + \
            ([last] if last is not first else []):
        if p:
            parts.append(f"every {fmt_period(p['interval_us'])}: availability "
                         f"{p['availability']:.2f}, {p['bandwidth_gbs']:.2f} GB/s")
    finding = (f"at {format_size(head['size'])} with MPI_Test " + "; ".join(parts)
               + ("" if avail_pt else f"; availability never reached {AVAILABLE:.2f}"))
    smallest = series[0]["points"][0] if series[0]["points"] else {}
    figures = [
        figure("availability_fast_poll",
               f"availability at {format_size(head['size'])}, MPI_Test every "
               f"{fmt_period(first.get('interval_us', 0))}",
               first.get("availability"), "", "overlap"),
        figure("bandwidth_fast_poll_gbs",
               f"bandwidth at {format_size(head['size'])}, MPI_Test every "
               f"{fmt_period(first.get('interval_us', 0))}",
               first.get("bandwidth_gbs"), "GB/s", "info"),
        figure("available_interval_us",
               f"shortest poll interval with availability ≥ {AVAILABLE} at "
               f"{format_size(head['size'])}",
               float(head["available_interval_us"])
               if head["available_interval_us"] is not None else None,
               "us", "overlap"),
        figure("bandwidth_available_gbs",
               f"bandwidth at that interval, {format_size(head['size'])}",
               avail_pt["bandwidth_gbs"] if avail_pt else None, "GB/s", "info"),
        figure("bandwidth_slow_poll_gbs",
               f"bandwidth at {format_size(head['size'])}, MPI_Test every "
               f"{fmt_period(last.get('interval_us', 0))}",
               last.get("bandwidth_gbs"), "GB/s", "info"),
        figure("cost_per_poll_ns",
               f"time lost per poll (loop − dry) at {format_size(smallest.get('size', 0))}, "
               f"every {fmt_period(smallest.get('interval_us', 0))}",
               smallest.get("cost_per_poll_ns"), "ns", "cost"),
    ]
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "polling",
        "window": window,
        "headline_size": head["size"],
        "series": series,
        "notes": notes,
        "finding": finding,
        "figures": figures,
    }
