"""Collective calibrations that failed or timed out, recorded beside their transfer-time
table so that `profile -n N` does not try again on every run.

A collective calibration on many ranks can outlast a profile's --timeout, or fail outright
(16 spinning ranks on 2 cores); unrecorded, every later `profile -n 16` would spend its
time limit on it again. `<table>.coll-failures.json` (schema coll-failures-v1) holds one
entry per communicator size: when, why, and the run directory. `find_or_calibrate` then
says so on the terminal and goes on without those collectives (their transfer times fall
back to point-to-point ones, counted as coll_uncalibrated); an explicit
`mpi-overlap calibrate -n N` tries again, and a success removes the entry. The file is
separate from the table because the table is read by the profiler library (C) too, and
its format has no place for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.documents import errors_against
from ..core.errors import UserError
from ..core.json_input import read_json
from ..run.rundir import utc_now, write_json_atomic

SCHEMA = "mpi-overlap/coll-failures"


def failures_path(table: Path) -> Path:
    return table.with_name(table.name + ".coll-failures.json")


def _load(table: Path) -> dict[str, Any]:
    """The failures document of `table`; an unreadable or invalid one counts as empty (it
    is only a memo: the worst outcome is one more calibration attempt)."""
    path = failures_path(table)
    empty: dict[str, Any] = {"schema": SCHEMA, "schema_version": 1, "failures": {}}
    if not path.is_file():
        return empty
    try:
        doc = read_json(path)
    except UserError:
        return empty
    return doc if not errors_against(doc, "coll-failures-v1") else empty


def recorded(table: Path, comm_size: int) -> dict[str, Any] | None:
    """The recorded failure of the collectives on `comm_size` ranks: {utc, message}."""
    return _load(table)["failures"].get(str(comm_size))


def record(table: Path, comm_size: int, message: str) -> None:
    doc = _load(table)
    doc["failures"][str(comm_size)] = {"utc": utc_now(), "message": message}
    write_json_atomic(failures_path(table), doc)


def clear(table: Path, comm_size: int) -> None:
    doc = _load(table)
    if doc["failures"].pop(str(comm_size), None) is None:
        return
    if doc["failures"]:
        write_json_atomic(failures_path(table), doc)
    else:
        failures_path(table).unlink(missing_ok=True)
