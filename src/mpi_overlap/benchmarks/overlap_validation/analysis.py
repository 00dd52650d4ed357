"""Analysis of the overlap-validation benchmark: result.json + the rank profiles -> curves.

The benchmark (native/bench/overlap_validation.c) runs each step of each (pairing, size)
inside a profiler region "<pairing>/<bytes>/<step>"; the profiler writes, per rank,
profile.rank-N.json whose `profile.by_region` holds the overlap bounds of the transfers
posted in each region. This module joins the two: for every non-blocking side (rank 0
sends, rank 1 receives) and step it gives

    min %  = 100 · min_s / xfer_s      max %  = 100 · max_s / xfer_s

of that region on that side's rank, next to the side's measured computation and MPI_Wait
time per iteration, then describes each curve's shape from the data (trends with
tolerances, Spearman correlations) and compares it with the shapes the source reports
(Shet et al., §3, Figures 7–13). Without profiles (the program ran without the profiler, or
they are missing) the curves carry the times only and `bounds.available` says why.

Document: analysis-overlap-validation-v1 (documents.py); method: docs/benchmarks.md,
"overlap-validation".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...core.formatting import fmt_pct_cell, fmt_us
from ...core.sizes import format_size
from ...core.values import num
from ...profile.analysis.profile_values import overlap_pcts
from ...profile.analysis.profiled_runs import load_profiles, regions_by_name

SCHEMA = "mpi-overlap/analysis"
SCHEMA_VERSION = 1
BENCHMARK = "overlap-validation"

# Shape rules (docs/benchmarks.md, "overlap-validation"). Named so the report and the
# tests use the same numbers.
LIMITS: dict[str, float] = {
    "full_pct": 90.0,  # max % at least this much counts as full overlap
    # A bound rises/falls when last − first moves by >= this many points: a quarter of
    # the transfer time, more than a table within the ratio limits below can shift it.
    "trend_pts": 25.0,
    "wait_tol_frac": 0.2,  # MPI_Wait rises/falls when it moves by more than this fraction
    "wait_tol_us": 0.2,  # ... and by more than this many µs (timer and barrier noise)
    "rho": 0.5,  # |Spearman ρ| needed to call a correlation a trend
    "short_max_bytes": 65536,  # sizes up to this are the source's "short" (10 KB) class
    # Table transfer time / this run's ping-pong time outside [min, max]: the lower bound
    # (table time − library time) is shifted by more than 20 points; compare on own T.
    "table_ratio_max": 1.25,
    "table_ratio_min": 0.8,
}

SIDES = ("sender", "receiver")


# ------------------------------------------------------------------------------ helpers




def _stat(side: dict[str, Any] | None, key: str, part: str = "median") -> float | None:
    block = (side or {}).get(key)
    return num(block.get(part)) if isinstance(block, dict) else None


def spearman(x: list[float], y: list[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined."""
    if len(x) != len(y) or len(x) < 3:
        return None

    def ranks(v: list[float]) -> np.ndarray:
        a = np.asarray(v, dtype=float)
        order = np.argsort(a, kind="mergesort")
        r = np.empty(len(a), dtype=float)
        r[order] = np.arange(len(a), dtype=float)
        for value in np.unique(a):  # ties share their mean rank
            tie = a == value
            if tie.sum() > 1:
                r[tie] = r[tie].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return None
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


def pct_trend(first: float | None, last: float | None, limits: dict[str, float]) -> str | None:
    """'rises', 'falls' or 'flat' for a bound in %, from its first and last step."""
    if first is None or last is None:
        return None
    delta = last - first
    if delta >= limits["trend_pts"]:
        return "rises"
    if delta <= -limits["trend_pts"]:
        return "falls"
    return "flat"


def wait_trend(first: float | None, last: float | None, limits: dict[str, float]) -> str | None:
    """'rises', 'falls' or 'flat' for a time: a change must beat both tolerances."""
    if first is None or last is None:
        return None
    tol = max(limits["wait_tol_us"], limits["wait_tol_frac"] * max(abs(first), abs(last)))
    if first - last > tol:
        return "falls"
    if last - first > tol:
        return "rises"
    return "flat"


# ------------------------------------------------------------------------------ profiles




# ------------------------------------------------------------------------------ source


