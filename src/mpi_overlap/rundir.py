"""Run directories: where one benchmark launch keeps everything it produced.

Layout (one directory per launch):
    run.json       who/what/when and how it ended (schemas/run-v1.schema.json)
    result.json    the native benchmark's output (schemas/result-v1.schema.json)
    analysis.json  what the Python analysis derived from result.json
    stdout.log, stderr.log

Everything that reads a run directory goes through `load_run`, so the report, the
analysis and the tests agree on what a run is.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import run_guard
from .errors import UserError

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
        """Short name for legends and table rows: toolchain plus any settings label."""
        lab = self.meta.get("label")
        return str(lab) if lab else self.toolchain


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_text_atomic(path: Path, text: str) -> None:
    """Write text so that a reader never sees a half-written file (tmp + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that a reader never sees a half-written file (tmp + rename)."""
    write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path) as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object")
    return data


def load_run(path: str | Path) -> Run:
    """Load a run directory; raise UserError when it is not one."""
    p = Path(path)
    if not p.is_dir():
        raise UserError(f"{p}: not a run directory (no such directory)")
    if not (p / RUN_FILE).is_file():
        raise UserError(f"{p}: not a run directory (no {RUN_FILE})")
    run = Run(path=p, meta=read_json(p / RUN_FILE))
    if (p / RESULT_FILE).is_file():
        try:
            run.result = read_json(p / RESULT_FILE)
        except UserError as err:
            run.problems.append(str(err))
    else:
        run.problems.append(f"{RESULT_FILE} missing: the benchmark wrote no results")
    if (p / ANALYSIS_FILE).is_file():
        # What the machine says about the run (run.json's guard) joins what its result says.
        run.analysis = run_guard.apply(read_json(p / ANALYSIS_FILE), run.meta)
    return run


def new_run_dir(base: Path, benchmark: str, toolchain: str) -> Path:
    """Create a fresh, uniquely named run directory under `base`."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base.mkdir(parents=True, exist_ok=True)
    for i in range(1000):
        suffix = "" if i == 0 else f"-{i}"
        candidate = base / f"{stamp}-{benchmark}-{toolchain}{suffix}"
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise UserError(f"{base}: could not create a new run directory")
