"""Run one benchmark on one toolchain and leave a complete run directory behind.

Build (cached) → launch through MPI's launcher with a time limit → record how it ended
→ validate the result against its schema → analyse → run.json says it all. A run that
timed out or crashed keeps whatever the benchmark had written, marked as such.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .benchmarks import Benchmark
from .build import ensure_built, executable
from .errors import UserError
from .launch import launch_command, run_job
from .rundir import (
    ANALYSIS_FILE,
    RESULT_FILE,
    RUN_FILE,
    Run,
    load_run,
    new_run_dir,
    read_json,
    utc_now,
    write_json_atomic,
)
from .schema import result_errors
from .toolchains import Toolchain
from .ui import Ui


@dataclass
class RunOptions:
    ranks: int = 2
    launcher: str | None = None
    timeout_s: float | None = None
    out_base: Path = Path("mpi-overlap-runs")
    label: str | None = None
    env_overrides: dict[str, str] = field(default_factory=dict)


def run_benchmark(
    bench: Benchmark, tc: Toolchain, bench_args: list[str], opts: RunOptions, ui: Ui
) -> Run:
    if opts.ranks < bench.min_ranks:
        raise UserError(
            f"benchmark '{bench.name}' needs at least {bench.min_ranks} ranks (got -n {opts.ranks})"
        )
    # Refuse a bad launcher before spending minutes on a build.
    launcher_prefix = launch_command(tc, opts.ranks, [], opts.launcher)
    with ui.progress(f"build ({tc.name})") as progress:
        bdir = ensure_built(tc, progress=progress)
    exe = executable(bdir, bench.program)
    run_dir = new_run_dir(opts.out_base, bench.name, tc.name)
    argv = [
        str(exe),
        *bench_args,
        "--output",
        str(run_dir / RESULT_FILE),
        "--progress",
        "--meta",
        f"toolchain={tc.name}",
        "--meta",
        f"launcher={shlex.join(launcher_prefix)}",
    ]
    if opts.label:
        argv += ["--meta", f"label={opts.label}"]
    if bench.profiled:
        argv = _under_profiler(tc, bdir, argv, run_dir, opts, ui)
    cmd = launch_command(tc, opts.ranks, argv, opts.launcher)
    env = tc.environment()
    env.update(opts.env_overrides)
    meta = initial_run_meta(bench.name, tc, opts, cmd, run_dir)
    write_json_atomic(run_dir / RUN_FILE, meta)

    with ui.progress(f"{bench.name} ({tc.name}, {opts.ranks} ranks)") as progress:
        outcome = run_job(cmd, env, run_dir, timeout_s=opts.timeout_s, progress=progress)

    status, message = outcome.status, outcome.message
    result_path = run_dir / RESULT_FILE
    result = read_json(result_path) if result_path.is_file() else None
    if result is None:
        message = (message or "the benchmark ended") + "; it wrote no results"
    else:
        errors, _ = analyze_result(bench, result, run_dir)
        if errors:
            meta["schema_errors"] = errors[:50]
            message = (message + "; " if message else "") + (
                f"result.json does not match its schema ({len(errors)} problems, first: "
                f"{errors[0]})"
            )
            if status == "complete":
                status = "failed"
        if status == "complete" and result.get("status") != "complete":
            status = "partial"
            message = "the benchmark exited without finishing its results"
    meta.update(
        status=status,
        message=message,
        returncode=outcome.returncode,
        finished_utc=utc_now(),
        elapsed_s=round(outcome.elapsed_s, 3),
    )
    write_json_atomic(run_dir / RUN_FILE, meta)
    return load_run(run_dir)


def analyze_result(bench: Benchmark, result: dict, run_dir: Path) -> tuple[list[str], dict | None]:
    """Validate a result document against its schema and, when it is valid, analyse it
    and write the analysis next to it. Returns (schema errors, analysis or None)."""
    errors = result_errors(result)
    if errors or bench.analyze is None:
        return errors, None
    analysis = bench.analyze(result, run_dir)
    write_json_atomic(run_dir / ANALYSIS_FILE, analysis)
    return errors, analysis


def initial_run_meta(
    name: str, tc: Toolchain, opts: RunOptions, cmd: list[str], run_dir: Path
) -> dict:
    """run.json as written before the launch (status "running")."""
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
        "env_overrides": opts.env_overrides,
        "started_utc": utc_now(),
        "finished_utc": None,
        "elapsed_s": None,
        "status": "running",
        "returncode": None,
        "message": None,
        "timeout_s": opts.timeout_s,
    }


def _under_profiler(
    tc: Toolchain, bdir: Path, argv: list[str], run_dir: Path, opts: RunOptions, ui: Ui
) -> list[str]:
    """The rank command of a benchmark that measures itself with libmpi_overlap."""
    from .calibrate import find_or_calibrate
    from .profiling.preload import ProfilerSetup, profiler_library

    table = find_or_calibrate(tc, ranks=2, launcher=opts.launcher, ui=ui)
    setup = ProfilerSetup(library=profiler_library(bdir), table=table, outdir=run_dir)
    return setup.wrap(argv)
