"""The waitany benchmark (Balaji et al., experiment 5): MPI_Waitany, MPI_Testany and
MPI_Waitsome time against the number of requests, only the first of which completes.
Its program is native/bench/waitany.c; here its flags, and beside this file its analysis
(analysis.py), report (report.py) and documents (documents.py)."""

from ..spec import Benchmark, Flag, declare

SPEC = declare(
    Benchmark(
        name="waitany",
        program="mo_waitany",
        title="MPI_Waitany / MPI_Testany / MPI_Waitsome time against the number of requests",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        suite="overhead",
        suite_order=40,
    ),
    __name__,
    help="MPI_Waitany / MPI_Testany / MPI_Waitsome time against the number of requests.",
    flags=(
        Flag("--max-n", "most requests (default 8192; --quick 1024)"),
        Flag("--samples", "timed calls per N and call (default 25; --quick 11)"),
    ),
    quick_help="N up to 1024, fewer samples",
    verbose_help="print one line per N",
)
