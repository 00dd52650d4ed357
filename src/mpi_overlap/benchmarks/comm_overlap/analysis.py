"""Analysis of a comm-overlap run (Colmenares et al., §III-B/§IV-B): per message size, the basic
test's improvement % by the paper's equation (1),

    improvement = (T_overlap - T_nonoverlap) / T_nonoverlap * 100,
    T_nonoverlap = T_message + T_workload          (negative: overlap achieved),

on medians with a bootstrap interval, and on means as the paper computes it; the share of
the message time hidden, 100 * (T_message + T_workload - T_overlap) / T_message; the
compute slowdown (work inside Isend..Wait against the same work alone); and the "better
test" per rank: equation (1) on the means of T_total, overlap version against
non-overlap version. docs/benchmarks.md, section comm-overlap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.stats import bootstrap_medians, percentile_ci
from ...core.formatting import NA, fmt_pct
from ...core.sizes import format_size

BOOTSTRAP = 1000
SEED = 20


def _arr(values: Any) -> np.ndarray:
    a = np.asarray([v for v in values or [] if v is not None], dtype=float)
    return a[np.isfinite(a)]


def _pct(num: float, den: float) -> float | None:
    return 100.0 * num / den if den > 0 and np.isfinite(num) else None


def improvement_pct(t_overlap: float, t_message: float, t_workload: float) -> float | None:
    """Equation (1) of Colmenares et al. with T_nonoverlap = T_message + T_workload."""
    return _pct(t_overlap - (t_message + t_workload), t_message + t_workload)


def hidden_pct(t_overlap: float, t_message: float, t_workload: float) -> float | None:
    """Share of the message time that the overlap version did not pay."""
    return _pct(t_message + t_workload - t_overlap, t_message)


def best_improvement_pct(t_message: float, t_workload: float) -> float | None:
    """The most negative improvement possible: the overlap version takes at least the
    longer of the two, so at most the shorter one can be hidden."""
    return _pct(-min(t_message, t_workload), t_message + t_workload)


def _bootstrap_improvement(m: np.ndarray, w: np.ndarray, o: np.ndarray
                           ) -> tuple[float | None, float | None]:
    rng = np.random.default_rng(SEED)
    rm, rw, ro = (bootstrap_medians(rng, x, BOOTSTRAP) for x in (m, w, o))
    with np.errstate(divide="ignore", invalid="ignore"):
        return percentile_ci(100.0 * (ro - (rm + rw)) / (rm + rw))


def _basic(point: dict[str, Any]) -> dict[str, Any]:
    b = point.get("basic") or {}
    m, w = _arr(b.get("message_samples_us")), _arr(b.get("workload_samples_us"))
    o, ow = _arr(b.get("overlap_samples_us")), _arr(b.get("overlap_work_samples_us"))
    if not (m.size and w.size and o.size):
        return {"complete": False}
    tm, tw, to = float(np.median(m)), float(np.median(w)), float(np.median(o))
    lo, hi = _bootstrap_improvement(m, w, o)
    mm, mw, mo = float(m.mean()), float(w.mean()), float(o.mean())
    work_in = float(np.median(ow)) if ow.size else None
    return {
        "complete": True,
        "message_us": tm,
        "workload_us": tw,
        "nonoverlap_us": tm + tw,
        "overlap_us": to,
        "improvement_pct": improvement_pct(to, tm, tw),
        "improvement_ci95": [lo, hi],
        "improvement_pct_mean": improvement_pct(mo, mm, mw),
        "best_improvement_pct": best_improvement_pct(tm, tw),
        "hidden_pct": hidden_pct(to, tm, tw),
        "overlap_work_us": work_in,
        "compute_slowdown_pct": (_pct(work_in - tw, tw) if work_in is not None else None),
        "samples": int(min(m.size, w.size, o.size)),
    }


def _better(point: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in point.get("better") or []:
        non, ovl = r.get("nonoverlap") or {}, r.get("overlap") or {}
        nw, ow = r.get("nonoverlap_work") or {}, r.get("overlap_work") or {}
        row: dict[str, Any] = {"rank": r.get("rank"), "nonoverlap": non, "overlap": ovl,
                               "improvement_pct": None, "improvement_pct_median": None,
                               "compute_slowdown_pct": None}
        if non.get("mean") and ovl.get("mean") is not None:
            row["improvement_pct"] = _pct(ovl["mean"] - non["mean"], non["mean"])
        if non.get("median") and ovl.get("median") is not None:
            row["improvement_pct_median"] = _pct(ovl["median"] - non["median"], non["median"])
        if nw.get("median") and ow.get("median") is not None:
            row["compute_slowdown_pct"] = _pct(ow["median"] - nw["median"], nw["median"])
        out.append(row)
    return out


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    points = []
    for p in sorted(res.get("points") or [], key=lambda p: p["bytes"]):
        points.append({"bytes": p["bytes"], "work_units": p.get("work_units"),
                       "work_us_nominal": p.get("work_us_nominal"),
                       "pilot_message_us": p.get("pilot_message_us"),
                       "basic": _basic(p), "better": _better(p)})
    done = [p for p in points if p["basic"].get("complete")]
    figures: list[dict[str, Any]] = []
    if done:
        small, large = done[0], done[-1]
        lb, sb = large["basic"], small["basic"]
        ranks = {r["rank"]: r for r in large["better"]}
        size = format_size(large["bytes"])
        figures = [
            figure("hidden_pct_largest", f"message time hidden at {size}",
                   lb["hidden_pct"], "%", "overlap"),
            figure("improvement_pct_largest", f"improvement eq. (1) at {size}",
                   lb["improvement_pct"], "%", "overlap"),
            figure("better_improvement_pct_rank0", f"better test rank 0 at {size} (medians)",
                   (ranks.get(0) or {}).get("improvement_pct_median"), "%", "overlap"),
            figure("better_improvement_pct_rank1", f"better test rank 1 at {size} (medians)",
                   (ranks.get(1) or {}).get("improvement_pct_median"), "%", "overlap"),
            figure("compute_slowdown_pct_largest", f"compute slowdown at {size}",
                   lb["compute_slowdown_pct"], "%", "cost"),
            figure("message_us_largest", f"Isend+Wait alone at {size}",
                   lb["message_us"], "us", "cost"),
            figure("message_us_smallest", f"Isend+Wait alone at {format_size(small['bytes'])}",
                   sb["message_us"], "us", "cost"),
            figure("largest_bytes", "largest message size",
                   float(large["bytes"]), "B", "info"),
        ]
        r0, r1 = ranks.get(0) or {}, ranks.get(1) or {}
        gain_0, gain_1, gain_eq1 = (
            fmt_pct(v, 0, sign=True, missing=NA) for v in
            (r0.get("improvement_pct_median"), r1.get("improvement_pct_median"),
             lb["improvement_pct"]))
        finding = (
            f"Isend+work+Wait hides {fmt_pct(lb['hidden_pct'], 0, missing=NA)} of the message "
            f"time at {size} (T_message {lb['message_us']:.3g} + T_workload "
            f"{lb['workload_us']:.3g} µs vs T_overlap {lb['overlap_us']:.3g} µs, eq. (1) "
            f"{gain_eq1}), {fmt_pct(sb['hidden_pct'], 0, missing=NA)} at "
            f"{format_size(small['bytes'])}; better test at {size} (medians): rank 0 {gain_0}, "
            f"rank 1 {gain_1}"
        )
    else:
        finding = "no message size was measured completely"
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "comm-overlap",
        "points": points,
        "finding": finding,
        "figures": figures,
    }
