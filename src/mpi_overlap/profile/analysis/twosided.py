"""Both ends of every message, for a profile run with timeline traces (`profile --trace`):
the refined overlap bounds of matched point-to-point messages and the time ranks spent
waiting for a late partner (docs/method.md, "Both ends of a message" and "Waiting").

Input: the run's rank traces (profile/trace/reader.py), made into timelines
(profile/trace/timeline.py) and matched (profile/trace/match.py), and the rank profiles of
result.json. Output: the
"two_sided" object of the analysis document (analysis-profile-v1, profile/analysis/document.py):

* per rank, function, size bin and region: the profile's bounds with every matched
  message's one-sided bounds replaced by its two-sided ones (profile/analysis/twosided_bounds.py);
  transfers without a partner, collectives and one-sided operations keep theirs;
* waiting (profile/analysis/waits.py), beside computation, transfer and MPI call time;
* what could not be matched, and the clocks' alignment error every figure carries.

A run without traces, or with version-1 traces (no tags or communicators), gets a
"two_sided" object that says why there is nothing in it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...core.formatting import fmt_pct, fmt_time, pct_range
from .profile_values import bin_of, overlap_pcts
from .trace_clocks import Clocks
from .twosided_bounds import (
    Bounds,
    arrived_window,
    intersect,
    receiver_window,
    sender_window,
    window_bounds,
)

if TYPE_CHECKING:  # imported where used: the trace package imports analysis.profile
    from ...calibration.xfer_table import XferTable
    from ..trace.timeline import Message


class EagerParts(Protocol):
    """The transfer model's parts of a message priced at `xfer_s` for `nbytes`: (o_s,
    o_r) where its size moves eagerly, None where it does not or the table has no parts."""

    def __call__(self, nbytes: int, xfer_s: float) -> tuple[float, float] | None: ...


@dataclass
class Delta:
    """Sums of (two-sided − one-sided) bounds over refined transfers."""

    transfers: int = 0
    lo: float = 0.0
    hi: float = 0.0

    def add(self, two: Bounds, min1: float, max1: float) -> None:
        self.transfers += 1
        self.lo += two.lo - min1
        self.hi += two.hi - max1


@dataclass
class Refinement:
    by_rank: dict[int, Delta] = field(default_factory=lambda: defaultdict(Delta))
    by_fn: dict[str, Delta] = field(default_factory=lambda: defaultdict(Delta))
    by_bin: dict[tuple[int, int | None], Delta] = field(default_factory=lambda: defaultdict(Delta))
    by_region: dict[str, Delta] = field(default_factory=lambda: defaultdict(Delta))
    senders: int = 0
    receivers: int = 0
    receivers_early: int = 0  # windows reaching back before the receive's post
    # Receives inside one blocking call ([0, 0] from one end) whose lower bound from both
    # ends is above 0: that rests on the table's transfer time exceeding their call.
    in_call_raised: int = 0
    # Receives of eager messages whose data had arrived before their post: the receive
    # holds o_r, the rest lies before it (docs/method.md, "The transfer model's parts").
    receivers_arrived: int = 0
    clamped: int = 0
    inconsistent: int = 0  # a window shorter than zero: clocks beyond their stated error
    # Per end, when asked for (tests, known-answer checks): what was refined and how.
    records: list[Refined] | None = None


@dataclass(frozen=True)
class Refined:
    message: Message
    sender: bool
    window: tuple[float, float]  # aligned seconds
    one: Bounds  # the engine's one-sided bounds
    two: Bounds  # the reported two-sided bounds
    xfer_s: float


def _record(clocks: Clocks, m: Message) -> dict[str, Any] | None:
    if m.record is None:
        return None
    rec = clocks.tl[m.rank].trace.transfers[m.thread][m.record]
    return {"xfer_s": float(rec["xfer_s"]), "min_s": float(rec["min_s"]),
            "max_s": float(rec["max_s"]), "bytes": int(rec["bytes"]),
            "fn": int(rec["fn"]), "region": int(rec["region"])}


def refine(clocks: Clocks, pairs: list[tuple[Message, Message]],
           edges: list[int] | None, keep: bool = False,
           parts: EagerParts | None = None) -> Refinement:
    """Two-sided bounds of every matched message's two ends, as differences from the
    engine's one-sided bounds; `keep`: also each end's record; `parts`: the table's
    transfer model, for receives whose eager data had arrived before them."""
    out = Refinement(records=[] if keep else None)
    for s, r in pairs:
        eps = clocks.pair_error(s.rank, r.rank)
        if eps is None or r.t_done is None:
            continue
        post_s, post_r = clocks.s(s.rank, s.t_post), clocks.s(r.rank, r.t_post)
        done_r = clocks.s(r.rank, r.t_done)
        done_s = clocks.s(s.rank, s.t_done) if s.t_done is not None else None
        windows = (
            (s, sender_window(post_s, done_s, done_r, eps), True),
            (r, receiver_window(post_s, post_r, done_r, eps), False),
        )
        for m, win, sender in windows:
            rec = _record(clocks, m)
            if rec is None:
                continue
            a, b = win[0], win[1]
            if b < a:
                out.inconsistent += 1
                continue
            one = Bounds(rec["min_s"], rec["max_s"])
            calls = clocks.calls[(m.rank, m.thread)]
            eager = None if sender or parts is None else parts(rec["bytes"], rec["xfer_s"])
            arrived = None
            if eager is not None:
                o_s, o_r = eager
                arrived = arrived_window(post_s, done_s, clocks.s(r.rank, r.t_post),
                                         max(0.0, rec["xfer_s"] - o_s - o_r), eps)
            if arrived is not None:
                a, b = arrived
                two = window_bounds(calls, a, b, max(0.0, rec["xfer_s"] - eager[1]))
                out.receivers_arrived += 1
            else:
                two = window_bounds(calls, a, b, rec["xfer_s"])
            nested = sender or bool(win[2])  # type: ignore[misc]
            # Where both bound the same transfer, both hold: keep the tighter ends.
            two = intersect(one, two) if nested else two
            out.clamped += two.clamped
            if out.records is not None:
                out.records.append(Refined(m, sender, (a, b), one, two, rec["xfer_s"]))
            if sender:
                out.senders += 1
            else:
                out.receivers += 1
                out.receivers_early += not nested
                out.in_call_raised += m.blocking and two.lo > 0
            tr = clocks.tl[m.rank].trace
            for acc in (out.by_rank[m.rank], out.by_fn[tr.fn(rec["fn"])],
                        out.by_bin[bin_of(rec["bytes"], edges)],
                        out.by_region[tr.region(rec["region"])]):
                acc.add(two, one.lo, one.hi)
    return out


def _measures(xfer: float, lo: float, hi: float, d: Delta | None) -> dict[str, Any]:
    """The two-sided figures of a cell: the profile's plus its refinement's differences,
    kept inside [0, xfer] and ordered (sums of floats)."""
    lo2 = lo + (d.lo if d else 0.0)
    hi2 = hi + (d.hi if d else 0.0)
    hi2 = min(max(hi2, 0.0), xfer)
    lo2 = min(max(lo2, 0.0), hi2)
    min_pct, max_pct = overlap_pcts(xfer, lo2, hi2)
    return {"refined": d.transfers if d else 0, "min_s": lo2, "max_s": hi2,
            "nonoverlap_s": max(0.0, xfer - hi2), "min_pct": min_pct, "max_pct": max_pct}


def eager_parts(table: XferTable | None) -> EagerParts | None:
    """The parts of the table the run used (run_table.used_table), None when it has
    none."""
    if table is None or not table.parts:
        return None

    def lookup(nbytes: int, xfer_s: float) -> tuple[float, float] | None:
        # The class the engine priced the message with: the one whose time it recorded.
        for cls in table.classes:
            if abs(table.lookup(nbytes, cls) - xfer_s) <= 1e-9 * max(xfer_s, 1e-12):
                return table.eager_parts(cls, nbytes, xfer_s)
        return None

    return lookup


def _empty(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


def two_sided(run_dir: Path | None, analysis: dict[str, Any], edges: list[int] | None,
              table: XferTable | None = None) -> dict[str, Any] | None:
    """The "two_sided" object; None when the run wrote no trace at all. `table`: the one
    the run used (run_table.used_table), for its transfer model's parts."""
    if run_dir is None or not any(run_dir.glob("trace.rank-*.mopt")):
        return None
    from ...core.errors import UserError
    from ..trace.matched_run import OldTraces, read_matched
    from .waits import waiting

    try:
        run = read_matched(run_dir)
    except OldTraces:
        return _empty("the traces are of format version 1, which records no tags or "
                      "communicators: profile again with --trace to match messages")
    except UserError as err:
        return _empty(f"the traces cannot be read: {err}")
    timelines, matched = run.timelines, run.matched
    clocks = Clocks(timelines)
    ref = refine(clocks, matched.pairs, edges, parts=eager_parts(table))
    ranks = []
    for r in analysis["ranks"]:
        if not r["in_totals"]:
            continue
        ranks.append({"rank": r["rank"], "xfer_s": r["xfer_s"],
                      **_measures(r["xfer_s"], r["min_s"], r["max_s"],
                                  ref.by_rank.get(r["rank"]))})
    job_x = sum(r["xfer_s"] for r in ranks)
    job = {"xfer_s": job_x, **_measures(job_x, sum(r["min_s"] for r in ranks),
                                        sum(r["max_s"] for r in ranks), None)}
    job["refined"] = ref.senders + ref.receivers
    rankings = analysis["rankings"]
    tables = {
        "functions": {e["fn"]: _measures(e["xfer_s"], e["min_s"], e["max_s"],
                                         ref.by_fn.get(e["fn"]))
                      for e in rankings["functions"]},
        "bins": {e["label"]: _measures(e["xfer_s"], e["min_s"], e["max_s"],
                                       ref.by_bin.get((e["lo"], e["hi"])))
                 for e in rankings["bins"]},
        "regions": {e["region"]: _measures(e["xfer_s"], e["min_s"], e["max_s"],
                                           ref.by_region.get(e["region"]))
                    for e in rankings["regions"]},
    }
    errs = [e for e in clocks.err.values() if e is not None]
    unaligned = sorted(r for r, e in clocks.err.items() if e is None)
    return {
        "available": True,
        "reason": None,
        "clock_error_s": max(errs) if errs else None,
        "unaligned_ranks": unaligned,
        "matched": len(matched.pairs),
        "unmatched_sends": matched.unmatched_sends,
        "unmatched_receives": matched.unmatched_recvs,
        "unnamed": matched.unnamed,
        "collectives": len(matched.collectives),
        "collectives_mismatched": matched.coll_mismatched,
        "refined_senders": ref.senders,
        "refined_receivers": ref.receivers,
        "receivers_early": ref.receivers_early,
        "in_call_raised": ref.in_call_raised,
        "receivers_arrived": ref.receivers_arrived,
        "clamped": ref.clamped,
        "inconsistent": ref.inconsistent,
        "job": job,
        "ranks": ranks,
        "tables": tables,
        "waiting": waiting(clocks, matched, analysis, edges),
    }



