"""Run-level replication: K launches of one benchmark under one setting, compared.

A run's intervals cover the noise within its launch. Between launches the machine moves
(the barrier cost of one 2-core VM went from 2.2 to 1.1 µs between two launches, and the
same size read 65.3 % [62.0-67.8] and 82.8 % [77.9-85.9]: disjoint), so a figure is
reproducible only if separate launches agree. Per quantity of the launches' analyses:

- `value`: the median of the launch values;
- `between`: the interval from the spread between launches: Student's t 95 % interval of
  the mean of the K launch values, widened where needed to hold every launch value (for
  K <= 4 it always does: a launch value lies within (K-1)/sqrt(K) sample deviations of
  the mean, and t(0.975, K-1) >= K-1 there);
- `within`: the launches' own intervals, where the analysis gives them;
- verdict `unstable` when two launches' own intervals are disjoint (they disagree beyond
  the noise each saw), or, without own intervals, when the launch values spread more
  than SPREAD_REL of their median (SPREAD_ABS points for percentages), or when the
  launches' own verdicts differ (one called the size ok, another noisy); `stable`
  otherwise; `single` with fewer than two launch values.

Which quantities: every analysis's headline figures, and per benchmark the finer ones
declared by the benchmark package's analysis module as `replicated` (post-work-wait:
availability and host overhead per direction and size; the stack floor: latency and
added time per size; the non-blocking collectives: OSU % and t_pure per case). docs/method.md,
"Replication over launches".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core.formatting import fmt_num, fmt_range
from ..core.values import num

# Without own intervals, launch values that spread more than this share of their median
# (or, for percentages, more than SPREAD_ABS points) disagree.
SPREAD_REL = 0.25
SPREAD_ABS = {"%": 5.0}


@dataclass(frozen=True)
class Point:
    """One launch's value of one quantity, with its own interval and verdict if any."""

    value: float | None
    low: float | None = None
    high: float | None = None
    verdict: str | None = None


@dataclass(frozen=True)
class Quantity:
    key: str
    label: str
    unit: str


Extract = Callable[[dict[str, Any]], Iterator[tuple[Quantity, Point]]]


def _figures(analysis: dict[str, Any]) -> Iterator[tuple[Quantity, Point]]:
    for fig in analysis.get("figures") or []:
        if isinstance(fig, dict) and fig.get("name"):
            yield (Quantity(f"figure/{fig['name']}", str(fig.get("label") or fig["name"]),
                            str(fig.get("unit") or "")), Point(num(fig.get("value"))))


def quantities(analysis: dict[str, Any] | None,
               extract: Extract | None) -> dict[str, tuple[Quantity, Point]]:
    """The replicated quantities of one launch's analysis, by key (figures first, then
    the finer ones `extract` gives: the benchmark package's `replicated`, handed in by
    the caller, discovery.replicated: the kit does not look benchmarks up)."""
    out: dict[str, tuple[Quantity, Point]] = {}
    if not analysis:
        return out
    for each in (_figures, extract):
        if each is not None:
            for q, p in each(analysis):
                out.setdefault(q.key, (q, p))
    return out


def _own(p: Point) -> tuple[float, float] | None:
    """A launch's own interval when it has a width (a point says nothing of its noise)."""
    if p.low is None or p.high is None or not p.high > p.low:
        return None
    return p.low, p.high


