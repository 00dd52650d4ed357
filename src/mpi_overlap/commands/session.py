"""What a CLI command does end to end: run a benchmark on each toolchain, then report.

The CLI hands over parsed arguments; this module chooses defaults (timeouts, report
location), runs, and prints where the results are.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ..benchmarks import get_benchmark
from ..core.errors import UserError
from ..core.file_output import WriteError
from ..core.termsafe import safe_lines
from ..core.ui import Ui
from ..run import env_matrix, launch_plan, run_guard
from ..run.rundir import STDOUT_FILE, Run, load_run, mark_failed
from ..run.runner import analyze_result, checked_toolchains, status_line, timeout_for
from .bench_run import run_benchmark


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
    """Run benchmark `name` on each toolchain, under each setting of the bound --env-matrix,
    --launches times (the settings alternating); report them together. True if all
    complete."""
    bench = get_benchmark(name)
    timeout = timeout_for(bench, quick=quick, timeout_s=timeout_s)
    tcs = checked_toolchains(toolchains)
    ui = Ui(err_console)
    runs: list[Run] = []
    variants = env_matrix.current()
    launches = launch_plan.count(quick)
    for tc in tcs:
        for planned in launch_plan.runs(name, tc.name, variants, launches):
            opts = planned.options(ranks=ranks, launcher=launcher, timeout_s=timeout,
                                   out_base=out_base, quick=quick)
            run = run_benchmark(bench, tc, native_args, opts, ui)
            runs.append(run)
            if show_verbose:
                console.print(safe_lines((run.path / STDOUT_FILE).read_text(errors="replace")),
                              markup=False, highlight=False)
    return finish_session(runs, out_base, console, report=report)


def finish_session(runs: list[Run], out_base: Path, console: Console, *,
                   report: bool) -> bool:
    """Report the runs (when asked), then print each one's status line: a run is never
    said to be complete before its report was written. True if all complete."""
    if report:
        report_runs(runs, out_base, console)
    for run in runs:
        console.print(status_line(run), markup=False, soft_wrap=True)
    return all(r.status == "complete" for r in runs)


def report_runs(runs: list[Run], out_base: Path, console: Console) -> None:
    """One report of the runs that have results: in the run directory when there is one,
    else in a `report-...` directory under `out_base`. When the report cannot be written
    (a full disk), a run whose directory was to hold it is marked failed, with what it
    saved, before the error goes on."""
    with_results = [r for r in runs if r.result]
    if not with_results:
        return
    out_dir = (
        with_results[0].path
        if len(with_results) == 1
        else out_base / f"report-{with_results[0].path.name}-x{len(runs)}"
    )
    try:
        paths = _make_report(with_results, out_dir, console)
    except WriteError as err:
        for run in with_results:
            if run.path == out_dir:
                mark_failed(run, f"its report could not be written ({err})")
        raise
    for line in paths.lines(with_json=False):
        console.print(line, markup=False, soft_wrap=True)


def report_session(run_dirs: list[Path], out: Path | None, *, console: Console) -> None:
    if not run_dirs:
        raise UserError("name at least one run directory")
    # Documents from elsewhere: every one read strictly and checked against its schema;
    # a benchmark's part of the report that still fails becomes an error section.
    runs = [load_run(p, strict=True) for p in run_dirs]
    for run in runs:
        _ensure_analysis(run)
    out_dir = out or (runs[0].path if len(runs) == 1 else Path("mpi-overlap-report"))
    paths = _make_report(runs, out_dir, console, keep_going=True)
    for line in paths.lines():
        console.print(line, markup=False, soft_wrap=True)


def _ensure_analysis(run: Run) -> None:
    """Analyse runs that have results but no analysis (e.g. copied from a cluster)."""
    if run.analysis is not None or not run.result:
        return
    errors, analysis = analyze_result(get_benchmark(run.benchmark), run.result, run.path)
    run.analysis = run_guard.apply(analysis, run.meta)
    if errors:
        run.problems.append(f"result.json does not match its schema: {errors[0]}")


def _make_report(runs: list[Run], out_dir: Path, console: Console, *,
                 keep_going: bool = False):
    from .reporting import make_report

    return make_report(runs, out_dir, console=console, keep_going=keep_going)
