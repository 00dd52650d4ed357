"""The profile analysis' call sites, (post → completion) pairs, waiting, advice and checks
as pandas DataFrames, for `mpi_overlap.load` (data_out.py; docs/profiler.md, "Data out").

Each frame is declared once, in FRAMES: where its rows are in the analysis document
(analysis.json, schema analysis-profile-v1) and its columns with their meaning. A frame
has its declared columns first, in that order, even when the profile lacks one (then
empty); any other field of the rows follows (advice's `evidence.*`, which differ by
rule). A frame whose rows the analysis does not have (waiting without `--trace`, checks
of profiles written before the checks) is absent. The numbers are the analysis', summed
over ranks as the report shows them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

# the measures of a ranking entry (profile/analysis/profile_values.py: cell_dict)
XFER_COLUMNS = (
    ("transfers", "transfers, summed over ranks"),
    ("xfer_s", "transfer time from the table, s"),
    ("min_s", "overlapped transfer time, lower bound, s"),
    ("max_s", "overlapped transfer time, upper bound, s"),
    ("nonoverlap_s", "transfer time certainly not overlapped (xfer_s − max_s), s"),
    ("min_pct", "lower bound in % of xfer_s"),
    ("max_pct", "upper bound in % of xfer_s"),
    ("share_pct", "share of the frame's non-overlapped time, %"),
    ("ranks", "ranks that have the entry"),
    ("worst_rank", "the rank losing most there (empty when none lost any)"),
)
WAIT_COLUMNS = (
    ("waiting_s", "time the calls waited for a late partner, s"),
    ("calls", "calls that waited"),
    ("share_pct", "share of the job's waiting, %"),
    ("late_sender_s", "of which: receives entered before their send was posted, s"),
    ("late_receiver_s", "of which: sends waiting for their receive to be posted, s"),
    ("collective_s", "of which: waiting for the last member of a collective, s"),
)
CHECK_COLUMNS = (
    ("transfers", "transfers judged"),
    ("xfer_s", "their transfer time, s"),
    ("flagged_transfers", "transfers whose table time does not fit their interval"),
    ("flagged_xfer_s", "their transfer time, s"),
    ("excess_s", "by how much they exceed their intervals, s"),
)


@dataclass(frozen=True)
class Frame:
    columns: tuple[tuple[str, str], ...]  # (column, meaning), in order
    source: tuple[str, ...] = ()  # keys to the list of rows in analysis.json
    # or: rows from several places, each marked in a column of its own: (column, value,
    # keys to a list of rows or to one row)
    parts: tuple[tuple[str, str, tuple[str, ...]], ...] = ()


FRAMES: dict[str, Frame] = {
    "call_sites": Frame(parts=(("role", "post", ("rankings", "post_sites")),
                               ("role", "completion", ("rankings", "end_sites"))), columns=(
        ("role", "post: the transfers posted there; completion: those completed there"),
        ("site", "the call site as the profile names it: file:line (function)"),
        ("fn", "the MPI function called there"),
        ("calls", "calls made there"),
        ("call_s", "time in those calls, s"),
        *XFER_COLUMNS)),
    "pairs": Frame(source=("rankings", "pairs"), columns=(
        ("post", "the call site that posted the transfers"),
        ("post_fn", "the MPI function called there"),
        ("end", "the call site that completed them"),
        ("end_fn", "the MPI function called there"),
        ("polled", "transfers with an MPI_Test-family call between post and completion"),
        *XFER_COLUMNS)),
    "waiting": Frame(source=("two_sided", "waiting", "ranks"), columns=(
        ("rank", "the rank"),
        ("waiting_s", "time its MPI calls waited for a late partner, s"),
        ("late_sender_s", "of which: late senders, s"),
        ("late_receiver_s", "of which: late receivers, s"),
        ("collective_s", "of which: collectives, s"),
        ("comp_s", "its computation, s"),
        ("call_s", "its time in MPI calls, s"),
        ("other_call_s", "MPI call time that was not waiting, s"),
        ("xfer_s", "its transfer time, s"),
        ("nonoverlap_s", "its non-overlapped transfer time, s"))),
    "waiting.by_function": Frame(source=("two_sided", "waiting", "functions"), columns=(
        ("fn", "the waiting call's MPI function"), *WAIT_COLUMNS)),
    "waiting.by_bin": Frame(source=("two_sided", "waiting", "bins"), columns=(
        ("label", "the message-size bin"), ("lo", "its lowest size, bytes"),
        ("hi", "its end (exclusive), bytes; empty for the open last bin"), *WAIT_COLUMNS)),
    "waiting.by_region": Frame(source=("two_sided", "waiting", "regions"), columns=(
        ("region", "the region the waiting call was in"), *WAIT_COLUMNS)),
    "advice": Frame(source=("advice",), columns=(
        ("rule", "the rule that gave it (profile/analysis/advice.py)"),
        ("bound_s", "the most it can hide or save, s"),
        ("text", "the advice as the report words it"),
        ("sites.post", "the posting call site it is about"),
        ("sites.end", "the completing call site it is about"),
        ("sites.bin", "the size bin it is about (eager-limit)"),
        ("sites.wait", "the call site that waited (imbalance)"))),
    "checks": Frame(parts=(("check", "all", ("checks",)),
                           ("check", "in-call", ("checks", "in_call")),
                           ("check", "across-calls", ("checks", "across_calls"))), columns=(
        ("check", "all (the job's verdict), in-call or across-calls"),
        *CHECK_COLUMNS,
        ("flagged_pct", "all: the flagged transfers' share of the transfer time, %"),
        ("threshold_pct", "all: above this share the bounds are in doubt, %"),
        ("flagged", "all: whether they are (flagged_pct > threshold_pct)"),
        ("calls", "in-call: calls holding a transfer"),
        ("call_s", "in-call: their time, s"),
        ("longest_s", "in-call: the sum over calls of their longest transfer, s"),
        ("calls_beyond", "in-call: calls whose longest transfer exceeds them"),
        ("beyond_s", "all, in-call: transfer time beyond what the wall clock allows, s"),
        ("unchecked", "in-call: transfers that could not be judged"))),
    "checks.by_rank": Frame(source=("checks", "ranks"), columns=(
        ("rank", "the rank"),
        ("xfer_s", "its transfer time, s"),
        ("flagged_transfers", "its flagged transfers"),
        ("flagged_xfer_s", "their transfer time, s"),
        ("flagged_pct", "their share of its transfer time, %"),
        ("beyond_s", "its transfer time beyond what the wall clock allows, s"),
        ("call_s", "its time in MPI calls, s"),
        ("in_call_xfer_s", "its in-call transfer time, s"),
        ("in_call_calls", "its calls holding a transfer"),
        ("in_call_call_s", "their time, s"),
        ("in_call_longest_s", "the sum over them of their longest transfer, s"),
        ("in_call_calls_beyond", "those whose longest transfer exceeds them"))),
    "checks.by_function": Frame(source=("checks", "by_function"), columns=(
        ("fn", "the MPI function"), ("check", "in-call or across-calls"), *CHECK_COLUMNS)),
    "checks.by_bin": Frame(source=("checks", "by_bin"), columns=(
        ("label", "the message-size bin"), ("lo", "its lowest size, bytes"),
        ("hi", "its end (exclusive), bytes"), ("check", "in-call or across-calls"),
        *CHECK_COLUMNS)),
}


def plain_fields(row: dict[str, Any]) -> dict[str, Any]:
    """A row's own figures, not the objects and lists it nests."""
    return {k: v for k, v in row.items() if not isinstance(v, (dict, list))}


def _at(doc: Any, keys: tuple[str, ...]) -> Any:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc


def _rows(analysis: dict[str, Any], frame: Frame) -> list[dict[str, Any]] | None:
    """The frame's rows; None when the analysis has none of its places."""
    parts = frame.parts or (("", "", frame.source),)
    rows, found = [], False
    for column, value, keys in parts:
        here = _at(analysis, keys)
        if isinstance(here, dict):  # one row
            here = [plain_fields(here)]
        if not isinstance(here, list):
            continue
        found = True
        mark = {column: value} if column else {}
        rows += [{**mark, **r} for r in here if isinstance(r, dict)]
    return rows if found else None


def profile_frames(analysis: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """The declared frames the profile analysis has rows for."""
    out = {}
    for name, frame in FRAMES.items():
        rows = _rows(analysis, frame)
        if rows is None:
            continue
        df = pd.json_normalize(rows) if rows else pd.DataFrame()
        declared = [c for c, _ in frame.columns]
        out[name] = df.reindex(columns=declared + [c for c in df.columns if c not in declared])
    return out
