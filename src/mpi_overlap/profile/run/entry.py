"""The profile's kind of run (run/run_kind.py): not a benchmark, `mpi-overlap profile`
runs the user's program under the profiler, and this entry gives its run directories an
analysis like every other run (analysis/profile.py, imported on first use).
benchmarks/registry.py lists it first among the kinds of run; session.py analyses with it.
"""

from __future__ import annotations

from ...run.run_kind import Benchmark, lazy_analysis

PROFILE = Benchmark(
    name="profile",
    program="",
    title="Overlap profile of an MPI program (min/max overlap bounds)",
    min_ranks=1,
    analyze=lazy_analysis("mpi_overlap.profile.analysis.profile", "analyze_profile",
                          with_run_dir=True),
    default_timeout_s=0.0,
    quick_timeout_s=0.0,
)
