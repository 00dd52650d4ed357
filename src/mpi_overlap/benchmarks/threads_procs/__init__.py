"""The threads-procs benchmark (Balaji et al., experiment 8; issue 6): the message rate of
1..k processes in MPI_THREAD_SINGLE against 1..k threads of one process in
MPI_THREAD_MULTIPLE, 0-byte sends to MPI_PROC_NULL. Two launches (the thread level is
fixed at MPI_Init), merged into one result by multilaunch.py. Its program is
native/bench/threads_procs.c; here its launches, and beside this file its analysis
(analysis.py), report (report.py) and schema."""

from ..spec import Benchmark, Launch, declare


def _threads_procs_launches(ranks: int, quick: bool) -> tuple[Launch, ...]:
    """k ranks in MPI_THREAD_SINGLE, then one rank with k threads in MPI_THREAD_MULTIPLE."""
    reps = ("--reps", "12" if quick else "30")  # short samples: many are cheap
    return (
        Launch("single", ("--thread-level", "single", *reps)),
        Launch("multiple", ("--thread-level", "multiple", "--workers", str(ranks), *reps),
               ranks=1),
    )


SPEC = declare(
    Benchmark(
        name="threads-procs",
        program="mo_threads_procs",
        title="Message rate of processes against threads (0-byte sends to MPI_PROC_NULL)",
        min_ranks=1,
        analyze=None,
        default_timeout_s=300.0,
        quick_timeout_s=120.0,
        suite="overhead",
        suite_order=70,
        launches=_threads_procs_launches,
    ),
    __name__,
    help="Message rate of 1..k processes (MPI_THREAD_SINGLE) against 1..k threads "
         "(MPI_THREAD_MULTIPLE), k = -n; 0-byte MPI_Send to MPI_PROC_NULL.",
    timeout_help="seconds before one launch is stopped",
)
