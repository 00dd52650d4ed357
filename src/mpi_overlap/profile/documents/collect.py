"""Collect the rank documents of a run directory (the job file and the per-rank files:
rank_documents.py) into its result.json (schema profile-run-v1): every rank that wrote
something, the ranks that wrote nothing, and why the whole is incomplete when it is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...calibration.table_trust import table_record
from ...core.errors import UserError
from ...core.schema import model_errors
from ..analysis.profile_values import rank_list
from .callsites import Resolver
from .job_sites import places_in_file
from .job_stats import STATS_FILE, read_stats_file
from .models import ProfileRank, ProfileStats
from .rank_documents import RankDocumentStream

if TYPE_CHECKING:
    from ...run.paired_launch import LaunchSetup
from ...run.result_file import RankSequence


def _job_stats(run_dir: Path, ranks_expected: int) -> tuple[dict[str, Any] | None, str | None]:
    """profile.stats.json when it is there and of this run, else None and why (None when
    there is none)."""
    stats, why = read_stats_file(run_dir)
    if stats is not None and (errors := model_errors(stats, ProfileStats)):
        return None, f"{STATS_FILE} does not match its schema: {errors[0]}"
    if stats is not None and stats["ranks"] != ranks_expected:
        return None, (f"{STATS_FILE} is of {stats['ranks']} ranks, the run of "
                      f"{ranks_expected}: left out")
    return stats, why


class CollectedRanks(RankSequence):
    """result["ranks"] of a collected run: the rank documents that match their schema, in
    rank order, their call sites resolved, read again from the run directory each time
    they are gone through (writing result.json, analysing it), never all held."""

    def __init__(self, stream: RankDocumentStream, skip: set[int], resolver: Resolver,
                 count: int) -> None:
        self._stream, self._skip, self._resolver, self._count = stream, skip, resolver, count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for rank, doc, source in self._stream:
            if rank in self._skip:
                continue
            self._resolver.resolve(doc)  # every site seen before: no addr2line
            if self.check is not None and (errors := self.check(doc)):
                raise UserError(f"rank {rank} ({source}) changed since it was collected: "
                                f"{errors[0]}")
            yield doc

    def __len__(self) -> int:
        return self._count


def collect(run_dir: Path, *, ranks_expected: int, app_argv: list[str], cwd: str,
            table: Path, forced: bool, bins: list[int] | None,
            table_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """The profile-run document; `table_info` is table_trust.table_record of the table
    the run was started with (read now when not given). Its rank documents are read one
    at a time (CollectedRanks): here once for what the document says of them, then when
    result.json is written and analysed."""
    stream = RankDocumentStream(run_dir)
    resolver = Resolver()  # one for the job: each site goes to addr2line once
    callsites: dict[str, Any] = {"sites": 0, "with_line": 0, "notes": []}
    schema_warnings: list[str] = []
    bad: set[int] = set()
    docs: list[dict[str, Any]] = []  # what the warnings need of each, not the document
    for rank, doc, source in stream:
        errors = model_errors(doc, ProfileRank)
        if errors:
            schema_warnings.append(f"rank {rank}: its document ({source}) does not match "
                                   f"its schema: {errors[0]}")
            bad.add(rank)
            continue
        done = resolver.resolve(doc)  # source lines for the call sites (callsites.py)
        callsites["sites"] += done["sites"]
        callsites["with_line"] += done["with_line"]
        if done["note"] and done["note"] not in callsites["notes"]:
            callsites["notes"].append(done["note"])
        docs.append({"rank": doc["rank"], "status": doc["status"], "reason": doc.get("reason"),
                     "table": {"hash": doc["table"].get("hash")}})
    warnings: list[str] = [*stream.problems, *schema_warnings]
    stats, why = _job_stats(run_dir, ranks_expected)
    if why:
        warnings.append(why)
    documents = len(docs)
    if stats is not None:  # its call sites' labels, as the documents' sites get theirs
        stats["site_labels"], with_line = resolver.labels_of(places_in_file(stats))
        if not docs:
            callsites.update(sites=len(stats["site_labels"]), with_line=with_line)
    if stats is not None and not docs and not bad:
        # statistics only (--statistics-only): the ranks are its rows, all at MPI_Finalize
        rows = stats["rank_rows"]
        docs = [{"rank": r, "status": "disabled" if off else "complete", "reason": None,
                 "table": {"hash": None}} for r, off in zip(rows["rank"], rows["disabled"],
                                                           strict=True)]
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
        "ranks": CollectedRanks(stream, bad, resolver, documents),
        "missing_ranks": missing,
        "callsites": callsites,
        "job_file": stream.job,
        "job_stats": stats,
        "warnings": warnings,
    }


def collect_profile(sub: Path, setup: LaunchSetup, argv: list[str]) -> dict[str, Any]:
    """The profile-run document of a profiled launch's rank profiles (run/paired_launch.py
    launches it; here, not there, so that run/ does not import the profile)."""
    return collect(sub, ranks_expected=setup.ranks, app_argv=argv, cwd=os.getcwd(),
                   table=setup.table, forced=False, bins=None)
