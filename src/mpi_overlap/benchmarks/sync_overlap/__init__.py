"""The sync-overlap benchmark (Colmenares et al., §III-A, §IV-A; issue 5, item 1):
synchronization-computation overlap and the message-size sweep that brackets the size
where MPI_Isend stops completing without the receiver (the eager or buffer limit),
against the MPI's own limit (MPI_T). Its program is native/bench/sync_overlap.c; here its
flags, its summary-card line and what it gives a profile (spec.Evidence: evidence.py, and
advice.py, the advice rule it feeds), and beside this file its analysis (analysis.py),
report (report.py) and documents (documents.py)."""

from ...core.errors import UserError
from ..spec import Benchmark, CardLine, Evidence, Flag, declare


def _sizes(value: str) -> list[str]:
    return ["--sizes", value] if value else []


def _work_us(value: float) -> list[str]:
    if not value > 0:
        raise UserError(f"--work-us must be positive (got {value})")
    return ["--work-us", f"{value:g}"]


SPEC = declare(
    Benchmark(
        name="sync-overlap",
        program="mo_sync_overlap",
        title="Synchronization-computation overlap; the size where MPI_Isend needs the receiver",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=180.0,
        suite="overlap",
        suite_order=10,
    ),
    __name__,
    help="Synchronization-computation overlap (Colmenares et al.): the size where MPI_Isend "
         "stops completing without the receiver, against the MPI's own limit (MPI_T).",
    flags=(
        Flag("--sizes", "coarse sweep before the bisection (default 1:1M, powers of two)",
             kind="text", native=_sizes),
        Flag("--samples", "samples of each kind per size (default 15; --quick 7)"),
        Flag("--work-us", "rank 0's work per sample in µs (default 400; --quick 200)",
             kind="float", native=_work_us),
        Flag("--refine-steps", "most bisection steps (default 24; --quick 6)", minimum=0),
        Flag("--resolution", "stop bisecting at this width in bytes (default 1)"),
    ),
    quick_help="fewer samples, shorter work, 6 bisection steps",
    verbose_help="print one line per size",
    card=CardLine("eager limit", order=20),
    # the profile keeps the bracketed eager limit under "eager_limit" (evidence.py);
    # rule "eager-limit" (advice.py) advises the bins just above it
    evidence=Evidence(key="eager_limit", rule="eager-limit"),
)