def two_sided_findings(ts: dict[str, Any] | None) -> list[str]:
    """Sentences on both ends of every message, for the findings after the overlap one."""

    if ts is None:
        return []
    if not ts["available"]:
        return [f"Both ends of every message: not analysed ({ts['reason']})."]
    job, w = ts["job"], ts["waiting"]
    err = ts["clock_error_s"]
    unmatched = ts["unmatched_sends"] + ts["unmatched_receives"] + ts["unnamed"]
    out = [
        f"Both ends of every message ({ts['matched']} matched"
        + (f", {unmatched} ends without a partner" if unmatched else "")
        + f"; clocks aligned within ±{fmt_time(err)}): overlap "
        f"{pct_range(job['min_pct'], job['max_pct'])} of the transfer time, at least "
        f"{fmt_time(job['nonoverlap_s'])} not overlapped ({ts['refined_senders']} sends and "
        f"{ts['refined_receivers']} receives refined, {ts['receivers_early']} of the "
        "receives with data that could have arrived before they were posted)."
    ]
    if ts["in_call_raised"]:
        out.append(
            f"{ts['in_call_raised']} blocking receives got a lower bound above 0 from both "
            "ends: their data may have arrived before them, or the table overstates their "
            "transfer time (each took less than it); `mpi-overlap calibrate` measures the "
            "table again."
        )
    if w["total_s"] > 0:
        out.append(
            f"Waiting for late partners: {fmt_time(w['total_s'])} in {w['calls']} calls "
            f"(late senders {fmt_time(w['late_sender_s'])}, late receivers "
            f"{fmt_time(w['late_receiver_s'])}, collectives {fmt_time(w['collective_s'])}"
            + (f"; most in {w['functions'][0]['fn']}, "
               f"{fmt_pct(w['functions'][0]['share_pct'])}" if w["functions"] else "")
            + ")."
        )
    else:
        out.append("Waiting for late partners: none found in the matched events.")
    return out
