"""The nbc-overlap benchmark (issue 5, item 6): non-blocking collectives, OSU's and IMB's
overlap % beside the profiler's bounds; it runs under libmpi_overlap, one region per
(collective, size, MPI_Test variant), and the analysis reads the rank profiles beside
result.json. Its program is native/bench/nbc_overlap.c; here its flags and its
summary-card line, and beside this file its analysis (analysis.py), report (report.py)
and documents (documents.py)."""

from ...core.errors import UserError
from ..spec import Benchmark, CardLine, Flag, declare

NBC_COLLECTIVES = ("Ibarrier", "Ibcast", "Igather", "Iscatter", "Ireduce", "Iallreduce",
                   "Iallgather", "Ialltoall", "Ireduce_scatter_block", "Ireduce_scatter",
                   "Iscan", "Iexscan")


# The element types of the reductions (mo_nbc_overlap --datatype).
NBC_DATATYPES = ("int", "float", "double")

def _datatype(value: str) -> list[str]:
    if value.lower() not in NBC_DATATYPES:
        raise UserError(f"--datatype must be {', '.join(NBC_DATATYPES)} (got '{value}')")
    return ["--datatype", value.lower()]


SPEC = declare(
    Benchmark(
        name="nbc-overlap",
        program="mo_nbc_overlap",
        title="Non-blocking collective overlap (OSU and IMB formulas, profiler bounds)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=1800.0,
        quick_timeout_s=300.0,
        profiled=True,
        suite="overlap",
        suite_order=60,
    ),
    __name__,
    with_run_dir=True,
    help="Non-blocking collective overlap: OSU and IMB overlap % and the profiler's bounds.",
    flags=(
        Flag("--sizes", "bytes per rank block (default 8,1K,64K,1M; --quick 8,64K,1M)",
             kind="sizes", metavar="LIST"),
        Flag("--tests", "MPI_Test calls spread through the work of the second variant "
             "(default 8; 0: no tests)", minimum=0, short="-t"),
        Flag("--collectives", "Ibarrier, Ibcast, Igather, Iscatter, Ireduce, Iallreduce, "
             "Iallgather, Ialltoall, Ireduce_scatter_block, Ireduce_scatter, Iscan, Iexscan "
             "(default all)", kind="choices", metavar="LIST", choices=NBC_COLLECTIVES),
        Flag("--iters", "iterations per loop (default: automatic)"),
        Flag("--datatype", "element type of the reductions: int (default), float, double "
             "(OSU's -T)", kind="text", metavar="TYPE", native=_datatype),
        Flag("--validate", "check the data every collective delivered after each loop "
             "(OSU's -c)", kind="switch"),
    ),
    quick_help="3 sizes, shorter loops",
    verbose_help="print one line per case",
    card=CardLine("non-blocking collective overlap (OSU)", order=80),
)
