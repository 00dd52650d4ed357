"""`mpi-overlap calibrate`: measure the transfer-time table the profiler uses.

A calibration is ordinary runs (run directories with run.json, result.json and logs): the
pingpong benchmark, whose undisturbed samples give the point-to-point part of the table
and its verdict (xfer_quality.py), a second pingpong run on the sizes the first left
suspect or unmeasured (their samples pooled with the first run's), and the collectives
benchmark on the job's N ranks, whose times become the collective series for communicator
size N (xfer_table.py). The table lives under `<state>/xfer-tables/`, named after the
toolchain and the machine and toolchain fingerprints; series measured earlier for other
communicator sizes stay in it. `find_or_calibrate` is what `profile -n N` calls: it
returns the table that fits this machine and toolchain, measuring one (quick) when there
is none or it cannot be trusted (table_trust.py), and only the collectives for N when the
table lacks them. A table that stays suspect is refused with one line.
"""

from __future__ import annotations

import subprocess
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ..core.errors import UserError
from ..core.json_input import parse_json
from ..core.locks import state_lock
from ..core.machine_load import busiest
from ..core.paths import state_dir
from ..core.procs import run_tool
from ..core.sizes import format_size
from ..core.termsafe import Table
from ..core.ui import Ui
from ..platform.build import executable
from ..platform.toolchains import Toolchain
from ..run.rundir import Run
from ..run.runner import (
    RunOptions,
    build,
    check_ranks,
    check_timeout,
    checked_toolchains,
    run_launch,
    timeout_for,
)
from . import coll_failures, coll_size_model
from .job_classes import JobLayout, job_layout, missing_classes, missing_reason
from .parts_view import print_parts
from .table_benchmarks import COLLECTIVE_TABLE, P2P_TABLE, with_role
from .table_trust import SUSPECT_EXIT, check_usable, refusal, replacement, stale_for
from .xfer_quality import UNVERIFIED, judge, size_list, suspect_sizes
from .xfer_table import (
    BLOCKING_COLL_OPS,
    OVERRIDE_HINT,
    CollKey,
    Points,
    XferTable,
    check_fits,
    coll_series,
    read_fitting,
    read_table,
    save_table,
    set_aside_path,
    table_from_pingpong,
    table_path,
)

FINGERPRINT_PROGRAM = "mo_fingerprint"
_FINGERPRINT_TIMEOUT_S = 60
SHOWN_SIZES = (0, 1 << 10, 64 << 10, 1 << 20, 64 << 20)
# The re-measurement of suspect and unmeasured sizes: seconds of ping-pong budget per
# size, and at most (quick, full).
REMEASURE_S_PER_SIZE = {True: 0.5, False: 2.0}
REMEASURE_MAX_S = {True: 8.0, False: 30.0}
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


def p2p_args(*, quick: bool, sizes: str | None, budget_s: float | None = None,
             stream: bool = False) -> list[str]:
    """The point-to-point benchmark's flags (its package's, role P2P_TABLE: handed in,
    table_benchmarks.py), checked there so that bad input fails before anything is built;
    with `stream`, it also times the stream (xfer_stream.py), which only the calibration's
    first run does (a re-measurement or a check is about its sizes)."""
    return with_role(P2P_TABLE).to_native({"sizes": sizes, "budget": budget_s,
                                           "stream": stream}, quick=quick, verbose=False)


def calibration_run(role: str, tc: Toolchain, args: list[str], *, ranks: int, quick: bool,
         launcher: str | None, timeout_s: float | None, out_base: Path, ui: Ui) -> Run:
    """One calibration run of the benchmark of `role` (P2P_TABLE or COLLECTIVE_TABLE); a
    run that did not complete is a UserError with exit code 3."""
    bench = with_role(role).benchmark
    name = bench.name
    timeout = timeout_for(bench, quick=quick, timeout_s=timeout_s)
    opts = RunOptions(ranks=ranks, launcher=launcher, timeout_s=timeout, out_base=out_base)
    run = run_launch(bench, tc, args, opts, ui)
    if not run.complete:
        why = run.meta.get("message") or run.status
        raise UserError(f"calibration ({name}) on toolchain '{tc.name}' did not complete "
                        f"({why}); see {run.path}", exit_code=3)
    assert run.result is not None
    return run


