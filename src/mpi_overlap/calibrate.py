"""`mpi-overlap calibrate`: measure the transfer-time table the profiler uses.

A calibration is an ordinary run of the pingpong benchmark (a run directory with run.json,
result.json and logs) followed by writing its medians as a table (xfer_table.py) under
`<state>/xfer-tables/`, named after the toolchain and the machine and toolchain
fingerprints. `find_or_calibrate` is what `profile` calls: it returns the table that fits
this machine and toolchain, measuring one (quick) when there is none.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .benchmarks import get_benchmark
from .build import executable
from .errors import UserError
from .paths import state_dir
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
from .toolchains import Toolchain
from .ui import Ui
from .xfer_table import XferTable, check_fits, read_table, table_path, write_table

FINGERPRINT_PROGRAM = "mo_fingerprint"
_FINGERPRINT_TIMEOUT_S = 60
_MAX_MPI_COUNT = (1 << 31) - 1
SHOWN_SIZES = (0, 1 << 10, 64 << 10, 1 << 20, 64 << 20)


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
        proc = subprocess.run([str(exe)], env=tc.environment(), capture_output=True, text=True,
                              timeout=_FINGERPRINT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise UserError(f"{exe} timed out after {_FINGERPRINT_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no error output"])[-1]
        raise UserError(f"{exe} failed (exit {proc.returncode}): {detail}")
    try:
        data = json.loads(proc.stdout)
        return Fingerprint(**{k: str(data[k]) for k in Fingerprint.__dataclass_fields__})
    except (json.JSONDecodeError, KeyError, TypeError):
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


def _calibrate(tc: Toolchain, *, ranks: int, quick: bool, sizes: str | None,
               launcher: str | None, timeout_s: float | None, out_base: Path,
               ui: Ui) -> tuple[Path, Run]:
    bench = get_benchmark("pingpong")
    args = pingpong_args(quick=quick, sizes=sizes)
    timeout = timeout_for(bench, quick=quick, timeout_s=timeout_s)
    opts = RunOptions(ranks=ranks, launcher=launcher, timeout_s=timeout, out_base=out_base)
    run = run_benchmark(bench, tc, args, opts, ui)
    if not run.complete:
        why = run.meta.get("message") or run.status
        raise UserError(f"calibration on toolchain '{tc.name}' did not complete ({why}); "
                        f"see {run.path}", exit_code=3)
    assert run.result is not None
    res = run.result["results"]
    path = table_path(tc, res["machine_fp"], res["toolchain_fp"])
    write_table(path, run.result, tc.name)
    return path, run


def calibrate(tc: Toolchain, *, ranks: int = 2, quick: bool = False, sizes: str | None = None,
              launcher: str | None = None, timeout_s: float | None = None,
              out_base: Path = Path("mpi-overlap-runs"), ui: Ui | None = None) -> Path:
    """Measure `tc`'s transfer times with mo_pingpong (a run directory under `out_base`),
    write the table to `table_path(...)` and return its path."""
    path, _ = _calibrate(tc, ranks=ranks, quick=quick, sizes=sizes, launcher=launcher,
                         timeout_s=timeout_s, out_base=out_base, ui=ui or Ui(quiet=True))
    return path


def find_or_calibrate(tc: Toolchain, *, ranks: int = 2, launcher: str | None = None,
                      table: Path | None = None, force_table: bool = False,
                      out_base: Path | None = None, timeout_s: float | None = None,
                      ui: Ui | None = None) -> Path:
    """The transfer-time table for `tc` on this machine.

    With `table`, that file, refused (one-line UserError) when made for another machine or
    toolchain unless `force_table`. Otherwise the table under the state directory whose
    fingerprints match, measured now (quick, run directory under `out_base`, default
    `<state>/calibration-runs`) when there is none or it cannot be read."""
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
    if path.is_file():
        try:
            check_fits(read_table(path), fp.machine_fp, fp.toolchain_fp)
            return path
        except UserError as err:
            ui.info(f"recalibrating: {err}")
    ui.info(f"no transfer-time table for toolchain '{tc.name}' on this machine yet; "
            "measuring one (mpi-overlap calibrate --quick)")
    return calibrate(tc, ranks=ranks, quick=True, launcher=launcher, timeout_s=timeout_s,
                     out_base=out_base or state_dir() / "calibration-runs", ui=ui)


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
            path, run = _calibrate(tc, ranks=ranks, quick=quick, sizes=sizes,
                                   launcher=launcher, timeout_s=timeout_s, out_base=out_base,
                                   ui=ui)
        except UserError as err:
            if err.exit_code != 3:
                raise
            console.print(f"{tc.name}: {err}", markup=False)
            failed.append(tc.name)
            continue
        table = read_table(path)
        print_table(console, table)
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
