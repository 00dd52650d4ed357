"""Analysis of an inflation run (Strohbeen, computation inflation): per message size, the
total time of one exchange (Irecv + Isend, work, Waitall) against the computation inside
it, fitted with the hinge of analysis/knee.py,

    total = b + s * max(0, computation - k),

x = the median time of the same work alone, y = every total sample of the step. k (the
knee) is the computation above which the exchange is hidden; b the total at small
computation (the exchange exposed below the knee); b - k what the exchange still costs
after the knee; s the slope after the knee (1: total = computation + constant);
100 * k / b the share of the exchange hidden. docs/benchmarks.md, section inflation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.knee import KneeResult, fit_knee
from ...core.sizes import format_size

# A size counts as "hidden" when the knee's interval puts at least this share of the
# exchange below it (the availability of knee.py, 100 * k / b).
HIDDEN_MIN_PCT = 50.0


def _arr(values: Any) -> np.ndarray:
    a = np.asarray([v for v in values or [] if v is not None], dtype=float)
    return a[np.isfinite(a)]


def fit_point(steps: list[dict[str, Any]]) -> KneeResult | None:
    """The hinge through one size's steps with computation (x: work alone median, ys: total
    samples). The zero-work step is left out: Waitall right after posting is another code
    path (at >= 512 KiB it measured up to 5x slower than with 0.5 µs of work in between),
    and it is reported on its own as the exchange alone."""
    x, ys = [], []
    for s in steps:
        if s.get("work_units") == 0:
            continue
        alone, total = _arr(s.get("work_alone_samples_us")), _arr(s.get("total_samples_us"))
        if alone.size and total.size:
            x.append(float(np.median(alone)))
            ys.append(total)
    if len(x) < 3:
        return None
    return fit_knee(x, ys, origin=0.0)


def smallest_computation(steps: list[dict[str, Any]]) -> float | None:
    """The smallest computation the fit saw: a knee there only says "at most this"."""
    xs = [float(np.median(a)) for s in steps if s.get("work_units")
          for a in [_arr(s.get("work_alone_samples_us"))] if a.size]
    return min(xs) if xs else None


def knee_summary(fit: KneeResult | None) -> dict[str, Any]:
    """The per-size figures of a fit, in this benchmark's words."""
    if fit is None:
        return {"verdict": "incomplete", "reason": "fewer than 3 steps with samples",
                "knee_us": None, "knee_ci95": [None, None], "exposed_us": None,
                "exposed_ci95": [None, None], "after_knee_us": None, "slope": None,
                "hidden_pct": None, "hidden_ci95": [None, None], "hidden": False,
                "params": None}
    k, b, o, a = fit.knee, fit.base, fit.overhead, fit.availability_pct
    hidden = (fit.verdict == "ok" and a.ci95_low is not None and a.ci95_low >= HIDDEN_MIN_PCT)
    return {
        "verdict": fit.verdict,
        "reason": fit.reason,
        "knee_us": k.value,
        "knee_ci95": [k.ci95_low, k.ci95_high],
        "exposed_us": b.value,
        "exposed_ci95": [b.ci95_low, b.ci95_high],
        "after_knee_us": o.value,
        "slope": fit.slope.value,
        "slope_ci95": [fit.slope.ci95_low, fit.slope.ci95_high],
        "hidden_pct": a.value,
        "hidden_ci95": [a.ci95_low, a.ci95_high],
        "hidden": bool(hidden),
        "params": (None if fit.params is None else
                   {"base": fit.params.base, "knee": fit.params.knee,
                    "slope": fit.params.slope}),
    }


def _with_edge(knee: dict[str, Any], x_min: float | None) -> dict[str, Any]:
    """knee_at_edge: the knee lies at the smallest computation measured (within 5 %), so
    the sweep bounds it from above only."""
    k = knee.get("knee_us")
    knee["knee_at_edge"] = bool(k is not None and x_min is not None and k <= 1.05 * x_min)
    return knee


