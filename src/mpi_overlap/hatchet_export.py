"""A profile as Hatchet's literal format (a list of trees of {frame, metrics,
children}), which `hatchet.GraphFrame.from_literal` reads, and Thicket through it.

Until profiles record call sites, the tree is the profile's own breakdowns under one root:
root → "by function" → each MPI function, root → "by size" → each size bin, root → "by
region" → each region. Metrics per node are summed over the ranks (seconds, counts), with
the largest rank's non-overlapped time beside the sum; a breakdown's node holds the sums
of its children, the root the totals over ranks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import UserError
from .file_output import write_json
from .rundir import load_run
from .sizes import format_size

METRICS = ("xfer_s", "min_s", "max_s", "nonoverlap_s", "transfers", "calls", "call_s")


def _sum_rows(rows: list[dict[str, Any]]) -> dict[str, float]:
    out = {m: float(sum(r.get(m) or 0 for r in rows)) for m in METRICS
           if any(m in r for r in rows)}
    worst = max((float(r.get("nonoverlap_s") or 0) for r in rows), default=0.0)
    out["nonoverlap_s_max_rank"] = worst
    return out


def _group(ranks: list[dict[str, Any]], table: str, key: Any) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for rank in ranks:
        for entry in (rank.get("profile") or {}).get(table) or []:
            if isinstance(entry, dict):
                groups.setdefault(key(entry), []).append(entry)
    return groups


def _node(name: str, kind: str, metrics: dict[str, float],
          children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"frame": {"name": name, "type": kind}, "metrics": metrics}
    if children:
        node["children"] = children
    return node


def _breakdown(title: str, kind: str, groups: dict[str, list[dict]]) -> dict[str, Any]:
    children = [_node(name, kind, _sum_rows(rows)) for name, rows in groups.items()]
    return _node(title, "breakdown", _sum_rows([r for rows in groups.values() for r in rows]),
                 children)


def hatchet_literal(result: dict[str, Any]) -> list[dict[str, Any]]:
    ranks = [r for r in result.get("ranks") or [] if isinstance(r, dict)]
    if not ranks:
        raise UserError("the profile holds no rank's data: nothing to export")
    bins = _group(ranks, "by_bin", lambda e: f"{format_size(int(e['lo']))} – "
                                             f"{format_size(int(e['hi']))}")
    children = [
        _breakdown("by function", "function", _group(ranks, "by_function", lambda e: e["fn"])),
        _breakdown("by size", "size-bin", bins),
        _breakdown("by region", "region", _group(ranks, "by_region", lambda e: e["region"])),
    ]
    totals = [(r.get("profile") or {}).get("totals") or {} for r in ranks]
    app = result.get("app") or {}
    name = Path(str((app.get("argv") or ["program"])[0])).name if isinstance(app, dict) else ""
    return [_node(name or "program", "program", _sum_rows(totals), children)]


def export_hatchet(run_dir: Path, out: Path | None) -> Path:
    """Write the profile run's literal to `out` (default: <run_dir>/hatchet.json)."""
    run = load_run(run_dir)
    if run.benchmark != "profile" or not run.result:
        raise UserError(f"{run_dir}: not a profile run with results (`mpi-overlap profile` "
                        "makes one)")
    target = out or run.path / "hatchet.json"
    write_json(target, hatchet_literal(run.result))
    return target
