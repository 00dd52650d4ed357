"""The collectives benchmark (native/bench/collectives.c): the time of every collective,
blocking and non-blocking, per size on the job's communicator size (the median of the
slowest rank). It has no command of its own: `mpi-overlap calibrate` runs it for the
collective series of the profiler's transfer-time table (role "collective-table";
xfer_table.py reads its result). No analysis: the times are the result. Its result
schema is beside this file."""

from typing import Any

from ..spec import COLLECTIVE_TABLE, Benchmark, BenchmarkSpec


def _args(values: dict[str, Any], quick: bool, verbose: bool) -> list[str]:
    """The program's flags from calibrate's "budget" (seconds: no new (op, size) is
    started after it; what was measured is kept)."""
    budget = values.get("budget")
    return (["--quick"] if quick else []) + ([] if budget is None
                                              else ["--time-limit", f"{budget:g}"])


SPEC = BenchmarkSpec(
    benchmark=Benchmark(
        name="collectives",
        program="mo_collectives",
        title="Time of each MPI collective per message size (median of the slowest rank)",
        min_ranks=1,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
    ),
    package=__name__,
    help="",
    command_group=None,
    role=COLLECTIVE_TABLE,
    args=_args,
)