def _steps_rows(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for s in steps:
        alone, total = _arr(s.get("work_alone_samples_us")), _arr(s.get("total_samples_us"))
        inside = _arr(s.get("work_inside_samples_us"))
        rows.append({
            "work_units": s.get("work_units"),
            "computation_us": float(np.median(alone)) if alone.size else None,
            "total_us": float(np.median(total)) if total.size else None,
            "work_inside_us": float(np.median(inside)) if inside.size else None,
        })
    return rows


def _slowdown(rows: list[dict[str, Any]]) -> float | None:
    """Compute slowdown at the largest computation: work inside the exchange against the
    same work alone."""
    for r in reversed(rows):
        a, i = r["computation_us"], r["work_inside_us"]
        if a and i is not None:
            return 100.0 * (i / a - 1.0)
    return None


def _span(values: list[str]) -> str:
    """'a' for one value, 'a … b' for the first and last of several."""
    return values[0] if len(values) == 1 else f"{values[0]} … {values[-1]}"


def _finding_parts(fitted: list[dict[str, Any]]) -> list[str]:
    """One clause per kind of size, each over the sizes of its kind (first … last): hidden
    (the knee), partly hidden (share and what is left), no reliable knee."""
    hidden = [p for p in fitted if p["knee"]["hidden"]]
    partial = [p for p in fitted if not p["knee"]["hidden"] and p["knee"]["verdict"] == "ok"]
    other = [p for p in fitted if not p["knee"]["hidden"] and p["knee"]["verdict"] != "ok"]
    parts = []
    if hidden:
        parts.append("communication is hidden once computation exceeds " + _span(
            [f"{p['knee']['knee_us']:.3g} µs"
             f"{' (the smallest step)' if p['knee']['knee_at_edge'] else ''} at "
             f"{format_size(p['bytes'])}" for p in hidden]))
    if partial:
        shares = [p["knee"]["hidden_pct"] for p in partial if p["knee"]["hidden_pct"] is not None]
        share = (f"{min(shares):.0f}–{max(shares):.0f} %" if len(shares) > 1 else
                 f"{shares[0]:.0f} %" if shares else "n/a")
        sizes = _span([format_size(p["bytes"]) for p in partial])
        left = _span([f"{p['knee']['after_knee_us']:.3g} µs" for p in partial
                      if p["knee"]["after_knee_us"] is not None] or ["n/a"])
        parts.append(f"at {sizes} only {share} of the exchange is hidden "
                     f"(total ≈ computation + {left})")
    if other:
        parts.append("no reliable knee at " + ", ".join(
            f"{format_size(p['bytes'])} ({p['knee']['verdict']})" for p in other))
    return parts


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    points = []
    for p in sorted(res.get("points") or [], key=lambda p: p["bytes"]):
        steps = p.get("steps") or []
        rows = _steps_rows(steps)
        zero = next((r for r, s in zip(rows, steps, strict=True) if s.get("work_units") == 0),
                    None)
        points.append({
            "bytes": p["bytes"],
            "pilot_exchange_us": p.get("pilot_exchange_us"),
            "exchange_alone_us": zero["total_us"] if zero else None,
            "steps": rows,
            "knee": _with_edge(knee_summary(fit_point(steps)), smallest_computation(steps)),
            "compute_slowdown_pct": _slowdown(rows),
        })
    figures: list[dict[str, Any]] = []
    fitted = [p for p in points if p["knee"]["knee_us"] is not None]
    if fitted:
        small, large = fitted[0], fitted[-1]
        figures = [
            figure("knee_us_smallest", f"knee at {format_size(small['bytes'])}",
                   small["knee"]["knee_us"], "us", "overlap"),
            figure("knee_us_largest", f"knee at {format_size(large['bytes'])}",
                   large["knee"]["knee_us"], "us", "overlap"),
            figure("hidden_pct_largest", f"exchange hidden at {format_size(large['bytes'])}",
                   large["knee"]["hidden_pct"], "%", "overlap"),
            figure("after_knee_us_largest",
                   f"exchange cost left after the knee at {format_size(large['bytes'])}",
                   large["knee"]["after_knee_us"], "us", "cost"),
            figure("exchange_us_largest", f"exchange alone at {format_size(large['bytes'])}",
                   large["exchange_alone_us"], "us", "cost"),
            figure("compute_slowdown_pct_largest",
                   f"compute slowdown at {format_size(large['bytes'])}",
                   large["compute_slowdown_pct"], "%", "cost"),
        ]
    # Every size is named in the finding: the sizes without a knee too, with why.
    unfitted = [p for p in points if p["knee"]["knee_us"] is None]
    finding_parts = _finding_parts(fitted) if fitted else []
    if unfitted:
        finding_parts.append("no knee at " + ", ".join(
            f"{format_size(p['bytes'])} ({p['knee']['verdict']})" for p in unfitted))
    finding = "; ".join(finding_parts) or "no message size was measured"
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "inflation",
        "hidden_min_pct": HIDDEN_MIN_PCT,
        "points": points,
        "finding": finding,
        "figures": figures,
    }
