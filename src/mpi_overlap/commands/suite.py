"""`mpi-overlap bench <suite>-suite`: every registered benchmark of a suite, in its
suite_order, on each toolchain (and each setting of a bound --env-matrix), under one
progress display, into one report.

A benchmark that fails (an error before or during its run, a crash, a timeout) is
recorded as a run directory with its status and message, shown as a banner in the
report, and the suite goes on; the suite reports failure at the end. A signal (Ctrl-C,
SIGTERM, SIGHUP) stops the suite at once: the benchmark running then is marked
interrupted with what it measured, and no further benchmark starts (interrupts.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import (
    Progress,
    TaskID,
)

from ..benchmarks import registry
from ..benchmarks.discovery import spec_of
from ..benchmarks.registry import Benchmark
from ..core import verbosity
from ..core.errors import UserError
from ..core.file_output import WriteError
from ..core.ui import ProgressFn, Ui, progress_display
from ..platform.toolchains import Toolchain
from ..run import env_matrix, launch_plan
from ..run.rundir import RUN_FILE, Run, close_open_runs, load_run, new_run_dir, write_json_atomic
from ..run.runner import (
    RunOptions,
    check_timeout,
    checked_toolchains,
    initial_run_meta,
    status_line,
    timeout_for,
)
from .bench_run import run_benchmark


def suite_benchmarks(suite: str) -> list[Benchmark]:
    """The suite's benchmarks in run order (suite_order, then name)."""
    benches = [b for b in registry.BENCHMARKS.values() if b.suite == suite]
    return sorted(benches, key=lambda b: (b.suite_order, b.name))


class SuiteUi(Ui):
    """A Ui whose progress bars are tasks of one shared display, under an overall bar."""

    def __init__(self, console: Console, bar: Progress) -> None:
        super().__init__(console)
        self.bar = bar

    @contextmanager
    def progress(self, description: str) -> Iterator[ProgressFn]:
        task = self.bar.add_task(f"  {description}", total=None, label="")

        def update(done: int, total: int, label: str) -> None:
            self.bar.update(task, completed=done, total=max(total, 1), label=label)

        try:
            yield update
        finally:
            self.bar.remove_task(task)


@dataclass
class SuiteOutcome:
    runs: list[Run]
    failed: list[Run]
    report_dir: Path | None


def _failure_run(bench: Benchmark, tc: Toolchain, opts: RunOptions, message: str) -> Run:
    """A run directory for a benchmark that failed before it left one of its own."""
    run_dir = new_run_dir(opts.out_base, bench.name, tc.name)
    meta = initial_run_meta(bench.name, tc, opts, [], run_dir)
    meta.update(finished_utc=meta["started_utc"], elapsed_s=0.0, status="failed",
                message=message)
    write_json_atomic(run_dir / RUN_FILE, meta)
    return load_run(run_dir)


def _finding(run: Run) -> str:
    if run.analysis and run.analysis.get("finding"):
        return str(run.analysis["finding"])
    if run.status != "complete":
        return f"{run.status}: {run.meta.get('message') or 'no message'}"
    return "no finding (the benchmark has no analysis)"


def summary_section(suite: str, runs: list[Run]):
    """The report's first section: one line per benchmark and toolchain."""
    from ..report.html import HtmlTable, Section

    rows = [(r.benchmark, r.label, r.status, _finding(r)) for r in runs]
    css = [("left", "left", "left" if r.status == "complete" else "v-incomplete", "left")
           for r in runs]
    failed = sum(r.status != "complete" for r in runs)
    intro = (f"{len(runs)} runs of the {suite} suite; "
             + (f"{failed} did not complete (see their banners below)." if failed
                else "all complete."))
    return Section(f"{suite} suite: findings", intro, [],
                   [HtmlTable("One line per benchmark", ("benchmark", "MPI", "status", "finding"),
                              rows, css)])


def progress_bar(console: Console) -> Progress:
    """The one display of a multi-benchmark command: an overall bar, task bars under it."""
    return progress_display(console, quiet=verbosity.quiet())


