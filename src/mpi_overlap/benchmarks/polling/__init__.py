"""The polling benchmark (COMB's polling method; issue 5, item 5): availability and
bandwidth when a work loop calls MPI_Test every k work units while the partner keeps
messages in flight. Its program is native/bench/polling.c; here its flags and its
summary-card line, and beside this file its analysis (analysis.py), report (report.py)
and documents (documents.py)."""

from ...core.errors import UserError
from ..spec import Benchmark, CardLine, Flag, declare


def _intervals(value: str) -> list[str]:
    """--intervals: poll intervals in µs of work, positive and increasing."""
    try:
        values = [float(v) for v in value.split(",")]
    except ValueError:
        raise UserError(f"--intervals: expected numbers in us, got '{value}'") from None
    if not values or any(v <= 0 for v in values) or values != sorted(set(values)):
        raise UserError("--intervals: positive values in increasing order, e.g. 1,10,100")
    return ["--intervals", ",".join(repr(v) for v in values)]


SPEC = declare(
    Benchmark(
        name="polling",
        program="mo_polling",
        title="Polling method: availability and bandwidth against the MPI_Test interval",
        min_ranks=2,
        analyze=None,
        default_timeout_s=1800.0,
        quick_timeout_s=300.0,
        suite="overlap",
        suite_order=50,
    ),
    __name__,
    help="Polling method (COMB): availability and bandwidth when a work loop calls MPI_Test "
         "every k work units while the partner keeps messages in flight.",
    flags=(
        Flag("--sizes", "message sizes (default 1k,8k,64k,512k,4M; --quick 1k,64k,512k,4M)",
             kind="sizes", metavar="LIST"),
        Flag("--intervals",
             "poll intervals in us of work (default 1,3,10,...,3000; --quick 1,10,100,1000)",
             kind="text", metavar="LIST", native=_intervals),
        Flag("--samples", "samples per size and interval (default 9; --quick 5)"),
    ),
    quick_help="fewer sizes, intervals and samples",
    verbose_help="print one line per point",
    card=CardLine("availability (polling with MPI_Test)", order=70),
)
