"""The analysis kit shared by the benchmarks and the profiler: summaries, confidence
intervals (stats.py), the hinge fit (knee.py), replication, headline figures, the transfer
table's rows (run_table.py), protocol switches; each benchmark's own analysis lives in its
package (benchmarks/<name>/analysis.py), the profile's in profile/analysis/.

The names below are imported on first use: importing any analysis module (the profile's
among them) must not import numpy through knee.py and stats.py (issue 38)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "KneeResult": "knee",
    "fit_knee": "knee",
    "hinge_fit": "knee",
    "percentile_ci": "stats",
    "summarize": "stats",
    "t_quantile": "stats",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)
