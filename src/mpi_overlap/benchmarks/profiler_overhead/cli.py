"""`mpi-overlap bench profiler-overhead`: its own command, since one run is many launches
of two programs (run.py), not the flags of one program."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..spec import CommandParts


def command(parts: CommandParts) -> click.Command:
    @click.command("profiler-overhead")
    @parts.mpi_option
    @parts.ranks_option
    @click.option("--quick", is_flag=True, help="shorter launches, 3 repetitions")
    @click.option("--reps", type=int,
                  help="repetitions of the seven launches (default 5; --quick 3)")
    @click.option("--apps", is_flag=True,
                  help="also mo_halo and mo_cg timed in blocks with the profiler paused and "
                       "running, each launched with it and once without (the null check), "
                       "about 10 s a launch here: the cost inside one launch")
    @parts.launches_options("print the tables and write the HTML report")
    def bench_profiler_overhead(mpi: tuple[str, ...], ranks: int, quick: bool,
                                reps: int | None, apps: bool, launcher: str | None,
                                timeout: float | None, out: Path, report: bool) -> None:
        """What the overlap profiler costs: message rate and run time with/without it."""
        from .run import OverheadOptions, profiler_overhead_session

        opts = OverheadOptions(ranks=ranks, reps=reps, quick=quick, launcher=launcher,
                               timeout_s=timeout, out_base=out, apps=apps)
        if not profiler_overhead_session(list(mpi), opts, report=report, console=parts.out,
                                         err_console=parts.err, finish=parts.finish):
            sys.exit(3)

    return bench_profiler_overhead
