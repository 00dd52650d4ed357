"""Which transfer-time table a profiled run used, and what the machine said while it was
measured (run.json "xfer_table").

The profiler's bounds rest on the table. When none fits, the first profiled run measures
one on the spot (calibrate.find_or_calibrate): on a busy machine that table came out
40-60 % slow at every size (issue 15) and nothing said so. So every profiled run names its
table, when it was made, whether this run made it, and, when it did, the run-level
verdict of that calibration run (run_guard.py: disturbed / oversubscribed / ok).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.paths import state_dir
from ..run.run_guard import judge
from ..run.rundir import RUN_FILE, read_json
from .table_benchmarks import P2P_TABLE, with_role
from .xfer_table import read_table


def _calibration_guard(since_utc: str) -> dict[str, Any] | None:
    """The guard of the newest calibration run (ping-pong) started since `since_utc`."""
    p2p = with_role(P2P_TABLE).name
    runs = sorted((state_dir() / "calibration-runs").glob(f"*-{p2p}-*/{RUN_FILE}"))
    for path in reversed(runs):
        try:
            meta = read_json(path)
        except UserError:
            continue
        if str(meta.get("started_utc") or "") >= since_utc:
            return meta.get("guard") or judge(meta)
    return None


def describe(table: Path, since_utc: str) -> dict[str, Any]:
    """run.json's "xfer_table" for a run started at `since_utc` (utc_now format)."""
    out: dict[str, Any] = {"path": str(table), "created": None, "made_in_this_run": None,
                           "calibration_verdict": None, "calibration_note": None}
    try:
        created = read_table(table).created
    except UserError as err:
        out["calibration_note"] = str(err)
        return out
    made_now = created >= since_utc
    out.update(created=created, made_in_this_run=made_now)
    if made_now:
        guard = _calibration_guard(since_utc)
        if guard is not None:
            over = guard.get("oversubscribed")
            out.update(calibration_verdict=guard.get("verdict"),
                       calibration_note=(over or {}).get("reason") or guard.get("disturbed"))
    return out


def sentence(note: dict[str, Any] | None) -> tuple[str, str] | None:
    """(level, text) of the report's notice about the table; None without one."""
    if not note:
        return None
    where = f"the profiler's bounds use the transfer-time table {note['path']}"
    if note.get("created") is None:
        return "warn", f"{where}, which could not be read: {note.get('calibration_note')}"
    if not note.get("made_in_this_run"):
        return "info", f"{where} (measured {note['created']})"
    verdict = note.get("calibration_verdict")
    text = f"{where}, measured inside this run ({note['created']})"
    if verdict in (None, "ok"):
        return "info", text + (", on an undisturbed machine" if verdict == "ok" else "")
    return "warn", (f"{text} while the machine was {verdict}: {note.get('calibration_note')}; "
                    "its times, and so the bounds, may be off: measure it on an idle machine "
                    "with 'mpi-overlap calibrate'")


__all__ = ["describe", "sentence"]
