"""The comm-overlap benchmark (Colmenares et al., "An Overlap Study for Cluster
Computing", §III-B/§IV-B; issue 5, item 2): T_message + T_workload against T_overlap
(equation (1)), and the "better test" with both ranks non-blocking. Its program is
native/bench/comm_overlap.c; here its flags and its summary-card line, and beside this
file its analysis (analysis.py), report (report.py) and schema."""

from ...core.errors import UserError
from ..spec import Benchmark, CardLine, Flag, declare


def _work_factor(value: float) -> list[str]:
    if not value > 0:
        raise UserError(f"--work-factor must be positive (got {value})")
    return ["--work-factor", repr(value)]


SPEC = declare(
    Benchmark(
        name="comm-overlap",
        program="mo_comm_overlap",
        title="Communication-computation overlap: T_message + T_workload vs T_overlap",
        min_ranks=2,
        analyze=None,
        default_timeout_s=1800.0,
        quick_timeout_s=300.0,
        suite="overlap",
        suite_order=20,
    ),
    __name__,
    help="T_message + T_workload against T_overlap (Colmenares et al., An Overlap Study for "
         "Cluster Computing), and the better test per rank.",
    flags=(
        Flag("--sizes", "message sizes (default 8:4M; --quick 1k,64k,1M)", kind="sizes",
             metavar="LIST"),
        Flag("--samples", "samples per test and size (default 1000; --quick 200)", minimum=2),
        Flag("--work-factor", "work = this x the median message time (default 1)",
             kind="float", native=_work_factor),
    ),
    quick_help="3 sizes, 200 samples",
    verbose_help="print one line per size",
    card=CardLine("communication–computation overlap", order=40),
)
