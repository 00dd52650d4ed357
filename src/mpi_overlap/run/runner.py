"""Run one launch of a benchmark on one toolchain and leave a complete run directory
behind, and what every kind of run shares (profile, profiler-overhead, calibrate).

Build (cached) → launch through MPI's launcher with a time limit → record how it ended
→ validate the result against its schema → analyse → run.json says it all. A run that
timed out or crashed keeps whatever the benchmark had written, marked as such. Which
benchmark runs how (several launches, under the profiler) is commands/bench_run.py's
choice: this module imports neither the calibration nor the multi-launch runner.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.documents import result_errors
from ..core.errors import UserError
from ..core.termsafe import safe
from ..core.ui import Ui
from ..platform.build import ensure_built, executable
from ..platform.toolchains import Toolchain, get_toolchain
from . import run_guard, slurm_launch
from .launch import launch_command, launch_record, run_job
from .run_kind import Benchmark
from .rundir import (
    ANALYSIS_FILE,
    RESULT_FILE,
    Run,
    begin_run,
    end_run,
    load_run,
    new_run_dir,
    read_json,
    utc_now,
    write_json_atomic,
)
from .slurm_launch import requested_nodes


@dataclass
class RunOptions:
    ranks: int = 2
    launcher: str | None = None
    timeout_s: float | None = None
    out_base: Path = Path("mpi-overlap-runs")
    label: str | None = None
    env_overrides: dict[str, str] = field(default_factory=dict)
    # the command's --quick, as a field: the program's arguments already hold what it
    # means for the benchmark (spec.default_native); a benchmark of several launches
    # (multilaunch.py) also picks its launches by it
    quick: bool = False
    # run.json's "replicate" (launch_plan.tag): one of K launches of a setting
    replicate: dict[str, Any] | None = None


# Wraps the rank command of a benchmark that measures itself under libmpi_overlap:
# (toolchain, build, argv, run dir, options, ui, the run's start) -> the ranks' argv under
# the profiler and the note on the transfer-time table it uses (run.json's "xfer_table").
ProfilerWrap = Callable[[Toolchain, Path, list[str], Path, "RunOptions", Ui, str],
                        tuple[list[str], dict[str, Any]]]


def run_launch(bench: Benchmark, tc: Toolchain, bench_args: list[str], opts: RunOptions,
               ui: Ui, profiler: ProfilerWrap | None = None) -> Run:
    """One launch of the benchmark's program; `profiler` starts its ranks under the
    profiler (bench_run.py gives it to the benchmarks that are profiled)."""
    check_ranks(bench, opts.ranks)
    if bench.profiled and profiler is None:
        raise ValueError(f"benchmark '{bench.name}' runs under the profiler: use "
                         "bench_run.run_benchmark")
    # Refuse a bad launcher before spending minutes on a build.
    launcher_prefix = launch_command(tc, opts.ranks, [], opts.launcher)
    bdir = build(tc, ui)
    run_dir = new_run_dir(opts.out_base, bench.name, tc.name)
    started = utc_now()
    argv = program_argv(
        executable(bdir, bench.program), bench_args, run_dir / RESULT_FILE, tc, launcher_prefix,
        progress=True, meta=[f"label={opts.label}"] if opts.label else [],
    )
    table_meta = None
    if profiler is not None:
        argv, table_meta = profiler(tc, bdir, argv, run_dir, opts, ui, started)
    cmd = launch_command(tc, opts.ranks, argv, opts.launcher)
    env = tc.environment()
    env.update(opts.env_overrides)
    meta = initial_run_meta(bench.name, tc, opts, cmd, run_dir)
    if table_meta is not None:
        meta["xfer_table"] = table_meta
    begin_run(run_dir, meta)

    with ui.progress(f"{bench.name} ({tc.name}, {opts.ranks} ranks)") as progress:
        outcome = run_job(cmd, env, run_dir, timeout_s=opts.timeout_s, progress=progress)

    result, message = read_result(run_dir / RESULT_FILE, outcome.message)
    status, message, errors = settle_result(
        bench, result, run_dir, outcome.status, message, who="the benchmark"
    )
    return finish_run(run_dir, meta, status=status, message=message,
                      returncode=outcome.returncode, elapsed_s=outcome.elapsed_s,
                      schema_errors=errors, host_load=outcome.host_load,
                      threads=outcome.threads)


# ----- what every run shares (benchmarks, profile, profiler-overhead, calibrate) ----------

def check_ranks(bench: Benchmark, ranks: int, who: str | None = None) -> None:
    """At least the benchmark's ranks; `who` names the command in the error."""
    if ranks < bench.min_ranks:
        who = who or f"benchmark '{bench.name}'"
        raise UserError(f"{who} needs at least {bench.min_ranks} ranks (got -n {ranks})")


def check_timeout(timeout_s: float | None, option: str = "--timeout") -> None:
    """A time limit is a positive, finite number of seconds (nan and inf are refused)."""
    if timeout_s is not None and not (0 < timeout_s < math.inf):
        raise UserError(f"{option} must be positive and finite, in seconds (got {timeout_s:g})")


def timeout_for(bench: Benchmark, *, quick: bool, timeout_s: float | None) -> float:
    """The user's --timeout (checked), else the benchmark's default for (quick) runs."""
    check_timeout(timeout_s)
    return timeout_s or (bench.quick_timeout_s if quick else bench.default_timeout_s)


def checked_toolchains(
    names: list[str], *, ranks: int | None = None, launcher: str | None = None
) -> list[Toolchain]:
    """The named toolchains (default mpich), each checked; with `ranks`, also the launcher
    for each, so that a bad one fails before anything is built."""
    tcs = [get_toolchain(t) for t in (names or ["mpich"])]
    for tc in tcs:
        tc.check()
        if ranks is not None:
            launch_command(tc, ranks, [], launcher)
    return tcs


