"""The matching benchmark (Balaji et al., experiments 3 and 4): one receive past M*N
posted receives or unexpected messages; the cost per queued request and whether it grows
with the queue. Its program is native/bench/matching.c; here its flags and its
summary-card line, and beside this file its analysis (analysis.py), report (report.py)
and schema."""

from ...core.errors import UserError
from ..spec import Benchmark, CardLine, Flag, declare

_QUEUES = ("posted", "unexpected", "both")


def _queue(value: str) -> list[str]:
    if value not in _QUEUES:
        raise UserError(f"--queue must be posted, unexpected or both (got '{value}')")
    return ["--queue", value]


SPEC = declare(
    Benchmark(
        name="matching",
        program="mo_matching",
        title="Matching cost per queued request (posted-receive and unexpected-message queues)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=1800.0,
        quick_timeout_s=300.0,
        suite="overhead",
        suite_order=30,
    ),
    __name__,
    help="Matching cost per queued request: posted-receive and unexpected-message queues.",
    flags=(
        Flag("--queue", "posted | unexpected | both", kind="text", default="both",
             native=_queue),
        Flag("--max-m", "largest M, requests per peer (default 65536; --quick 4096)"),
        Flag("--max-n", "most peers in the N sweep (default: ranks - 1)"),
        Flag("--samples", "timed receives per point (default 25; --quick 11)"),
    ),
    quick_help="M up to 4096, fewer samples",
    verbose_help="print one line per point",
    card=CardLine("matching cost per queued request", order=100),
)
