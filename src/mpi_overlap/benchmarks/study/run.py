"""`mpi-overlap study halo|cg`: the overlap case study (Shet et al. §4.3 did it for NAS SP).

One run directory per toolchain holds R repetitions of, per problem size, one launch of
the mini-application without the profiler and one with it (the order alternates per
repetition, so a drift of the machine touches both alike). Every launch runs all the
app's exchange modes one after the other (mo_halo / mo_cg `--modes all`), so the modes
of one launch are measured side by side; with the profiler, each mode's transfers fall
into its regions "<mode>/..." and their min/max overlap bounds come from there.

The analysis (analysis.py here) compares every mode against the app's baseline mode:
run time, MPI time and the bounds, and checks whether the MPI time each mode saved lies
within what the profiler's bounds allow; the profiler's own cost on the app is the
with/without ratio of the same launches. docs/case-studies.md.

Launches on a shared machine each draw a pace for their whole length, which those ratios
carry. So each repetition and size also has a cost launch: the baseline mode alone, as
many iterations as a launch of every mode and at least MIN_COST_PAIRS pairs of blocks'
worth (cost_iterations), with the profiler, its iterations in blocks of
PAIR_BLOCK alternately with the profiler paused and running (`--profiler-ab`,
analysis/block_pairs.py): neighbouring blocks share the launch's pace, and their ratios
give the cost inside launches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ...analysis.block_pairs import (
    PAIR_BLOCK,
    iterations_for_warm_pairs,
    mode_block_sums,
    unmonitored_transfers,
)
from ...core.errors import UserError
from ...core.ui import Ui
from ...platform.build import executable
from ...platform.toolchains import Toolchain
from ...profile.analysis.library_time import LibraryTime
from ...profile.documents.collect import collect_profile
from ...run.launch import launch_command
from ...run.paired_launch import LaunchOutcome, LaunchSetup, finish_launches, launch
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

SCHEMA = "mpi-overlap/study-run"
DEFAULT_REPS, QUICK_REPS = 5, 2
MAX_REPS = 50
MAX_ITERATIONS = 1_000_000  # the apps' own bound (native/apps/app_options.c)


@dataclass(frozen=True)
class StudyApp:
    name: str
    program: str
    baseline: str  # the mode every other is compared with
    # per-rank grid edges (--local N): one face message is N*N doubles
    sizes: tuple[int, ...]
    quick_sizes: tuple[int, ...]
    # iterations per mode the app runs by default and with --quick (native/apps)
    iterations: tuple[int, int]
    # how many exchange modes `--modes all` runs (native/apps): a cost launch runs the
    # baseline this many times as long, as long as a launch of every mode
    mode_count: int
    args: tuple[str, ...] = ()  # fixed flags of every launch


APPS: dict[str, StudyApp] = {
    "halo": StudyApp("halo", "mo_halo", "nonblocking", (32, 64, 96, 128), (32, 96), (200, 50), 5),
    "cg": StudyApp("cg", "mo_cg", "allreduce", (32, 64, 96), (32, 64), (100, 30), 2),
}

def get_app(name: str) -> StudyApp:
    try:
        return APPS[name]
    except KeyError:
        raise UserError(f"unknown study '{name}' (known: {', '.join(APPS)})") from None


def bench_name(app: StudyApp) -> str:
    return f"study-{app.name}"


@dataclass
class StudyOptions:
    ranks: int = 2
    reps: int | None = None
    quick: bool = False
    sizes: tuple[int, ...] | None = None  # None: the app's (quick) sizes
    # iterations per mode (the app's --iterations); None: the app's (quick) default.
    # Longer launches weigh what the profiler pays once per launch less (issue 40's runs
    # of about 10 s)
    iterations: int | None = None
    launcher: str | None = None
    timeout_s: float | None = None  # per launch
    out_base: Path = Path("mpi-overlap-runs")

    def repetitions(self) -> int:
        return self.reps if self.reps is not None else (QUICK_REPS if self.quick else DEFAULT_REPS)

    def check(self, app: StudyApp) -> None:
        if self.reps is not None and not 1 <= self.reps <= MAX_REPS:
            raise UserError(f"--reps must be between 1 and {MAX_REPS} (got {self.reps})")
        if self.sizes is not None and (not self.sizes or any(n < 4 or n > 1024
                                                             for n in self.sizes)):
            raise UserError("--sizes: per-rank grid edges between 4 and 1024, e.g. 16,64")
        # the cost launch runs the baseline for as many iterations as every mode together
        # (or MIN_COST_PAIRS pairs' worth, far below the bound)
        most = MAX_ITERATIONS // app.mode_count
        if self.iterations is not None and not 1 <= self.iterations <= most:
            raise UserError(f"--iterations must be between 1 and {most} for study "
                            f"{app.name} (got {self.iterations}): its cost launch runs "
                            f"{app.mode_count} times as many, up to the apps' {MAX_ITERATIONS}")
        check_timeout(self.timeout_s)
        check_ranks(get_benchmark(bench_name(app)), self.ranks)


def _launch_timeout(app: StudyApp, bench: Any, opts: StudyOptions) -> float:
    """A launch's time limit: the user's, else the benchmark's default, grown in proportion
    where --iterations asks for more iterations than the app's default."""
    limit = timeout_for(bench, quick=opts.quick, timeout_s=opts.timeout_s)
    if opts.timeout_s is None and opts.iterations is not None:
        limit *= max(1.0, opts.iterations / app.iterations[1 if opts.quick else 0])
    return limit