def _host_load(runs: list[Run]) -> dict[str, Any] | None:
    """The busiest of the runs' host_load records (machine_load.py), or None."""
    return busiest([r.meta["host_load"] for r in runs if r.meta.get("host_load")])


def measure_p2p(tc: Toolchain, *, ranks: int, quick: bool, sizes: str | None,
                launcher: str | None, timeout_s: float | None, out_base: Path,
                ui: Ui) -> tuple[XferTable, list[Run]]:
    """The point-to-point table (not saved) and its runs: a ping-pong run, then, when
    some sizes are suspect or unmeasured, a second one on those sizes alone, the samples
    of both pooled. A table without a single measured size is a UserError (exit code
    SUSPECT_EXIT); a failed second run leaves the first run's table."""
    def run(args: list[str]) -> Run:
        return calibration_run(P2P_TABLE, tc, args, ranks=max(ranks, 2), quick=quick,
                               launcher=launcher, timeout_s=timeout_s, out_base=out_base, ui=ui)

    runs = [run(p2p_args(quick=quick, sizes=sizes, stream=True))]
    classes = judge([runs[0].result])
    redo = suspect_sizes(classes)
    if redo:
        every = max(classes.values(), key=len)
        flagged = [q for q in every if q.nbytes in redo]
        ui.line(f"re-measuring {len(redo)} size(s) whose samples were disturbed or off the "
                f"fit of their neighbours: {size_list(flagged, every, most=8)}")
        budget = min(REMEASURE_MAX_S[quick], max(1.0, REMEASURE_S_PER_SIZE[quick] * len(redo)))
        try:
            runs.append(run(p2p_args(quick=quick, sizes=",".join(map(str, redo)),
                                          budget_s=budget)))
        except UserError as err:
            if err.exit_code != 3:
                raise
            ui.line(f"the re-measurement did not complete ({err}); the table keeps the first "
                    "run's samples")
    try:
        table = table_from_pingpong([r.result for r in runs if r.result], tc.name,
                                    host_load=_host_load(runs), sources=[str(r.path) for r in runs])
    except UserError as err:
        raise UserError(f"calibration of toolchain '{tc.name}': {err}; see {runs[-1].path}",
                        exit_code=SUSPECT_EXIT) from None
    return table, runs


def _calibrate_p2p(tc: Toolchain, *, ranks: int, quick: bool, sizes: str | None,
                   launcher: str | None, timeout_s: float | None, out_base: Path,
                   ui: Ui) -> tuple[Path, list[Run], XferTable]:
    """Measure the point-to-point part and write the table (whatever its verdict: the
    table says it), keeping the collective series of a fitting table already there and
    the classes it has that this calibration did not measure (intra from one node, inter
    from a run across nodes). A table with a worse verdict than the one there (a busy
    table that contradicts the quiet one is suspect) does not replace it: it is written
    beside it (`<name>.<verdict>.table`), the stored one stays in use, and one line says
    so (table_trust.replacement). The path and table returned are the new one's."""
    table, runs = measure_p2p(tc, ranks=ranks, quick=quick, sizes=sizes, launcher=launcher,
                              timeout_s=timeout_s, out_base=out_base, ui=ui)
    path = table_path(tc, table.machine_fp, table.toolchain_fp)
    old = read_fitting(path, table.machine_fp, table.toolchain_fp)
    choice = replacement(table, old, old_stale=old is not None and stale_for(old, tc) is not None,
                         where=path)
    table = choice.table
    table = table.with_coll(old.coll).with_classes_of(old) if old else table
    if choice.beside:
        path = set_aside_path(path, choice.table.verdict)
    save_table(path, table)
    if choice.said:
        ui.line(choice.said)
    return path, runs, read_table(path)


# The sizes an automatic calibration across nodes measures (profile --nodes N on a fresh
# state): quick sizes go to 64 MiB, which on one node take a few seconds, but across the
# emulated cluster's 200 Mbit/s link (docs/cluster.md) 64 MiB alone is 2.7 s one way and
# the calibration took 167–453 s. Up to 4 MiB, the whole first profile across two nodes
# (point to point, then the collectives' 25 s budget, then the program) took 62 s there,
# 171 s before; above 4 MiB lookups continue the last segment's slope (the bandwidth),
# which the profiler counts as extrapolated. An explicit `calibrate --nodes` measures
# every size.
AUTO_SIZES_ACROSS_NODES = "0:4M"