def build(tc: Toolchain, ui: Ui | None) -> Path:
    """`tc`'s build directory, built (cached) with a progress line when there is a `ui`."""
    if ui is None:
        return ensure_built(tc)
    with ui.progress(f"build ({tc.name})") as progress:
        return ensure_built(tc, progress=progress)


def program_argv(
    exe: Path, args: list[str], output: Path, tc: Toolchain, launcher_prefix: list[str], *,
    progress: bool = False, meta: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """A native program's rank command: its flags, where to write, and the --meta it
    records (toolchain, launcher, then `meta`)."""
    argv = [str(exe), *args, "--output", str(output)]
    if progress:
        argv.append("--progress")
    for item in (f"toolchain={tc.name}", f"launcher={shlex.join(launcher_prefix)}", *meta):
        argv += ["--meta", item]
    return argv


def join_message(message: str | None, more: str) -> str:
    return (message + "; " if message else "") + more


def schema_failure(errors: list[str], status: str, message: str | None) -> tuple[str, str]:
    """(status, message) once a result failed its schema: a complete run becomes failed."""
    message = join_message(
        message,
        f"result.json does not match its schema ({len(errors)} problems, first: {errors[0]})",
    )
    return ("failed" if status == "complete" else status), message


def finish_run(
    run_dir: Path, meta: dict, *, status: str, message: str | None, returncode: int | None,
    elapsed_s: float, schema_errors: list[str] | None = None,
    host_load: dict | None = None, threads: dict | None = None,
) -> Run:
    """Write run.json as the run ended (after initial_run_meta and begin_run) and load the
    run; when a signal asked to stop meanwhile, raise interrupts.Stopped instead.
    `host_load`: what else ran on the machine meanwhile (machine_load.between);
    `threads`: how many of the job's threads ran on how many cores
    (thread_census.py); together they give run.json's "guard" (run_guard.py)."""
    if schema_errors:
        meta["schema_errors"] = schema_errors[:50]
    meta.update(status=status, message=message, returncode=returncode,
                finished_utc=utc_now(), elapsed_s=round(elapsed_s, 3), host_load=host_load,
                threads=threads)
    meta["guard"] = run_guard.judge(meta)
    end_run(run_dir, meta)
    return load_run(run_dir)


def read_result(path: Path, message: str | None) -> tuple[dict | None, str | None]:
    """(the result document at `path` or None, `message` with why it could not be read)."""
    if not path.is_file():
        return None, message
    try:
        return read_json(path), message
    except UserError as err:
        return None, join_message(message, str(err))


def status_line(run: Run) -> str:
    """`toolchain: status — path (message)`, what each session prints per run."""
    message = run.meta.get("message")
    line = f"{run.toolchain}: {run.status} — {run.path}" + (f" ({message})" if message else "")
    return safe(line)  # one line, whatever the names and the message hold (termsafe.py)


def analyze_result(bench: Benchmark, result: dict, run_dir: Path) -> tuple[list[str], dict | None]:
    """Validate a result document against its schema and, when it is valid, analyse it
    and write the analysis next to it. Returns (schema errors, analysis or None)."""
    errors = result_errors(result)
    if errors or bench.analyze is None:
        return errors, None
    analysis = bench.analyze(result, run_dir)
    write_json_atomic(run_dir / ANALYSIS_FILE, analysis)
    return errors, analysis


def settle_result(
    bench: Benchmark, result: dict | None, run_dir: Path, status: str, message: str | None,
    *, who: str,
) -> tuple[str, str | None, list[str]]:
    """(status, message, schema errors) of a run once its launch(es) ended: no result, a
    result that fails its schema (else it is analysed), or one that `who` (what exited)
    left unfinished."""
    errors: list[str] = []
    if result is None:
        message = (message or "the benchmark ended") + "; it wrote no results"
        if status == "complete":  # nothing measured is not a complete run
            status = "failed"
    else:
        errors, _ = analyze_result(bench, result, run_dir)
        if errors:
            status, message = schema_failure(errors, status, message)
        if status == "complete" and result.get("status") != "complete":
            status = "partial"
            message = f"{who} exited without finishing its results"
    return status, message, errors


def initial_run_meta(
    name: str, tc: Toolchain, opts: RunOptions, cmd: list[str], run_dir: Path
) -> dict:
    """run.json as written before the launch (status "running"); with --verbose, one line
    says which launcher the run uses and why (launch.launch_record)."""
    # A run that failed before its launch (no command) records no launcher.
    launcher = launch_record(tc, opts.ranks, opts.launcher) if cmd else None
    if launcher is not None:
        slurm_launch.say_choice(run_dir.name, launcher)
    return {
        "schema": "mpi-overlap/run",
        "schema_version": 1,
        "benchmark": name,
        "run_id": run_dir.name,
        "toolchain": {
            "name": tc.name,
            "kind": tc.kind,
            "mpi_library_version": tc.library_version or "unknown",
            "mpicc": tc.mpicc,
            "mpiexec": tc.mpiexec,
        },
        "label": opts.label,
        "ranks": opts.ranks,
        "command": cmd,
        **({"launcher": launcher} if launcher is not None else {}),
        "env_overrides": opts.env_overrides,
        **({"nodes": nodes} if (nodes := requested_nodes()) is not None else {}),
        "started_utc": utc_now(),
        "finished_utc": None,
        "elapsed_s": None,
        "status": "running",
        "returncode": None,
        "message": None,
        "timeout_s": opts.timeout_s,
        **({"replicate": opts.replicate} if opts.replicate else {}),
    }
