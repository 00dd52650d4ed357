"""The error-checking benchmark (issue 6, experiment 9): small-message costs with the
MPI's argument checking off and on, one launch per setting (MPIR_CVAR_ERROR_CHECKING,
mpi_param_check), read back via MPI_T. Its program is native/bench/error_checking.c; here
its launches, and beside this file its analysis (analysis.py), report (report.py) and
schema."""

from ..spec import Benchmark, Launch, declare


def _error_checking_launches(ranks: int, quick: bool) -> tuple[Launch, ...]:
    """Argument checking off and on, alternating (both MPICH's and Open MPI's switch are
    set; each MPI reads its own, and the program reads the setting back via MPI_T)."""
    def setting(v: str) -> tuple[tuple[str, str], ...]:
        return (("MPIR_CVAR_ERROR_CHECKING", v), ("OMPI_MCA_mpi_param_check", v))

    pairs = 1 if quick else 3
    reps = ("--reps", "12" if quick else "30")
    return tuple(
        Launch(f"{name}-{i + 1}", args=reps, env=setting(v))
        for i in range(pairs)
        for name, v in (("off", "0"), ("on", "1"))
    )


SPEC = declare(
    Benchmark(
        name="error-checking",
        program="mo_error_checking",
        title="Small-message costs with the MPI's argument checking on and off",
        min_ranks=2,
        analyze=None,
        default_timeout_s=300.0,
        quick_timeout_s=120.0,
        suite="overhead",
        suite_order=80,
        launches=_error_checking_launches,
    ),
    __name__,
    help="Small-message costs with the MPI's argument checking off and on "
         "(MPIR_CVAR_ERROR_CHECKING / mpi_param_check, read back via MPI_T).",
    timeout_help="seconds before one launch is stopped",
)