def run_one(bench: Benchmark, tc: Toolchain, opts: RunOptions, native_args: list[str],
            ui: Ui) -> Run:
    """One benchmark run; an error becomes a failed run directory (the run's own when it
    had opened one) instead of ending the caller's series. A signal (interrupts.Stopped, not
    an Exception) and a full disk end the series."""
    try:
        return run_benchmark(bench, tc, native_args, opts, ui)
    except KeyboardInterrupt:
        raise
    except Exception as err:  # reported as a failed run; the series goes on
        text = str(err) or type(err).__name__
        text = text if isinstance(err, UserError) else f"{type(err).__name__}: {text}"
        closed = close_open_runs("failed", text)
        if isinstance(err, WriteError) and err.disk_full:
            raise
        if closed and (closed[-1] / RUN_FILE).is_file():
            return load_run(closed[-1])
        return _failure_run(bench, tc, opts, text)


def native_args(bench: Benchmark, quick: bool) -> list[str]:
    """What `bench NAME [--quick]` passes the program with its flags at their defaults
    (the benchmark's spec, spec.default_native): the suites and `characterize` measure as
    the benchmark's own command does."""
    spec = spec_of(bench.name)
    return spec.default_native(quick) if spec else (["--quick"] if quick else [])


def run_benchmarks(benches: list[Benchmark], tc: Toolchain, *, ranks: int, quick: bool,
                   launcher: str | None, timeout_s: float | None, out_base: Path,
                   bar: Progress, overall: TaskID) -> list[Run]:
    """`benches` on one toolchain under each setting of the bound --env-matrix, --launches
    times, advancing `overall` once per run and printing each run's status line above
    the bars."""
    ui = SuiteUi(bar.console, bar)
    runs: list[Run] = []
    variants = env_matrix.current()
    launches = launch_plan.count(quick)
    # Per benchmark, its launches alternate between the settings (launch_plan.plan).
    for bench in benches:
        timeout = timeout_for(bench, quick=quick, timeout_s=timeout_s)
        args = native_args(bench, quick)
        for planned in launch_plan.runs(bench.name, tc.name, variants, launches):
            bar.update(overall, label=f"{bench.name} ({planned.label or tc.name})")
            opts = planned.options(ranks=ranks, launcher=launcher, timeout_s=timeout,
                                   out_base=out_base, quick=quick)
            run = run_one(bench, tc, opts, args, ui)
            runs.append(run)
            bar.console.print(status_line(run), markup=False, highlight=False, soft_wrap=True)
            bar.advance(overall)
    return runs


def run_suite(
    suite: str,
    toolchains: list[str],
    *,
    ranks: int,
    quick: bool,
    launcher: str | None,
    timeout_s: float | None,
    out_base: Path,
    console: Console,
    err_console: Console,
) -> SuiteOutcome:
    benches = suite_benchmarks(suite)
    if not benches:
        raise UserError(f"no benchmarks registered for suite '{suite}'")
    check_timeout(timeout_s)
    tcs = checked_toolchains(toolchains, ranks=ranks, launcher=launcher)
    runs: list[Run] = []
    with progress_bar(err_console) as bar:
        total = (len(benches) * len(tcs) * len(env_matrix.current())
                 * launch_plan.count(quick))
        overall = bar.add_task(f"{suite} suite", total=total, label="")
        for tc in tcs:
            runs += run_benchmarks(benches, tc, ranks=ranks, quick=quick, launcher=launcher,
                                   timeout_s=timeout_s, out_base=out_base, bar=bar,
                                   overall=overall)
    failed = [r for r in runs if r.status != "complete"]
    report_dir = out_base / f"report-{suite}-suite-{runs[0].path.name[:15]}"
    from .reporting import make_report

    paths = make_report(runs, report_dir, console=console,
                        lead_sections=[summary_section(suite, runs)], keep_going=True,
                        title=f"mpi-overlap {suite} suite",
                        extra={"suite": {"name": suite, "findings": findings_json(runs)}})
    for line in paths.lines():
        console.print(line, markup=False, soft_wrap=True)
    return SuiteOutcome(runs=runs, failed=failed, report_dir=report_dir)


def findings_json(runs: list[Run]) -> list[dict[str, str]]:
    return [{"benchmark": r.benchmark, "toolchain": r.toolchain, "label": r.label,
             "status": r.status, "finding": _finding(r), "path": str(r.path)} for r in runs]
