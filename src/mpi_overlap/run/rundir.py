"""Run directories: where one benchmark launch keeps everything it produced.

Layout (one directory per launch):
    run.json       who/what/when and how it ended (run-v1, run/documents.py)
    result.json    the native benchmark's output (result-v1, run/documents.py)
    analysis.json  what the Python analysis derived from result.json
    stdout.log, stderr.log

Everything that reads a run directory goes through `load_run`, so the report, the
analysis and the tests agree on what a run is. Every run that writes one opens it with
`begin_run` (run.json at "running") and closes it with `end_run`; a run still open when
the CLI stops (a signal, a full disk, an error) is closed by `close_open_runs`, so no
run.json is left saying "running" by a command that has ended.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core import interrupts
from ..core.errors import UserError
from ..core.file_output import (
    DISK_FULL,
    WriteError,
    json_text,
    rewrite_in_place,
    write_json,
    write_text,
)
from ..core.json_input import read_json
from . import run_guard

RUN_FILE = "run.json"
RESULT_FILE = "result.json"
ANALYSIS_FILE = "analysis.json"
STDOUT_FILE = "stdout.log"
STDERR_FILE = "stderr.log"


@dataclass
class Run:
    """A loaded run directory. `result` / `analysis` are None when the file is absent."""

    path: Path
    meta: dict[str, Any]
    result: dict[str, Any] | None = None
    analysis: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    # What a report computed from these files when analysis.json was absent, kept so that
    # one report computes it once (profile/report/profile_table.analysis_of).
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def benchmark(self) -> str:
        return str(self.meta.get("benchmark", "unknown"))

    @property
    def toolchain(self) -> str:
        return str(self.meta.get("toolchain", {}).get("name", "unknown"))

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "unknown"))

    @property
    def complete(self) -> bool:
        return (
            self.status == "complete"
            and bool(self.result)
            and (self.result.get("status") == "complete")
        )

    @property
    def label(self) -> str:
        """Short name for legends and table rows: toolchain plus any settings label, and
        the placement when the run was spread over nodes on request (--nodes)."""
        lab = self.meta.get("label")
        return placement_label(str(lab) if lab else self.toolchain, self.meta.get("nodes"))


def placement_label(label: str, nodes: object) -> str:
    """`label` with the run's node count (run.json's "nodes"), so that runs of one
    toolchain placed differently (characterize --placements) get columns of their own."""
    if not isinstance(nodes, int) or isinstance(nodes, bool):
        return label
    return f"{label} on {nodes} node" + ("s" if nodes != 1 else "")


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# The writers every module uses (file_output.py: atomic, umask-respecting, one-line errors).
write_text_atomic = write_text
write_json_atomic = write_json

# Room left in run.json while a run is running, so that its end can be written over it in
# place when the disk has filled up meanwhile (file_output.rewrite_in_place).
RUN_JSON_RESERVE = 4096

_open_runs: dict[Path, dict[str, Any]] = {}


def write_run_json(run_dir: Path, meta: dict[str, Any]) -> None:
    """run.json, atomically; while running, followed by RUN_JSON_RESERVE spaces (valid JSON
    whitespace). When the disk is full, the end of the run is written over that room."""
    path = run_dir / RUN_FILE
    text = json_text(meta)
    padded = text + " " * RUN_JSON_RESERVE if meta.get("status") == "running" else text
    try:
        write_text(path, padded)
    except WriteError as err:
        if not (err.disk_full and rewrite_in_place(path, text)):
            raise


def begin_run(run_dir: Path, meta: dict[str, Any]) -> None:
    """Write run.json as the run starts (status "running") and keep the run open: signals
    are then acted on when it ends (interrupts.py), and the CLI closes it on any stop."""
    _open_runs[run_dir] = meta  # open first: a signal while writing finds it open
    interrupts.hold()
    write_run_json(run_dir, meta)


def end_run(run_dir: Path, meta: dict[str, Any]) -> None:
    """Write run.json as the run ended and close it; then, when a signal arrived meanwhile,
    raise interrupts.Stopped (the caller's series stops here)."""
    try:
        write_run_json(run_dir, meta)
    finally:
        if _open_runs.pop(run_dir, None) is not None:
            interrupts.release()
    interrupts.check([run_dir])


def saved_files(run_dir: Path) -> list[str]:
    """The non-empty files of a run directory (what a failed run kept), by name."""
    try:
        return sorted(p.name for p in run_dir.iterdir()
                      if p.is_file() and not p.name.startswith(".") and p.stat().st_size > 0)
    except OSError:
        return []


def close_open_runs(status: str, message: str) -> list[Path]:
    """Mark every run still open as `status` with `message` and what it saved; returns
    their directories. Best effort: a run.json that cannot be written stays as it is."""
    closed = []
    for run_dir, meta in list(_open_runs.items()):
        kept = [n for n in saved_files(run_dir) if n != RUN_FILE]
        meta.update(status=status, finished_utc=utc_now(),
                    message=f"{message}; saved: {', '.join(kept) or 'nothing'}")
        with contextlib.suppress(UserError):
            write_run_json(run_dir, meta)
        _open_runs.pop(run_dir, None)
        interrupts.release()
        closed.append(run_dir)
    return closed


def mark_failed(run: Run, why: str) -> None:
    """Mark a finished run failed after the fact (its report could not be written), with
    what it saved; best effort, like close_open_runs."""
    kept = [n for n in saved_files(run.path) if n != RUN_FILE]
    run.meta.update(status="failed", message=f"{why}; saved: {', '.join(kept) or 'nothing'}")
    with contextlib.suppress(UserError):
        write_run_json(run.path, run.meta)


def _valid_documents(run: Run, p: Path, *, all_documents: bool) -> None:
    """Check run.json's fields against their schema (a wrong type is refused, one line);
    with `all_documents`, result.json's and analysis.json's too: a document that does not
    match is named in run.problems and dropped: an analysis is derived again from a valid
    result, a result that does not match is not reported (nor its analysis). (A large
    profile takes seconds to validate: the runs made here were validated as they ended,
    only documents from elsewhere need it.)"""
    from ..core.documents import analysis_errors, has_schema, result_errors, run_errors

    errors = run_errors(run.meta)
    if errors:
        raise UserError(f"{p / RUN_FILE}: not a valid run.json ({len(errors)} problems, "
                        f"first: {errors[0]})")
    if not all_documents:
        return
    if run.result is not None:
        errors = result_errors(run.result)
        if errors:  # the report's code trusts the fields it reads: it gets neither
            run.problems.append(f"{RESULT_FILE} does not match its schema, not reported "
                                f"({len(errors)} problems, first: {errors[0]})")
            run.result = run.analysis = None
    bench = run.analysis.get("benchmark") if run.analysis is not None else None
    if isinstance(bench, str) and has_schema(f"analysis-{bench}-v1"):
        errors = analysis_errors(run.analysis or {})
        if errors:
            run.problems.append(f"{ANALYSIS_FILE} does not match its schema, ignored "
                                f"({errors[0]})")
            run.analysis = None


def _read_result(path: Path) -> dict[str, Any]:
    """result.json; a large profile result with its rank documents left on disk, read one
    at a time when they are gone through (result_file.py)."""
    from .result_file import LAZY_RESULT_BYTES, read_profile_result

    try:
        large = path.stat().st_size >= LAZY_RESULT_BYTES
    except OSError:
        large = False
    lazy = read_profile_result(path) if large else None
    return lazy if lazy is not None else read_json(path)


def load_run(path: str | Path, *, strict: bool = False) -> Run:
    """Load a run directory; raise UserError when it is not one. `strict` (documents from
    elsewhere: `mpi-overlap report`): a result.json or analysis.json that cannot be read
    is refused too, and both are checked against their schemas (_valid_documents)."""
    p = Path(path)
    if not p.is_dir():
        raise UserError(f"{p}: not a run directory (no such directory)")
    if not (p / RUN_FILE).is_file():
        raise UserError(f"{p}: not a run directory (no {RUN_FILE})")
    run = Run(path=p, meta=read_json(p / RUN_FILE))
    if (p / RESULT_FILE).is_file():
        try:
            run.result = _read_result(p / RESULT_FILE)
        except UserError as err:
            if strict:
                raise
            run.problems.append(str(err))
    else:
        run.problems.append(f"{RESULT_FILE} missing: the benchmark wrote no results")
    if (p / ANALYSIS_FILE).is_file():
        try:
            run.analysis = read_json(p / ANALYSIS_FILE)
        except UserError as err:
            if strict:
                raise
            run.problems.append(f"{err}; ignored")
    _valid_documents(run, p, all_documents=strict)
    # What the machine says about the run (run.json's guard) joins what its result says
    # (after the documents are checked: analysis.json on disk stays what the result says).
    if isinstance(run.analysis, dict):
        run.analysis = run_guard.apply(run.analysis, run.meta)
    return run


def check_out_dir(base: Path, option: str = "--out") -> Path:
    """`base` when it is, or can be made, a writable directory; else one UserError line.
    Nothing is created: the nearest existing ancestor must be a writable directory."""
    base = Path(base)
    probe = base
    while not probe.exists():
        if probe.is_symlink():
            raise UserError(f"{option} {base}: {probe} is a dangling symbolic link")
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        what = "is" if probe == base else f"is under {probe}, which is"
        raise UserError(f"{option} {base} {what} a file, not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"{option} {base}: {probe} is not writable")
    return base


def new_run_dir(base: Path, benchmark: str, toolchain: str) -> Path:
    """Create a fresh, uniquely named run directory under `base`."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    check_out_dir(base)
    try:
        base.mkdir(parents=True, exist_ok=True)
        for i in range(1000):
            suffix = "" if i == 0 else f"-{i}"
            candidate = base / f"{stamp}-{benchmark}-{toolchain}{suffix}"
            try:
                candidate.mkdir()
                return candidate
            except FileExistsError:
                continue
    except OSError as err:
        if err.errno in DISK_FULL:
            raise WriteError(base, err) from None
        raise UserError(f"cannot create a run directory under {base}: "
                        f"{err.strerror or err}") from None
    raise UserError(f"{base}: could not create a new run directory")
