"""How far a profile's headline could move within its transfer-time table's 95 % intervals
(docs/method.md, "Caveats that change the answer"): a table's uncertainty is worth a
caveat only where it changes the answer.

Every bound the engine computes is non-decreasing in the transfer time x and moves by at
most as much as x does (case 2: min(comp, x) and max(0, x − lib); case 3: [0, x]; an
eager send's tail: the computation inside a window x − o_s long; the rule for eager
non-blocking transfers: max(0, o − lib) and min(comp, x)). So if the table's times were
at the low end of their intervals, every transfer of size bin b would have x' ≥
x (1 − r_lo,b) and bounds no higher and at most r_lo,b x lower; at the high end x' ≤
x (1 + r_hi,b) and bounds no lower and at most r_hi,b x higher. Summed over the bins:

    low end:  min % ≥ Σ max(0, min_b − r_lo,b x_b) / Σ x_b (1 − r_lo,b),
              max % ≤ Σ max_b / Σ x_b (1 − r_lo,b)
    high end: min % ≥ Σ min_b / Σ x_b (1 + r_hi,b),
              max % ≤ Σ (max_b + r_hi,b x_b) / Σ x_b (1 + r_hi,b)

and the range within the intervals is [the lower min %, the higher max %]: a
conservative one (each transfer's bound moved as far as it could). r_lo,b and r_hi,b
are the largest relative distances from a point's value to its interval's ends among
the table's point-to-point points that a lookup in the bin uses (those inside it and
its neighbours on either side). A collective's series has no intervals: its transfers
count with the point-to-point ones of their bin. The transfer model's parts' intervals
are not included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.formatting import pct_range

if TYPE_CHECKING:  # imported where used: the table module is heavy to import
    from ...calibration.xfer_table import XferTable

# Points of the headline (percent of the transfer time) that make a caveat worth saying.
CAVEAT_POINTS = 5.0


def _ratios(table: XferTable, lo: int, hi: int | None) -> tuple[float, float] | None:
    """(r_lo, r_hi) of the points a lookup in [lo, hi) uses; None where a point has no
    interval (a table of format 3 or older)."""
    r_lo = r_hi = 0.0
    for cls in table.classes:
        pts = [b for b, _ in table.points[cls]]
        inside = [i for i, b in enumerate(pts) if b >= lo and (hi is None or b < hi)]
        below = [i for i, b in enumerate(pts) if b < lo][-1:]
        above = [i for i, b in enumerate(pts) if hi is not None and b >= hi][:1]
        for i in below + inside + above:
            nbytes, value = table.points[cls][i]
            q = table.quality.get((cls, nbytes))
            if q is None or q.lo_s is None or q.hi_s is None:
                return None
            if value > 0:
                r_lo = max(r_lo, 1.0 - q.lo_s / value)
                r_hi = max(r_hi, q.hi_s / value - 1.0)
    return max(0.0, min(r_lo, 1.0)), max(0.0, r_hi)


def within_intervals(bins: list[dict[str, Any]], table: XferTable) -> dict[str, Any] | None:
    """{"min_pct", "max_pct"} the job's overlap could take within the table's intervals,
    from the job's size bins (rankings "bins": lo, hi, xfer_s, min_s, max_s); None when
    the table has no intervals or the job no transfer time."""
    low_x = low_min = low_max = high_x = high_min = high_max = 0.0
    for b in bins:
        x = float(b["xfer_s"])
        if x <= 0:
            continue
        r = _ratios(table, int(b["lo"]), b["hi"])
        if r is None:
            return None
        r_lo, r_hi = r
        mn, mx = float(b["min_s"]), float(b["max_s"])
        low_x += x * (1.0 - r_lo)
        low_min += max(0.0, mn - r_lo * x)
        low_max += mx
        high_x += x * (1.0 + r_hi)
        high_min += mn
        high_max += mx + r_hi * x
    if high_x <= 0:
        return None
    lows = [100.0 * high_min / high_x] + ([100.0 * low_min / low_x] if low_x > 0 else [0.0])
    highs = [100.0 * high_max / high_x] + ([100.0 * low_max / low_x] if low_x > 0 else [100.0])
    return {"min_pct": max(0.0, min(lows)), "max_pct": min(100.0, max(highs))}


def caveat(job: dict[str, Any], rng: dict[str, Any] | None) -> str | None:
    """The sentence for the findings when the range within the intervals moves an end of
    the headline by more than CAVEAT_POINTS points; None otherwise."""
    if rng is None or job.get("min_pct") is None or job.get("max_pct") is None:
        return None
    moved = max(job["min_pct"] - rng["min_pct"], rng["max_pct"] - job["max_pct"])
    if moved <= CAVEAT_POINTS:
        return None
    return (f"With the transfer-time table's 95 % intervals the overlap could be "
            f"{pct_range(rng['min_pct'], rng['max_pct'])} instead of "
            f"{pct_range(job['min_pct'], job['max_pct'])}: the table is not precise enough "
            "for this answer (measure it again on a quieter machine: `mpi-overlap "
            "calibrate`).")
