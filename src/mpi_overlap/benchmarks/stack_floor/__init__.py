"""The stack-floor benchmark (issue 6, experiments 1 and 2): MPI ping-pong against the
shared-memory and memcpy floors of the same cores, and blocking against non-blocking
requests. Its program is native/bench/stack_floor.c; here its flags and its summary-card
line, and beside this file its analysis (analysis.py), report (report.py) and documents
(documents.py)."""

from ..spec import Benchmark, CardLine, Flag, declare, size_sweep

SPEC = declare(
    Benchmark(
        name="stack-floor",
        program="mo_stack_floor",
        title="MPI stack overhead against the core-to-core floor; request overhead",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        suite="overhead",
        suite_order=10,
    ),
    __name__,
    help="MPI ping-pong against the core-to-core floor; blocking vs non-blocking requests.",
    flags=(
        Flag("--sizes", "message sizes (default 0:4M)", kind="sizes", metavar="LIST"),
        Flag("--reps", "samples per method and size"),
        Flag("--iters", "fixed round trips per sample (default: automatic)"),
    ),
    quick_at=1,
    quick_help="9 sizes, fewer and shorter samples",
    verbose_help="print the per-size medians",
    # More samples than the common default (7; --quick 4): the figures are medians of
    # paired differences, with bootstrap intervals.
    args=size_sweep("0,64,1k,4k,16k,64k,256k,1M,4M", (15, 8)),
    card=CardLine("small-message latency", order=10),
)
