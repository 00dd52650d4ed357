"""One entry per benchmark: its native program, its analysis, and its run limits.

A new benchmark is a package of its own (benchmarks/<name>/: spec.py, docs/architecture.md,
"Add a benchmark"), found by discovery.py and added to BENCHMARKS below; the entries
written out here are the benchmarks not yet moved into packages. The runner, the CLI and
the report pick every one up by name.
"""

from __future__ import annotations

from ..errors import UserError
from .discovery import specs
from .spec import Benchmark, lazy_analysis

# The benchmarks not yet moved into a package of their own (benchmarks/<name>/, spec.py).
_HERE: dict[str, Benchmark] = {
    # One-way transfer time per size; `mpi-overlap calibrate` turns it into the
    # profiler's transfer-time table (xfer_table.py). No analysis: the medians are the
    # result.
    "pingpong": Benchmark(
        name="pingpong",
        program="mo_pingpong",
        title="One-way transfer time per message size (blocking ping-pong)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
    ),
    # Time of every collective (blocking and non-blocking) per size on the job's
    # communicator size; `mpi-overlap calibrate` puts it into the transfer-time table's
    # collective series (xfer_table.py). No analysis: the times are the result.
    "collectives": Benchmark(
        name="collectives",
        program="mo_collectives",
        title="Time of each MPI collective per message size (median of the slowest rank)",
        min_ranks=1,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
    ),
    # Not a native benchmark: `mpi-overlap profile` runs the user's program; the entry
    # gives its run directories an analysis like every other run.
    "profile": Benchmark(
        name="profile",
        program="",
        title="Overlap profile of an MPI program (min/max overlap bounds)",
        min_ranks=1,
        analyze=lazy_analysis("mpi_overlap.analysis.profile", "analyze_profile", with_run_dir=True),
        default_timeout_s=0.0,
        quick_timeout_s=0.0,
    ),
    # Not one native program: profiler_overhead.py launches mo_msgrate and
    # mo_compute_app with and without libmpi_overlap, repeatedly, into one run
    # directory; the timeouts are per launch.
    "profiler-overhead": Benchmark(
        name="profiler-overhead",
        program="",
        title="What the overlap profiler costs: message rate and run time, with/without",
        min_ranks=2,
        analyze=lazy_analysis("mpi_overlap.analysis.profiler_overhead",
                              "analyze_profiler_overhead"),
        default_timeout_s=300.0,
        quick_timeout_s=120.0,
    ),
    # The case study (study.py): the mini-applications in every exchange mode, with and
    # without the profiler, repeatedly, into one run directory; timeouts are per launch.
    "study-halo": Benchmark(
        name="study-halo",
        program="",
        title="Case study: halo (3-D stencil) exchange modes, measured and profiled",
        min_ranks=2,
        analyze=lazy_analysis("mpi_overlap.analysis.study", "analyze_study"),
        default_timeout_s=600.0,
        quick_timeout_s=120.0,
    ),
    "study-cg": Benchmark(
        name="study-cg",
        program="",
        title="Case study: cg (conjugate gradient) reductions, measured and profiled",
        min_ranks=2,
        analyze=lazy_analysis("mpi_overlap.analysis.study", "analyze_study"),
        default_timeout_s=600.0,
        quick_timeout_s=120.0,
    ),
}

# Every benchmark by name: those above, then the packages' (discovery.py).
BENCHMARKS: dict[str, Benchmark] = {**_HERE, **{s.name: s.benchmark for s in specs()}}


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark '{name}' (known: {', '.join(BENCHMARKS)})") from None
