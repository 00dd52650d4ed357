"""The rank documents of a profile run directory, wherever the library left them: the job
file rank 0 writes at MPI_Finalize (profile.job.jsonl: one rank's document per line, then
a line on the gather; native/profiler/mop_gather.h) and the per-rank files
(profile.rank-N.json: kept for small jobs or with --per-rank, and the snapshots of ranks
that never reached MPI_Finalize).

Where a rank has both, the document that says more wins: a final one (complete, incomplete,
disabled) over a snapshot (running); between two final ones, the job file's. Both come from
the same bytes when both are written at MPI_Finalize (tests/test_profile_job_file.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..json_input import max_bytes, parse_json, read_json

JOB_FILE = "profile.job.jsonl"
JOB_SCHEMA = "mpi-overlap/profile-job"
RANK_SCHEMA = "mpi-overlap/profile-rank"
RANK_FILE = re.compile(r"^profile\.rank-(\d+)\.json$")


@dataclass
class RankDocuments:
    docs: dict[int, dict[str, Any]] = field(default_factory=dict)  # by rank
    source: dict[int, str] = field(default_factory=dict)  # "job file" | the per-rank file's name
    job: dict[str, Any] | None = None  # the job file's last line (the gather), when whole
    problems: list[str] = field(default_factory=list)  # one line each, for warnings


def rank_files(run_dir: Path, pattern: re.Pattern[str] = RANK_FILE) -> dict[int, Path]:
    """The per-rank files of a run directory whose names match pattern (its group 1: the
    rank), by rank; by default the profile documents."""
    out = {}
    for p in run_dir.iterdir():
        m = pattern.match(p.name)
        if m:
            out[int(m.group(1))] = p
    return out


def _final(doc: dict[str, Any]) -> bool:
    return doc.get("status") != "running"


def _read_job_file(path: Path, out: RankDocuments) -> None:
    """Whole lines only: a job file cut by a kill keeps the documents before the cut. Each
    line is checked as json_input checks a file (size, UTF-8, nesting, version)."""
    limit = max_bytes()
    try:
        f = path.open("rb")
    except OSError as err:
        out.problems.append(f"{path.name}: cannot read it ({err.strerror})")
        return
    with f:
        for number, raw in enumerate(iter(lambda: f.readline(limit + 1), b""), 1):
            if not raw.endswith(b"\n"):
                if len(raw) > limit:
                    out.problems.append(f"{path.name}: line {number} is longer than the "
                                        f"{limit} bytes mpi-overlap reads; left out")
                    rest = raw
                    while rest and not rest.endswith(b"\n"):  # skip it, a bounded piece at a time
                        rest = f.readline(limit + 1)
                continue  # else the last line, cut by a kill: the missing trailer says so
            try:
                doc = parse_json(raw, f"{path.name}, line {number}")
            except UserError as err:
                out.problems.append(f"{err}; left out")
                continue
            schema = doc.get("schema")
            if schema == JOB_SCHEMA:
                out.job = doc
            elif schema == RANK_SCHEMA and isinstance(doc.get("rank"), int):
                out.docs[doc["rank"]] = doc
                out.source[doc["rank"]] = "job file"
            else:
                out.problems.append(f"{path.name}: line {number} is not a rank's profile; "
                                    "left out")
    if out.job is None:
        out.problems.append(
            f"{path.name} was cut before its last line (rank 0 stopped while writing it): "
            f"{len(out.docs)} rank document(s) read from it")


def read_rank_documents(run_dir: Path) -> RankDocuments:
    """Every rank's document of a profile run directory (see the module's docstring)."""
    out = RankDocuments()
    job_path = run_dir / JOB_FILE
    if job_path.is_file():
        _read_job_file(job_path, out)
    for rank, path in sorted(rank_files(run_dir).items()):
        have = out.docs.get(rank)
        if have is not None and _final(have):
            continue  # the job file's final document: a per-rank one is a copy or older
        try:
            doc = read_json(path)
        except UserError as err:
            out.problems.append(f"rank {rank}: {err}")
            continue
        if have is None or _final(doc):
            out.docs[rank] = doc
            out.source[rank] = path.name
    return out
