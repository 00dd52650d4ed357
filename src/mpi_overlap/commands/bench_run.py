"""Run a benchmark the way it is meant to run: a single launch of its program, several
launches (multilaunch.py: benchmarks made of launches with different settings), or a
launch under the overlap profiler with this machine's transfer-time table (calibrated
when there is none). Above the run layer (the commands' choice of how a benchmark runs):
it imports the calibration and the multi-launch runner, which import runner.py below it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..benchmarks import Benchmark
from ..calibration import table_note
from ..calibration.calibrate import find_or_calibrate
from ..core.ui import Ui
from ..platform.toolchains import Toolchain
from ..run.multilaunch import run_launches
from ..run.rundir import Run
from ..run.runner import RunOptions, check_ranks, run_launch


def run_benchmark(
    bench: Benchmark, tc: Toolchain, bench_args: list[str], opts: RunOptions, ui: Ui
) -> Run:
    check_ranks(bench, opts.ranks)
    if bench.launches is not None:
        return run_launches(bench, tc, bench_args, opts, ui)
    return run_launch(bench, tc, bench_args, opts, ui,
                      profiler=_under_profiler if bench.profiled else None)


def _under_profiler(
    tc: Toolchain, bdir: Path, argv: list[str], run_dir: Path, opts: RunOptions, ui: Ui,
    started: str,
) -> tuple[list[str], dict[str, Any]]:
    """The rank command of a benchmark that measures itself with libmpi_overlap, and the
    note on the transfer-time table it uses (table_note, since the run's start)."""
    from ..run.preload import ProfilerSetup, profiler_library

    table = find_or_calibrate(tc, ranks=2, launcher=opts.launcher, timeout_s=opts.timeout_s,
                              ui=ui)
    setup = ProfilerSetup(library=profiler_library(bdir), table=table, outdir=run_dir)
    return setup.wrap(argv), table_note.describe(table, started)
