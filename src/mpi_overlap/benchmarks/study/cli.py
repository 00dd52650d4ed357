"""`mpi-overlap study halo|cg`: the case studies' command (run.py), at the top of the CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..spec import CommandParts


def command(parts: CommandParts) -> click.Command:
    @click.command("study")
    @click.argument("app_name", metavar="halo|cg")
    @parts.mpi_option
    @parts.ranks_option
    @click.option("--quick", is_flag=True, help="2 sizes, 2 repetitions, the apps' --quick")
    @click.option("--reps", type=int, help="repetitions of each with/without pair (default 5)")
    @click.option("--sizes", metavar="LIST",
                  help="per-rank grid edges, e.g. 16,64 (faces N*N*8 B)")
    @click.option("--iterations", type=int, metavar="N",
                  help="iterations per mode (the app's --iterations; default halo 200, cg "
                       "100): longer launches")
    @parts.launches_options("print the tables and write the report")
    def study(app_name: str, mpi: tuple[str, ...], ranks: int, quick: bool, reps: int | None,
              sizes: str | None, iterations: int | None, launcher: str | None,
              timeout: float | None, out: Path, report: bool) -> None:
        """Case study: a mini-application's exchange modes with and without the profiler; does
        the profiler's overlap bound predict what each mode saves?"""
        from .run import StudyOptions, parse_edges, study_session

        opts = StudyOptions(ranks=ranks, reps=reps, quick=quick, sizes=parse_edges(sizes),
                            iterations=iterations, launcher=launcher, timeout_s=timeout,
                            out_base=out)
        if not study_session(app_name, list(mpi), opts, report=report, console=parts.out,
                             err_console=parts.err, finish=parts.finish):
            sys.exit(3)

    return study