def size_class(size: int, limits: dict[str, float] = LIMITS) -> str:
    return "short" if size <= limits["short_max_bytes"] else "long"


def source_expectation(pairing: str, size: int, side: str) -> dict[str, Any]:
    """What the source (Shet et al., §3.2-3.3) shows for this curve.

    Each alternative names the source's protocol and figure and the trends it shows for
    the lower bound (min), the upper bound (max) and MPI_Wait; None = not stated there.
    The source's rendezvous results come in two protocols (pipelined and direct RDMA),
    so long messages have two alternatives.
    """
    cls = size_class(size)
    if cls == "short":
        if side == "sender":
            return {
                "class": cls,
                "figures": "Fig. 7",
                "text": "eager: sender min and max overlap rise with computation to full "
                "overlap once computation >= transfer time",
                "alternatives": [
                    {"label": "eager (Fig. 7)", "min": "rises", "max": "rises", "wait": None}
                ],
            }
        return {
            "class": cls,
            "figures": "Fig. 7",
            "text": "eager: the receiver's bounds are asserted [0, 100 %] (no XFER_BEGIN at "
            "the receiver there); its MPI_Wait time falls until overlap stops rising, then "
            "stays",
            "alternatives": [
                {"label": "eager (Fig. 7)", "min": None, "max": None, "wait": "falls"}
            ],
        }
    if pairing == "isend-recv":
        return {
            "class": cls,
            "figures": "Figs. 8-9",
            "text": "rendezvous, sender: pipelined RDMA overlaps only the first fragment "
            "(flat curves); direct RDMA Read lets overlap rise and MPI_Wait fall",
            "alternatives": [
                {"label": "pipelined RDMA (Fig. 8)", "min": "flat", "max": None, "wait": "flat"},
                {
                    "label": "direct RDMA Read (Fig. 9)",
                    "min": "rises",
                    "max": "rises",
                    "wait": "falls",
                },
            ],
        }
    if pairing == "send-irecv":
        return {
            "class": cls,
            "figures": "Figs. 10-11",
            "text": "rendezvous, receiver: minimal overlap in both schemes (the request is "
            "only seen in MPI_Wait); MPI_Wait high and unchanged",
            "alternatives": [
                {
                    "label": "pipelined/direct RDMA (Figs. 10-11)",
                    "min": "flat",
                    "max": None,
                    "wait": "flat",
                },
            ],
        }
    if side == "sender":
        return {
            "class": cls,
            "figures": "Figs. 12-13",
            "text": "rendezvous, sender: direct RDMA allows complete overlap; pipelined "
            "RDMA overlaps only the first fragment",
            "alternatives": [
                {"label": "pipelined RDMA (Fig. 12)", "min": "flat", "max": None, "wait": "flat"},
                {"label": "direct RDMA (Fig. 13)", "min": "rises", "max": "rises", "wait": "falls"},
            ],
        }
    return {
        "class": cls,
        "figures": "Figs. 15-16 (Myrinet)",
        "text": "rendezvous, receiver: only the first fragment overlapped; the rest is "
        "received inside MPI_Wait",
        "alternatives": [
            {"label": "pipelined (Figs. 15-16)", "min": "flat", "max": None, "wait": "flat"},
        ],
    }


def match_basis(shape: dict[str, Any], limits: dict[str, float] = LIMITS) -> str:
    """Which bounds a curve is compared with the source on: the profiler's ("profile"),
    or, when there are none or its table does not fit this run's transfer time (the
    lower bound is then shifted by the difference), the bounds recomputed from the
    step medians with the run's own transfer time ("own")."""
    ratio = shape.get("table_ratio")
    if shape.get("min_trend") is None:
        return "own"
    if ratio is not None and not (limits["table_ratio_min"] <= ratio <= limits["table_ratio_max"]):
        return "own"
    return "profile"


def _match(
    expect: dict[str, Any], shape: dict[str, Any], basis: str = "profile"
) -> tuple[str | None, bool | None]:
    """The first alternative whose stated trends all hold, and whether one does (None
    when nothing the source states could be checked)."""
    own = basis == "own"
    observed = {
        "min": shape.get("min_own_trend" if own else "min_trend"),
        "max": shape.get("max_own_trend" if own else "max_trend"),
        "wait": shape.get("wait_trend"),
    }
    checked_any = False
    for alt in expect["alternatives"]:
        stated = {k: v for k, v in alt.items() if k in observed and v is not None}
        if not stated or any(observed[k] is None for k in stated):
            continue
        checked_any = True
        if all(observed[k] == v for k, v in stated.items()):
            return alt["label"], True
    return None, (False if checked_any else None)


