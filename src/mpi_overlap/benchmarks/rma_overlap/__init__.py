"""The rma-overlap benchmark (issue 5, item 7): MPI_Put / MPI_Get, work, then
MPI_Win_flush or MPI_Win_fence, OSU's overlap for one-sided communication. Its program is
native/bench/rma_overlap.c; here its flags and its summary-card line, and beside this
file its analysis (analysis.py), report (report.py) and documents (documents.py)."""

from ..spec import Benchmark, CardLine, Flag, declare

SPEC = declare(
    Benchmark(
        name="rma-overlap",
        program="mo_rma_overlap",
        title="One-sided overlap (MPI_Put / MPI_Get completed by flush or fence)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        suite="overlap",
        suite_order=70,
    ),
    __name__,
    help="One-sided overlap: MPI_Put/MPI_Get, work, then MPI_Win_flush or MPI_Win_fence.",
    flags=(
        Flag("--sizes", "message sizes (default 8,4K,64K,1M)", kind="sizes", metavar="LIST"),
        Flag("--ops", "put, get or both (default both)", kind="choices", metavar="LIST",
             choices=("put", "get"), every="both"),
        Flag("--sync", "flush, fence or both (default both)", kind="choices", metavar="LIST",
             choices=("flush", "fence"), every="both"),
        Flag("--window", "allocate, create or both (default both)", kind="choices",
             metavar="LIST", choices=("allocate", "create"), every="both"),
        Flag("--iters", "iterations per loop (default: automatic)"),
    ),
    quick_help="shorter loops",
    verbose_help="print one line per case",
    card=CardLine("one-sided overlap", order=90),
)
