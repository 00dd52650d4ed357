"""`mpi-overlap calibrate`: measure the transfer-time table the profiler uses.

A calibration is two ordinary runs (run directories with run.json, result.json and logs):
the pingpong benchmark, whose medians become the point-to-point part of the table, and the
collectives benchmark on the job's N ranks, whose times become the collective series for
communicator size N (xfer_table.py). The table lives under `<state>/xfer-tables/`, named
after the toolchain and the machine and toolchain fingerprints; series measured earlier
for other communicator sizes stay in it. `find_or_calibrate` is what `profile -n N` calls:
it returns the table that fits this machine and toolchain, measuring one (quick) when there
is none, and only the collectives for N when the table lacks them.
"""

from __future__ import annotations

import subprocess
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from . import coll_failures
from .benchmarks import get_benchmark
from .build import executable
from .errors import UserError
from .json_input import parse_json
from .locks import state_lock
from .paths import state_dir
from .procs import run_tool
from .rundir import Run
from .runner import (
    RunOptions,
    build,
    check_ranks,
    check_timeout,
    checked_toolchains,
    run_benchmark,
    timeout_for,
)
from .sizes import format_size, parse_sizes
from .termsafe import Table
from .toolchains import Toolchain
from .ui import Ui
from .xfer_table import (
    BLOCKING_COLL_OPS,
    CollKey,
    Points,
    XferTable,
    check_fits,
    coll_series,
    read_table,
    save_table,
    table_from_pingpong,
    table_path,
)

FINGERPRINT_PROGRAM = "mo_fingerprint"
_FINGERPRINT_TIMEOUT_S = 60
_MAX_MPI_COUNT = (1 << 31) - 1
SHOWN_SIZES = (0, 1 << 10, 64 << 10, 1 << 20, 64 << 20)
COLL_SHOWN_SIZES = (0, 1 << 10, 64 << 10, 1 << 20)


@dataclass(frozen=True)
class Fingerprint:
    machine_key: str
    machine_fp: str
    toolchain_key: str
    toolchain_fp: str


def fingerprint(tc: Toolchain, *, ui: Ui | None = None) -> Fingerprint:
    """This machine's and `tc`'s keys and fingerprints, from `mo_fingerprint` (no launcher:
    it calls MPI_Get_library_version before MPI_Init)."""
    exe = executable(build(tc, ui), FINGERPRINT_PROGRAM)
    try:
        proc = run_tool([str(exe)], env=tc.environment(), timeout_s=_FINGERPRINT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(f"{exe} timed out after {_FINGERPRINT_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no error output"])[-1]
        raise UserError(f"{exe} failed (exit {proc.returncode}): {detail}")
    try:
        data = parse_json(proc.stdout, exe)
        return Fingerprint(**{k: str(data[k]) for k in Fingerprint.__dataclass_fields__})
    except (UserError, KeyError):
        raise UserError(f"{exe} printed no fingerprint: {proc.stdout.strip()[:200]!r}") from None


def pingpong_args(*, quick: bool, sizes: str | None) -> list[str]:
    """Native flags, validated here so that bad input fails before anything is built."""
    args: list[str] = []
    if sizes is not None:
        if max(parse_sizes(sizes)) > _MAX_MPI_COUNT:
            raise UserError(f"--sizes: {max(parse_sizes(sizes))} bytes exceeds the largest MPI "
                            f"count ({_MAX_MPI_COUNT} bytes)")
        args += ["--sizes", sizes]
    if quick:
        args.append("--quick")
    return args


def _run(name: str, tc: Toolchain, args: list[str], *, ranks: int, quick: bool,
         launcher: str | None, timeout_s: float | None, out_base: Path, ui: Ui) -> Run:
    """One calibration run of benchmark `name`; a run that did not complete is a UserError
    with exit code 3."""
    bench = get_benchmark(name)
    timeout = timeout_for(bench, quick=quick, timeout_s=timeout_s)
    opts = RunOptions(ranks=ranks, launcher=launcher, timeout_s=timeout, out_base=out_base)
    run = run_benchmark(bench, tc, args, opts, ui)
    if not run.complete:
        why = run.meta.get("message") or run.status
        raise UserError(f"calibration ({name}) on toolchain '{tc.name}' did not complete "
                        f"({why}); see {run.path}", exit_code=3)
    assert run.result is not None
    return run


