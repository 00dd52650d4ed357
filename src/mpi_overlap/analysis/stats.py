"""Small statistics shared by the analyses: sample summaries and confidence intervals.

`summarize` must give the same numbers as the native harness writes into every
`stats` object of a result (schemas/result-v1.schema.json#/$defs/stats):
sample standard deviation (n - 1), Student-t 95 % interval of the mean, and for
n < 2 the interval [mean, mean] and a null stdev (native/common/stats.c).
scipy is not a dependency, so the t quantile is computed here from the regularized
incomplete beta function.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

STATS_KEYS = ("n", "min", "median", "mean", "max", "stdev", "ci95_low", "ci95_high")

# Above this many degrees of freedom the t distribution equals the normal one to
# better than 1e-6 in the 97.5 % quantile, and the bisection below gets slow.
_NORMAL_DF = 1e7


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast only on this side of the mean.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Cumulative distribution function of Student's t with df degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@lru_cache(maxsize=1024)
def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t (inverse of `t_cdf`), to about 1e-12 relative."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if df <= 0:
        raise ValueError(f"df must be > 0, got {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df >= _NORMAL_DF:
        return NormalDist().inv_cdf(p)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:  # bracket: df = 1 needs hi ~ 1e15 for p close to 1
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


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
        half = t_quantile(0.975, n - 1) * stdev / math.sqrt(n)
        lo, hi = mean - half, mean + half
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
