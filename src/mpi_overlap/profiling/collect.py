"""Collect the rank documents of a run directory (the job file and the per-rank files:
rank_documents.py) into its result.json (schema profile-run-v1): every rank that wrote
something, the ranks that wrote nothing, and why the whole is incomplete when it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis.profile_values import rank_list
from ..schema import errors_against
from ..table_trust import table_record
from .callsites import Resolver
from .rank_documents import read_rank_documents


def _resolve_sites(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Source lines for every rank's call sites (profiling/callsites.py), summed."""
    total = {"sites": 0, "with_line": 0, "notes": []}
    resolver = Resolver()  # one for the job: each site goes to addr2line once
    for doc in docs:
        done = resolver.resolve(doc)
        total["sites"] += done["sites"]
        total["with_line"] += done["with_line"]
        if done["note"] and done["note"] not in total["notes"]:
            total["notes"].append(done["note"])
    return total


def collect(run_dir: Path, *, ranks_expected: int, app_argv: list[str], cwd: str,
            table: Path, forced: bool, bins: list[int] | None,
            table_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """The profile-run document; `table_info` is table_trust.table_record of the table
    the run was started with (read now when not given)."""
    docs: list[dict[str, Any]] = []
    found = read_rank_documents(run_dir)
    warnings: list[str] = list(found.problems)
    for rank, doc in sorted(found.docs.items()):
        errors = errors_against(doc, "profile-rank-v1")
        if errors:
            warnings.append(f"rank {rank}: its document ({found.source[rank]}) does not match "
                            f"its schema: {errors[0]}")
            continue
        docs.append(doc)
    callsites = _resolve_sites(docs)
    seen = {d["rank"] for d in docs}
    missing = [r for r in range(ranks_expected) if r not in seen]
    if missing:
        warnings.append(
            f"{len(missing)} of {ranks_expected} ranks wrote no profile (e.g. killed before "
            "their first snapshot, or the program does not call MPI_Init through the "
            f"profiled MPI library): ranks {rank_list(missing)}"
        )
    for status in ("disabled", "incomplete", "running"):
        these = [d for d in docs if d["status"] == status]
        if these:
            reason = these[0].get("reason") or {
                "running": "the program was stopped before MPI_Finalize; last snapshot kept",
            }.get(status, "")
            warnings.append(f"{len(these)} rank(s) {status}: {reason}")
    info = table_info if table_info is not None else table_record(table, None)
    changed = sorted({d["rank"] for d in docs
                      if info.get("hash") and d["table"].get("hash") not in (None, info["hash"])})
    if changed:
        warnings.append(f"ranks {rank_list(changed)} read a different transfer-time table than "
                        f"the one the run started with ({info['hash']}): it changed meanwhile")
    complete = not missing and all(d["status"] == "complete" for d in docs) and bool(docs)
    return {
        "schema": "mpi-overlap/profile-run",
        "schema_version": 1,
        "benchmark": "profile",
        "status": "complete" if complete else "incomplete",
        "app": {"argv": app_argv, "cwd": cwd},
        "ranks_expected": ranks_expected,
        "table": {"path": str(table), "forced": forced, **info},
        "bins": bins,
        "ranks": sorted(docs, key=lambda d: d["rank"]),
        "missing_ranks": missing,
        "callsites": callsites,
        "job_file": found.job,
        "warnings": warnings,
    }
