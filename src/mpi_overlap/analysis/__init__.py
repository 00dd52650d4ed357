"""Statistical analysis of native benchmark results: summaries, confidence intervals,
and the hinge-fit analysis of the overhead benchmark (docs/benchmarks.md, "overhead")."""

from .knee import KneeResult, fit_knee, hinge_fit
from .overhead import analyze_overhead
from .stats import percentile_ci, summarize, t_quantile

__all__ = [
    "KneeResult",
    "analyze_overhead",
    "fit_knee",
    "hinge_fit",
    "percentile_ci",
    "summarize",
    "t_quantile",
]
