"""The overlap-validation benchmark (Shet et al. §3.2-3.3): the profiler's overlap bounds
and MPI_Wait time against computation, for three pairings of blocking and non-blocking
calls, run under libmpi_overlap with one region per (pairing, size, step); the analysis
joins result.json with the rank profiles beside it. Its program is
native/bench/overlap_validation.c; here its flags, and beside this file its analysis
(analysis.py), report (report.py) and documents (documents.py)."""

from typing import Any

from ...core.errors import UserError
from ...core.sizes import parse_sizes
from ..spec import Benchmark, Flag, count_flag, declare

_PAIRINGS = ("isend-irecv", "isend-recv", "send-irecv")
# The profiler keeps this many region names apart; a step is one region.
_MAX_REGIONS = 254


def _args(values: dict[str, Any], quick: bool, verbose: bool) -> list[str]:
    """The flags checked together: pairings x sizes x steps regions must fit the profiler."""
    sizes, pairings = values.get("sizes"), values.get("pairings")
    args: list[str] = []
    nsizes = 3  # the program's default, 4K,10K,1M
    if sizes is not None:
        nsizes = len(parse_sizes(sizes))
        args += ["--sizes", sizes]
    npairings = len(_PAIRINGS)
    if pairings is not None:
        names = [p.strip() for p in pairings.split(",") if p.strip()]
        unknown = [p for p in names if p not in (*_PAIRINGS, "all")]
        if not names or unknown:
            raise UserError(
                f"--pairings: unknown pairing '{(unknown or [pairings])[0]}' "
                f"(known: {', '.join(_PAIRINGS)}, all)"
            )
        npairings = len(_PAIRINGS) if "all" in names else len(set(names))
        args += ["--pairings", ",".join(names)]
    given = values.get("steps")
    steps = given if given is not None else (6 if quick else 12)
    args += count_flag("--steps", given, 2)
    if npairings * nsizes * steps > _MAX_REGIONS:
        raise UserError(
            f"{npairings} pairings x {nsizes} sizes x {steps} steps = "
            f"{npairings * nsizes * steps} profiler regions, more than the "
            f"{_MAX_REGIONS} the profiler keeps apart; use fewer sizes or steps"
        )
    args += count_flag("--iters", values.get("iters"), 1)
    return args + (["--quick"] if quick else []) + (["--verbose"] if verbose else [])


SPEC = declare(
    Benchmark(
        name="overlap-validation",
        program="mo_overlap_validation",
        title="Overlap bounds and MPI_Wait time against computation (profiler validation)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
        profiled=True,
    ),
    __name__,
    with_run_dir=True,
    help="Validate the profiler: overlap bounds and MPI_Wait time against computation.",
    flags=(
        Flag("--sizes", "message sizes (default 4K,10K,1M)", kind="sizes", metavar="LIST"),
        Flag("--pairings", "isend-irecv, isend-recv, send-irecv, comma-separated (default all)",
             kind="text", metavar="LIST"),
        Flag("--steps", "computation steps per pairing and size (default 12)", minimum=2),
        Flag("--iters", "iterations per step (default 200; --quick 50)"),
    ),
    quick_help="6 steps of 50 iterations",
    verbose_help="print the per-step tables",
    sections=("figure_sections", "table_sections"),
    args=_args,
)
