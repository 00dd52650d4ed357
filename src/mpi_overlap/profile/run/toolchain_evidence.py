"""What the toolchain's own benchmarks measured, for the profile's advice
(profile/analysis/advice.py): each benchmark package that declares evidence
(analysis/evidence.py, handed in from above) says it, with its `read` function, from the
newest complete run of its benchmark, of this toolchain and without --env-matrix
settings, directly under the profile's --out directory; the profile keeps it under the
declared key and the declared rule quotes its finding and names the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.errors import UserError
from ...run.rundir import ANALYSIS_FILE, RUN_FILE, read_json
from ..analysis.evidence import EvidenceSource, declared


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


def latest_evidence(source: EvidenceSource, out_base: Path, toolchain: str) -> Any:
    """What the newest complete run of a benchmark package that declares evidence
    (analysis/evidence.py) says for the profile's advice: its `read` function's
    `(toolchain, run_dir, analysis)`, both None without such a run."""
    read = declared(source).read
    run_dir, analysis = _latest(out_base, source.name, toolchain) or (None, None)
    return source.function(read)(toolchain, run_dir, analysis)


