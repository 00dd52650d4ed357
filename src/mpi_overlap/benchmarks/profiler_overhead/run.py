"""`mpi-overlap bench profiler-overhead`: what libmpi_overlap costs an MPI program, as
ratios measured in one run.

One run directory holds R repetitions of seven launches: mo_msgrate (small-message rate)
and mo_compute_app (run time of a compute-heavy program), each without and with the
profiler preloaded (run/preload.py), and mo_msgrate three times more with the profiler: its
call sites off (what they cost per message), with MPI_OVERLAP_IDLE=auto, each thread
picking by trials where its queue is processed (what that adaptive path gives against
the library's default, the plain path that processes the queue only when full), and with
MPI_OVERLAP_PROCESS=0, its events counted but not processed (the wrappers' and the queue's
share of the cost in the run, the rest being the processing's). Each
launch has its own subdirectory with its result.json, logs and, when profiled, the rank
profiles. The order of the seven launches is reversed every other repetition (ABCDEFG,
GFEDCBA, ...), so a slow drift of the machine adds as much to the launches with the
profiler as to those without. A first, untimed launch of mo_compute_app fixes its work
in units for every later launch (the same computation each time) and warms the page
cache and the CPU up.

The run directory is an ordinary one (run.json, result.json under the schema
profiler-overhead-run-v1, analysis.json, report), so `mpi-overlap report` reads it like
any other. docs/benchmarks.md, section profiler-overhead.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ...analysis.block_pairs import mode_block_sums, unmonitored_transfers
from ...core.errors import UserError
from ...core.ui import Ui
from ...platform.build import executable
from ...platform.toolchains import Toolchain
from ...profile.analysis.library_time import LibraryTime
from ...profile.documents.collect import collect_profile
from ...run.launch import launch_command
from ...run.paired_launch import LaunchSetup, finish_launches, launch
from ...run.rundir import RESULT_FILE, Run, begin_run, new_run_dir, write_json_atomic
from ...run.runner import (
    RunOptions,
    build,
    check_ranks,
    check_timeout,
    checked_toolchains,
    initial_run_meta,
    timeout_for,
)
from ..registry import get_benchmark
from .app_cost import APP_LAUNCHES, AppSpec

BENCH = "profiler-overhead"
SCHEMA = "mpi-overlap/profiler-overhead-run"
PROGRAMS = ("msgrate", "compute_app")
EXECUTABLES = {"msgrate": "mo_msgrate", "compute_app": "mo_compute_app"}
APP_EXECUTABLES = {"halo": "mo_halo", "cg": "mo_cg"}  # --apps (app_cost.py)
DEFAULT_REPS, QUICK_REPS = 5, 3
MAX_REPS = 100

# The programs' flags in the timed launches. msgrate: 8-byte messages, windows of 64
# (osu_mbw_mr's defaults); samples long enough that the profiler's queue flushes (one per
# 4096 events, ~16 windows) are spread evenly over them. compute_app: ~1.5 ms of work per
# iteration, 1 KiB halos.
MSGRATE_ARGS = {False: ["--sizes", "8", "--window", "64", "--reps", "21", "--sample-ms", "50"],
                True: ["--sizes", "8", "--window", "64", "--reps", "9", "--sample-ms", "30"]}
COMPUTE_ITERATIONS = {False: 2000, True: 400}
COMPUTE_WORK_MS = 1.5
COMPUTE_HALO = "1k"
WARMUP_ITERATIONS = 100
# The event processing timed alone (native/profiler/mop_engine_cost.c), in the build.
ENGINE_COST = ("profiler", "mop_engine_cost")
ENGINE_COST_REPS = {False: 300, True: 100}


@dataclass
class OverheadOptions:
    ranks: int = 2
    reps: int | None = None  # default: DEFAULT_REPS, --quick QUICK_REPS
    quick: bool = False
    launcher: str | None = None
    timeout_s: float | None = None  # per launch
    out_base: Path = Path("mpi-overlap-runs")
    extra_env: dict[str, str] = field(default_factory=dict)  # e.g. MPI_OVERLAP_CLOCK
    apps: bool = False  # also the mini-apps' cost inside one launch each (app_cost.py)

    @property
    def repetitions(self) -> int:
        return self.reps if self.reps is not None else (QUICK_REPS if self.quick else DEFAULT_REPS)

    def check(self) -> None:
        """Bad input fails here, before anything is built."""
        if self.reps is not None and not 1 <= self.reps <= MAX_REPS:
            raise UserError(f"--reps must be between 1 and {MAX_REPS} (got {self.reps})")
        check_timeout(self.timeout_s)
        check_ranks(get_benchmark(BENCH), self.ranks)


# The setting of MPI_OVERLAP_IDLE the idle launch measures beside the library's default
# (mop_runtime.c: "0", the plain path, the queue processed only when full): "auto", each
# thread picking by trials on its own pace whether its queue is also processed while a
# call waits (mop_idle_pick.h), so that every run says on its machine what the adaptive
# path would give against the plain one (issue 40: the plain path is the default unless
# an adaptive rule beats it on every machine measured; on one of three VMs it did not).
IDLE_OTHER = "auto"

# The launches of a repetition: (program, profiled, call sites kept, idle setting, events
# processed). The third msgrate launch has the profiler with its call-site tables off
# (MPI_OVERLAP_CALLSITES=0), so the cost of call sites is measured beside the rest
# (analysis: "callsites"); the fourth has MPI_OVERLAP_IDLE=IDLE_OTHER (analysis: "idle");
# the fifth MPI_OVERLAP_PROCESS=0: the wrappers push their events and the full queue is
# only counted, so that the cost in the run splits into the wrappers' and the queue's part
# and the processing's (analysis: "split"). The processing timed alone (the engine) costs
# less than in the run, where the MPI's own work shares the caches with it.
Config = tuple[str, bool, bool, str | None, bool]
CONFIGS: tuple[Config, ...] = (
    ("msgrate", False, True, None, True), ("msgrate", True, True, None, True),
    ("msgrate", True, False, None, True), ("msgrate", True, True, IDLE_OTHER, True),
    ("msgrate", True, True, None, False),
    ("compute_app", False, True, None, True), ("compute_app", True, True, None, True))


def order(rep: int) -> list[Config]:
    """The launches of repetition `rep` (from 1): in CONFIGS' order on odd repetitions,
    reversed on even ones."""
    return list(CONFIGS) if rep % 2 == 1 else list(CONFIGS[::-1])


def launch_dir_name(rep: int, program: str, profiled: bool, callsites: bool = True,
                    idle: str | None = None, process: bool = True) -> str:
    return (f"rep{rep:02d}-{program}-{'with' if profiled else 'without'}"
            + ("" if callsites else "-nosites") + ("" if idle is None else f"-idle{idle}")
            + ("" if process else "-noprocess"))


@dataclass
class _Context:
    setup: LaunchSetup
    opts: OverheadOptions
    run_dir: Path
    exes: dict[str, Path]


def _program_args(program: str, quick: bool, units: int | None) -> list[str]:
    if program == "msgrate":
        return list(MSGRATE_ARGS[quick])
    args = ["--iterations", str(COMPUTE_ITERATIONS[quick]), "--sizes", COMPUTE_HALO]
    return args + (["--work-units", str(units)] if units is not None
                   else ["--work-ms", repr(COMPUTE_WORK_MS)])


def _detail(program: str, results: dict[str, Any]) -> tuple[float | None, dict[str, Any]]:
    """The launch's number and the figures kept beside it."""
    if program == "msgrate":
        sizes = results.get("sizes") or []
        first = sizes[0] if sizes else {}
        return first.get("msgs_per_s"), {
            "bytes": first.get("bytes"),
            "window": results.get("window"),
            "iterations": first.get("iterations"),
            "samples_msgs_per_s": first.get("samples_msgs_per_s") or [],
            "messages_total": results.get("messages_total"),
        }
    return results.get("run_time_s"), {
        "iterations": results.get("iterations"),
        "work_units_per_iter": results.get("work_units_per_iter"),
        "per_iter_us": results.get("per_iter_us"),
        "compute_fraction": results.get("compute_fraction"),
        "rank_run_time_s": results.get("rank_run_time_s") or [],
    }