def _fitting(path: Path, machine_fp: str, toolchain_fp: str) -> XferTable | None:
    """The table at `path` when it is readable and made for these fingerprints."""
    if not path.is_file():
        return None
    try:
        table = read_table(path)
        check_fits(table, machine_fp, toolchain_fp)
    except UserError:
        return None
    return table


def _calibrate_p2p(tc: Toolchain, *, ranks: int, quick: bool, sizes: str | None,
                   launcher: str | None, timeout_s: float | None, out_base: Path,
                   ui: Ui) -> tuple[Path, Run]:
    """Measure the point-to-point part and write the table, keeping the collective series
    of a fitting table already there."""
    run = _run("pingpong", tc, pingpong_args(quick=quick, sizes=sizes), ranks=max(ranks, 2),
               quick=quick, launcher=launcher, timeout_s=timeout_s, out_base=out_base, ui=ui)
    assert run.result is not None
    table = table_from_pingpong(run.result, tc.name)
    path = table_path(tc, table.machine_fp, table.toolchain_fp)
    old = _fitting(path, table.machine_fp, table.toolchain_fp)
    save_table(path, table.with_coll(old.coll) if old else table)
    return path, run


def calibrate_collectives(tc: Toolchain, path: Path, *, ranks: int, quick: bool,
                          launcher: str | None = None, timeout_s: float | None = None,
                          out_base: Path = Path("mpi-overlap-runs"),
                          ui: Ui | None = None) -> Run:
    """Measure the collectives on `ranks` ranks with mo_collectives and put their series
    for that communicator size into the table at `path` (other sizes kept). A failure (a
    UserError with exit code 3) is recorded beside the table (coll_failures.py), a success
    clears such a record."""
    try:
        run = _measure_collectives(tc, path, ranks=ranks, quick=quick, launcher=launcher,
                                   timeout_s=timeout_s, out_base=out_base, ui=ui or Ui(quiet=True))
    except UserError as err:
        if err.exit_code == 3:
            coll_failures.record(path, ranks, str(err))
        raise
    coll_failures.clear(path, ranks)
    return run


def _measure_collectives(tc: Toolchain, path: Path, *, ranks: int, quick: bool,
                         launcher: str | None, timeout_s: float | None, out_base: Path,
                         ui: Ui) -> Run:
    run = _run("collectives", tc, ["--quick"] if quick else [], ranks=ranks, quick=quick,
               launcher=launcher, timeout_s=timeout_s, out_base=out_base, ui=ui)
    assert run.result is not None
    res = run.result["results"]
    table = read_table(path)
    if (res["machine_fp"], res["toolchain_fp"]) != (table.machine_fp, table.toolchain_fp):
        raise UserError(f"calibration (collectives) ran with rank 0 on machine "
                        f"{res['machine_fp']} and MPI {res['toolchain_fp']}, but the table "
                        f"{path} is for machine {table.machine_fp} and MPI "
                        f"{table.toolchain_fp}; see {run.path}", exit_code=3)
    series = coll_series(run.result)
    if not series:
        raise UserError(f"calibration (collectives) on toolchain '{tc.name}' measured no "
                        f"collective; see {run.path}", exit_code=3)
    save_table(path, table.with_coll(series))
    return run


def _calibrate(tc: Toolchain, *, ranks: int, quick: bool, sizes: str | None,
               launcher: str | None, timeout_s: float | None, out_base: Path,
               ui: Ui) -> tuple[Path, list[Run]]:
    """Point to point, then the collectives for `ranks`; the table is written after each,
    so a failed collective run (UserError, exit code 3) leaves the point-to-point part."""
    path, pp_run = _calibrate_p2p(tc, ranks=ranks, quick=quick, sizes=sizes,
                                  launcher=launcher, timeout_s=timeout_s, out_base=out_base,
                                  ui=ui)
    coll_run = calibrate_collectives(tc, path, ranks=ranks, quick=quick, launcher=launcher,
                                     timeout_s=timeout_s, out_base=out_base, ui=ui)
    return path, [pp_run, coll_run]