# The time an automatic collective calibration (profile -n N on a table without times for
# N ranks) may take: mo_collectives starts no new (op, size) after it and keeps what it
# measured. Unbounded, 16 oversubscribed ranks on 2 cores ran into the 300 s timeout and
# measured nothing; an explicit `calibrate` has no such limit.
AUTO_COLL_BUDGET_S = 25.0


def calibrate_collectives(tc: Toolchain, path: Path, *, ranks: int, quick: bool,
                          launcher: str | None = None, timeout_s: float | None = None,
                          out_base: Path = Path("mpi-overlap-runs"),
                          ui: Ui | None = None, budget_s: float | None = None,
                          budget_from: str = "an automatic calibration") -> Run:
    """Measure the collectives on `ranks` ranks with mo_collectives and put their series
    for that communicator size into the table at `path` (other sizes kept); with
    `budget_s`, no new (op, size) is started after that many seconds, and a table whose
    series were cut says so (a source line naming `budget_from`,
    what set the limit). A failure (a UserError with exit code 3) is
    recorded beside the table (coll_failures.py), a success clears such a record."""
    try:
        run = _measure_collectives(tc, path, ranks=ranks, quick=quick, launcher=launcher,
                                   timeout_s=timeout_s, out_base=out_base, ui=ui or Ui(quiet=True),
                                   budget_s=budget_s, budget_from=budget_from)
    except UserError as err:
        if err.exit_code == 3:
            coll_failures.record(path, ranks, str(err))
        raise
    coll_failures.clear(path, ranks)
    return run


def _measure_collectives(tc: Toolchain, path: Path, *, ranks: int, quick: bool,
                         launcher: str | None, timeout_s: float | None, out_base: Path,
                         ui: Ui, budget_s: float | None = None,
                         budget_from: str = "an automatic calibration") -> Run:
    collectives = with_role(COLLECTIVE_TABLE)
    args = collectives.to_native({"budget": budget_s}, quick=quick, verbose=False)
    run = calibration_run(COLLECTIVE_TABLE, tc, args, ranks=ranks, quick=quick,
                          launcher=launcher, timeout_s=timeout_s, out_base=out_base, ui=ui)
    assert run.result is not None
    res = run.result["results"]
    table = read_table(path)
    if (res["machine_fp"], res["toolchain_fp"]) != (table.machine_fp, table.toolchain_fp):
        raise UserError(f"calibration ({collectives.name}) ran with rank 0 on machine "
                        f"{res['machine_fp']} and MPI {res['toolchain_fp']}, but the table "
                        f"{path} is for machine {table.machine_fp} and MPI "
                        f"{table.toolchain_fp}; see {run.path}", exit_code=3)
    series = coll_series(run.result)
    if not series:
        raise UserError(f"calibration ({collectives.name}) on toolchain '{tc.name}' measured no "
                        f"collective; see {run.path}", exit_code=3)
    note = _cut_note(run.result, ranks, budget_s, len(series), run.path, budget_from)
    save_table(path, table.with_coll(series).with_coll_note(ranks, note))
    if note:
        ui.line(f"collectives on {ranks} ranks: {note}")
    return run


def _cut_note(result: dict[str, Any], ranks: int, budget_s: float | None, measured: int,
              where: Path, budget_from: str = "an automatic calibration") -> str | None:
    """What the table says of collective series that a time budget cut (None when every
    series is complete): how many ops have times, where the run is, how to complete it."""
    series = result["results"].get("series", [])
    if all(s.get("complete", True) for s in series):
        return None
    return (f"cut by the {budget_s:g} s limit of {budget_from}: {measured} of "
            f"{len(series)} collectives have times, the others fall back to point-to-point "
            f"ones ({where}); 'mpi-overlap calibrate -n {ranks}' measures them all")


def _calibrate(tc: Toolchain, *, ranks: int, quick: bool, sizes: str | None,
               launcher: str | None, timeout_s: float | None, out_base: Path,
               ui: Ui, coll_budget_s: float | None = None) -> tuple[Path, list[Run]]:
    """Point to point, then the collectives for `ranks` (no new one started after
    coll_budget_s seconds, when given); the table is written after each, so a failed
    collective run (UserError, exit code 3) leaves the point-to-point part."""
    path, p2p_runs, table = _calibrate_p2p(tc, ranks=ranks, quick=quick, sizes=sizes,
                                           launcher=launcher, timeout_s=timeout_s,
                                           out_base=out_base, ui=ui)
    if table.verdict == "suspect":  # refused anyway; collectives on it would be off too
        ui.line(f"collectives not measured: the point-to-point table of '{tc.name}' is "
                "suspect, and collectives measured on this machine now would be off too")
        return path, p2p_runs
    coll_run = calibrate_collectives(tc, path, ranks=ranks, quick=quick, launcher=launcher,
                                     timeout_s=timeout_s, out_base=out_base, ui=ui,
                                     budget_s=coll_budget_s, budget_from="--collectives-budget")
    return path, [*p2p_runs, coll_run]


