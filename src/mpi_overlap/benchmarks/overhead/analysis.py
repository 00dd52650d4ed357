"""Analysis of the overhead benchmark: result.json (native) -> analysis document.

Reads the `results` of bench-overhead-v1, fits the hinge of analysis/knee.py to every
(direction, size) and writes analysis-overhead-v1 (documents.py). Partial results
(status "running", sizes or steps missing) are analysed as far as they go.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.knee import CI_LEVEL, LIMITS, KneeResult, fit_knee
from ...analysis.replication import Point, Quantity
from ...core.sizes import format_size
from ...core.values import num

SCHEMA = "mpi-overlap/analysis"
SCHEMA_VERSION = 1
# Each direction's random stream is numbered by name (the schema allows these two).
DIRECTION_ID = {"send": 0, "recv": 1}


def _step_x(step: dict[str, Any]) -> float | None:
    """work_t of a step: the median of its samples, else the harness's median."""
    samples = [v for v in step.get("work_samples_us") or [] if v is not None]
    if samples:
        return float(np.median(samples))
    median = (step.get("work_t_us") or {}).get("median")
    return None if median is None else float(median)


def pooled_loop_cost(sizes: list[dict[str, Any]]) -> float | None:
    """The loop cost of one direction from the zero-work steps of all its sizes, pooled.

    work_t is `Barrier; work(w)` without a message, so its zero-work samples measure the
    same thing at every size. One size's zero-work step has only a few samples (4 with
    --quick), and their median moved a whole availability to a clipped 0 % when two of
    four were disturbed (1.05, 3.83, 2.66, 1.06 µs against ~1.0 µs everywhere else);
    the median of every size's samples is not moved by a few disturbed ones. None with
    fewer than two sizes to pool.
    """
    per_size = [[v for s in entry.get("steps") or [] if int(s.get("work_units", -1)) == 0
                 for v in s.get("work_samples_us") or [] if v is not None] for entry in sizes]
    per_size = [p for p in per_size if p]
    if len(per_size) < 2:
        return None
    return float(np.median([v for p in per_size for v in p]))


def _origin(steps: list[dict[str, Any]], xs: list[float | None],
            pooled: float | None = None) -> float:
    """Fixed cost of one loop iteration without work (barrier, timer reads).

    Both work_t and iter_t contain it, so it must not count as hidden work. Taken from
    the direction's pooled zero-work samples (`pooled`), else this size's zero-work step
    unless it costs more than the next step (which has work: then it was disturbed and the
    extrapolation below is used), else extrapolated to zero work through the two smallest
    work values (the most precise ones); clamped to [0, smallest work_t].
    """
    pts = sorted(
        (int(s.get("work_units", 0)), x) for s, x in zip(steps, xs, strict=True) if x is not None
    )
    if not pts:
        return 0.0
    (u1, x1) = pts[0]
    if pooled is not None and u1 == 0 and (len(pts) < 2 or pooled <= pts[1][1]):
        return max(0.0, pooled)
    if u1 == 0 and (len(pts) < 3 or x1 <= pts[1][1]):
        return max(0.0, x1)
    if u1 == 0:
        pts = pts[1:]
        (u1, x1) = pts[0]
    if len(pts) < 2 or pts[1][0] == u1:
        return 0.0
    (u2, x2) = pts[1]
    origin = x1 - u1 * (x2 - x1) / (u2 - u1)
    return float(min(max(0.0, origin), x1))


def _size_entry(entry: dict[str, Any], *, bootstrap: int, seed: list[int],
                pooled_origin: float | None = None) -> dict[str, Any]:
    steps = list(entry.get("steps") or [])
    xs = [_step_x(s) for s in steps]
    origin = _origin(steps, xs, pooled_origin)
    # The zero-work step's work_t is the loop cost by definition: its own few samples are
    # replaced by the robust estimate, so that a disturbed one cannot pin the knee.
    xs = [origin if x is not None and int(s.get("work_units", -1)) == 0 else x
          for s, x in zip(steps, xs, strict=True)]
    x, ys = [], []
    for step, xi in zip(steps, xs, strict=True):
        samples = [v for v in step.get("iter_samples_us") or [] if v is not None]
        if xi is not None and samples:
            x.append(xi)
            ys.append(np.asarray(samples, dtype=float))
    fit: KneeResult = fit_knee(
        np.asarray(x, dtype=float),
        ys,
        origin=origin,
        complete=bool(entry.get("complete", False)),
        bootstrap=bootstrap,
        seed=seed,
    )
    f = fit.fit
    return {
        "size": int(entry.get("size", 0)),
        "verdict": fit.verdict,
        "reason": fit.reason,
        "base_t_us": fit.base.as_dict(),
        "knee_work_us": fit.knee.as_dict(),
        "overhead_us": fit.overhead.as_dict(),
        "availability_pct": fit.availability_pct.as_dict(),
        "slope": fit.slope.as_dict(),
        "compute_slowdown_pct": fit.compute_slowdown_pct.as_dict(),
        "classic": entry.get("classic"),
        "fit": {
            "n_steps": f.n_steps,
            "n_samples": f.n_samples,
            "n_outliers": f.n_outliers,
            "origin_us": f.origin,
            "rel_noise": f.rel_noise,
            "rss_hinge": f.rss_hinge,
            "rss_line": f.rss_line,
            "line_slope": f.line_slope,
        },
    }