def _disagreement(points: list[tuple[int, Point]], unit: str) -> str | None:
    """Why the launches disagree, or None."""
    verdicts = [p.verdict for _, p in points if p.verdict is not None]
    if len(set(verdicts)) > 1:
        return f"the launches' own verdicts differ ({', '.join(map(str, verdicts))})"
    owned = [(i, p, _own(p)) for i, p in points]
    for a in range(len(owned)):
        for b in range(a + 1, len(owned)):
            (i, p, ip), (j, q, iq) = owned[a], owned[b]
            if ip and iq and (ip[1] < iq[0] or iq[1] < ip[0]):
                return (f"launches {i} and {j} disagree beyond their own intervals: "
                        f"{fmt_num(p.value, '.4g')} [{fmt_range(ip[0], ip[1], '.4g')}] against "
                        f"{fmt_num(q.value, '.4g')} [{fmt_range(iq[0], iq[1], '.4g')}]")
    if any(o is None for _, _, o in owned):
        vals = [p.value for _, p in points if p.value is not None]
        spread = max(vals) - min(vals)
        limit = max(SPREAD_REL * abs(statistics.median(vals)), SPREAD_ABS.get(unit, 0.0))
        if spread > limit:
            return (f"the launch values spread {fmt_num(spread, '.4g')} {unit}, more than "
                    f"{fmt_num(limit, '.4g')} {unit} ({fmt_num(min(vals), '.4g')} to "
                    f"{fmt_num(max(vals), '.4g')})")
    return None


def replicate_quantity(q: Quantity, points: list[Point | None]) -> dict[str, Any]:
    """One quantity over the launches (None: the launch did not give it)."""
    have = [(i + 1, p) for i, p in enumerate(points) if p is not None and p.value is not None]
    vals = [p.value for _, p in have if p.value is not None]
    row: dict[str, Any] = {
        "key": q.key, "label": q.label, "unit": q.unit,
        "launches": [None if p is None else {"value": p.value, "ci95_low": p.low,
                                              "ci95_high": p.high, "verdict": p.verdict}
                     for p in points],
        "n": len(vals), "value": statistics.median(vals) if vals else None,
        "between_low": None, "between_high": None, "contains_every_launch": None,
        "verdict": "single", "reason": None,
    }
    if len(vals) < 2:
        row["reason"] = f"{len(vals)} launch value(s): nothing to compare"
        return row
    from .stats import t_quantile  # numpy and scipy: only where launches are compared

    mean, sd = statistics.fmean(vals), statistics.stdev(vals)
    half = t_quantile(0.975, len(vals) - 1) * sd / math.sqrt(len(vals))
    lo, hi = min(mean - half, min(vals)), max(mean + half, max(vals))
    row.update(between_low=lo, between_high=hi,
               contains_every_launch=all(lo <= v <= hi for v in vals))
    reason = _disagreement(have, q.unit)
    row.update(verdict="unstable" if reason else "stable", reason=reason)
    return row


def replicate(benchmark: str, analyses: list[dict[str, Any] | None],
              extract: Extract | None) -> dict[str, Any]:
    """Every quantity of K launches' analyses (in launch order), with the group's verdict:
    unstable when any quantity is, stable when every compared one is, single when none
    could be compared. `extract`: the benchmark's finer quantities (quantities)."""
    per_launch = [quantities(a, extract) for a in analyses]
    order: dict[str, Quantity] = {}
    for qs in per_launch:
        for key, (q, _) in qs.items():
            order.setdefault(key, q)
    rows = [replicate_quantity(q, [qs[k][1] if k in qs else None for qs in per_launch])
            for k, q in order.items()]
    unstable = [r for r in rows if r["verdict"] == "unstable"]
    compared = [r for r in rows if r["verdict"] != "single"]
    verdict = "unstable" if unstable else "stable" if compared else "single"
    k = len(analyses)
    if verdict == "single":
        finding = f"{k} launch(es): no quantity given by two launches to compare"
    elif unstable:
        names = ", ".join(r["label"] for r in unstable[:3]) + (
            f" and {len(unstable) - 3} more" if len(unstable) > 3 else "")
        finding = (f"{k} launches: unstable — {len(unstable)} of {len(compared)} quantities "
                   f"disagree between launches ({names}); quote the between-launch intervals")
    else:
        finding = (f"{k} launches: stable — all {len(compared)} quantities agree between "
                   "launches within their intervals")
    return {"benchmark": benchmark, "launches": k, "verdict": verdict, "finding": finding,
            "quantities": rows}


__all__ = ["Point", "Quantity", "quantities", "replicate", "replicate_quantity"]
