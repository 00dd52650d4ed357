"""The inflation benchmark (Strohbeen; issue 5, item 4): a fixed exchange with growing
computation inside it, the exchange's total time per step, and the knee where the
computation stops being free. Its program is native/bench/inflation.c; here its flags and
its summary-card line, and beside this file its analysis (analysis.py), report
(report.py) and documents (documents.py)."""

from ..spec import Benchmark, CardLine, Flag, declare

SPEC = declare(
    Benchmark(
        name="inflation",
        program="mo_inflation",
        title="Computation inflation: exchange time against growing computation (knee)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=1800.0,
        quick_timeout_s=300.0,
        suite="overlap",
        suite_order=40,
    ),
    __name__,
    help="A fixed exchange with growing computation: total time and the knee per size.",
    flags=(
        Flag("--sizes", "message sizes (default 256:4M; --quick 1k,64k,1M)", kind="sizes",
             metavar="LIST"),
        Flag("--samples", "samples per step (default 60; --quick 40)", minimum=2),
        Flag("--steps", "computation steps incl. zero (default 24; --quick 16)", minimum=4),
    ),
    quick_help="3 sizes, fewer steps and samples",
    verbose_help="print one line per size",
    card=CardLine("computation needed to hide an exchange", order=50),
)
