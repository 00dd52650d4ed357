"""Analysis of a matching run: what one more queued request costs a receive.

Per queue (posted receives, unexpected messages), the M sweep (N = 1) gives the median
time of the timed receive against the number of queued requests M; a least-squares line
through those medians gives the cost per queued request (its slope) and the time with
an empty queue (intercept; the M = 0 point is measured too, as the baseline). Whether
the per-request cost grows with the queue length: the same line fitted over the lower
half of the M range (M <= M_max / 2) and over the upper half (M >= M_max / 2); their
ratio > GROW is "grows", < 1 / GROW "falls", otherwise "constant"; a lower-half slope
that is not positive (noise above the signal) gives "unclear". The N sweep (M = 1)
gets its own line against N. docs/benchmarks.md, section matching.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from ...analysis.figures import figure
from ...analysis.stats import line_fit
from ...core.formatting import NA, fmt_num

GROW = 1.25
QUEUE_NOUN = {"posted": "posted receive", "unexpected": "unexpected message"}



def _verdict(
    lower: dict[str, Any] | None, upper: dict[str, Any] | None
) -> tuple[float | None, str]:
    if lower is None or upper is None or not lower["slope_ns"] > 0:
        return None, "unclear"
    ratio = upper["slope_ns"] / lower["slope_ns"]
    if ratio > GROW:
        return ratio, "grows with queue length"
    if ratio < 1 / GROW:
        return ratio, "falls with queue length"
    return ratio, "constant"


def _grows_from(pts: list[tuple[float, float | None]], threshold: float) -> float | None:
    """The smallest M from which every step to the next point costs more than
    `threshold` ns per added request (the start of the growth), or None."""
    start = None
    for (x0, y0), (x1, y1) in reversed(list(pairwise(pts))):
        if y0 is None or y1 is None or (y1 - y0) / (x1 - x0) < threshold:
            break
        start = x0
    return start


def _queue(points: list[dict[str, Any]], queue: str) -> dict[str, Any]:
    mine = [p for p in points if p.get("queue") == queue]
    m_pts = sorted((p for p in mine if p.get("sweep") == "M"), key=lambda p: p["m"])
    n_pts = sorted((p for p in mine if p.get("sweep") == "N"), key=lambda p: p["n"])
    base = next((p.get("time_ns") for p in m_pts if p["m"] == 0), None)
    rows = []
    for p in m_pts:
        t = p.get("time_ns")
        added = None if t is None or base is None else t - base
        rows.append({
            "m": p["m"],
            "time_ns": t,
            "ci95": [p["time"].get("ci95_low"), p["time"].get("ci95_high")],
            "added_ns": added,
            "per_request_ns": added / p["m"] if added is not None and p["m"] > 0 else None,
        })
    xs = [float(r["m"]) for r in rows]
    ys = [r["time_ns"] for r in rows]
    m_max = max(xs) if xs else 0.0
    half = m_max / 2
    low = [(x, y) for x, y in zip(xs, ys, strict=True) if x <= half]
    high = [(x, y) for x, y in zip(xs, ys, strict=True) if x >= half]
    lower = line_fit([x for x, _ in low], [y for _, y in low])
    upper = line_fit([x for x, _ in high], [y for _, y in high])
    ratio, verdict = _verdict(lower, upper)
    grows_from = None
    if verdict == "grows with queue length" and lower is not None:
        grows_from = _grows_from([(x, y) for x, y in zip(xs, ys, strict=True) if x > 0],
                                 GROW * lower["slope_ns"])
    n_rows = [{"n": p["n"], "time_ns": p.get("time_ns"),
               "ci95": [p["time"].get("ci95_low"), p["time"].get("ci95_high")]} for p in n_pts]
    return {
        "queue": queue,
        "baseline_ns": base,
        "m_points": rows,
        "n_points": n_rows,
        "fit_m": line_fit(xs, ys),
        "fit_lower": lower,
        "fit_upper": upper,
        "growth_ratio": ratio,
        "verdict": verdict,
        "grows_from_m": grows_from,
        "fit_n": line_fit([float(r["n"]) for r in n_rows], [r["time_ns"] for r in n_rows]),
    }


def queue_sentence(q: dict[str, Any]) -> str:
    fit, lo, up = q["fit_m"], q["fit_lower"], q["fit_upper"]
    noun = QUEUE_NOUN.get(q["queue"], q["queue"])
    if fit is None:
        return f"{q['queue']}: too few points for a fit"
    last = next((p for p in reversed(q["m_points"]) if p.get("time_ns") is not None), None)
    total = "" if last is None else f", {last['time_ns'] / 1e3:.1f} µs in all at M = {last['m']}"
    text = (f"{fmt_num(fit['slope_ns'], '.1f', missing=NA)} ns per {noun} (M up to "
            f"{fit['x_max']:.0f}{total}); lower half "
            f"{fmt_num(lo['slope_ns'] if lo else None, '.1f', missing=NA)}, upper half "
            f"{fmt_num(up['slope_ns'] if up else None, '.1f', missing=NA)} ns: {q['verdict']}")
    if q.get("grows_from_m") is not None:
        text += f" (above M = {q['grows_from_m']:.0f})"
    n = q.get("fit_n")
    if n is not None:
        text += (f"; {fmt_num(n['slope_ns'], '.1f', missing=NA)} ns per extra peer (N up to "
                 f"{n['x_max']:.0f})")
    return text


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    points = res.get("points") or []
    queues = [_queue(points, q) for q in res.get("queues") or []]
    over = bool(res.get("oversubscribed"))
    parts = [queue_sentence(q) for q in queues]
    finding = "matching costs " + "; ".join(parts) if parts else "no points measured"
    if over:
        finding += f" (oversubscribed: {res.get('ranks')} ranks on {res.get('cores')} cores)"
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "matching",
        "oversubscribed": over,
        "ranks": res.get("ranks"),
        "cores": res.get("cores"),
        "queues": queues,
        "finding": finding,
        "figures": [
            figure(f"{q['queue']}_ns_per_request",
                   f"matching cost per {QUEUE_NOUN.get(q['queue'], q['queue'])}",
                   (q["fit_m"] or {}).get("slope_ns"), "ns", "cost")
            for q in queues
        ],
    }
