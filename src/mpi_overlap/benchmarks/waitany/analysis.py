"""Analysis of a waitany run: the cost per request of MPI_Waitany, MPI_Testany (until
success) and MPI_Waitsome when only the first of N requests completes.

Per call, a least-squares line through the median times against N; its slope is the
cost per request the call scans. docs/benchmarks.md, section waitany.
"""

from __future__ import annotations

from typing import Any

from ...analysis.figures import figure
from ...analysis.stats import line_fit

CALLS = (("waitany", "MPI_Waitany"), ("testany", "MPI_Testany"), ("waitsome", "MPI_Waitsome"))


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    points = sorted((result.get("results") or {}).get("points") or [], key=lambda p: p["n"])
    calls = []
    for key, name in CALLS:
        rows = []
        for p in points:
            c = p.get(key) or {}
            st = c.get("time") or {}
            rows.append({"n": p["n"], "time_ns": c.get("time_ns"),
                         "ci95": [st.get("ci95_low"), st.get("ci95_high")],
                         "calls_median": c.get("calls_median")})
        fit = line_fit([float(r["n"]) for r in rows], [r["time_ns"] for r in rows])
        calls.append({"key": key, "call": name, "points": rows, "fit": fit,
                      "first": rows[0] if rows else None, "last": rows[-1] if rows else None})
    fitted = [c for c in calls if c["fit"] is not None]
    if fitted:
        n_max = fitted[0]["fit"]["x_max"]
        parts = [f"{c['call'][4:]} {c['fit']['slope_ns']:.2f}" for c in fitted]
        finding = (f"{fitted[0]['call']} costs {fitted[0]['fit']['slope_ns']:.2f} ns per posted "
                   f"request; " + "; ".join(parts[1:]) + f" (fits over N = 1..{n_max:.0f})")
    else:
        finding = "too few points for a fit"
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "waitany",
        "calls": calls,
        "finding": finding,
        "figures": [figure(f"{c['key']}_ns_per_request", f"{c['call']} per request",
                           (c["fit"] or {}).get("slope_ns"), "ns", "cost") for c in calls],
    }