def calibrate(tc: Toolchain, *, ranks: int = 2, quick: bool = False, sizes: str | None = None,
              launcher: str | None = None, timeout_s: float | None = None,
              out_base: Path = Path("mpi-overlap-runs"), ui: Ui | None = None) -> Path:
    """Measure `tc`'s transfer times with mo_pingpong and its collectives on `ranks` ranks
    with mo_collectives (run directories under `out_base`), write the table to
    `table_path(...)` and return its path. One calibration at a time (locks.py)."""
    ui = ui or Ui(quiet=True)
    with _calibration_lock(tc, ui):
        path, _ = _calibrate(tc, ranks=ranks, quick=quick, sizes=sizes, launcher=launcher,
                             timeout_s=timeout_s, out_base=out_base, ui=ui)
    return path


def find_or_calibrate(tc: Toolchain, *, ranks: int = 2, launcher: str | None = None,
                      table: Path | None = None, force_table: bool = False,
                      out_base: Path | None = None, timeout_s: float | None = None,
                      ui: Ui | None = None) -> Path:
    """The transfer-time table for `tc` on this machine, for a job of `ranks` ranks.

    With `table`, that file as it is, refused (one-line UserError) when made for another
    machine or toolchain unless `force_table`. Otherwise the table under the state directory
    whose fingerprints match, measured now (quick, run directories under `out_base`,
    default `<state>/calibration-runs`) when there is none or it cannot be read; when it
    has no collective series for `ranks` ranks, only those are measured. Each calibration
    launch is bounded by `timeout_s` (the caller's --timeout) when given. A collective
    calibration that fails or times out is reported, recorded (coll_failures.py: later
    runs do not try again, an explicit `calibrate` does) and the table used without them
    (the profiler then counts its fallbacks). Calibrations take turns (locks.py)."""
    ui = ui or Ui(quiet=True)
    if table is not None:
        loaded = read_table(table)
        if not force_table:
            fp = fingerprint(tc, ui=ui)
            check_fits(loaded, fp.machine_fp, fp.toolchain_fp, machine_key=fp.machine_key,
                       toolchain_key=fp.toolchain_key)
        return Path(table)
    fp = fingerprint(tc, ui=ui)
    path = table_path(tc, fp.machine_fp, fp.toolchain_fp)
    found = _fitting(path, fp.machine_fp, fp.toolchain_fp)
    if found is not None and found.has_coll(ranks):
        return path
    # One calibration at a time: one that waited may find the table made meanwhile.
    with _calibration_lock(tc, ui):
        return _complete_table(tc, fp, path, ranks=ranks, launcher=launcher,
                               out_base=out_base or state_dir() / "calibration-runs",
                               timeout_s=timeout_s, ui=ui)


def _calibration_lock(tc: Toolchain, ui: Ui) -> AbstractContextManager[None]:
    """The state directory's calibration lock (locks.py): calibrations measured at once
    would measure each other's contention."""
    return state_lock("calibrate", f"calibrating toolchain '{tc.name}'", say=ui.info)


def _complete_table(tc: Toolchain, fp: Fingerprint, path: Path, *, ranks: int,
                    launcher: str | None, out_base: Path, timeout_s: float | None,
                    ui: Ui) -> Path:
    """What find_or_calibrate measures, once it holds the calibration lock; the table's
    path (that of rank 0's machine when a new table is measured)."""
    found: XferTable | None = None
    if path.is_file():
        try:
            found = read_table(path)
            check_fits(found, fp.machine_fp, fp.toolchain_fp)
        except UserError as err:
            ui.info(f"recalibrating: {err}")
            found = None
    if found is None:
        ui.info(f"no transfer-time table for toolchain '{tc.name}' on this machine yet; "
                f"measuring one (mpi-overlap calibrate --quick -n {ranks})")
        path, _ = _calibrate_p2p(tc, ranks=ranks, quick=True, sizes=None, launcher=launcher,
                                 timeout_s=timeout_s, out_base=out_base, ui=ui)
    elif found.has_coll(ranks):
        return path
    elif (failure := coll_failures.recorded(path, ranks)) is not None:
        ui.info(f"collectives on {ranks} ranks are not calibrated: the attempt of "
                f"{failure['utc']} did not complete ({failure['message']}); their transfer "
                "times fall back to point-to-point ones (counted as coll_uncalibrated); "
                f"'mpi-overlap calibrate -n {ranks}' tries again")
        return path
    else:
        ui.info(f"the transfer-time table for toolchain '{tc.name}' has no collective times "
                f"for {ranks} ranks yet; measuring them (mo_collectives --quick)")
    try:
        calibrate_collectives(tc, path, ranks=ranks, quick=True, launcher=launcher,
                              timeout_s=timeout_s, out_base=out_base, ui=ui)
    except UserError as err:
        if err.exit_code != 3:
            raise
        ui.info(f"collectives not calibrated ({err}); their transfer times fall back to "
                "point-to-point ones (counted as coll_uncalibrated); recorded, so later runs "
                f"do not try again: 'mpi-overlap calibrate -n {ranks}' does")
    return path