def _profile(sub: Path, setup: LaunchSetup, argv: list[str]) -> dict[str, Any]:
    """What the profiled launch's ranks wrote: complete or not, events, flushes."""
    doc = collect_profile(sub, setup, argv)
    docs = doc["ranks"]
    counters = [(d.get("profile") or {}).get("counters") or {} for d in docs]
    doc0 = next((d for d in docs if d.get("rank") == 0), {})
    rank0 = (doc0.get("profile") or {}).get("counters") or {}
    once = LibraryTime()
    for d in docs:
        once.add(d)
    return {
        "status": doc["status"],
        "ranks_expected": setup.ranks,
        "ranks_complete": sum(1 for d in docs if d.get("status") == "complete"),
        "events": sum(int(c.get("events", 0)) for c in counters),
        "flushes": sum(int(c.get("flushes", 0)) for c in counters),
        "rank0_events": int(rank0.get("events", 0)),
        "clock": doc0.get("clock", {}).get("source"),
        # transfers recorded with monitoring off, all ranks: in a launch timed in blocks,
        # a sign that the profiler did not pause (app_cost.py)
        "unmonitored_transfers": unmonitored_transfers(counters),
        # the floor of the per-message cost: what rank 0's calls paid in clock reads
        "rank0_calls": sum(int(f.get("calls", 0))
                           for f in (doc0.get("profile") or {}).get("by_function") or []),
        "clock_read_ns": doc0.get("clock", {}).get("read_ns"),
        # the computation's CPU clock (docs/profiler.md, "Computation as CPU time"): what
        # one read costs and how many rank 0 made, for its cost per message
        "cpu_read_ns": (doc0.get("cpu") or {}).get("read_ns"),
        "cpu_reads": (doc0.get("cpu") or {}).get("reads"),
        "warnings": list(doc["warnings"]),
        # what the launch paid once (MPI_Init, MPI_Finalize, the gather and the reduction),
        # the ranks' library_s with the job file's and statistics' times; None from a
        # library before it
        "library_s": once.result(doc.get("job_file"), doc.get("job_stats")),
    }