# ------------------------------------------------------------------------------ curves


def own_bounds(
    comp: float | None, post: float | None, wait: float | None, transfer: float | None
) -> tuple[float | None, float | None]:
    """The source's case-2 bounds for one typical iteration, in % of `transfer`, from the
    step's medians and this run's own transfer time instead of the profiler's table:
    max = min(comp, T), min = max(0, T − (post + wait)) capped at max. They show the
    shape the profiler would report with a table that fits this run."""
    if None in (comp, post, wait, transfer) or not transfer or transfer <= 0:
        return None, None
    hi = min(comp, transfer)  # type: ignore[type-var]
    lo = min(max(0.0, transfer - (post + wait)), hi)  # type: ignore[operator]
    return 100.0 * lo / transfer, 100.0 * hi / transfer


def _point(
    step: dict[str, Any],
    side: str,
    peer: str,
    region: dict[str, Any] | None,
    transfer_us: float | None = None,
) -> dict[str, Any]:
    mine, theirs = step.get(side) or {}, step.get(peer) or {}
    own_min, own_max = own_bounds(
        _stat(mine, "comp_us"), _stat(mine, "post_us"), _stat(mine, "wait_us"), transfer_us
    )
    xfer_s = num((region or {}).get("xfer_s"))
    min_s, max_s = num((region or {}).get("min_s")), num((region or {}).get("max_s"))
    transfers = (region or {}).get("transfers")
    ok = region is not None and xfer_s is not None and xfer_s > 0
    # the same percentages as `profile` reports (rounding of summed seconds clipped at 100)
    min_pct, max_pct = (
        overlap_pcts(xfer_s, min_s, max_s)
        if ok and xfer_s is not None and min_s is not None and max_s is not None
        else (None, None)
    )
    return {
        "step": int(step.get("step", 0)),
        "region": step.get("region"),
        "iterations": int(step.get("iterations", 0)),
        "comp_us": _stat(mine, "comp_us"),
        "post_us": _stat(mine, "post_us"),
        "wait_us": _stat(mine, "wait_us"),
        "wait_mean_us": _stat(mine, "wait_us", "mean"),
        "peer_wait_us": _stat(theirs, "wait_us"),
        "peer_call_us": _stat(theirs, "call_us"),
        "transfers": int(transfers) if isinstance(transfers, int) else None,
        "xfer_us": 1e6 * xfer_s / transfers
        if ok and isinstance(transfers, int) and transfers
        else None,
        "min_pct": min_pct,
        "max_pct": max_pct,
        "min_pct_own": own_min,
        "max_pct_own": own_max,
    }