def calibrate(tc: Toolchain, *, ranks: int = 2, quick: bool = False, sizes: str | None = None,
              launcher: str | None = None, timeout_s: float | None = None,
              out_base: Path = Path("mpi-overlap-runs"), ui: Ui | None = None) -> Path:
    """Measure `tc`'s transfer times with mo_pingpong and its collectives on `ranks` ranks
    with mo_collectives (run directories under `out_base`), write the table to
    `table_path(...)` and return its path (its verdict is in the table). One calibration
    at a time (locks.py)."""
    ui = ui or Ui(quiet=True)
    with _calibration_lock(tc, ui):
        path, _ = _calibrate(tc, ranks=ranks, quick=quick, sizes=sizes, launcher=launcher,
                             timeout_s=timeout_s, out_base=out_base, ui=ui)
    return path


def _why_measure(path: Path, fp: Fingerprint, tc: Toolchain, *, force: bool,
                 layout: JobLayout | None = None) -> tuple[XferTable | None, str | None]:
    """The state directory's table for these fingerprints and, when it must be measured
    (again), why: also when it lacks a class of transfers the job of `layout` uses
    (job_classes.py)."""
    if not path.is_file():
        return None, (f"no transfer-time table for toolchain '{tc.name}' on this machine yet")
    try:
        found = read_table(path)
        check_fits(found, fp.machine_fp, fp.toolchain_fp)
    except UserError as err:
        return None, f"the table there cannot be used ({err})"
    if found.verdict == "suspect" and not force:
        return found, f"the table {path} is marked suspect ({found.verdict_reason})"
    if found.verdict == UNVERIFIED:
        return found, f"the table {path} has no quality verdict ({found.verdict_reason})"
    stale = stale_for(found, tc)
    if stale:
        return found, f"{stale}"
    missing = missing_classes(found, layout)
    if missing and layout is not None:
        return found, missing_reason(path, missing, layout)
    return found, None


def find_or_calibrate(tc: Toolchain, *, ranks: int = 2, launcher: str | None = None,
                      table: Path | None = None, force_table: bool = False,
                      out_base: Path | None = None, timeout_s: float | None = None,
                      ui: Ui | None = None) -> Path:
    """The transfer-time table for `tc` on this machine, for a job of `ranks` ranks.

    With `table`, that file as it is, refused (one-line UserError) when made for another
    machine or toolchain or marked suspect, unless `force_table`; a noisy or unverified
    one is used with a note. Otherwise the table under the state directory whose
    fingerprints match, measured now (quick, run directories under `out_base`, default
    `<state>/calibration-runs`, saying why on the terminal) when there is none, it cannot
    be read, it is suspect or unverified, or the toolchain changed after it was made; a
    measurement that stays suspect is refused (exit code SUSPECT_EXIT) unless
    `force_table`. When it has no collective series for `ranks` ranks, only those are
    measured. The job's classes (job_classes.py: intra-node where a node holds two ranks
    or more, inter-node across nodes) must be in the table: one that lacks any is
    measured again with the job's layout, keeping the classes it has. Each calibration
    launch is bounded by `timeout_s` (the caller's --timeout)
    when given. A collective calibration that fails or times out is reported, recorded
    (coll_failures.py: later runs do not try again, an explicit `calibrate` does) and the
    table used without them (the profiler then counts its fallbacks). Calibrations take
    turns (locks.py)."""
    ui = ui or Ui(quiet=True)
    if table is not None:
        loaded = read_table(table)
        if not force_table:
            fp = fingerprint(tc, ui=ui)
            check_fits(loaded, fp.machine_fp, fp.toolchain_fp, machine_key=fp.machine_key,
                       toolchain_key=fp.toolchain_key)
        _use(loaded, force=force_table, override=OVERRIDE_HINT, ui=ui)
        stale = stale_for(loaded, tc)
        if stale:
            ui.line(f"note: {stale}: the table may no longer describe it")
        return Path(table)
    fp = fingerprint(tc, ui=ui)
    path = table_path(tc, fp.machine_fp, fp.toolchain_fp)
    layout = job_layout(ranks, launcher=launcher)
    found, why = _why_measure(path, fp, tc, force=force_table, layout=layout)
    if why is None and found is not None and found.has_coll(ranks):
        _use(found, force=force_table, override="--force-table", ui=ui)
        return path
    # One calibration at a time: one that waited may find the table made meanwhile.
    with _calibration_lock(tc, ui):
        return _complete_table(tc, fp, path, ranks=ranks, launcher=launcher, layout=layout,
                               force_table=force_table,
                               out_base=out_base or state_dir() / "calibration-runs",
                               timeout_s=timeout_s, ui=ui)


