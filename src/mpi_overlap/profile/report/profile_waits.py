"""Profile runs with timeline traces: both ends of every message and waiting apart from
transfer (the analysis document's "two_sided" object; profile/analysis/twosided.py), as Grids
that the profile report (profile_table.py) shows in the terminal and in report.html.

- per rank: computation, MPI call time split into waiting (by pattern) and the rest,
  transfer time and the non-overlapped time and overlap range from one end and from both;
- waiting by the waiting call's function, by message-size bin and by region;
- the overlap range from both ends as a column of the rankings by function, bin and
  region, and rows of the job table.
"""

from __future__ import annotations

from typing import Any

from ...core.formatting import DASH, fmt_pct_cell, fmt_range, fmt_time
from .profile_grid import Grid, fint, top_rows

WAIT_MEANING = (
    "Waiting: time MPI calls spent waiting for a late partner, from both ends of every "
    "message (late sender: a receive entered before its send was posted; late receiver: a "
    "send still running when its receive was posted; collectives: waiting for the last "
    "member to arrive). Point estimates on the aligned clocks, within ±{err}."
)
BOTH = "each message's transfer time is counted on its sender and on its receiver"


def available(a: dict[str, Any]) -> dict[str, Any] | None:
    ts = a.get("two_sided")
    return ts if isinstance(ts, dict) and ts.get("available") else None


def overlap_range(a: dict[str, Any], measured: str) -> str:
    """The job table's overlap range: the in-call wording where 0–0 % measured nothing."""
    from ..analysis.headline import all_in_call, overlap_range_words

    if all_in_call(a):
        return overlap_range_words(a)
    return f"{measured} % of transfer time"


def job_rows(a: dict[str, Any]) -> list[tuple[str, str]]:
    """Rows for the job table: the two-sided overlap and waiting, or why there are none."""
    ts = a.get("two_sided")
    if not isinstance(ts, dict):
        return [("both ends", "not analysed: profile with --trace")]
    if not ts.get("available"):
        return [("both ends", f"not analysed: {ts.get('reason')}")]
    job, w = ts["job"], ts["waiting"]
    return [
        ("overlap, both ends",
         f"{fmt_range(job['min_pct'], job['max_pct'], '.1f')} % of transfer time; "
         f"not overlapped at least {fmt_time(job['nonoverlap_s'])} ({ts['matched']} messages "
         f"matched, clocks within ±{fmt_time(ts['clock_error_s'])})"),
        ("waiting", f"{fmt_time(w['total_s'])}: late senders {fmt_time(w['late_sender_s'])}, late "
         f"receivers {fmt_time(w['late_receiver_s'])}, collectives {fmt_time(w['collective_s'])}"),
    ]


def in_call_note(a: dict[str, Any]) -> str | None:
    """For the rankings: what a 0.0–0.0 of in-call transfers means; None without any."""
    if not (a.get("cases") or {}).get("in-call"):
        return None
    return ("0.0–0.0 where every transfer began and ended inside one blocking call (MPI_Send, "
            "MPI_Recv, MPI_Sendrecv, blocking collectives): this layer cannot see into the "
            "call, so it is no measured absence of overlap"
            + ("; the column from both ends shows what the other end proves"
               if available(a) else "; profile with --trace for what the other end proves"))


def ranking_cell(a: dict[str, Any], key: str, name: str) -> str | None:
    """The two-sided overlap % of one ranking entry; None without a trace."""
    ts = available(a)
    if ts is None:
        return None
    cell = (ts.get("tables") or {}).get(key, {}).get(name)
    return DASH if cell is None else fmt_range(cell["min_pct"], cell["max_pct"], ".1f")


