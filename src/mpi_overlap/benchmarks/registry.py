"""One entry per benchmark: its native program, its analysis, and its run limits.

Adding a benchmark = a program in native/bench/, a schema bench-<name>-v1, an analysis
function, and an entry here; the runner, the CLI and the report pick it up by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError


@dataclass(frozen=True)
class Benchmark:
    name: str
    program: str  # executable in <build>/bench/
    title: str
    min_ranks: int
    # (result.json, run directory) -> analysis.json; the directory holds the rank
    # profiles of profiled benchmarks.
    analyze: Callable[[dict[str, Any], Path], dict[str, Any]] | None
    default_timeout_s: float
    quick_timeout_s: float
    profiled: bool = False  # runs under libmpi_overlap (its regions name the cases)
    # The suite command that runs it (`bench <suite>-suite`), and its place in that suite's
    # order; None: run on its own only.
    suite: str | None = None
    suite_order: int = 0


def _analyze_overhead(result: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    from ..analysis.overhead import analyze_overhead

    return analyze_overhead(result)


def _analyze_profile(result: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    from ..analysis.profile import analyze_profile

    return analyze_profile(result)


def _analyze_profiler_overhead(result: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    from ..analysis.profiler_overhead import analyze_profiler_overhead

    return analyze_profiler_overhead(result)


def _analyze_overlap_validation(result: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    from ..analysis.overlap_validation import analyze_overlap_validation

    return analyze_overlap_validation(result, run_dir)


def _analyze_datatypes(result: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    from ..analysis.datatypes import analyze_datatypes

    return analyze_datatypes(result)


BENCHMARKS: dict[str, Benchmark] = {
    "overhead": Benchmark(
        name="overhead",
        program="mo_overhead",
        title="Host processor overhead and application availability (post-work-wait)",
        min_ranks=2,
        analyze=_analyze_overhead,
        default_timeout_s=3600.0,
        quick_timeout_s=900.0,
    ),
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
        analyze=_analyze_profile,
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
        analyze=_analyze_profiler_overhead,
        default_timeout_s=300.0,
        quick_timeout_s=120.0,
    ),
    # The profiler's validation experiment (seed 000, §3): runs under libmpi_overlap,
    # one region per (pairing, size, step); the analysis joins result.json with the
    # rank profiles beside it.
    "overlap-validation": Benchmark(
        name="overlap-validation",
        program="mo_overlap_validation",
        title="Overlap bounds and MPI_Wait time against computation (profiler validation)",
        min_ranks=2,
        analyze=_analyze_overlap_validation,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        profiled=True,
    ),
    # Derived datatypes against contiguous sends (seed 001); mo_alignment is the same
    # program built with the alignment cases (strided ints at byte offsets 0-7,
    # contiguous buffers at cache-line and page offsets).
    "datatypes": Benchmark(
        name="datatypes",
        program="mo_datatypes",
        title="Derived datatypes (stride-2 vectors, indexed, struct, packing) vs contiguous",
        min_ranks=2,
        analyze=_analyze_datatypes,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        suite="overhead",
        suite_order=50,
    ),
    "alignment": Benchmark(
        name="alignment",
        program="mo_alignment",
        title="Buffer alignment: strided int vectors at offsets 0-7, contiguous at 64 B/4 KiB",
        min_ranks=2,
        analyze=_analyze_datatypes,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        suite="overhead",
        suite_order=60,
    ),
}


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark '{name}' (known: {', '.join(BENCHMARKS)})") from None