def _use(table: XferTable, *, force: bool, override: str, ui: Ui) -> None:
    """Refuses a suspect table unless forced (table_trust.check_usable); says on the
    terminal why one that is used is not fully trusted."""
    said = check_usable(table, force=force, override=override)
    if said:
        ui.line(said)


def _calibration_lock(tc: Toolchain, ui: Ui) -> AbstractContextManager[None]:
    """The state directory's calibration lock (locks.py): calibrations measured at once
    would measure each other's contention."""
    return state_lock("calibrate", f"calibrating toolchain '{tc.name}'", say=ui.info)


def _complete_table(tc: Toolchain, fp: Fingerprint, path: Path, *, ranks: int,
                    launcher: str | None, force_table: bool, out_base: Path,
                    timeout_s: float | None, ui: Ui,
                    layout: JobLayout | None = None) -> Path:
    """What find_or_calibrate measures, once it holds the calibration lock (judged again:
    a command that waited may find the table made meanwhile); the table's path (that of
    rank 0's machine when a new table is measured). The measurement runs with the job's
    own layout (the bound --nodes), so it measures the classes the job uses."""
    found, why = _why_measure(path, fp, tc, force=force_table, layout=layout)
    if why is not None:
        sizes = None
        how = f"-n {ranks}, about 10 s"
        if layout is not None and layout.nodes > 1:
            sizes = AUTO_SIZES_ACROSS_NODES
            how = (f"-n {ranks} --nodes {layout.nodes} --sizes {sizes}; above "
                   f"{sizes.split(':')[1]}B the table extrapolates, `mpi-overlap calibrate "
                   "--nodes` measures them; a minute or less on a link of 100 Mbit/s or "
                   "faster")
        ui.line(f"calibrating: {why}; measuring one now (as mpi-overlap calibrate --quick "
                f"{how})")
        path, _, found = _calibrate_p2p(tc, ranks=ranks, quick=True, sizes=sizes,
                                        launcher=launcher, timeout_s=timeout_s,
                                        out_base=out_base, ui=ui)
        still = missing_classes(found, layout)
        if still and layout is not None:
            ui.line(f"note: the calibration measured no {' or '.join(still)}-node pair "
                    f"({layout.describe()}); the profiler prices such transfers with the "
                    "class it has and counts them, or refuses where ranks share a node")
    assert found is not None
    _use(found, force=force_table, override="--force-table", ui=ui)
    if found.has_coll(ranks):
        return path
    failure = coll_failures.recorded(path, ranks)
    if failure is not None:
        ui.line(f"collectives on {ranks} ranks are not calibrated: the attempt of "
                f"{failure['utc']} did not complete ({failure['message']}); their transfer "
                "times fall back to point-to-point ones (counted as coll_uncalibrated); "
                f"'mpi-overlap calibrate -n {ranks}' tries again")
        return path
    ui.line(f"the transfer-time table for toolchain '{tc.name}' has no collective times "
            f"for {ranks} ranks yet; measuring them (mo_collectives --quick, at most "
            f"{AUTO_COLL_BUDGET_S:g} s)")
    try:
        calibrate_collectives(tc, path, ranks=ranks, quick=True, launcher=launcher,
                              timeout_s=timeout_s, out_base=out_base, ui=ui,
                              budget_s=AUTO_COLL_BUDGET_S)
    except UserError as err:
        if err.exit_code != 3:
            raise
        ui.line(f"collectives not calibrated ({err}); their transfer times fall back to "
                "point-to-point ones (counted as coll_uncalibrated); recorded, so later runs "
                f"do not try again: 'mpi-overlap calibrate -n {ranks}' does")
    return path


