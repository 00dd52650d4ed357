"""The analyses shared by the benchmarks and the profiler: summaries, confidence
intervals, the hinge fit (knee.py), the profile's analysis; each benchmark's own analysis
lives in its package (benchmarks/<name>/analysis.py)."""

from .knee import KneeResult, fit_knee, hinge_fit
from .stats import percentile_ci, summarize, t_quantile

__all__ = [
    "KneeResult",
    "fit_knee",
    "hinge_fit",
    "percentile_ci",
    "summarize",
    "t_quantile",
]
