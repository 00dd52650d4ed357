"""`mpi-overlap trace RUN_DIR --perfetto out.json`: every rank's timeline trace of a run
directory into one Chrome trace-event document for ui.perfetto.dev, and what the user
should know about it (ranks without a trace, traces cut by the cap or by a crash, how
well the clocks were aligned, messages left without a partner).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import UserError
from ...core.file_output import open_atomic
from ...core.formatting import count_of, fmt_mib, fmt_time
from ..analysis.profile_values import rank_list
from ..documents.rank_documents import rank_files
from .perfetto import Summary, to_chrome
from .reader import RankTrace, read_trace

TRACE_FILE = re.compile(r"^trace\.rank-(\d+)\.mopt$")


def read_run(run_dir: Path) -> list[RankTrace]:
    if not run_dir.is_dir():
        raise UserError(f"{run_dir} is not a run directory")
    files = rank_files(run_dir, TRACE_FILE)
    if not files:
        raise UserError(f"no timeline trace in {run_dir} (trace.rank-N.mopt): profile with "
                        "--trace, e.g. mpi-overlap profile --trace -n 2 -- ./app")
    traces = []
    for rank, path in sorted(files.items()):
        tr = read_trace(path)
        if tr.rank != rank:
            raise UserError(f"{path}: the header says rank {tr.rank}, the name rank {rank}")
        traces.append(tr)
    return traces


def notes_of(traces: list[RankTrace]) -> list[str]:
    """What the timeline does not show, one sentence each."""
    notes = []
    size = max(t.size for t in traces)
    missing = sorted(set(range(size)) - {t.rank for t in traces})
    if missing:
        notes.append(f"ranks {rank_list(missing)} of {size} left no trace")
    open_ = [t.rank for t in traces if t.end is None]
    if open_:
        notes.append(f"rank(s) {rank_list(open_)} stopped before MPI_Finalize: their traces "
                     "end at their last flush")
    for t in traces:
        e = t.end
        if e is not None and e.truncated:
            notes.append(f"rank {t.rank}: trace truncated at {fmt_mib(e.cap_bytes)} (the "
                         f"cap), {e.dropped_events} events and {e.dropped_transfers} transfers "
                         "not written")
    unaligned = [t.rank for t in traces if t.sync_rtt_s < 0]
    if unaligned:
        notes.append(f"rank(s) {rank_list(unaligned)}: clock not aligned with rank 0's")
    rtts = [t.sync_rtt_s for t in traces if t.sync_rtt_s > 0]
    if rtts:
        notes.append(f"ranks aligned to rank 0's clock within ±{fmt_time(max(rtts) / 2)} "
                     "(half the best ping-pong round trip)")
    return notes


@dataclass(frozen=True)
class Converted:
    out: Path
    summary: Summary


def convert_run(run_dir: Path, out: Path) -> Converted:
    traces = read_run(run_dir)
    if not out.parent.is_dir():
        raise UserError(f"cannot write {out}: {out.parent} is not a directory")
    with open_atomic(out) as fh:
        summary = to_chrome(traces, fh, notes_of(traces))
    return Converted(out, summary)


def describe(c: Converted) -> list[str]:
    s = c.summary
    counts = ", ".join(count_of(n, what) for n, what in (
        (s.ranks, "rank"), (s.threads, "thread"), (s.calls, "MPI call"),
        (s.transfers, "transfer"), (s.flows, "message flow")))
    lines = [f"wrote {c.out}: {counts}; open it in https://ui.perfetto.dev"]
    lines += [f"note: {n}" for n in s.notes]
    return lines