def analyze(
    result: dict[str, Any], *, bootstrap: int = 400, seed: int = 12345
) -> dict[str, Any]:
    """The analysis document (analysis-overhead-v1, documents.py) of one result.

    Each (direction, size) gets its own random stream derived from `seed`, so the
    intervals of one size do not change when other sizes are added or missing.
    """
    directions = []
    for direction in (result.get("results") or {}).get("directions") or []:
        # By name, not list position: a run of one direction draws the same stream.
        d_id = DIRECTION_ID.get(direction.get("direction"), len(DIRECTION_ID))
        entries = direction.get("sizes") or []
        pooled = pooled_loop_cost(entries)
        sizes = [
            _size_entry(entry, bootstrap=bootstrap, seed=[seed, d_id, int(entry.get("size", 0))],
                        pooled_origin=pooled)
            for entry in entries
        ]
        directions.append({"direction": direction.get("direction"), "sizes": sizes})
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "benchmark": "overhead",
        "method": {
            "name": "hinge-fit",
            "bootstrap": bootstrap,
            "seed": seed,
            "ci": CI_LEVEL,
            "limits": dict(LIMITS),
        },
        "directions": directions,
        "figures": _figures(directions),
        "finding": _finding(directions),
    }


def _ok_values(sizes: list[dict[str, Any]], key: str) -> list[float]:
    return [s[key]["value"] for s in sizes
            if s["verdict"] == "ok" and s[key].get("value") is not None]


def _figures(directions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per direction the availability range and the largest host overhead over the sizes
    whose estimate is trustworthy (verdict ok)."""
    out = []
    for d in directions:
        name = str(d["direction"])
        avail = _ok_values(d["sizes"], "availability_pct")
        over = _ok_values(d["sizes"], "overhead_us")
        out += [
            figure(f"{name}_availability_min_pct", f"{name} availability, lowest",
                   min(avail) if avail else None, "%", "overlap"),
            figure(f"{name}_availability_max_pct", f"{name} availability, highest",
                   max(avail) if avail else None, "%", "overlap"),
            figure(f"{name}_overhead_max_us", f"{name} host overhead, largest",
                   max(over) if over else None, "µs", "cost"),
        ]
    return out


def _finding(directions: list[dict[str, Any]]) -> str:
    parts = []
    for d in directions:
        avail = _ok_values(d["sizes"], "availability_pct")
        ok = sum(s["verdict"] == "ok" for s in d["sizes"])
        if avail:
            parts.append(f"{d['direction']} availability {min(avail):.0f}–{max(avail):.0f} % "
                         f"({ok} of {len(d['sizes'])} sizes trustworthy)")
        else:
            parts.append(f"{d['direction']}: no trustworthy size of {len(d['sizes'])}")
    return "; ".join(parts) if parts else "no direction measured"


# ---- the quantities compared across launches (analysis/replication.py)

def replicated(analysis: dict[str, Any]) -> Iterator[tuple[Quantity, Point]]:
    for d in analysis.get("directions") or []:
        for s in d.get("sizes") or []:
            at = f"{d.get('direction')} {format_size(int(s.get('size', 0)))}"
            for key, what, unit in (("availability_pct", "availability", "%"),
                                    ("overhead_us", "host overhead", "µs")):
                e = s.get(key) or {}
                yield (Quantity(f"{d.get('direction')}/{s.get('size')}/{key}", f"{at} {what}",
                                unit),
                       Point(num(e.get("value")), num(e.get("ci95_low")), num(e.get("ci95_high")),
                             s.get("verdict")))
