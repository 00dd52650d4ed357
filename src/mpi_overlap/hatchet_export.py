"""A profile as Hatchet's literal format (a list of trees of {frame, metrics,
children}), which `hatchet.GraphFrame.from_literal` reads, and Thicket through it.

Until profiles record call sites, the tree is the profile analysis' own breakdowns under
one root: root → "by function" → each MPI function, root → "by size" → each size bin,
root → "by region" → each region. The numbers are the analysis' (analysis/profile.py:
sums over ranks, non-overlapped time as xfer − max, bin labels), so the export says what
the report says; a breakdown's node holds the sums of its children, the root the job's
totals. `worst_rank` is the rank losing most at that node, -1 when none lost any."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import UserError
from .file_output import write_json
from .report.profile_table import analysis_of
from .rundir import load_run

# the numeric measures a ranking entry (or the job) carries that sum over entries
SUMMED = ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s", "calls", "call_s", "comp_s")


def _metrics(entry: dict[str, Any]) -> dict[str, float]:
    out = {m: float(entry[m]) for m in SUMMED if isinstance(entry.get(m), (int, float))}
    if "worst_rank" in entry:
        out["worst_rank"] = float(-1 if entry["worst_rank"] is None else entry["worst_rank"])
    return out


def _node(name: str, kind: str, metrics: dict[str, float],
          children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"frame": {"name": name, "type": kind}, "metrics": metrics}
    if children:
        node["children"] = children
    return node


def _breakdown(title: str, kind: str, name_key: str,
               entries: list[dict[str, Any]]) -> dict[str, Any]:
    children = [_node(str(e[name_key]), kind, _metrics(e)) for e in entries]
    sums = {m: sum(c["metrics"].get(m, 0.0) for c in children) for m in SUMMED
            if any(m in c["metrics"] for c in children)}
    return _node(title, "breakdown", sums, children)


def hatchet_literal(analysis: dict[str, Any], program: str) -> list[dict[str, Any]]:
    rankings = analysis["rankings"]
    children = [
        _breakdown("by function", "function", "fn", rankings["functions"]),
        _breakdown("by size", "size-bin", "label", rankings["bins"]),
        _breakdown("by region", "region", "region", rankings["regions"]),
    ]
    return [_node(program, "program", _metrics(analysis["job"]), children)]


def export_hatchet(run_dir: Path, out: Path | None) -> Path:
    """Write the profile run's literal to `out` (default: <run_dir>/hatchet.json)."""
    run = load_run(run_dir)
    analysis = analysis_of(run) if run.benchmark == "profile" else None
    if not analysis or not analysis.get("ranks"):
        raise UserError(f"{run_dir}: not a profile run with results (`mpi-overlap profile` "
                        "makes one)")
    argv = ((run.result or {}).get("app") or {}).get("argv") or ["program"]
    target = out or run.path / "hatchet.json"
    write_json(target, hatchet_literal(analysis, Path(str(argv[0])).name))
    return target