def _shape(
    points: list[dict[str, Any]], transfer_us: float | None, limits: dict[str, float]
) -> dict[str, Any]:
    first, last = (points[0], points[-1]) if points else ({}, {})
    xfer = next((p["xfer_us"] for p in points if p.get("xfer_us") is not None), None)
    threshold = xfer if xfer is not None else transfer_us
    comps = [p.get("comp_us") for p in points]
    waits = [p.get("wait_us") for p in points]
    mins = [p.get("min_pct") for p in points]
    maxs = [p.get("max_pct") for p in points]
    has_bounds = bool(points) and all(v is not None for v in mins + maxs)
    beyond = [
        p
        for p in points
        if threshold is not None and p.get("comp_us") is not None and p["comp_us"] >= threshold
    ]
    reaches_full = (
        all((p.get("max_pct") or 0.0) >= limits["full_pct"] for p in beyond)
        if beyond and has_bounds
        else None
    )

    def rho(a: list[Any], b: list[Any]) -> float | None:
        if not points or any(v is None for v in a + b):
            return None
        return spearman(a, b)

    max_t = pct_trend(first.get("max_pct"), last.get("max_pct"), limits) if has_bounds else None
    min_t = pct_trend(first.get("min_pct"), last.get("min_pct"), limits) if has_bounds else None
    wait_t = wait_trend(first.get("wait_us"), last.get("wait_us"), limits)
    rising = None if max_t is None else (max_t == "rises" or min_t == "rises")
    own_first, own_last = first.get("min_pct_own"), last.get("min_pct_own")
    plateau = [p["min_pct"] for p in beyond if p.get("min_pct") is not None]
    ratio = xfer / transfer_us if xfer is not None and transfer_us else None
    return {
        "threshold_us": threshold,
        "threshold_from": "profile" if xfer is not None else "benchmark",
        "table_ratio": ratio,
        "full_from_comp_us": beyond[0]["comp_us"] if beyond else None,
        "reaches_full": reaches_full,
        "max_pct_first": first.get("max_pct"),
        "max_pct_last": last.get("max_pct"),
        "min_pct_first": first.get("min_pct"),
        "min_pct_last": last.get("min_pct"),
        "min_pct_plateau": float(np.median(plateau)) if plateau and has_bounds else None,
        "min_own_first": own_first,
        "min_own_last": own_last,
        "min_own_trend": pct_trend(own_first, own_last, limits),
        "max_own_trend": pct_trend(first.get("max_pct_own"), last.get("max_pct_own"), limits),
        "wait_first_us": first.get("wait_us"),
        "wait_last_us": last.get("wait_us"),
        "max_trend": max_t,
        "min_trend": min_t,
        "wait_trend": wait_t,
        "rho_min_comp": rho(comps, mins) if has_bounds else None,
        "rho_wait_comp": rho(comps, waits),
        "rho_wait_max": rho(maxs, waits) if has_bounds else None,
        "rho_wait_min": rho(mins, waits) if has_bounds else None,
        "wait_falls_as_overlap_rises": (None if not rising else wait_t == "falls"),
    }


def _finding(curve: dict[str, Any]) -> str:
    s, src = curve["shape"], curve["source"]
    head = f"{curve['pairing']} {format_size(curve['size'])}, {curve['side']} ({curve['call']}):"
    wait = (
        f"MPI_Wait {fmt_us(s['wait_first_us'], '?')} → {fmt_us(s['wait_last_us'], '?')} µs "
        f"({s['wait_trend'] or '?'})"
    )
    comp = curve["points"][-1]["comp_us"] if curve["points"] else None
    span = f"computation 0 → {fmt_us(comp, '?')} µs"
    if s["max_trend"] is None:
        return f"{head} {span}; {wait}; no overlap bounds."
    full = ""
    if s["reaches_full"] is True:
        full = f", full from {fmt_us(s['full_from_comp_us'], '?')} µs computation"
    elif s["reaches_full"] is False:
        full = ", never full although computation ≥ transfer time"
    max_first, max_last, min_first, min_last = (
        fmt_pct_cell(s[k], 0, missing="?")
        for k in ("max_pct_first", "max_pct_last", "min_pct_first", "min_pct_last"))
    bounds = (
        f"max {max_first} → {max_last} %{full}; min {min_first} → {min_last} % "
        f"({s['min_trend']})"
    )
    ratio = s.get("table_ratio")
    if ratio is not None and not (LIMITS["table_ratio_min"] <= ratio <= LIMITS["table_ratio_max"]):
        bounds += (
            f" [the profiler's transfer time {fmt_us(s['threshold_us'], '?')} µs is {ratio:.1f}× "
            f"the measured {fmt_us(curve['transfer_us'], '?')} µs, which shifts min by as much]"
        )
    on = " (on the bounds with this run's transfer time)" if src.get("basis") == "own" else ""
    if src["matches"] is True:
        verdict = f"like the source's {src['matched']}{on}"
    elif src["matches"] is False:
        verdict = f"differs from the source{on} ({src['figures']}: {src['text']})"
    else:
        verdict = f"source {src['figures']} states nothing checkable here"
    return f"{head} {span}; {bounds}; {wait}; {verdict}."