def parse_edges(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UserError(f"--sizes '{text}': expected per-rank grid edges, e.g. 16,64") from None


def _mode_bounds(profile_doc: dict[str, Any], modes: list[str]) -> dict[str, dict[str, float]]:
    """Per mode the profiler's measures summed over the mode's regions, as the mean over
    the ranks (comparable with the app's per-rank times)."""
    out = {m: {"transfers": 0.0, "xfer_s": 0.0, "min_s": 0.0, "max_s": 0.0, "comp_s": 0.0,
               "call_s": 0.0} for m in modes}
    docs = [d for d in profile_doc.get("ranks") or [] if d.get("profile")]
    for doc in docs:
        for entry in doc["profile"].get("by_region") or []:
            mode = str(entry.get("region", "")).split("/", 1)[0]
            if mode in out:
                for key in out[mode]:
                    out[mode][key] += float(entry.get(key) or 0.0) / len(docs)
    return out


def _library_time(profile_doc: dict[str, Any]) -> dict[str, Any] | None:
    """What the launch paid the profiler once (MPI_Init, MPI_Finalize, the gather and the
    reduction: profile/analysis/library_time.py), whatever its length."""
    once = LibraryTime()
    for doc in profile_doc.get("ranks") or []:
        once.add(doc)
    return once.result(profile_doc.get("job_file"), profile_doc.get("job_stats"))


def _modes(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows = []
    for m in ((result or {}).get("results") or {}).get("modes") or []:
        if m.get("complete"):
            rows.append({k: m.get(k) for k in ("mode", "run_time_s", "mpi_time_s",
                                                "mpi_time_s_mean", "per_iter_us")
                         if k in m})
    return rows


# The pairs of blocks a cost launch gives at least, after its cold one (not with --quick).
# cg's two modes together run 200 iterations, 11 pairs a launch: `study cg --reps 12`
# pooled 396 and resolved neither MPI (±0.65 and ±0.72 %, 2026-12-04), where halo's
# 1,000 iterations, 61 pairs a launch, 2,928 pooled, resolved both (±0.32 to ±0.41 %).
MIN_COST_PAIRS = 60


def cost_iterations(app: StudyApp, opts: StudyOptions) -> int:
    """A cost launch's iterations: as many as a launch of every mode, and (except with
    --quick) enough for MIN_COST_PAIRS pairs of blocks after the cold one."""
    per_mode = opts.iterations or app.iterations[1 if opts.quick else 0]
    every_mode = per_mode * app.mode_count
    if opts.quick:
        return every_mode
    return max(every_mode, iterations_for_warm_pairs(MIN_COST_PAIRS))


def _cost_args(app: StudyApp, opts: StudyOptions, local: int) -> list[str]:
    """A cost launch's flags: the baseline mode alone for cost_iterations(), in blocks,
    without the untimed warm-up (it runs with monitoring off, which the analysis takes for
    a pause the profiler refused)."""
    return [*app.args, "--modes", app.baseline, "--iterations", str(cost_iterations(app, opts)),
            "--profiler-ab", str(PAIR_BLOCK), "--warmup", "0", "--local", str(local)]


def _cost_record(name: str, rep: int, local: int, out: LaunchOutcome,
                 prof: dict[str, Any], baseline: str) -> dict[str, Any]:
    """A cost launch's record: each whole block's time from the app's iteration times, and
    the transfers its ranks recorded with monitoring off (a sign it was not paused). `prof`:
    its profile as collect_profile gathered it (with its status where none was left)."""
    _, blocks = mode_block_sums(out.result, baseline, PAIR_BLOCK)
    counters = [((d.get("profile") or {}).get("counters") or {})
                for d in prof.get("ranks") or []]
    return {"rep": rep, "local": local, "dir": name, **out.record,
            "block": PAIR_BLOCK,
            "block_s": blocks,
            "profile_status": prof["status"],
            "unmonitored_transfers": unmonitored_transfers(counters)}


def _command_line(app: StudyApp, tc: Toolchain, opts: StudyOptions) -> list[str]:
    cmd = ["mpi-overlap", "study", app.name, "--mpi", tc.name, "-n", str(opts.ranks),
           "--reps", str(opts.repetitions())]
    if opts.quick:
        cmd.append("--quick")
    if opts.sizes:
        cmd += ["--sizes", ",".join(map(str, opts.sizes))]
    if opts.iterations is not None:
        cmd += ["--iterations", str(opts.iterations)]
    if opts.launcher:
        cmd += ["--launcher", opts.launcher]
    return cmd


def run_study(app: StudyApp, tc: Toolchain, opts: StudyOptions, ui: Ui) -> Run:
    """All launches of one toolchain into one run directory; returns the loaded run."""
    from ...calibration.calibrate import find_or_calibrate
    from ...run.preload import profiler_library

    opts.check(app)
    bench = get_benchmark(bench_name(app))
    prefix = launch_command(tc, opts.ranks, [], opts.launcher)  # refuse a bad launcher early
    bdir = build(tc, ui)
    exe = executable(bdir, app.program)
    table = find_or_calibrate(tc, ranks=opts.ranks, launcher=opts.launcher,
                              timeout_s=opts.timeout_s, ui=ui)
    setup = LaunchSetup(tc=tc, ranks=opts.ranks, launcher=opts.launcher, prefix=prefix,
                        library=profiler_library(bdir), table=table,
                        timeout_s=_launch_timeout(app, bench, opts))
    run_dir = new_run_dir(opts.out_base, bench.name, tc.name)
    reps = opts.repetitions()
    sizes = opts.sizes or (app.quick_sizes if opts.quick else app.sizes)
    base_args = [*app.args, "--modes", "all"] + (["--quick"] if opts.quick else []) \
        + ([] if opts.iterations is None else ["--iterations", str(opts.iterations)])
    meta = initial_run_meta(bench.name, tc, RunOptions(
        ranks=opts.ranks, launcher=opts.launcher, timeout_s=opts.timeout_s,
        out_base=opts.out_base), _command_line(app, tc, opts), run_dir)
    begin_run(run_dir, meta)
    doc: dict[str, Any] = {
        "schema": SCHEMA, "schema_version": 1, "benchmark": bench.name, "status": "running",
        "app": app.name, "program": str(exe), "baseline": app.baseline,
        "toolchain": tc.name, "ranks": opts.ranks, "reps": reps, "quick": opts.quick,
        "sizes": [{"local": n, "face_bytes": n * n * 8} for n in sizes],
        "args": base_args, "table": str(table), "launches": [], "cost_launches": [],
        "provenance": None, "warnings": [],
    }
    write_json_atomic(run_dir / RESULT_FILE, doc)

    started = time.monotonic()
    stop: dict[str, Any] | None = None
    total = reps * len(sizes) * 3
    done = 0
    with ui.progress(f"{bench.name} ({tc.name}, {opts.ranks} ranks)") as progress:
        for rep in range(1, reps + 1):
            order = (False, True) if rep % 2 else (True, False)
            for n in sizes:
                for profiled in order:
                    if stop is not None:
                        break
                    name = f"rep{rep:02d}-local{n}-{'with' if profiled else 'without'}"
                    progress(done, total, name)
                    out = launch(setup, exe, [*base_args, "--local", str(n)], run_dir / name,
                                 profiled=profiled,
                                 meta=[f"profiler={'with' if profiled else 'without'}",
                                       f"rep={rep}"])
                    record: dict[str, Any] = {"rep": rep, "local": n, "profiled": profiled,
                                              "dir": name, **out.record,
                                              "modes": _modes(out.result), "bounds": None,
                                              "profile_status": None}
                    if doc["provenance"] is None and out.result is not None:
                        doc["provenance"] = out.result.get("provenance")
                    if profiled:
                        prof = collect_profile(run_dir / name, setup, out.argv)
                        record["profile_status"] = prof["status"]
                        record["bounds"] = _mode_bounds(prof, [m["mode"] for m in
                                                               record["modes"]])
                        record["library_s"] = _library_time(prof)
                        if prof["status"] != "complete":
                            doc["warnings"].append(f"{name}: profile {prof['status']}: "
                                                   + ("; ".join(prof["warnings"]) or "no reason"))
                    doc["launches"].append(record)
                    write_json_atomic(run_dir / RESULT_FILE, doc)
                    done += 1
                    if record["status"] != "complete":
                        stop = record
                if stop is None:
                    progress(done, total, f"rep{rep:02d}-local{n}-cost")
                    stop = _cost_launch(setup, exe, app, opts, run_dir, rep, n, doc)
                    done += 1
        progress(done, total, "done")
    return finish_launches(bench, run_dir, meta, doc, stop, started)


def _cost_launch(setup: LaunchSetup, exe: Path, app: StudyApp, opts: StudyOptions,
                 run_dir: Path, rep: int, local: int, doc: dict[str, Any]) -> dict[str, Any] | None:
    """One cost launch, recorded in doc["cost_launches"]; its record when it did not
    complete (the run stops there), None otherwise."""
    name = f"rep{rep:02d}-local{local}-cost"
    out = launch(setup, exe, _cost_args(app, opts, local), run_dir / name, profiled=True,
                 meta=["profiler=with", f"profiler_ab={PAIR_BLOCK}", f"rep={rep}"])
    prof = collect_profile(run_dir / name, setup, out.argv)
    record = _cost_record(name, rep, local, out, prof, app.baseline)
    if prof["status"] != "complete":
        doc["warnings"].append(f"{name}: profile {prof['status']}: "
                               + ("; ".join(prof["warnings"]) or "no reason"))
    doc["cost_launches"].append(record)
    write_json_atomic(run_dir / RESULT_FILE, doc)
    return None if record["status"] == "complete" else record


def study_session(app_name: str, toolchains: list[str], opts: StudyOptions, *, report: bool,
                  console: Console, err_console: Console,
                  finish: Callable[..., bool]) -> bool:
    """`mpi-overlap study APP`: run on each toolchain, report them together. True when
    every run completed."""
    app = get_app(app_name)
    opts.check(app)
    tcs = checked_toolchains(toolchains, ranks=opts.ranks, launcher=opts.launcher)
    ui = Ui(err_console)
    runs = [run_study(app, tc, opts, ui) for tc in tcs]
    return finish(runs, opts.out_base, console, report=report)


def characterize_step(app_name: str) -> Callable[[Toolchain, Any, Path, Ui], Run]:
    """The step of `characterize` that runs study `app_name` (CharacterizeOptions:
    ranks, quick, launcher, timeout)."""
    def step(tc: Toolchain, opts: Any, runs_dir: Path, ui: Ui) -> Run:
        return run_study(get_app(app_name), tc, StudyOptions(
            ranks=opts.ranks, quick=opts.quick, launcher=opts.launcher,
            timeout_s=opts.timeout_s, out_base=runs_dir), ui)
    return step


halo_step, cg_step = characterize_step("halo"), characterize_step("cg")