# ----- the CLI command --------------------------------------------------------------------

def calibrate_session(toolchains: list[str], *, ranks: int, quick: bool, sizes: str | None,
                      launcher: str | None, timeout_s: float | None, out_base: Path,
                      console: Console, err_console: Console,
                      coll_budget_s: float | None = None) -> None:
    """`mpi-overlap calibrate`: calibrate each toolchain, print a few sizes, the verdict
    and the path; exit code 3 when a calibration did not complete, SUSPECT_EXIT when a
    table stays suspect (it is written all the same, marked so)."""
    # Bad input fails here, before anything is built.
    p2p_args(quick=quick, sizes=sizes)
    check_ranks(with_role(P2P_TABLE).benchmark, ranks, "calibrate")
    check_timeout(timeout_s)
    if coll_budget_s is not None and not coll_budget_s > 0:
        raise UserError(f"--collectives-budget must be positive (got {coll_budget_s:g})")
    tcs = checked_toolchains(toolchains, ranks=ranks, launcher=launcher)
    ui = Ui(err_console)
    failed: list[str] = []
    suspect: list[XferTable] = []
    for tc in tcs:
        here = fingerprint(tc, ui=ui)  # builds when needed; the run then finds it built
        try:
            with _calibration_lock(tc, ui):
                path, runs = _calibrate(tc, ranks=ranks, quick=quick, sizes=sizes,
                                        launcher=launcher, timeout_s=timeout_s,
                                        out_base=out_base, ui=ui, coll_budget_s=coll_budget_s)
        except UserError as err:
            if err.exit_code not in (3, SUSPECT_EXIT):
                raise
            console.print(f"{tc.name}: {err}", markup=False)
            failed.append(tc.name)
            continue
        table = read_table(path)
        print_table(console, table)
        print_parts(console, table)
        print_coll_table(console, table, ranks)
        # paths whole on one line, whatever the terminal's width: scripts and tests read
        # them (a checkout 150 characters deep wrapped the table's path)
        for run in runs:
            console.print(f"{tc.name}: run {run.path}", markup=False, soft_wrap=True)
        console.print(f"{tc.name}: table {path}", markup=False, soft_wrap=True)
        print_verdict(console, table)
        if table.verdict == "suspect":
            suspect.append(table)
        if here.machine_fp != table.machine_fp:
            console.print(f"note: rank 0 ran on machine {table.machine_fp} "
                          f"({table.machine_key}), not on this one ({here.machine_fp}); the "
                          "profiler uses the table where it fits", markup=False)
    if failed:
        raise UserError(f"calibration did not complete for {', '.join(failed)} (see above)",
                        exit_code=3)
    if suspect:
        raise refusal(suspect[0], override=f"profile --table {suspect[0].path} --force-table")


def print_verdict(console: Console, table: XferTable) -> None:
    """The table's verdict and, when the machine was busy, what else ran."""
    console.print(f"{table.toolchain_name}: verdict {table.verdict}: {table.verdict_reason}",
                  markup=False, soft_wrap=True)
    if table.load:
        console.print(f"{table.toolchain_name}: while measuring, {table.load}", markup=False,
                      soft_wrap=True)


def print_table(console: Console, table: XferTable) -> None:
    """One-way time (µs, the table's value) at a few sizes, per class, with the size's
    verdict when not ok; 'not measured' for sizes left out, '—' where not tried."""
    view = Table(title=f"{table.toolchain_name}: one-way transfer time (µs; monotone fit of "
                       "the undisturbed samples' lower quartiles)")
    view.add_column("pair")
    for size in SHOWN_SIZES:
        view.add_column(format_size(size), justify="right")

    def cell(cls: str, size: int) -> str:
        measured = dict(table.points.get(cls, []))
        if size in measured:
            q = table.quality.get((cls, size))
            tag = f" ({q.verdict})" if q and q.verdict != "ok" else ""
            return f"{measured[size] * 1e6:.3f}{tag}"
        if any(b == size for b, _, _ in table.unmeasured.get(cls, [])):
            return "not measured"
        return "—"

    for cls in table.classes:
        view.add_row(cls, *(cell(cls, s) for s in SHOWN_SIZES))
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
    for line in coll_size_model.describe(table):
        console.print(f"{table.toolchain_name}: {line}", markup=False)
