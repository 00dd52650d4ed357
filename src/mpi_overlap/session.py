"""What a CLI command does end to end: run a benchmark on each toolchain, then report.

The CLI hands over parsed arguments; this module chooses defaults (timeouts, report
location), runs, and prints where the results are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.console import Console

from . import env_matrix
from .benchmarks import get_benchmark
from .errors import UserError
from .rundir import STDOUT_FILE, Run, load_run
from .runner import (
    RunOptions,
    analyze_result,
    checked_toolchains,
    run_benchmark,
    status_line,
    timeout_for,
)
from .sizes import parse_sizes
from .ui import Ui

_DIRECTIONS = ("send", "recv", "both")


def _count_flag(flag: str, value: int | None, minimum: int) -> list[str]:
    """`[flag, value]` for a count given on the command line (checked); [] when not given."""
    if value is None:
        return []
    if value < minimum:
        raise UserError(f"{flag} must be at least {minimum} (got {value})")
    return [flag, str(value)]


@dataclass
class OverheadArgs:
    sizes: str | None = None
    direction: str = "both"
    quick: bool = False
    reps: int | None = None
    thresh: float | None = None
    bthresh: float | None = None
    iters: int | None = None
    verbose: bool = False

    def to_native(self) -> list[str]:
        """Validate here (one-line errors before anything is built) and map to flags."""
        args: list[str] = []
        if self.sizes is not None:
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        elif self.quick:
            args += ["--sizes", "0,64,1k,8k,64k,256k,1M,4M"]
        if self.direction not in _DIRECTIONS:
            raise UserError(f"--direction must be send, recv or both (got '{self.direction}')")
        args += ["--direction", self.direction]
        if self.quick:
            args.append("--quick")
        args += _count_flag("--reps", self.reps, 2)
        for flag, value in (("--thresh", self.thresh), ("--bthresh", self.bthresh)):
            if value is not None:
                if not value > 1.0:
                    raise UserError(f"{flag} must be greater than 1 (got {value})")
                args += [flag, repr(value)]
        args += _count_flag("--iters", self.iters, 1)
        if self.verbose:
            args.append("--verbose")
        return args


_PAIRINGS = ("isend-irecv", "isend-recv", "send-irecv")
# The profiler keeps this many region names apart; a step is one region.
_MAX_REGIONS = 254


@dataclass
class OverlapValidationArgs:
    """`bench overlap-validation` flags -> mo_overlap_validation flags."""

    sizes: str | None = None
    pairings: str | None = None
    steps: int | None = None
    iters: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        nsizes = 3  # the program's default, 4K,10K,1M
        if self.sizes is not None:
            nsizes = len(parse_sizes(self.sizes))
            args += ["--sizes", self.sizes]
        npairings = len(_PAIRINGS)
        if self.pairings is not None:
            names = [p.strip() for p in self.pairings.split(",") if p.strip()]
            unknown = [p for p in names if p not in (*_PAIRINGS, "all")]
            if not names or unknown:
                raise UserError(
                    f"--pairings: unknown pairing '{(unknown or [self.pairings])[0]}' "
                    f"(known: {', '.join(_PAIRINGS)}, all)"
                )
            npairings = len(_PAIRINGS) if "all" in names else len(set(names))
            args += ["--pairings", ",".join(names)]
        steps = self.steps if self.steps is not None else (6 if self.quick else 12)
        args += _count_flag("--steps", self.steps, 2)
        if npairings * nsizes * steps > _MAX_REGIONS:
            raise UserError(
                f"{npairings} pairings x {nsizes} sizes x {steps} steps = "
                f"{npairings * nsizes * steps} profiler regions, more than the "
                f"{_MAX_REGIONS} the profiler keeps apart; use fewer sizes or steps"
            )
        args += _count_flag("--iters", self.iters, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class SizeSweepArgs:
    """Flags of the benchmarks that time a list of sizes with repeated samples
    (`bench datatypes`, `bench alignment`, `bench stack-floor`) -> their native flags.
    Subclasses set the sizes of --quick and their default sample counts."""

    sizes: str | None = None
    quick: bool = False
    reps: int | None = None
    iters: int | None = None
    verbose: bool = False

    QUICK_SIZES: ClassVar[str] = ""  # --sizes under --quick when none are given
    # samples per point (full, quick); None: the native program's default
    DEFAULT_REPS: ClassVar[tuple[int | None, int | None]] = (None, None)

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        elif self.quick:
            args += ["--sizes", self.QUICK_SIZES]
        if self.quick:
            args.append("--quick")
        reps = self.reps if self.reps is not None else self.DEFAULT_REPS[self.quick]
        args += _count_flag("--reps", reps, 2)
        args += _count_flag("--iters", self.iters, 1)
        if self.verbose:
            args.append("--verbose")
        return args


class StackFloorArgs(SizeSweepArgs):
    """`bench stack-floor` flags -> mo_stack_floor flags."""

    QUICK_SIZES = "0,64,1k,4k,16k,64k,256k,1M,4M"
    # More samples than the common default (7; --quick 4): the figures are medians of
    # paired differences, with bootstrap intervals.
    DEFAULT_REPS = (15, 8)


class DatatypesArgs(SizeSweepArgs):
    """`bench datatypes` / `bench alignment` flags -> mo_datatypes / mo_alignment flags."""

    QUICK_SIZES = "64,1k,64k,1M"


_QUEUES = ("posted", "unexpected", "both")


@dataclass
class MatchingArgs:
    """`bench matching` flags -> mo_matching flags."""

    queue: str = "both"
    max_m: int | None = None
    max_n: int | None = None
    samples: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        if self.queue not in _QUEUES:
            raise UserError(f"--queue must be posted, unexpected or both (got '{self.queue}')")
        args = ["--queue", self.queue]
        args += _count_flag("--max-m", self.max_m, 1)
        args += _count_flag("--max-n", self.max_n, 1)
        args += _count_flag("--samples", self.samples, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class WaitanyArgs:
    """`bench waitany` flags -> mo_waitany flags."""

    max_n: int | None = None
    samples: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args = _count_flag("--max-n", self.max_n, 1) + _count_flag("--samples", self.samples, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


NBC_COLLECTIVES = ("Ibarrier", "Ibcast", "Igather", "Iscatter", "Ireduce", "Iallreduce",
                   "Iallgather", "Ialltoall", "Ireduce_scatter_block", "Ireduce_scatter",
                   "Iscan", "Iexscan")


def _choice_list(flag: str, value: str, known: tuple[str, ...], every: str) -> str:
    """A comma-separated list of known names (case-insensitive), checked here."""
    names = [p.strip() for p in value.split(",") if p.strip()]
    lower = {k.lower(): k for k in known}
    bad = [n for n in names if n.lower() not in lower and n != every]
    if not names or bad:
        raise UserError(f"{flag}: unknown value '{(bad or [value])[0]}' "
                        f"(known: {', '.join(known)}, {every})")
    return ",".join(names)


@dataclass
class NbcOverlapArgs:
    """`bench nbc-overlap` flags -> mo_nbc_overlap flags."""

    sizes: str | None = None
    tests: int | None = None
    collectives: str | None = None
    iters: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        args += _count_flag("--tests", self.tests, 0)
        if self.collectives is not None:
            args += ["--collectives",
                     _choice_list("--collectives", self.collectives, NBC_COLLECTIVES, "all")]
        args += _count_flag("--iters", self.iters, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class RmaOverlapArgs:
    """`bench rma-overlap` flags -> mo_rma_overlap flags."""

    sizes: str | None = None
    ops: str | None = None
    sync: str | None = None
    window: str | None = None
    iters: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        for flag, value, known in (("--ops", self.ops, ("put", "get")),
                                   ("--sync", self.sync, ("flush", "fence")),
                                   ("--window", self.window, ("allocate", "create"))):
            if value is not None:
                args += [flag, _choice_list(flag, value, known, "both")]
        args += _count_flag("--iters", self.iters, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class SyncOverlapArgs:
    """`bench sync-overlap` flags -> mo_sync_overlap flags."""

    sizes: str | None = None
    samples: int | None = None
    work_us: float | None = None
    refine_steps: int | None = None
    resolution: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args = ["--sizes", self.sizes] if self.sizes else []
        args += _count_flag("--samples", self.samples, 1)
        if self.work_us is not None:
            if not self.work_us > 0:
                raise UserError(f"--work-us must be positive (got {self.work_us})")
            args += ["--work-us", f"{self.work_us:g}"]
        args += _count_flag("--refine-steps", self.refine_steps, 0)
        args += _count_flag("--resolution", self.resolution, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class CommOverlapArgs:
    """`bench comm-overlap` flags -> mo_comm_overlap flags."""

    sizes: str | None = None
    samples: int | None = None
    work_factor: float | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:  # --quick alone: the program's quick sizes
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        args += _count_flag("--samples", self.samples, 2)
        if self.work_factor is not None:
            if not self.work_factor > 0:
                raise UserError(f"--work-factor must be positive (got {self.work_factor})")
            args += ["--work-factor", repr(self.work_factor)]
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class InflationArgs:
    """`bench inflation` flags -> mo_inflation flags."""

    sizes: str | None = None
    samples: int | None = None
    steps: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:  # --quick alone: the program's quick sizes
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        args += _count_flag("--samples", self.samples, 2)
        args += _count_flag("--steps", self.steps, 4)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class ProgressArgs:
    """`bench progress` flags -> mo_progress flags."""

    sizes: str | None = None
    samples: int | None = None
    budget_factor: float | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:
            if 0 in parse_sizes(self.sizes):
                raise UserError("--sizes: a 0-byte message has no data to watch")
            args += ["--sizes", self.sizes]
        args += _count_flag("--samples", self.samples, 1)
        if self.budget_factor is not None:
            if not self.budget_factor >= 1.0:
                raise UserError(f"--budget-factor must be at least 1 (got {self.budget_factor})")
            args += ["--budget-factor", repr(self.budget_factor)]
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class PollingArgs:
    """`bench polling` flags -> mo_polling flags."""

    sizes: str | None = None
    intervals: str | None = None
    samples: int | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args: list[str] = []
        if self.sizes is not None:
            parse_sizes(self.sizes)
            args += ["--sizes", self.sizes]
        if self.intervals is not None:
            try:
                values = [float(v) for v in self.intervals.split(",")]
            except ValueError:
                raise UserError(
                    f"--intervals: expected numbers in us, got '{self.intervals}'") from None
            if not values or any(v <= 0 for v in values) or values != sorted(set(values)):
                raise UserError("--intervals: positive values in increasing order, e.g. 1,10,100")
            args += ["--intervals", ",".join(repr(v) for v in values)]
        args += _count_flag("--samples", self.samples, 1)
        if self.quick:
            args.append("--quick")
        if self.verbose:
            args.append("--verbose")
        return args


def bench_session(
    name: str,
    native_args: list[str],
    toolchains: list[str],
    *,
    ranks: int,
    launcher: str | None,
    timeout_s: float | None,
    quick: bool,
    out_base: Path,
    report: bool,
    console: Console,
    err_console: Console,
    show_verbose: bool = False,
) -> bool:
    """Run benchmark `name` on each toolchain, under each setting of the bound --env-matrix;
    report them together. True if all complete."""
    bench = get_benchmark(name)
    timeout = timeout_for(bench, quick=quick, timeout_s=timeout_s)
    tcs = checked_toolchains(toolchains)
    ui = Ui(err_console)
    runs: list[Run] = []
    variants = env_matrix.current()
    for tc in tcs:
        for variant in variants:
            opts = RunOptions(ranks=ranks, launcher=launcher, timeout_s=timeout,
                              out_base=out_base,
                              label=variant.label(tc.name) if variant.env else None,
                              env_overrides=variant.overrides)
            run = run_benchmark(bench, tc, native_args, opts, ui)
            runs.append(run)
            if show_verbose:
                console.print((run.path / STDOUT_FILE).read_text(), markup=False,
                              highlight=False)
            console.print(status_line(run), markup=False)
    if report:
        report_runs(runs, out_base, console)
    return all(r.status == "complete" for r in runs)


def report_runs(runs: list[Run], out_base: Path, console: Console) -> None:
    """One report of the runs that have results: in the run directory when there is one,
    else in a `report-...` directory under `out_base`."""
    with_results = [r for r in runs if r.result]
    if not with_results:
        return
    out_dir = (
        with_results[0].path
        if len(with_results) == 1
        else out_base / f"report-{with_results[0].path.name}-x{len(runs)}"
    )
    paths = _make_report(with_results, out_dir, console)
    console.print(f"HTML report: {paths.html.resolve()}", markup=False)


def report_session(run_dirs: list[Path], out: Path | None, *, console: Console) -> None:
    if not run_dirs:
        raise UserError("name at least one run directory")
    runs = [load_run(p) for p in run_dirs]
    for run in runs:
        _ensure_analysis(run)
    out_dir = out or (runs[0].path if len(runs) == 1 else Path("mpi-overlap-report"))
    paths = _make_report(runs, out_dir, console)
    console.print(f"HTML report: {paths.html.resolve()}", markup=False)
    console.print(f"JSON summary: {paths.json}", markup=False)


def _ensure_analysis(run: Run) -> None:
    """Analyse runs that have results but no analysis (e.g. copied from a cluster)."""
    if run.analysis is not None or not run.result:
        return
    errors, run.analysis = analyze_result(get_benchmark(run.benchmark), run.result, run.path)
    if errors:
        run.problems.append(f"result.json does not match its schema: {errors[0]}")


def _make_report(runs: list[Run], out_dir: Path, console: Console):
    from .report import make_report

    out_dir.mkdir(parents=True, exist_ok=True)
    return make_report(runs, out_dir, console=console)