def _curves_of_case(
    case: dict[str, Any], profiles: dict[int, dict[str, Any]], limits: dict[str, float]
) -> tuple[list[dict[str, Any]], list[str]]:
    curves, problems = [], []
    steps = list(case.get("steps") or [])
    for side in SIDES:
        meta = case.get(side) or {}
        if not meta.get("nonblocking"):
            continue
        peer = "receiver" if side == "sender" else "sender"
        rank = int(meta.get("rank", 0 if side == "sender" else 1))
        regions = regions_by_name(profiles.get(rank))
        points = []
        transfer_us = _stat({"t": case.get("transfer_us")}, "t")
        for step in steps:
            region = regions.get(str(step.get("region"))) if profiles else None
            point = _point(step, side, peer, region, transfer_us)
            if profiles and rank in profiles and region is None:
                problems.append(f"rank {rank}: no region '{step.get('region')}' in its profile")
            elif (
                point["transfers"] is not None
                and point["iterations"]
                and point["transfers"] != point["iterations"]
            ):
                problems.append(
                    f"rank {rank}, region '{step.get('region')}': {point['transfers']} "
                    f"transfers for {point['iterations']} iterations"
                )
            points.append(point)
        shape = _shape(points, transfer_us, limits)
        ratio = shape["table_ratio"]
        note = (
            f"{case.get('pairing')} {format_size(int(case.get('size', 0)))}: the profiler's "
            f"table gives {fmt_us(shape['threshold_us'], '?')} µs per transfer, "
            f"{ratio:.2f}× the {fmt_us(transfer_us, '?')} µs this run measured (lower bounds "
            "are off by the difference)"
            if ratio is not None
            and not (limits["table_ratio_min"] <= ratio <= limits["table_ratio_max"])
            else None
        )
        if note and note not in problems:
            problems.append(note)
        expect = source_expectation(str(case.get("pairing")), int(case.get("size", 0)), side)
        basis = match_basis(shape, limits)
        matched, matches = _match(expect, shape, basis)
        curve = {
            "pairing": case.get("pairing"),
            "size": int(case.get("size", 0)),
            "side": side,
            "rank": rank,
            "call": meta.get("call"),
            "peer_call": (case.get(peer) or {}).get("call"),
            "peer_nonblocking": bool((case.get(peer) or {}).get("nonblocking")),
            "complete": bool(case.get("complete", False)),
            "transfer_us": transfer_us,
            "points": points,
            "shape": shape,
            "source": {
                "class": expect["class"],
                "figures": expect["figures"],
                "text": expect["text"],
                "matched": matched,
                "matches": matches,
                "basis": basis,
            },
        }
        curve["finding"] = _finding(curve)
        curves.append(curve)
    return curves, problems


def analyze(
    result: dict[str, Any],
    run_dir: Path | None = None,
    *,
    profiles: dict[int, dict[str, Any]] | None = None,
    limits: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The analysis document of one result (and the profiles beside it).

    `profiles` (rank -> profile.rank-N.json document) overrides reading run_dir, for
    tests. Partial results are analysed as far as they go.
    """
    limits = dict(LIMITS if limits is None else limits)
    results = result.get("results") or {}
    loaded = bool(results.get("profiler_loaded"))
    problems: list[str] = []
    if profiles is None:
        profiles, read_problems = load_profiles(run_dir) if loaded else ({}, [])
        problems += read_problems
    if not loaded:
        reason = (
            "the benchmark ran without the profiler (profiler_loaded is false): "
            "only times, no overlap bounds"
        )
    elif not profiles:
        reason = "no profile.rank-N.json beside result.json: overlap bounds are missing"
    else:
        reason = None
    missing = [r for r in (0, 1) if loaded and r not in profiles]
    if profiles and missing:
        problems.append(f"no profile for rank(s) {', '.join(map(str, missing))}")
    for rank, doc in sorted(profiles.items()):
        if doc.get("status") != "complete":
            problems.append(
                f"rank {rank}: profile status {doc.get('status')!r}"
                + (f" ({doc['reason']})" if doc.get("reason") else "")
            )
    use = profiles if loaded else {}
    curves: list[dict[str, Any]] = []
    for case in results.get("cases") or []:
        c, p = _curves_of_case(case, use, limits)
        curves += c
        problems += p
    available = bool(use) and reason is None
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "benchmark": BENCHMARK,
        "method": {"name": "region-bounds", "limits": limits},
        "bounds": {
            "available": available,
            "reason": reason,
            "profiles": [
                {"rank": r, "status": d.get("status"), "table": (d.get("table") or {}).get("path")}
                for r, d in sorted(use.items())
            ],
            "missing_ranks": missing,
            "problems": problems[:50],
        },
        "curves": curves,
        "findings": [c["finding"] for c in curves]
        + ([] if available else [f"Overlap bounds missing: {reason or 'see problems'}."]),
    }
