"""The profiler's own time once per launch (issue 40: the cost in its parts), from what
the library records: per rank, its time in MPI_Init after PMPI_Init (node layout, clock,
table, call sites) and in MPI_Finalize up to its final document (the last queue's
processing, the mappings), the rank documents' `library_s`; then rank 0's gather of the
documents (the job file's `gather_s`) and its reduction of the statistics (`reduce_s`).
The ranks wait for each other in both collective steps, so the launch pays the slowest
rank's init and finalize plus rank 0's gather and reduction: their sum is what a launch
costs once, whatever its length. Writing the files after them is not timed.
"""

from __future__ import annotations

import statistics
from typing import Any

from ...core.formatting import fmt_time
from ...core.values import num

# the parts that add up to a launch's per_launch_s (LibraryTime.result)
LAUNCH_PARTS = ("init_s_max", "finalize_s_max", "gather_s", "reduce_s")


class LibraryTime:
    """Collects the ranks' `library_s` in the analysis' one pass over the documents."""

    def __init__(self) -> None:
        self.init: list[float] = []
        self.finalize: list[float] = []

    def add(self, doc: dict[str, Any]) -> None:
        lib = doc.get("library_s")
        if not isinstance(lib, dict):
            return
        for key, into in (("init", self.init), ("finalize", self.finalize)):
            value = num(lib.get(key))
            if value is not None:
                into.append(value)

    def result(self, job_file: dict[str, Any] | None,
               job_stats: dict[str, Any] | None) -> dict[str, Any] | None:
        """The analysis' `library_time`, None where no rank recorded it (libraries before
        it, or a statistics-only run, whose rows do not carry it)."""
        if not self.init:
            return None
        out = {
            "ranks": len(self.init),
            "init_s_max": max(self.init),
            "init_s_median": statistics.median(self.init),
            "finalize_s_max": max(self.finalize) if self.finalize else None,
            "gather_s": num((job_file or {}).get("gather_s")),
            "reduce_s": num((job_stats or {}).get("reduce_s")),
        }
        return {**out, "per_launch_s": sum(out[k] or 0.0 for k in LAUNCH_PARTS)}


def over_launches(results: list[dict[str, Any]], ci: float = 0.95) -> dict[str, Any] | None:
    """Over several launches' LibraryTime.result: the mean of their per_launch_s with its
    Student-t interval, the median, and each part's median; None without any."""
    totals = [float(r["per_launch_s"]) for r in results]
    if not totals:
        return None
    from ...analysis.stats import t_interval  # numpy: a profile's own analysis needs none

    lo, hi = t_interval(totals, ci)
    parts = {k: [float(r[k]) for r in results if isinstance(r.get(k), (int, float))]
             for k in LAUNCH_PARTS}
    return {
        "launches": len(totals),
        "per_launch_s": statistics.fmean(totals),
        "median_s": statistics.median(totals),
        "ci95_low_s": lo,
        "ci95_high_s": hi,
        "parts_median_s": {k: statistics.median(v) if v else None for k, v in parts.items()},
    }


def library_time_finding(lt: dict[str, Any] | None) -> str | None:
    """'Once per launch the profiler took …': its parts and their sum."""
    if not lt:
        return None
    after = []
    if lt["finalize_s_max"] is not None:
        after.append(f"{fmt_time(lt['finalize_s_max'])} in MPI_Finalize before its documents")
    if lt["gather_s"] is not None:
        after.append(f"{fmt_time(lt['gather_s'])} gathering them on rank 0")
    if lt["reduce_s"] is not None:
        after.append(f"{fmt_time(lt['reduce_s'])} reducing the statistics")
    return (f"Once per launch the profiler took {fmt_time(lt['init_s_max'])} in MPI_Init (the "
            "slowest rank: node layout, clock, table, call sites)"
            + (", " + ", ".join(after) if after else "")
            + f": {fmt_time(lt['per_launch_s'])} in all, whatever the program's length "
            "(writing the files is not timed).")


def over_launches_words(summary: dict[str, Any]) -> str:
    """'4.1 ms [3.5, 4.7] over 12 profiled launches (medians, ms: MPI_Init 1.2, …)': an
    over_launches summary as the findings say it."""
    ms = 1e3
    ci = (f" [{summary['ci95_low_s'] * ms:.1f}, {summary['ci95_high_s'] * ms:.1f}]"
          if summary["ci95_low_s"] is not None else "")
    names = {"init_s_max": "MPI_Init", "finalize_s_max": "MPI_Finalize",
             "gather_s": "gathering the documents", "reduce_s": "reducing the statistics"}
    parts = ", ".join(f"{names[k]} {v * ms:.1f}" for k, v in summary["parts_median_s"].items()
                      if v is not None)
    return (f"{summary['per_launch_s'] * ms:.1f} ms{ci} over {summary['launches']} profiled "
            f"launches (medians, ms: {parts}; writing the files is not timed)")