def _launch(ctx: _Context, rep: int, program: str, profiled: bool, callsites: bool, position: int,
            args: list[str], name: str, idle: str | None = None, process: bool = True,
            ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One launch in its own subdirectory; returns its record and its result.json."""
    sub = ctx.run_dir / name
    env = ({} if idle is None else {"MPI_OVERLAP_IDLE": idle}) | (
        {} if process else {"MPI_OVERLAP_PROCESS": "0"})
    out = launch(ctx.setup, ctx.exes[program], args, sub, profiled=profiled, callsites=callsites,
                 meta=[f"profiler={'with' if profiled else 'without'}", f"rep={rep}"],
                 env_extra=env or None)
    value, detail = None, {}
    if out.result is not None:
        value, detail = _detail(program, out.result.get("results") or {})
    record = {
        "rep": rep,
        "program": program,
        "profiled": profiled,
        "callsites": callsites if profiled else None,
        "idle": idle,
        "process": process if profiled else None,
        "position": position,
        "dir": name,
        **out.record,
        "value": value if isinstance(value, (int, float)) and not isinstance(value, bool) else None,
        "detail": detail,
        "profile": _profile(sub, ctx.setup, out.argv) if profiled else None,
    }
    return record, out.result


def measure_engine_cost(bdir: Path, quick: bool) -> tuple[dict[str, Any] | None, str | None]:
    """The profiler's event processing timed alone on this host (mop_engine_cost: no MPI,
    no launch), beside the launches' cost per message, which also holds the clock reads and
    what the MPI's waits hide (docs/profiler.md, "Memory and cost"). None and the reason
    when it could not be measured: the run goes on without it."""
    exe = bdir.joinpath(*ENGINE_COST)
    if not exe.is_file():
        return None, f"engine cost not measured: {exe} was not built"
    cmd = [str(exe), "--reps", str(ENGINE_COST_REPS[quick])]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        doc = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return None, f"engine cost not measured: {exc}"
    if doc is None:
        why = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return None, f"engine cost not measured: {why[0]}"
    try:
        return {
            "executable": str(exe),
            "batch": doc["batch"],
            "reps": doc["reps"],
            "callsites": doc["callsites"],
            "ns_per_transfer": doc["distinct_handles"]["ns_per_transfer"],
            "ns_per_transfer_shared": doc["shared_handle"]["ns_per_transfer"],
            "ns_per_call": doc["calls_only"]["ns_per_call"],
        }, None
    except (KeyError, TypeError):
        return None, f"engine cost not measured: {exe} printed no figures"


def _app_launch(ctx: _Context, app: AppSpec, exe: Path,
                profiled: bool = True) -> tuple[dict[str, Any], list[str]]:
    """One mini-app launch, its iterations timed in blocks alternately with the profiler
    paused and running (app_cost.py); its record, with each whole block's time (block_s)
    taken from the app's iteration times, and what the run should warn of. Without the
    profiler (profiled False) the pause does nothing: the same blocks then measure what
    the instrument reads where there is nothing to measure."""
    name = f"apps-{exe.name}-{app.mode}" + ("" if profiled else "-without")
    sub = ctx.run_dir / name
    out = launch(ctx.setup, exe, app.args(ctx.opts.quick), sub, profiled=profiled,
                 meta=[f"profiler={'with' if profiled else 'without'}",
                       f"profiler_ab={app.block}"])
    mode, blocks = mode_block_sums(out.result, app.mode, app.block)
    record = {
        "program": app.program,
        "mode": app.mode,
        "args": app.args(ctx.opts.quick),
        "block": app.block,
        "dir": name,
        **out.record,
        "run_time_s": mode.get("run_time_s"),
        "block_s": blocks,
        "profiled": profiled,
        "profile": _profile(sub, ctx.setup, out.argv) if profiled else None,
    }
    warnings = []
    if profiled and record["profile"]["status"] != "complete":
        warnings.append(f"{name}: profile incomplete: "
                        + ("; ".join(record["profile"]["warnings"]) or "no reason given"))
    if None in (mode.get("residuals") or []):  # a NaN residual: mo_cg's restart missed
        warnings.append(f"{name}: a residual is NaN, so iterations computed NaNs and may "
                        "not run at the speed of real numbers")
    return record, warnings


def _command_line(tc: Toolchain, opts: OverheadOptions) -> list[str]:
    cmd = ["mpi-overlap", "bench", BENCH, "--mpi", tc.name, "-n", str(opts.ranks),
           "--reps", str(opts.repetitions)]
    if opts.quick:
        cmd.append("--quick")
    if opts.apps:
        cmd.append("--apps")
    if opts.launcher:
        cmd += ["--launcher", opts.launcher]
    return cmd


def run_profiler_overhead(tc: Toolchain, opts: OverheadOptions, ui: Ui) -> Run:
    """All launches of one toolchain into one run directory; returns the loaded run."""
    from ...calibration.calibrate import find_or_calibrate
    from ...run.preload import profiler_library

    opts.check()
    prefix = launch_command(tc, opts.ranks, [], opts.launcher)  # refuse a bad launcher early
    bdir = build(tc, ui)
    exes = {p: executable(bdir, exe) for p, exe in EXECUTABLES.items()}
    app_exes = ({p: executable(bdir, exe) for p, exe in APP_EXECUTABLES.items()}
                if opts.apps else {})
    library = profiler_library(bdir)
    table = find_or_calibrate(tc, ranks=2, launcher=opts.launcher, timeout_s=opts.timeout_s,
                              ui=ui)
    run_dir = new_run_dir(opts.out_base, BENCH, tc.name)
    timeout = timeout_for(get_benchmark(BENCH), quick=opts.quick, timeout_s=opts.timeout_s)
    setup = LaunchSetup(tc=tc, ranks=opts.ranks, launcher=opts.launcher, prefix=prefix,
                        library=library, table=table, timeout_s=timeout,
                        extra_env=dict(opts.extra_env))
    ctx = _Context(setup, opts, run_dir, exes)
    reps = opts.repetitions

    run_opts = RunOptions(ranks=opts.ranks, launcher=opts.launcher, timeout_s=opts.timeout_s,
                          out_base=opts.out_base, env_overrides=dict(opts.extra_env))
    meta = initial_run_meta(BENCH, tc, run_opts, _command_line(tc, opts), run_dir)
    begin_run(run_dir, meta)
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": 1,
        "benchmark": BENCH,
        "status": "running",
        "toolchain": tc.name,
        "ranks": opts.ranks,
        "reps": reps,
        "quick": opts.quick,
        "library": str(library),
        "table": str(table),
        "programs": {
            "msgrate": {"executable": str(exes["msgrate"]),
                        "args": _program_args("msgrate", opts.quick, None),
                        "metric": "msgs_per_s", "unit": "msgs/s", "better": "higher"},
            "compute_app": {"executable": str(exes["compute_app"]),
                            "args": _program_args("compute_app", opts.quick, None),
                            "metric": "run_time_s", "unit": "s", "better": "lower"},
        },
        "warmup": None,
        "launches": [],
        "provenance": None,
        "warnings": [],
    }
    engine, why = measure_engine_cost(bdir, opts.quick)
    if engine is not None:
        doc["engine"] = engine
    else:
        doc["warnings"].append(why)
    write_json_atomic(run_dir / RESULT_FILE, doc)

    started = time.monotonic()
    stop: dict[str, Any] | None = None  # the launch that ended the run early
    total = 1 + len(CONFIGS) * reps + 2 * len(app_exes)
    with ui.progress(f"{BENCH} ({tc.name}, {opts.ranks} ranks)") as progress:
        progress(0, total, "warm-up")
        warm_args = ["--iterations", str(WARMUP_ITERATIONS), "--sizes", COMPUTE_HALO,
                     "--work-ms", repr(COMPUTE_WORK_MS)]
        record, result = _launch(ctx, 0, "compute_app", False, True, 0, warm_args,
                                 "warmup-compute_app")
        doc["warmup"] = record
        units = (result or {}).get("results", {}).get("work_units_per_iter")
        if record["status"] != "complete" or not isinstance(units, int) or units <= 0:
            stop = record
        else:
            doc["provenance"] = result.get("provenance") if result else None
            doc["programs"]["compute_app"]["args"] = _program_args("compute_app", opts.quick,
                                                                   units)
        write_json_atomic(run_dir / RESULT_FILE, doc)
        done = 1
        for rep in range(1, reps + 1):
            if stop is not None:
                break
            for position, (program, profiled, callsites, idle, process) in enumerate(order(rep)):
                name = launch_dir_name(rep, program, profiled, callsites, idle, process)
                progress(done, total, name)
                record, _ = _launch(ctx, rep, program, profiled, callsites, position,
                                    doc["programs"][program]["args"], name, idle, process)
                doc["launches"].append(record)
                if record["profile"] is not None and record["profile"]["status"] != "complete":
                    doc["warnings"].append(f"{name}: profile incomplete: "
                                           + ("; ".join(record["profile"]["warnings"])
                                              or "no reason given"))
                write_json_atomic(run_dir / RESULT_FILE, doc)
                done += 1
                if record["status"] != "complete":
                    stop = record
                    break
        if app_exes:
            doc["apps"] = []
        # each app with the profiler, then without it (the instrument's null check)
        for app, profiled in ([(a, p) for a in APP_LAUNCHES for p in (True, False)]
                              if app_exes and stop is None else ()):
            progress(done, total, f"mo_{app.program} in blocks"
                     + ("" if profiled else " without the profiler"))
            record, warnings = _app_launch(ctx, app, app_exes[app.program], profiled)
            doc["apps"].append(record)
            doc["warnings"] += warnings
            write_json_atomic(run_dir / RESULT_FILE, doc)
            done += 1
            if record["status"] != "complete":
                stop = record
                break
        progress(done, total, "done")

    return finish_launches(get_benchmark(BENCH), run_dir, meta, doc, stop, started)


# ----- the CLI command --------------------------------------------------------------------

def _summary_line(run: Run) -> str:
    parts = []
    for m in (run.analysis or {}).get("metrics") or []:
        if m.get("target") is None or m.get("geomean") is None:
            continue
        ci = (f" [{m['ci95_low']:.4f}-{m['ci95_high']:.4f}]"
              if m.get("ci95_low") is not None else "")
        parts.append(f"{m['name']} ratio {m['geomean']:.4f}{ci} {m['verdict']}")
    return "; ".join(parts)


def profiler_overhead_session(toolchains: list[str], opts: OverheadOptions, *, report: bool,
                              console: Console, err_console: Console,
                              finish: Callable[..., bool]) -> bool:
    """Run on each toolchain, print where each run is, report them together. True when
    every run completed (whatever the verdicts: this is a measurement, not a test)."""
    opts.check()
    tcs = checked_toolchains(toolchains, ranks=opts.ranks, launcher=opts.launcher)
    ui = Ui(err_console)
    runs = [run_profiler_overhead(tc, opts, ui) for tc in tcs]
    ok = finish(runs, opts.out_base, console, report=report)
    for run in runs:
        line = _summary_line(run)
        if line:
            console.print(f"{run.toolchain}: {line}", markup=False)
    return ok


def characterize_step(tc: Toolchain, opts: Any, runs_dir: Path, ui: Ui) -> Run:
    """Its step of `characterize` (CharacterizeOptions: ranks, quick, launcher, timeout)."""
    return run_profiler_overhead(tc, OverheadOptions(
        ranks=opts.ranks, quick=opts.quick, launcher=opts.launcher, timeout_s=opts.timeout_s,
        out_base=runs_dir), ui)