def rank_grid(a: dict[str, Any], label: str, *, terminal: bool) -> Grid:
    """Per rank; the terminal leaves out the split of waiting by pattern (report.html and
    the waiting tables have it)."""
    ts = available(a)
    assert ts is not None
    w = {r["rank"]: r for r in ts["waiting"]["ranks"]}
    two = {r["rank"]: r for r in ts["ranks"]}
    headers: tuple[str, ...] = ("rank", "computation", "MPI calls", "waiting")
    if not terminal:
        headers += ("late sender", "late receiver", "collectives", "other MPI")
    headers += ("transfer", "not overlapped: one end → both", "overlap %: one end → both")
    rows = []
    for r in a["ranks"]:
        if not r["in_totals"]:
            continue
        wr, tr = w.get(r["rank"], {}), two.get(r["rank"], {})
        row: tuple[str, ...] = (str(r["rank"]), fmt_time(r["comp_s"]), fmt_time(r["call_s"]),
                                fmt_time(wr.get("waiting_s")))
        if not terminal:
            row += (fmt_time(wr.get("late_sender_s")), fmt_time(wr.get("late_receiver_s")),
                    fmt_time(wr.get("collective_s")), fmt_time(wr.get("other_call_s")))
        one_end = fmt_range(r["min_pct"], r["max_pct"], ".1f")
        row += (fmt_time(r["xfer_s"]),
                f"{fmt_time(r['nonoverlap_s'])} → {fmt_time(tr.get('nonoverlap_s'))}",
                f"{one_end} → {fmt_range(tr.get('min_pct'), tr.get('max_pct'), '.1f')}")
        rows.append(row)
    note = (WAIT_MEANING.format(err=fmt_time(ts["clock_error_s"])) + f" Transfer time: {BOTH}."
            + _unmatched_note(ts))
    return Grid(f"{label} — computation, waiting and transfer per rank (both ends)",
                headers, rows, note=note)


def _unmatched_note(ts: dict[str, Any]) -> str:
    parts = []
    if ts["unmatched_sends"] or ts["unmatched_receives"]:
        parts.append(f"{ts['unmatched_sends']} sends and {ts['unmatched_receives']} receives "
                     "without a partner keep their one-sided bounds")
    if ts["unnamed"]:
        parts.append(f"{ts['unnamed']} ends had no communicator or tag recorded")
    if ts["unaligned_ranks"]:
        parts.append(f"ranks {ts['unaligned_ranks']} have no clock alignment at both ends "
                     "of the run: their messages keep one-sided bounds and no waiting")
    if ts["inconsistent"]:
        parts.append(f"{ts['inconsistent']} windows came out empty (clocks off by more than "
                     "their stated error): one-sided bounds kept")
    return (" " + "; ".join(parts) + ".") if parts else ""


WAIT_TITLE = {"functions": "function", "bins": "size", "regions": "region"}
WAIT_NAME = {"functions": "fn", "bins": "label", "regions": "region"}


def wait_grid(a: dict[str, Any], label: str, key: str, limit: int | None = None) -> Grid:
    ts = available(a)
    assert ts is not None
    entries, note = top_rows(list(ts["waiting"][key]), limit)
    rows = [(str(e[WAIT_NAME[key]]), fmt_time(e["waiting_s"]),
             fmt_pct_cell(e["share_pct"]), fint(e["calls"]),
             fmt_time(e["late_sender_s"]), fmt_time(e["late_receiver_s"]),
             fmt_time(e["collective_s"]))
            for e in entries]
    if key == "functions":
        note = "; ".join(x for x in (note, "the function of the call that waited") if x)
    elif key == "bins":
        note = "; ".join(x for x in (note, "the size of the message (or collective) waited "
                                           "for") if x)
    return Grid(f"{label} — waiting by {WAIT_TITLE[key]}",
                (WAIT_TITLE[key], "waiting", "share %", "calls", "late sender",
                 "late receiver", "collectives"), rows, note=note)


def grids(a: dict[str, Any], label: str, *, terminal: bool) -> list[Grid]:
    """The grids of this module for a run; none without a two-sided analysis."""
    ts = available(a)
    if ts is None:
        return []
    top = 10 if terminal else None
    out = [rank_grid(a, label, terminal=terminal)]
    if ts["waiting"]["total_s"] > 0:
        out += [wait_grid(a, label, key, top) for key in ("functions", "bins", "regions")]
    return out
