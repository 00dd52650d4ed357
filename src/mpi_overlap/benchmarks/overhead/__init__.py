"""The overhead benchmark (post-work-wait; Lawry et al. and the Sandia mpi_overhead
method): host processor overhead and application availability per size, for sends and
receives, from the knee of iteration time against work (a hinge fit,
analysis/knee.py). Its program is native/bench/overhead.c; here its flags and its
summary-card line, and beside this file its analysis (analysis.py), report (report.py:
tables; plots.py: figures) and documents (documents.py)."""

from typing import Any

from ...core.errors import UserError
from ..spec import Benchmark, CardLine, Flag, count_flag, declare, size_list

_DIRECTIONS = ("send", "recv", "both")
QUICK_SIZES = "0,64,1k,8k,64k,256k,1M,4M"


def _args(values: dict[str, Any], quick: bool, verbose: bool) -> list[str]:
    """Checked here (one-line errors before anything is built), in the program's order."""
    sizes, direction = values.get("sizes"), values.get("direction") or "both"
    args = size_list("--sizes", sizes)
    if sizes is None and quick:
        args += ["--sizes", QUICK_SIZES]
    if direction not in _DIRECTIONS:
        raise UserError(f"--direction must be send, recv or both (got '{direction}')")
    args += ["--direction", direction]
    if quick:
        args.append("--quick")
    args += count_flag("--reps", values.get("reps"), 2)
    for flag in ("--thresh", "--bthresh"):
        value = values.get(flag.lstrip("-"))
        if value is not None:
            if not value > 1.0:
                raise UserError(f"{flag} must be greater than 1 (got {value})")
            args += [flag, repr(value)]
    args += count_flag("--iters", values.get("iters"), 1)
    return args + (["--verbose"] if verbose else [])


SPEC = declare(
    Benchmark(
        name="overhead",
        program="mo_overhead",
        title="Host processor overhead and application availability (post-work-wait)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=3600.0,
        quick_timeout_s=900.0,
        suite="overlap",
        suite_order=5,
    ),
    __name__,
    help="Host overhead and application availability (post-work-wait), send and receive.",
    flags=(
        Flag("--sizes", "message sizes, e.g. 0:4M or 0,1k,64k", kind="sizes", metavar="LIST"),
        Flag("--direction", "send | recv | both", kind="text", default="both"),
        Flag("--reps", "samples per work step"),
        Flag("--thresh", "classic stop threshold (default 1.5)", kind="float"),
        Flag("--bthresh", "classic base_t threshold (default 1.02)", kind="float"),
        Flag("--iters", "fixed iterations per sample (default: automatic)"),
    ),
    quick_at=2,
    quick_help="fewer sizes, samples and steps",
    verbose_help="print the per-work-step tables",
    sections=("plots.summary_sections", "html_sections", "plots.fit_sections"),
    args=_args,
    card=CardLine("availability (post-work-wait)", order=60),
)
