"""Every kind of run by name: the benchmarks, each a package of its own
(benchmarks/<name>/, found by discovery.py; docs/architecture.md, "Add a benchmark"),
and the profiler's runs. The runner, the CLI and the report pick every one up by name.
"""

from __future__ import annotations

from ..calibration import table_benchmarks
from ..core.errors import UserError
from .discovery import spec_with_role, specs
from .spec import Benchmark, lazy_analysis

# Not a benchmark: `mpi-overlap profile` runs the user's program under the profiler
# (profile/); the entry gives its run directories an analysis like every other run.
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

# Every kind of run by name: the profiler's, then the benchmarks' (discovery.py).
BENCHMARKS: dict[str, Benchmark] = {PROFILE.name: PROFILE,
                                    **{s.name: s.benchmark for s in specs()}}


# The calibration, below, runs the benchmarks of the table's roles without naming them.
table_benchmarks.provide(spec_with_role)


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark '{name}' (known: {', '.join(BENCHMARKS)})") from None
