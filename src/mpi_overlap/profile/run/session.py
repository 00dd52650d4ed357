"""`mpi-overlap profile`: run an unmodified MPI program under libmpi_overlap and leave a
run directory with every rank's profile, their merge and a report.

Steps: check the program and the launcher → build the toolchain's profiler (cached) →
find the transfer-time table for this machine and toolchain, calibrating when there is
none → launch with the profiler preloaded into the ranks → collect what each rank wrote
(also after a crash or a timeout) → analyse → report.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from ...calibration.calibrate import find_or_calibrate
from ...calibration.table_note import describe as describe_table
from ...calibration.table_trust import table_record
from ...core.errors import UserError
from ...core.termsafe import safe_lines
from ...core.ui import Ui
from ...platform.toolchains import Toolchain, get_toolchain
from ...run.env_matrix import Variant, parse_env_matrix
from ...run.launch import EchoFn, launch_command, run_job
from ...run.preload import ProfilerSetup, parse_bins, parse_trace_cap, profiler_library
from ...run.result_file import write_profile_result
from ...run.rundir import RESULT_FILE, Run, begin_run, new_run_dir, utc_now
from ...run.runner import (
    RunOptions,
    analyze_result,
    build,
    check_timeout,
    finish_run,
    initial_run_meta,
)
from ..analysis import evidence
from ..documents.collect import collect
from . import compare_bare, perf_share, program_abi
from .entry import PROFILE
from .toolchain_evidence import latest_evidence

MAX_CALLSITE_DEPTH = 8  # MOP_STACK_MAX_DEPTH of native/profiler/mop_stacks.h


@dataclass
class ProfileOptions:
    ranks: int = 2
    mpi: str = "mpich"               # the toolchain of this run
    launcher: str | None = None
    bins: str | None = None
    table: Path | None = None
    force_table: bool = False
    timeout_s: float | None = None
    out_base: Path = Path("mpi-overlap-runs")
    snapshot_s: float = 10.0
    trace: bool = False
    trace_cap: str | None = None
    otf2: bool = False                # with trace: also the traces as an OTF2 archive
    env_matrix: tuple[str, ...] = ()  # VAR=a,b,...: one run per combination ("what if")
    compare_bare: bool = False        # also time the program without the profiler
    reps: int | None = None           # pairs of launches for compare_bare
    callsite_depth: int = 1           # frames per call site (docs/profiler.md, Call sites)
    per_rank: bool | None = None      # profile.rank-N.json too (None: up to 8 ranks)
    documents: bool | None = None     # the rank documents kept (None: up to 8 ranks, or traced)

    def check(self) -> None:
        """Bad input fails here, before anything is built or run."""
        if self.reps is not None and not self.compare_bare:
            raise UserError("--reps counts the launches of --compare-bare: add --compare-bare")
        if self.otf2 and not self.trace:
            raise UserError("--otf2 writes the run's traces as OTF2: add --trace")
        if not 1 <= self.callsite_depth <= MAX_CALLSITE_DEPTH:
            raise UserError(f"--callsite-depth must be between 1 and {MAX_CALLSITE_DEPTH} "
                            f"(got {self.callsite_depth})")
        if self.reps is not None and not 1 <= self.reps <= compare_bare.MAX_REPS:
            raise UserError(f"--reps must be between 1 and {compare_bare.MAX_REPS} "
                            f"(got {self.reps})")


def resolve_program(argv: list[str]) -> list[str]:
    """The program must exist before anything is built or launched."""
    if not argv:
        raise UserError("name the program to profile after --, e.g. mpi-overlap profile -- ./app")
    prog = argv[0]
    if os.sep in prog:
        path = Path(prog)
        if not path.is_file():
            raise UserError(f"program '{prog}' not found")
        if not os.access(path, os.X_OK):
            raise UserError(f"program '{prog}' is not executable")
        return [str(path.resolve()), *argv[1:]]
    found = shutil.which(prog)
    if found is None:
        raise UserError(f"program '{prog}' not found on PATH")
    return [found, *argv[1:]]


def prepare(argv: list[str], opts: ProfileOptions) -> tuple[Toolchain, list[str]]:
    """The toolchain of this run (checked, with its launcher) and the program for it
    ({mpi} replaced, found, and linked with that toolchain's MPI ABI): bad input is refused
    before anything is built or run."""
    given = program_abi.for_toolchain(argv, opts.mpi)
    app = resolve_program(given)
    tc = get_toolchain(opts.mpi)
    tc.check()
    launch_command(tc, opts.ranks, [], opts.launcher)  # refuse a bad launcher early
    refused = program_abi.mismatch(app[0], tc.name, tc.flavor, shown=given[0])
    if refused:
        raise UserError(refused)
    return tc, app


def profile_run(tc: Toolchain, app: list[str], opts: ProfileOptions, ui: Ui,
                echo: EchoFn | None = None, variant: Variant | None = None) -> Run:
    """One profiled run of the program `app` (as `prepare` gave it, with its toolchain);
    `echo` gets its output lines as they come; a variant of --env-matrix sets its
    variables for the program and names the run."""
    opts.check()
    overrides = variant.overrides if variant else {}
    bins = parse_bins(opts.bins)
    trace_cap = parse_trace_cap(opts.trace_cap)
    if trace_cap is not None and not opts.trace:
        raise UserError("--trace-cap needs --trace")
    check_timeout(opts.timeout_s)
    check_timeout(opts.snapshot_s, "--snapshot")
    library = profiler_library(build(tc, ui))
    # --timeout bounds the calibration this may need too (each of its launches).
    started = utc_now()
    table = find_or_calibrate(tc, ranks=opts.ranks, launcher=opts.launcher, table=opts.table,
                              force_table=opts.force_table, timeout_s=opts.timeout_s, ui=ui)
    table_info = table_record(table, tc)  # what the library will read, before it runs
    run_dir = new_run_dir(opts.out_base, PROFILE.name, tc.name)
    setup = ProfilerSetup(library=library, table=table, outdir=run_dir, bins=bins,
                          force_table=opts.force_table, snapshot_s=opts.snapshot_s,
                          trace=opts.trace, trace_cap=trace_cap,
                          callsite_depth=opts.callsite_depth, per_rank=opts.per_rank,
                          # the traces' summary is read from the documents
                          documents=True if opts.trace and opts.documents is None
                          else opts.documents)
    cmd = launch_command(tc, opts.ranks, setup.wrap(app), opts.launcher)
    run_opts = RunOptions(ranks=opts.ranks, launcher=opts.launcher, timeout_s=opts.timeout_s,
                          out_base=opts.out_base, env_overrides=dict(overrides),
                          label=variant.label(tc.name) if variant and variant.env else None)
    env = tc.environment()
    env.update(overrides)
    meta = initial_run_meta(PROFILE.name, tc, run_opts, cmd, run_dir)
    meta["app"] = app
    meta["xfer_table"] = describe_table(table, started)
    begin_run(run_dir, meta)

    with ui.progress(f"profile {Path(app[0]).name} ({tc.name}, {opts.ranks} ranks)") as progress:
        outcome = run_job(cmd, env, run_dir, timeout_s=opts.timeout_s,
                          progress=progress, echo=echo)

    result = collect(run_dir, ranks_expected=opts.ranks, app_argv=app, cwd=os.getcwd(),
                     table=table, forced=opts.force_table, bins=bins, table_info=table_info)
    for source in evidence.sources():
        result[evidence.declared(source).key] = latest_evidence(source, opts.out_base, tc.name)
    if opts.compare_bare and outcome.status == "complete":
        write_profile_result(run_dir / RESULT_FILE, result)  # kept if the timing is stopped

        def under(wrapper: list[str], outdir: Path) -> list[str]:
            """The profiled launch writing to outdir, `wrapper` before each rank's command."""
            timed = replace(setup, outdir=outdir, trace=False, trace_cap=None)
            return launch_command(tc, opts.ranks, [*wrapper, *timed.wrap(app)], opts.launcher)

        def command(outdir: Path | None) -> list[str]:
            if outdir is None:  # `env` too: the same exec chain as with the profiler
                return launch_command(tc, opts.ranks, ["env", *app], opts.launcher)
            return under([], outdir)

        reps = opts.reps or compare_bare.DEFAULT_REPS
        with ui.progress(f"profiler cost: {reps} pairs of launches without/with") as progress:
            cost = compare_bare.measure(command, env, run_dir, reps=reps,
                                        timeout_s=opts.timeout_s, progress=progress)
        if not cost["stopped"]:  # the launches ran: the library's own share of their CPU
            with ui.progress("profiler cost: one launch under perf record") as progress:
                cost["library_cpu_share"] = perf_share.measure(
                    under, env, run_dir, timeout_s=opts.timeout_s, progress=progress)
        result["cost"] = cost
    write_profile_result(run_dir / RESULT_FILE, result)
    status, message = outcome.status, outcome.message
    # Schema errors are kept in run.json; the profile's own status says how complete it is.
    errors, _ = analyze_result(PROFILE, result, run_dir)
    if status == "complete" and result["status"] != "complete":
        status = "partial"
        message = "; ".join(result["warnings"]) or "some ranks did not finish their profile"
    elif status == "failed" and result["status"] != "complete" and result["ranks"]:
        # A rank killed or aborted ends the launcher with an error, but what the ranks
        # measured (profiles marked incomplete, last snapshots) is there: partial.
        status = "partial"
        message = "; ".join([message or "the launcher failed", *result["warnings"]])
    return finish_run(run_dir, meta, status=status, message=message,
                      returncode=outcome.returncode, elapsed_s=outcome.elapsed_s,
                      schema_errors=errors, host_load=outcome.host_load,
                      threads=outcome.threads)


# Hydra's mpiexec's own status when it lost a proxy (a node killed, the proxies' srun
# step cancelled): the launcher's, not the program's (docs/cluster.md, "Faults").
HYDRA_LOST_PROXY = 255


def app_exit_code(run: Run) -> int | None:
    """The program's own exit status when the job ended by itself with a non-zero one (the
    launcher passes its ranks' status on), else None: complete, stopped by a timeout or a
    signal to mpi-overlap, killed by a signal, or ended by Hydra's Slurm launcher after it
    lost ranks (its 255 with ranks missing: an incomplete run, 3, as under plain srun)."""
    rc = run.meta.get("returncode")
    if run.status == "complete" or not isinstance(rc, int) or rc <= 0:
        return None
    if run.meta.get("status") in ("timeout", "interrupted"):
        return None
    if hydra_lost_ranks(run):
        return None
    return rc


def hydra_lost_ranks(run: Run) -> bool:
    """Whether Hydra's Slurm launcher ended the job with its own status after it lost
    ranks (its 255 with ranks missing): an incomplete run, not the program's status."""
    launcher = run.meta.get("launcher") or {}
    return (run.meta.get("returncode") == HYDRA_LOST_PROXY and launcher.get("kind") == "hydra"
            and run.meta.get("status") == "partial")


def _export_otf2(run_dir: Path, export: Callable[[Path], list[str]], console: Console,
                 err_console: Console) -> None:
    """`--otf2`: the run's traces as an OTF2 archive in the run directory (`export`, the
    trace folder's, handed in by the command: this folder does not import that one). The
    profile stands whether or not the export works: a failure is one line, not the run's
    status."""
    try:
        lines = export(run_dir)
    except UserError as err:
        err_console.print(f"OTF2: not written for {run_dir}: {err}", markup=False)
        return
    for line in lines:
        console.print(f"OTF2 (Vampir, Scalasca): {line}", markup=False)


def profile_session(argv: list[str], opts: ProfileOptions, toolchains: list[str], *,
                    report: bool, console: Console, err_console: Console,
                    finish: Callable[..., bool],
                    otf2_export: Callable[[Path], list[str]] | None = None) -> int:
    """The CLI command: run (the program's output live on the terminal and in the logs),
    report, print where it is. Returns the exit status: 0 when the run is complete, the
    program's own when it failed with one (docs/profiler.md, "Exit status"), else 3.
    `finish` ends the session (commands/session.py's finish_session, handed in by the
    command: the profile does not import the commands above it)."""
    from ...run.fault_signs import FaultWatch

    watch = FaultWatch()

    def echo(line: str, from_stderr: bool) -> None:
        watch.feed(line)
        (err_console if from_stderr else console).out(safe_lines(line.rstrip("\n")),
                                                      highlight=False)

    opts.check()
    if len(set(toolchains)) != len(toolchains):
        raise UserError("--mpi names a toolchain twice")
    if opts.table is not None and len(toolchains) > 1:
        raise UserError("--table is one toolchain's transfer-time table: give it with "
                        "one --mpi (each toolchain finds or measures its own)")
    variants = parse_env_matrix(opts.env_matrix) or [None]
    per_toolchain = [replace(opts, mpi=name) for name in toolchains]
    # every toolchain and program checked before the first run
    prepared = [(each, *prepare(argv, each)) for each in per_toolchain]
    ui = Ui(err_console)
    runs = [profile_run(tc, app, each, ui, echo=echo, variant=v)
            for each, tc, app in prepared for v in variants]
    with_report = report and any(run.result and (run.result.get("ranks")
                                                 or run.result.get("job_stats"))
                                 for run in runs)
    ok = finish(runs, opts.out_base, console, report=with_report)
    if opts.trace:
        for run in runs:
            # commands to copy: one line whatever the terminal's width (as the run lines)
            console.print(f"timeline: mpi-overlap trace {run.path} --perfetto "
                          f"{run.path / 'timeline.json'}", markup=False, soft_wrap=True)
            if opts.otf2 and otf2_export is not None:
                _export_otf2(run.path, otf2_export, console, err_console)
            else:
                console.print(f"OTF2 (Vampir, Scalasca): mpi-overlap export otf2 {run.path}",
                              markup=False, soft_wrap=True)
    if ok:
        return 0
    for sign in watch.found:
        err_console.print(f"known fault: {sign.advice}", markup=False)
    for run in runs:
        code = app_exit_code(run)
        if hydra_lost_ranks(run):
            err_console.print(f"Hydra's mpiexec ended the job with its own status "
                              f"{HYDRA_LOST_PROXY} after it lost ranks ({run.label}): an "
                              "incomplete run, exit 3", markup=False)
        if code is not None:
            err_console.print(f"the program exited with status {code} ({run.label}): profile "
                              "exits with it (3 would mean a problem of the profiler or the "
                              "run)", markup=False)
            return code
    return 3
