"""What a profile run's analysis and report say about its timeline traces: the files each
rank wrote (from the "trace" object of its profile document) and, as warnings, where the
size cap cut a trace short or no trace could be written."""

from __future__ import annotations

from typing import Any

from ...core.formatting import fmt_mib
from ..analysis.profile_values import rank_list


def trace_summary(docs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The analysis document's "trace" entry; None when no rank was asked for a trace."""
    files = []
    for d in sorted(docs, key=lambda d: int(d.get("rank", -1))):
        t = d.get("trace")
        if not isinstance(t, dict):
            continue
        files.append({
            "rank": int(d.get("rank", -1)),
            "file": t.get("file"),
            "bytes": int(t.get("bytes") or 0),
            "cap_bytes": int(t.get("cap_bytes") or 0),
            "events": int(t.get("events") or 0),
            "dropped_events": int(t.get("dropped_events") or 0),
            "dropped_transfers": int(t.get("dropped_transfers") or 0),
            "truncated": bool(t.get("truncated")),
            "error": t.get("error"),
        })
    if not files:
        return None
    return {
        "files": files,
        "bytes": sum(f["bytes"] for f in files),
        "truncated_ranks": [f["rank"] for f in files if f["truncated"]],
        "failed_ranks": [f["rank"] for f in files if f["error"]],
    }


def trace_finding(summary: dict[str, Any] | None) -> list[str]:
    if not summary:
        return []
    written = [f for f in summary["files"] if f["file"]]
    if not written:
        return []
    events = sum(f["events"] for f in written)
    return [f"Timeline traces: {len(written)} files (trace.rank-N.mopt, {events} events, "
            f"{fmt_mib(summary['bytes'])} in all); `mpi-overlap trace <run directory> "
            "--perfetto timeline.json` makes a timeline for ui.perfetto.dev."]


def trace_warnings(summary: dict[str, Any] | None) -> list[str]:
    if not summary:
        return []
    out = []
    for f in summary["files"]:
        if f["truncated"]:
            out.append(f"rank {f['rank']}: trace truncated at {fmt_mib(f['cap_bytes'])}, "
                       f"{f['dropped_events']} events not written (raise --trace-cap)")
    failed = [f for f in summary["files"] if f["error"]]
    if failed:
        out.append(f"rank(s) {rank_list(f['rank'] for f in failed)}: trace incomplete or "
                   f"missing: {failed[0]['error']}")
    return out
