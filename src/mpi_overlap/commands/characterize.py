"""`mpi-overlap characterize`: the main job. Per toolchain: measure the transfer-time
table, run the overlap suite and the overhead suite, measure what the profiler costs,
run the case studies (halo, cg); then write one report whose summary card comes first.

With --placements (inside a Slurm allocation) all of that runs once per placement, e.g.
"1,2": both ranks on one node, then spread over two; each run records its node count, so
the card gets a column per toolchain and placement (rundir.placement_label).

Everything lands in one directory, `<out>/characterize-<time>/`: the run directories
under runs/, report.html and report.json beside them. A step that fails is recorded (a
failed run directory, or a line in the report) and the job goes on; the exit status is
3 when anything did not complete.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, TaskID

from ..benchmarks.discovery import specs
from ..benchmarks.registry import Benchmark
from ..core import verbosity
from ..core.errors import UserError
from ..core.ui import Ui
from ..platform.toolchains import Toolchain
from ..run import launch_plan, slurm_launch
from ..run.rundir import Run, placement_label
from ..run.runner import check_timeout, checked_toolchains, status_line
from .suite import (
    SuiteUi,
    findings_json,
    progress_bar,
    run_benchmarks,
    suite_benchmarks,
    summary_section,
)

SUITES = ("overlap", "overhead")


@dataclass
class CharacterizeOptions:
    ranks: int = 2
    quick: bool = False
    launcher: str | None = None
    timeout_s: float | None = None
    out_base: Path = Path("mpi-overlap-runs")
    # node counts to compare; (None,) is one pass placed as --nodes (or the launcher) says
    placements: tuple[int | None, ...] = (None,)


def parse_placements(text: str | None) -> tuple[int | None, ...]:
    """--placements "1,2" → (1, 2); None → (None,). Bad input: UserError."""
    if text is None:
        return (None,)
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise UserError(f"--placements '{text}': expected node counts, e.g. 1,2") from None
    if any(c < 1 for c in counts) or len(set(counts)) != len(counts):
        raise UserError(f"--placements '{text}': node counts must be at least 1 and distinct")
    return counts


@dataclass
class Outcome:
    runs: list[Run]
    problems: list[str] = field(default_factory=list)  # steps that left no run directory
    report_dir: Path | None = None

    @property
    def complete(self) -> bool:
        return not self.problems and all(r.status == "complete" for r in self.runs)


def _calibrate(tc: Toolchain, opts: CharacterizeOptions, runs_dir: Path, ui: Ui) -> str | None:
    """A fresh transfer-time table (the profiler's runs use it); None, or what failed.

    A suspect table written beside a better one, which stays in use (table_trust), is no
    problem of the job's: its runs use the kept table, and calibrate has said which one
    and why. Only a suspect table in use is (a busy machine with no quiet table before:
    the profiler's runs measure again or refuse)."""
    from ..calibration.calibrate import calibrate
    from ..calibration.table_trust import SUSPECT_EXIT
    from ..calibration.xfer_table import in_use, read_table

    try:
        path = calibrate(tc, ranks=opts.ranks, quick=opts.quick, launcher=opts.launcher,
                         timeout_s=opts.timeout_s, out_base=runs_dir, ui=ui)
    except UserError as err:
        if err.exit_code not in (3, SUSPECT_EXIT):
            raise
        return f"{tc.name}: calibration did not complete: {err}"
    table = read_table(path)
    if table.verdict == "suspect" and in_use(path):  # measured again by the runs, or refused
        return f"{tc.name}: the calibration's table is suspect: {table.verdict_reason}"
    return None


def _steps() -> list[tuple[str, Callable[[Toolchain, CharacterizeOptions, Path, Ui], Run]]]:
    """The benchmarks that are steps of their own after the suites (a spec's `step`: the
    profiler's cost, the case studies), in their order: (label, step function)."""
    ordered = sorted((s for s in specs() if s.step), key=lambda s: s.step_order)
    return [(s.step_label, s.function(s.step)) for s in ordered if s.step]


def characterize(toolchains: list[str], opts: CharacterizeOptions, *, console: Console,
                 err_console: Console) -> Outcome:
    check_timeout(opts.timeout_s)
    if opts.placements != (None,):  # before the launcher's check, which may ask srun
        _check_placements(opts)
    tcs = checked_toolchains(toolchains, ranks=opts.ranks, launcher=opts.launcher)
    benches = [b for suite in SUITES for b in suite_benchmarks(suite)]
    if not benches:
        raise UserError("no benchmarks are registered for the overlap and overhead suites")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = opts.out_base / f"characterize-{stamp}"
    runs_dir = out_dir / "runs"
    outcome = Outcome(runs=[])
    with progress_bar(err_console) as bar:
        # per placement and toolchain: calibration, the benchmarks, the profiler's cost,
        # the studies
        overall = bar.add_task("characterize", label="",
                               total=len(opts.placements) * len(tcs)
                               * (len(benches) * launch_plan.count(opts.quick)
                                  + 1 + len(_steps())))
        ui = SuiteUi(bar.console, bar)
        for nodes, tc in ((n, tc) for n in opts.placements for tc in tcs):
            with slurm_launch.bound(nodes) if nodes is not None else nullcontext():
                _one_toolchain(tc, benches, opts, runs_dir, outcome, bar, overall, ui)
    outcome.report_dir = out_dir
    _report(outcome, out_dir, console)
    return outcome


def _check_placements(opts: CharacterizeOptions) -> None:
    """Placements are Slurm's to make: refused in one line before anything runs."""
    if slurm_launch.requested_nodes() is not None:
        raise UserError("give either --nodes or --placements, not both")
    if opts.launcher is not None:
        raise UserError("--placements spreads the ranks with srun -N; it does not go with "
                        "--launcher")
    if not slurm_launch.in_allocation():
        raise UserError("--placements needs a Slurm allocation of as many nodes as the "
                        "largest count (e.g. `salloc -N 2 -n 2 mpi-overlap characterize "
                        "--placements 1,2`; on this machine: mpi-overlap cluster exec -- "
                        "salloc ...)")
    for nodes in opts.placements:
        if nodes is not None and nodes > opts.ranks:
            raise UserError(f"--placements: {nodes} nodes is more than the {opts.ranks} "
                            "ranks (-n) to place")


def _one_toolchain(tc: Toolchain, benches: list[Benchmark], opts: CharacterizeOptions,
                   runs_dir: Path, outcome: Outcome, bar: Progress, overall: TaskID,
                   ui: Ui) -> None:
    """Calibration, the benchmarks, the profiler's cost and the studies of one toolchain
    (in the placement bound around it)."""
    where = placement_label(tc.name, slurm_launch.requested_nodes())
    bar.update(overall, label=f"calibrate ({where})")
    problem = _calibrate(tc, opts, runs_dir, ui)
    if problem:
        outcome.problems.append(problem)
        bar.console.print(problem, markup=False, highlight=False)
    bar.advance(overall)
    outcome.runs += run_benchmarks(benches, tc, ranks=opts.ranks, quick=opts.quick,
                                   launcher=opts.launcher, timeout_s=opts.timeout_s,
                                   out_base=runs_dir, bar=bar, overall=overall)
    steps = [(label, partial(step, tc, opts, runs_dir, ui)) for label, step in _steps()]
    for what, step in steps:
        bar.update(overall, label=f"{what} ({where})")
        try:
            run = step()
        except UserError as err:
            outcome.problems.append(f"{where}: {what}: {err}")
        else:
            outcome.runs.append(run)
            bar.console.print(status_line(run), markup=False, highlight=False, soft_wrap=True)
        bar.advance(overall)


def _report(outcome: Outcome, out_dir: Path, console: Console) -> None:
    from ..benchmarks.discovery import card_items
    from ..report.summary_card import card_json, card_section, print_card
    from .reporting import make_report

    runs = outcome.runs
    items = card_items()
    lead = [summary_section("characterization", runs)] if runs else []
    paths = make_report(runs, out_dir, console=console, top_sections=[card_section(runs, items)],
                        lead_sections=lead, keep_going=True,
                        # every run's tables only with `mpi-overlap --verbose characterize`
                        print_tables=verbosity.verbose(),
                        title="mpi-overlap characterization",
                        extra={"summary_card": card_json(runs, items),
                               "findings": findings_json(runs),
                               "problems": outcome.problems})
    if not verbosity.quiet():
        print_card(runs, items, console)
    for problem in outcome.problems:
        console.print(f"problem: {problem}", markup=False)
    for line in paths.lines():
        console.print(line, markup=False, soft_wrap=True)
