"""The progress benchmark (Strohbeen's miniGhost check; issue 5, item 3): does a
message's data reach the receive buffer while neither rank calls MPI? Per size and
ordering: yes / no / partly. Its program is native/bench/progress.c; here its flags, its
summary-card line and what it gives a profile (spec.Evidence: evidence.py, and advice.py,
the advice rule it feeds), and beside this file its analysis (analysis.py), report
(report.py) and documents (documents.py)."""

from ...core.errors import UserError
from ...core.sizes import parse_sizes
from ..spec import Benchmark, CardLine, Evidence, Flag, declare


def _sizes(value: str) -> list[str]:
    if 0 in parse_sizes(value):
        raise UserError("--sizes: a 0-byte message has no data to watch")
    return ["--sizes", value]


def _budget_factor(value: float) -> list[str]:
    if not value >= 1.0:
        raise UserError(f"--budget-factor must be at least 1 (got {value})")
    return ["--budget-factor", repr(value)]


SPEC = declare(
    Benchmark(
        name="progress",
        program="mo_progress",
        title="Asynchronous progress: does data arrive without MPI calls (miniGhost check)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=1800.0,
        quick_timeout_s=300.0,
        suite="overlap",
        suite_order=30,
    ),
    __name__,
    help="Asynchronous progress: does a message's data reach the receive buffer while "
         "neither rank calls MPI? (the miniGhost check of Strohbeen's Cray Gemini slides; "
         "set e.g. MPICH_ASYNC_PROGRESS=1 to compare)",
    flags=(
        Flag("--sizes", "message sizes (default 1k:4M; --quick 1k,8k,64k,1M,4M)",
             kind="sizes", metavar="LIST", native=_sizes),
        Flag("--samples", "samples per size, ordering and sender mode (default 15; --quick 7)"),
        Flag("--budget-factor",
             "computation budget in one-way transfer times (default 20, at least 10 ms)",
             kind="float", native=_budget_factor),
    ),
    quick_help="five sizes, fewer samples",
    verbose_help="print one line per size",
    card=CardLine("asynchronous progress (data moves with no MPI call)", order=30),
    # the profile keeps the newest run's verdict under "progress" (evidence.py); rule
    # "progress" (advice.py) quotes it in its advice to poll or switch progress on
    evidence=Evidence(key="progress", rule="progress"),
)
