"""What a profile takes from this toolchain's newest sync-overlap run (spec.Evidence's
`read`; profile/run/toolchain_evidence.py finds the run, this package's advice.py advises
on it): the eager limit it bracketed and the MPI setting that governs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def evidence(toolchain: str, run_dir: Path | None,
             analysis: dict[str, Any] | None) -> dict[str, Any] | None:
    """{run, last_yes_bytes, first_no_bytes, setting, setting_bytes, finding} of the run
    (the newest complete one of the profile's toolchain) when it bracketed its limit;
    None otherwise, or without a run."""
    if run_dir is None or analysis is None:
        return None
    limit = analysis.get("limit") or {}
    if limit.get("status") != "bracketed":
        return None
    reported = analysis.get("reported") or {}
    return {"run": str(run_dir), "last_yes_bytes": limit["last_yes_bytes"],
            "first_no_bytes": limit["first_no_bytes"], "setting": reported.get("source"),
            "setting_bytes": reported.get("bytes"), "finding": str(analysis["finding"])}
