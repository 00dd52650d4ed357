"""Small statistics shared by the analyses: sample summaries and confidence intervals.

`summarize` must give the same numbers as the native harness writes into every
`stats` object of a result (run/documents.py, Stats):
sample standard deviation (n - 1), Student-t 95 % interval of the mean, and for
n < 2 the interval [mean, mean] and a null stdev (native/common/stats.c).
The t quantiles are scipy's (scipy.stats.t); docs/method.md ("Intervals") says how they
compare with the hand-written ones used before.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

STATS_KEYS = ("n", "min", "median", "mean", "max", "stdev", "ci95_low", "ci95_high")

@lru_cache(maxsize=1024)
def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t with df degrees of freedom (scipy.stats.t.ppf)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if df <= 0:
        raise ValueError(f"df must be > 0, got {df}")
    from scipy import stats as scipy_stats  # here: importing it costs every command 1-1.5 s

    return float(scipy_stats.t.ppf(p, df))


def t_interval(values: ArrayLike, ci: float) -> tuple[float | None, float | None]:
    """The Student-t interval of the mean at level `ci`; (None, None) below 2 values."""
    arr = np.asarray(values, dtype=float).ravel()
    n = int(arr.size)
    if n < 2:
        return None, None
    half = t_quantile(0.5 + ci / 2.0, n - 1) * float(arr.std(ddof=1)) / math.sqrt(n)
    return float(arr.mean()) - half, float(arr.mean()) + half


def summarize(values: ArrayLike) -> dict[str, float | int | None]:
    """Summary of samples with exactly the keys of the result schema's `stats` object.

    n == 0: every number is None. n == 1: stdev None (one sample says nothing about
    spread; native/common/stats.c writes NaN, i.e. null) and the interval [mean, mean].
    """
    arr = np.asarray(values, dtype=float).ravel()
    n = int(arr.size)
    if n == 0:
        return {"n": 0, **{key: None for key in STATS_KEYS[1:]}}
    mean = float(arr.mean())
    stdev: float | None
    if n == 1:
        stdev, lo, hi = None, mean, mean
    else:
        stdev = float(arr.std(ddof=1))
        lo, hi = t_interval(arr, 0.95)
    return {
        "n": n,
        "min": float(arr.min()),
        "median": float(np.median(arr)),
        "mean": mean,
        "max": float(arr.max()),
        "stdev": stdev,
        "ci95_low": lo,
        "ci95_high": hi,
    }


def _log_ratios(ratios: list[float]) -> list[float]:
    """The logs of the usable ratios (positive and finite), which both intervals use."""
    return [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]


def ratio_ci(ratios: list[float], ci: float = 0.95,
             ) -> tuple[float | None, float | None, float | None]:
    """(geometric mean, low, high) of positive ratios; the interval is the Student-t
    interval of the mean log ratio, exponentiated. One ratio: (it, None, None)."""
    logs = _log_ratios(ratios)
    if not logs:
        return None, None, None
    lo, hi = t_interval(logs, ci)
    mean = math.exp(sum(logs) / len(logs))
    return mean, None if lo is None else math.exp(lo), None if hi is None else math.exp(hi)


# Up to this many ratios the signed-rank distribution is counted exactly (about n**3 / 4
# additions: 0.25 M at 100, the benchmarks' most repetitions).
RANK_EXACT_MAX_N = 100


def _normal_quantile(p: float) -> float:
    return float(statistics.NormalDist().inv_cdf(p))


@lru_cache(maxsize=128)
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many subsets of the ranks 1..n have each sum: the exact null distribution of
    the Wilcoxon signed-rank statistic, times 2**n."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total, c in enumerate(counts):
            grown[total + rank] += c
        counts = grown
    return tuple(counts)


def signed_rank_order(n: int, ci: float) -> int | None:
    """k such that the k-th smallest and the k-th largest of the n(n+1)/2 Walsh averages
    bound the Hodges-Lehmann interval at confidence >= ci: one more than the largest c
    with P(T <= c) <= (1 - ci) / 2 under the exact null distribution. None where even the
    extremes do not reach ci (n below 6 at 95 %)."""
    if n > RANK_EXACT_MAX_N:  # the normal approximation, good to a rank or so there
        mean, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        c = math.floor(mean - _normal_quantile(0.5 + ci / 2.0) * sd)
        return None if c < 0 else c + 1
    counts = _signed_rank_counts(n)
    tail, total, c = (1.0 - ci) / 2.0 * 2**n, 0, -1
    while c + 1 < len(counts) and total + counts[c + 1] <= tail:
        c += 1
        total += counts[c]
    return None if c < 0 else c + 1


def ratio_ci_rank(ratios: list[float], ci: float = 0.95,
                  ) -> tuple[float | None, float | None, float | None]:
    """(Hodges-Lehmann estimate, low, high) of positive ratios on the log scale,
    exponentiated: the median of the log ratios' Walsh averages (pairwise means, each
    with itself included) and the interval the Wilcoxon signed-rank test inverts (Hollander
    & Wolfe, Nonparametric Statistical Methods, 3.2). It asks the log ratios to be
    symmetric about their centre, which pairs of launches in alternating order give; unlike
    ratio_ci's Student-t interval it is not widened by one launch that drew a slower pace
    for its whole length. Fewer than 6 ratios (at 95 %): no interval."""
    logs = _log_ratios(ratios)
    if not logs:
        return None, None, None
    x = np.sort(np.asarray(logs, dtype=float))
    m = len(x) * (len(x) + 1) // 2  # how many Walsh averages
    k = signed_rank_order(len(x), ci)
    # the median's one or two middle averages, then the interval's ends where there is one
    orders = [(m + 1) // 2, m // 2 + 1] + ([] if k is None else [k, m + 1 - k])
    walsh = _walsh_orders(x, orders)
    centre = math.exp((walsh[0] + walsh[1]) / 2.0)
    if k is None:
        return centre, None, None
    return centre, math.exp(walsh[2]), math.exp(walsh[3])


# Up to this many values their Walsh averages are listed (n(n+1)/2 of them: 16 MB at
# 2,000); beyond it they are counted instead, because a study's pooled pairs reach 20,000
# and more, whose list would take gigabytes.
_WALSH_LISTED = 2000


def _walsh_orders(x: np.ndarray, orders: list[int]) -> list[float]:
    """The k-th smallest (from 1), for each k of `orders`, of the Walsh averages
    (x_i + x_j) / 2, i <= j, of the sorted values x."""
    n = len(x)
    if n <= _WALSH_LISTED:
        walsh = np.add.outer(x, x)[np.triu_indices(n)] / 2.0
        picked = np.partition(walsh, [k - 1 for k in orders])
        return [float(picked[k - 1]) for k in orders]
    # bisect on the value: how many averages lie at or below t is, for each i, how many
    # j >= i have x_j <= 2t - x_i, one sorted search per value
    index = np.arange(n)

    def at_most(t: float) -> int:
        return int(np.maximum(np.searchsorted(x, 2.0 * t - x, side="right") - index, 0).sum())

    def kth(k: int) -> float:
        low, high = float(x[0]), float(x[-1])
        while True:
            mid = (low + high) / 2.0
            if mid <= low or mid >= high:  # neighbouring doubles: high is the average
                return high
            if at_most(mid) >= k:
                high = mid
            else:
                low = mid

    return [kth(k) for k in orders]


def median_or_none(values: Iterable[float]) -> float | None:
    """Median of the values, None when there are none (statistics.median raises)."""
    vals = list(values)
    return statistics.median(vals) if vals else None


def percentile_ci(replicates: ArrayLike, ci: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile interval of bootstrap replicates; NaN replicates (failed refits) are
    ignored, and (None, None) is returned when none is left."""
    arr = np.asarray(replicates, dtype=float).ravel()
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return None, None
    alpha = (1.0 - ci) / 2.0
    lo, hi = np.percentile(arr, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(lo), float(hi)


def bootstrap_medians(rng: np.random.Generator, values: np.ndarray, reps: int) -> np.ndarray:
    """The medians of `reps` resamples (with replacement, from `rng`) of `values`."""
    return np.median(rng.choice(values, (reps, values.size)), axis=1)


def median_bootstrap_ci(
    a: np.ndarray,
    b: np.ndarray,
    combine: Callable[[Any, Any], Any],
    *,
    reps: int = 2000,
    seed: int = 1,
    ci: float = 0.95,
) -> tuple[float, float | None, float | None]:
    """combine(median(a), median(b)) (np.divide: a ratio, np.subtract: a difference) with
    its percentile-bootstrap interval: both sample sets resampled `reps` times, fixed seed
    (the same data give the same report). a and b must not be empty."""
    rng = np.random.default_rng(seed)
    ra, rb = bootstrap_medians(rng, a, reps), bootstrap_medians(rng, b, reps)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = percentile_ci(combine(ra, rb), ci)
    return float(combine(np.median(a), np.median(b))), lo, hi


def line_fit(xs: list[float], ys: list[float]) -> dict[str, Any] | None:
    """Least squares y = a + b x: slope b, intercept a, 95 % CI of b (Student t)."""
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None and math.isfinite(y)]
    if len(pts) < 2 or len({x for x, _ in pts}) < 2:
        return None
    x = np.array([p[0] for p in pts], dtype=float)
    y = np.array([p[1] for p in pts], dtype=float)
    b, a = np.polyfit(x, y, 1)
    ci = None
    if len(pts) > 2:
        resid = y - (a + b * x)
        s2 = float(resid @ resid) / (len(pts) - 2)
        sxx = float(((x - x.mean()) ** 2).sum())
        half = t_quantile(0.975, len(pts) - 2) * math.sqrt(s2 / sxx)
        ci = [float(b - half), float(b + half)]
    return {
        "slope_ns": float(b),
        "intercept_ns": float(a),
        "slope_ci95": ci,
        "points": len(pts),
        "x_min": float(x.min()),
        "x_max": float(x.max()),
    }
