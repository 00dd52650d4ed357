"""What the toolchain's own benchmarks measured, for the profile's advice
(analysis/advice.py): `bench progress` (does this MPI move a message's data while no MPI
call is made?), and the benchmark packages that declare evidence (spec.evidence: the
eager limit, and the MPI setting that governs it). The newest complete run of each, of
this toolchain and without --env-matrix settings, directly under the profile's --out
directory; the advice quotes its finding and names the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..benchmarks.spec import BenchmarkSpec
from ..errors import UserError
from ..rundir import ANALYSIS_FILE, RUN_FILE, read_json


def _read(path: Path) -> dict[str, Any] | None:
    """The JSON document at path (rundir.read_json), None when absent or unreadable."""
    try:
        return read_json(path)  # a JSON object, or a UserError
    except UserError:
        return None


def _latest(out_base: Path, benchmark: str, toolchain: str) -> tuple[Path, dict] | None:
    """(run directory, analysis) of the newest complete run of `benchmark`."""
    if not out_base.is_dir():
        return None
    for run_dir in sorted(out_base.glob(f"*-{benchmark}-*"), reverse=True):
        meta = _read(run_dir / RUN_FILE)
        if not meta or meta.get("benchmark") != benchmark or meta.get("status") != "complete":
            continue
        if (meta.get("toolchain") or {}).get("name") != toolchain or meta.get("env_overrides"):
            continue
        analysis = _read(run_dir / ANALYSIS_FILE)
        if analysis and analysis.get("finding"):
            return run_dir, analysis
    return None


def latest_evidence(spec: BenchmarkSpec, out_base: Path, toolchain: str) -> Any:
    """What the newest complete run of a benchmark package that declares evidence
    (spec.evidence) says for the profile's advice: its evidence module's
    `evidence(run_dir, analysis)`; None without such a run."""
    found = _latest(out_base, spec.name, toolchain)
    return None if found is None else spec.module("evidence").evidence(*found)


def latest_progress(out_base: Path, toolchain: str) -> dict[str, Any]:
    """{toolchain, run, finding, receiver_first, sender_first} of the newest complete
    progress run of `toolchain`; run None when there is none."""
    found = _latest(out_base, "progress", toolchain)
    if found is None:
        return {"toolchain": toolchain, "run": None, "finding": None, "receiver_first": None,
                "sender_first": None}
    run_dir, analysis = found
    ranges = analysis.get("verdict_ranges") or {}
    return {"toolchain": toolchain, "run": str(run_dir), "finding": str(analysis["finding"]),
            "receiver_first": ranges.get("receiver-first"),
            "sender_first": ranges.get("sender-first")}

