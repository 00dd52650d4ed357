"""The rank documents of a profile run directory, wherever the library left them: the job
file rank 0 writes at MPI_Finalize (profile.job.jsonl: one rank's document per line, then
a line on the gather; native/profiler/mop_gather.h) and the per-rank files
(profile.rank-N.json: kept for small jobs or with --per-rank, and the snapshots of ranks
that never reached MPI_Finalize).

Where a rank has both, the document that says more wins: a final one (complete, incomplete,
disabled) over a snapshot (running); between two final ones, the job file's. Both come from
the same bytes when both are written at MPI_Finalize (tests/test_profile_job_file.py).

RankDocumentStream goes through them one at a time in rank order, as often as asked, and
holds none: only where each rank's line is in the job file (found without parsing the
lines: the first `"rank":` of a rank document's line is its own, since "schema", "status"
and "reason" come before it and no JSON string holds an unescaped quote)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ...core.errors import UserError
from ...core.json_input import max_bytes, parse_json, read_json

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


_LINE_SCHEMA = re.compile(rb'^\{\s*"schema":\s*"mpi-overlap/profile-(rank|job)"')
_LINE_RANK = re.compile(rb'"rank":\s*(\d{1,9})[,}]')


class RankDocumentStream:
    """Every rank's document of a run directory, one at a time in rank order: iterating
    yields (rank, document, source), source being "job file" or the per-rank file's name.
    `job` is the job file's last line (None when there is none or it was cut);
    `problems` what could not be read, one line each (each said once, however often the
    stream is gone through)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.job: dict[str, Any] | None = None
        self.problems: list[str] = []
        self._job_path = run_dir / JOB_FILE
        self._lines: dict[int, tuple[int, int, int]] = {}  # rank: (offset, length, line)
        self._files = rank_files(run_dir)
        if self._job_path.is_file():
            self._index_job_file()

    def _problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)

    def _index_job_file(self) -> None:
        """Where each rank's line is; the last line parsed (the gather), and every line
        that is neither checked now as json_input checks a file (size, UTF-8, nesting,
        version). A line cut by a kill is left out, and the missing last line says so."""
        name, limit = self._job_path.name, max_bytes()
        try:
            f = self._job_path.open("rb")
        except OSError as err:
            self._problem(f"{name}: cannot read it ({err.strerror})")
            return
        with f:
            offset, number = 0, 0
            while raw := f.readline(limit + 1):
                number += 1
                at, offset = offset, offset + len(raw)
                if not raw.endswith(b"\n"):
                    if len(raw) > limit:
                        self._problem(f"{name}: line {number} is longer than the {limit} bytes "
                                      "mpi-overlap reads; left out")
                        while raw and not raw.endswith(b"\n"):  # skip it, a piece at a time
                            raw = f.readline(limit + 1)
                            offset += len(raw)
                    continue  # else the last line, cut by a kill: the missing trailer says so
                kind = _LINE_SCHEMA.match(raw)
                rank = _LINE_RANK.search(raw) if kind and kind.group(1) == b"rank" else None
                if rank:
                    self._lines[int(rank.group(1))] = (at, len(raw), number)
                    continue
                try:
                    doc = parse_json(raw, f"{name}, line {number}")
                except UserError as err:
                    self._problem(f"{err}; left out")
                    continue
                if doc.get("schema") == JOB_SCHEMA:
                    self.job = doc
                else:
                    self._problem(f"{name}: line {number} is not a rank's profile; left out")
        if self.job is None:
            self._problem(f"{name} was cut before its last line (rank 0 stopped while writing "
                          f"it): {len(self._lines)} rank document(s) read from it")

    def _job_doc(self, f: BinaryIO, rank: int) -> dict[str, Any] | None:
        offset, length, number = self._lines[rank]
        f.seek(offset)
        try:
            doc = parse_json(f.read(length), f"{self._job_path.name}, line {number}")
        except UserError as err:
            self._problem(f"{err}; left out")
            return None
        return doc if isinstance(doc.get("rank"), int) else None

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any], str]]:
        ranks = sorted(set(self._lines) | set(self._files))
        with contextlib.ExitStack() as stack:
            f = None
            if self._lines:
                try:
                    f = stack.enter_context(self._job_path.open("rb"))
                except OSError as err:  # gone since it was indexed: the per-rank files stand
                    self._problem(f"{self._job_path.name}: cannot read it ({err.strerror})")
            for rank in ranks:
                have = self._job_doc(f, rank) if f is not None and rank in self._lines else None
                if have is not None and _final(have):
                    # the job file's final document: a per-rank one is a copy or older
                    yield rank, have, "job file"
                    continue
                path = self._files.get(rank)
                if path is not None:
                    try:
                        doc = read_json(path)
                    except UserError as err:
                        self._problem(f"rank {rank}: {err}")
                    else:
                        if have is None or _final(doc):
                            yield rank, doc, path.name
                            continue
                if have is not None:
                    yield rank, have, "job file"


def read_rank_documents(run_dir: Path) -> RankDocuments:
    """Every rank's document of a profile run directory, all at once (small runs: the
    benchmarks that read their profile; see RankDocumentStream for many ranks)."""
    stream = RankDocumentStream(run_dir)
    out = RankDocuments()
    for rank, doc, source in stream:
        out.docs[rank] = doc
        out.source[rank] = source
    out.job, out.problems = stream.job, stream.problems
    return out
