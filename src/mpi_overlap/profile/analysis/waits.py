"""Waiting apart from transfer: the time MPI calls spent waiting for a late partner, from
the matched events of a traced run (docs/method.md, "Waiting"). The patterns are
Scalasca's wait states (Geimer et al., "The Scalasca performance toolset architecture",
2010; Böhme et al., "Identifying the root causes of wait states", 2010):

* late sender: a call that completed a receive (MPI_Recv, or the Wait/Test of an
  MPI_Irecv) was entered before the matching send was posted: it waited from its enter
  to the send's post;
* late receiver: a call that completed a send was still running when the matching
  receive was posted (the send waited for it: rendezvous or synchronous); it waited from
  its enter to the receive's post. An eager send that returned before the receive was
  posted waited for nothing;
* waiting at a collective: for an all-to-all kind (MPI_Barrier, MPI_Allreduce,
  MPI_Allgather(v), MPI_Alltoall(v,w), MPI_Reduce_scatter(_block)) every member waits
  from its enter to the last member's enter; for one-to-all (MPI_Bcast, MPI_Scatter(v))
  the other members wait for the root's enter; for all-to-one (MPI_Reduce,
  MPI_Gather(v)) the root waits for the last other member's enter.

A call that completes several messages (MPI_Waitall) waits as long as its longest wait,
not their sum. Calls made while monitoring was off (MPI_Pcontrol(0)) are left out, as the
profile leaves out their time. Each wait is cut to its call's duration, and is a point
estimate on the aligned clocks: it may be off by the two ranks' alignment error (given with
it).
Non-blocking and persistent collectives, scans and neighbourhood collectives are not
analysed. Pure: timelines in, a JSON-ready dict out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .profile_values import bin_label, bin_of, share

if TYPE_CHECKING:
    from ..trace.match import Matched
    from .trace_clocks import Clocks

PATTERNS = ("late_sender", "late_receiver", "collective")
NXN = frozenset({"barrier", "allreduce", "allgather", "allgatherv", "alltoall", "alltoallv",
                 "alltoallw", "reduce_scatter", "reduce_scatter_block"})
ONE_TO_N = frozenset({"bcast", "scatter", "scatterv"})
N_TO_ONE = frozenset({"reduce", "gather", "gatherv"})


@dataclass
class Wait:
    rank: int
    fn: str
    region: str
    nbytes: int
    pattern: str
    seconds: float
    enter_s: float  # the waiting call's enter, aligned seconds


class _Calls:
    """The longest wait of each call, keyed by (rank, thread, enter ticks)."""

    def __init__(self) -> None:
        self.calls: dict[tuple[int, int, int], Wait] = {}

    def note(self, key: tuple[int, int, int], wait: Wait) -> None:
        if wait.seconds <= 0:
            return
        old = self.calls.get(key)
        if old is None or wait.seconds > old.seconds:
            self.calls[key] = wait


def _clip(w: float, dur: float) -> float:
    return min(max(w, 0.0), max(dur, 0.0))


def _p2p(clocks: Clocks, matched: Matched, calls: _Calls) -> None:
    for s, r in matched.pairs:
        if clocks.pair_error(s.rank, r.rank) is None:
            continue
        post_s, post_r = clocks.s(s.rank, s.t_post), clocks.s(r.rank, r.t_post)
        for m, other_post, pattern in ((r, post_s, "late_sender"), (s, post_r, "late_receiver")):
            if m.done_enter is None or m.t_done is None or not m.done_monitored:
                continue
            a, b = clocks.s(m.rank, m.done_enter), clocks.s(m.rank, m.t_done)
            if pattern == "late_receiver" and b <= other_post:
                continue  # returned before the receive was posted: it did not wait
            tr = clocks.tl[m.rank].trace
            calls.note((m.rank, m.thread, m.done_enter),
                       Wait(m.rank, tr.fn(m.done_fn), tr.region(m.done_region), m.bytes,
                            pattern, _clip(other_post - a, b - a), a))


def _collectives(clocks: Clocks, matched: Matched, calls: _Calls) -> int:
    """Waits at blocking collectives; returns how many instances were analysed."""
    done = 0
    for (comm, _), inst in matched.collectives.items():
        some = next(iter(inst.values()))
        tr = clocks.tl[some.rank].trace
        members = tr.comms.get(comm)
        op = tr.kind(some.kind)
        if (members is None or members.remote or len(inst) != len(members.local)
                or not all(c.blocking and c.t_exit is not None for c in inst.values())
                or not all(c.monitored for c in inst.values())
                or any(clocks.err.get(rank) is None for rank in inst)):
            continue
        enter = {rank: clocks.s(rank, c.t_enter) for rank, c in inst.items()}
        if op in NXN:
            until = {rank: max(enter.values()) for rank in inst}
        elif op in ONE_TO_N or op in N_TO_ONE:
            root = members.world_rank(some.root)
            if root not in enter:
                continue
            if op in ONE_TO_N:
                until = {rank: enter[root] for rank in inst if rank != root}
            else:
                others = [t for rank, t in enter.items() if rank != root]
                until = {root: max(others)} if others else {}
        else:
            continue
        done += 1
        for rank, t in until.items():
            c = inst[rank]
            assert c.t_exit is not None
            ctr = clocks.tl[rank].trace
            calls.note((rank, c.thread, c.t_enter),
                       Wait(rank, ctr.fn(c.fn), ctr.region(c.region), c.bytes, "collective",
                            _clip(t - enter[rank], clocks.s(rank, c.t_exit) - enter[rank]),
                            enter[rank]))
    return done


def _ranked(cells: dict[Any, list[Wait]], total: float, name: str) -> list[dict[str, Any]]:

    rows = []
    for key, ws in cells.items():
        secs = sum(w.seconds for w in ws)
        row: dict[str, Any] = {name: key} if name != "bin" else {
            "lo": key[0], "hi": key[1], "label": bin_label(key[0], key[1])}
        row.update({"waiting_s": secs, "calls": len(ws), "share_pct": share(secs, total),
                    **{f"{p}_s": sum(w.seconds for w in ws if w.pattern == p)
                       for p in PATTERNS}})
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["waiting_s"], str(r.get(name, r.get("lo")))))




def call_waits(clocks: Clocks, matched: Matched) -> tuple[list[Wait], int]:
    """Every call that waited, with its longest wait, in the order of its enter; and how
    many collective instances were analysed."""
    calls = _Calls()
    _p2p(clocks, matched, calls)
    coll = _collectives(clocks, matched, calls)
    return sorted(calls.calls.values(), key=lambda w: (w.rank, w.enter_s)), coll


def waiting(clocks: Clocks, matched: Matched, analysis: dict[str, Any],
            edges: list[int] | None) -> dict[str, Any]:
    waits, coll = call_waits(clocks, matched)
    total = sum(w.seconds for w in waits)
    by_fn: dict[str, list[Wait]] = defaultdict(list)
    by_bin: dict[tuple[int, int | None], list[Wait]] = defaultdict(list)
    by_region: dict[str, list[Wait]] = defaultdict(list)
    by_rank: dict[int, list[Wait]] = defaultdict(list)
    for w in waits:
        by_fn[w.fn].append(w)
        by_bin[bin_of(w.nbytes, edges)].append(w)
        by_region[w.region].append(w)
        by_rank[w.rank].append(w)
    ranks = []
    for r in analysis["ranks"]:
        if not r["in_totals"]:
            continue
        ws = by_rank.get(r["rank"], [])
        secs = sum(w.seconds for w in ws)
        ranks.append({
            "rank": r["rank"], "waiting_s": secs,
            **{f"{p}_s": sum(w.seconds for w in ws if w.pattern == p) for p in PATTERNS},
            "comp_s": r["comp_s"], "call_s": r["call_s"], "xfer_s": r["xfer_s"],
            "nonoverlap_s": r["nonoverlap_s"],
            "other_call_s": max(0.0, r["call_s"] - secs),
        })
    errs = [e for e in clocks.err.values() if e is not None]
    return {
        "total_s": total,
        **{f"{p}_s": sum(w.seconds for w in waits if w.pattern == p) for p in PATTERNS},
        "calls": len(waits),
        "collectives_analysed": coll,
        "clock_error_s": max(errs) if errs else None,
        "ranks": ranks,
        "functions": _ranked(by_fn, total, "fn"),
        "bins": _ranked(by_bin, total, "bin"),
        "regions": _ranked(by_region, total, "region"),
    }