# ----- the CLI command --------------------------------------------------------------------

def calibrate_session(toolchains: list[str], *, ranks: int, quick: bool, sizes: str | None,
                      launcher: str | None, timeout_s: float | None, out_base: Path,
                      console: Console, err_console: Console) -> None:
    """`mpi-overlap calibrate`: calibrate each toolchain, print a few sizes and the path."""
    # Bad input fails here, before anything is built.
    pingpong_args(quick=quick, sizes=sizes)
    check_ranks(get_benchmark("pingpong"), ranks, "calibrate")
    check_timeout(timeout_s)
    tcs = checked_toolchains(toolchains, ranks=ranks, launcher=launcher)
    ui = Ui(err_console)
    failed: list[str] = []
    for tc in tcs:
        here = fingerprint(tc, ui=ui)  # builds when needed; the run then finds it built
        try:
            with _calibration_lock(tc, ui):
                path, runs = _calibrate(tc, ranks=ranks, quick=quick, sizes=sizes,
                                        launcher=launcher, timeout_s=timeout_s,
                                        out_base=out_base, ui=ui)
        except UserError as err:
            if err.exit_code != 3:
                raise
            console.print(f"{tc.name}: {err}", markup=False)
            failed.append(tc.name)
            continue
        table = read_table(path)
        print_table(console, table)
        print_coll_table(console, table, ranks)
        for run in runs:
            console.print(f"{tc.name}: run {run.path}", markup=False)
        console.print(f"{tc.name}: table {path}", markup=False)
        if here.machine_fp != table.machine_fp:
            console.print(f"note: rank 0 ran on machine {table.machine_fp} "
                          f"({table.machine_key}), not on this one ({here.machine_fp}); the "
                          "profiler uses the table where it fits", markup=False)
    if failed:
        raise UserError(f"calibration did not complete for {', '.join(failed)} (see above)",
                        exit_code=3)


def print_table(console: Console, table: XferTable) -> None:
    """One-way time (µs, median) at a few sizes, per class; '—' where not measured."""
    view = Table(title=f"{table.toolchain_name}: one-way transfer time (µs, median of samples)")
    view.add_column("pair")
    for size in SHOWN_SIZES:
        view.add_column(format_size(size), justify="right")
    for cls in table.classes:
        measured = dict(table.points[cls])
        view.add_row(cls, *(f"{measured[s] * 1e6:.3f}" if s in measured else "—"
                            for s in SHOWN_SIZES))
    console.print(view)


def print_coll_table(console: Console, table: XferTable, comm_size: int) -> None:
    """The collective series of one communicator size at a few sizes: one row per
    operation, each cell 'blocking / non-blocking' (µs); '—' where not measured."""
    series: dict[CollKey, Points] = {k: v for k, v in table.coll.items() if k[1] == comm_size}
    if not series:
        console.print(f"{table.toolchain_name}: no collective times for {comm_size} ranks",
                      markup=False)
        return

    def cell(op: str, size: int) -> str:
        measured = dict(series.get((op, comm_size), []))
        return f"{measured[size] * 1e6:.3g}" if size in measured else "—"

    view = Table(title=f"{table.toolchain_name}: collectives on {comm_size} ranks, µs "
                       "(blocking / non-blocking; median of the slowest rank)")
    view.add_column("op")
    for size in COLL_SHOWN_SIZES:
        view.add_column(format_size(size), justify="right")
    for op in BLOCKING_COLL_OPS:
        if (op, comm_size) in series or (f"i{op}", comm_size) in series:
            view.add_row(op, *(f"{cell(op, s)} / {cell('i' + op, s)}" for s in COLL_SHOWN_SIZES))
    console.print(view)
    others = [n for n in table.coll_sizes if n != comm_size]
    if others:
        console.print(f"{table.toolchain_name}: collective times also for communicator "
                      f"sizes {', '.join(map(str, others))}", markup=False)
