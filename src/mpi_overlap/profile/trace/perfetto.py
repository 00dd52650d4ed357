"""Rank traces → one Chrome trace-event JSON document (the "JSON trace format" that
ui.perfetto.dev and chrome://tracing open); docs/profiler.md, "Timeline traces".

- each rank is a process ("rank N"), each of its threads a thread track;
- every MPI call is a complete slice ("X") named by its function, nested calls inside;
  user regions are slices too (category "region"), Pcontrol an instant;
- every transfer is an async slice (b/e) on its own track, named by its function, size
  and the overlap bounds the profiler computed for it (the same figures in its args);
- messages are flows (s → f) from the send's posting call to the receive's completing
  call: matched by MPI's rules (communicator, tag, non-overtaking order; profile/trace/match.py)
  in version-2 traces, per (sender, receiver, bytes) in posting order in version-1 ones.

Times are microseconds on rank 0's clock (RankTrace.seconds), from the earliest event.
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from ...core.formatting import fmt_time
from ...core.sizes import format_size
from .reader import (
    CASE_ACROSS,
    CASE_BEGIN_ONLY,
    CASE_END_ONLY,
    CASE_IN_CALL,
    CASE_NAMES,
    EV_ENTER,
    EV_EXIT,
    EV_PCONTROL,
    EV_REGION_BEGIN,
    EV_REGION_END,
    FLAG_CLAMPED,
    FLAG_HAS_KEY,
    KIND_RECV,
    KIND_SEND,
    RankTrace,
)

NS = 1e-3  # one nanosecond in microseconds: flow ends sit this far inside their slices
BLOCK = 1 << 18  # events converted at a time (bounds the Python objects alive at once)


@dataclass
class Calls:
    """One thread's MPI calls: outermost ones sorted, for finding the call around a time."""

    enter: list[int] = field(default_factory=list)  # ticks
    exit: list[int] = field(default_factory=list)

    def around(self, t: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self.enter, t) - 1
        if i >= 0 and self.exit[i] >= t:
            return self.enter[i], self.exit[i]
        return None


@dataclass
class Endpoint:
    """One side of a message: where the flow attaches (pid, tid, µs inside a call)."""

    order: float  # posting time (s), the matching order
    pid: int
    tid: int
    ts: float


@dataclass
class Summary:
    ranks: int = 0
    threads: int = 0
    calls: int = 0
    transfers: int = 0
    flows: int = 0
    unmatched_sends: int = 0
    unmatched_recvs: int = 0
    unpaired_exits: int = 0
    notes: list[str] = field(default_factory=list)


def pid_of(rank: int) -> int:
    return rank + 1  # pid 0 is the idle process in Perfetto's model


def tid_of(rank: int, thread: int) -> int:
    return pid_of(rank) * 65536 + (thread % 65536)  # unique across ranks, as Linux tids


class _Sink:
    """The traceEvents array, written as it is made: a run's trace can hold millions of
    calls, too many to keep as Python objects."""

    def __init__(self, fh: TextIO) -> None:
        self.fh = fh
        self.first = True

    def raw(self, text: str) -> None:
        self.fh.write(text if self.first else "," + text)
        self.first = False

    def append(self, ev: dict[str, Any]) -> None:
        self.raw(json.dumps(ev, separators=(",", ":")))


class _Converter:
    def __init__(self, traces: list[RankTrace], fh: TextIO) -> None:
        self.traces = traces
        self.fh = fh
        self.out = _Sink(fh)
        self.quoted: dict[tuple[int, int], str] = {}  # (rank, fn) -> JSON string of its name
        self.summary = Summary(ranks=len(traces))
        self.sends: dict[tuple[int, int, int], list[Endpoint]] = defaultdict(list)
        self.recvs: dict[tuple[int, int, int], list[Endpoint]] = defaultdict(list)
        self.calls: dict[tuple[int, int], Calls] = {}
        # Version-2 traces record what MPI matches messages by.
        self.by_rules = bool(traces) and all(t.version >= 2 for t in traces)
        self.flow_bytes: dict[tuple[int, int, int], int] = {}  # by_rules: each pair's size
        starts = [float(np.min(tr.seconds(ev["t"]))) for tr in traces
                  for ev in tr.events.values() if len(ev)]
        starts += [float(np.min(tr.seconds(x["t_begin"][x["t_begin"] > 0])))
                   for tr in traces for x in tr.transfers.values() if (x["t_begin"] > 0).any()]
        self.t0 = min(starts) if starts else 0.0

    def us(self, tr: RankTrace, ticks: int) -> float:
        return round((float(tr.seconds(ticks)) - self.t0) * 1e6, 3)

    # ---------------------------------------------------------------- threads

    def thread(self, tr: RankTrace, thread: int) -> Calls:
        pid, tid = pid_of(tr.rank), tid_of(tr.rank, thread)
        label = f"thread {thread}" + (" (MPI_Init)" if thread == 0 else "")
        self.out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                         "args": {"name": label}})
        self.out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                         "args": {"sort_index": thread}})
        calls = Calls()
        ev = tr.events.get(thread)
        if ev is None or not len(ev):
            return calls
        last = self.us(tr, int(ev["t"].max()))
        last_tick = int(ev["t"].max())
        stack: list[tuple[float, int, int]] = []  # open calls: (µs, tick, fn)
        regions: list[tuple[float, int]] = []  # open regions: (µs, region id)
        for lo in range(0, len(ev), BLOCK):
            block = ev[lo:lo + BLOCK]
            # Plain lists: indexing numpy arrays element by element is far slower.
            ts = np.round((tr.seconds(block["t"]) - self.t0) * 1e6, 3).tolist()
            types, ids = block["type"].tolist(), block["id"].tolist()
            args, ticks = block["arg"].tolist(), block["t"].tolist()
            for i in range(len(types)):
                kind = types[i]
                if kind == EV_ENTER:
                    stack.append((ts[i], ticks[i], ids[i]))
                elif kind == EV_EXIT:
                    if not stack:
                        self.summary.unpaired_exits += 1
                        continue
                    a, tick, fn = stack.pop()
                    self.call(tr, pid, tid, fn, a, ts[i], len(stack))
                    if not stack:
                        calls.enter.append(tick)
                        calls.exit.append(ticks[i])
                elif kind == EV_REGION_BEGIN:
                    regions.append((ts[i], ids[i]))
                elif kind == EV_REGION_END:
                    rid = ids[i]
                    at = next((k for k in range(len(regions) - 1, -1, -1)
                               if regions[k][1] == rid), None)
                    if at is None:
                        continue  # counted by the engine as region_mismatch
                    while len(regions) > at:
                        a, r = regions.pop()
                        self.region(tr, pid, tid, r, a, ts[i])
                elif kind == EV_PCONTROL:
                    level = args[i]
                    self.out.append({"ph": "i", "s": "t", "name": f"MPI_Pcontrol({level})",
                                     "cat": "pcontrol", "pid": pid, "tid": tid, "ts": ts[i],
                                     "args": {"monitoring": level != 0}})
        # The rank stopped (or was cut by the cap) inside these: they end at its last event.
        while stack:
            a, tick, fn = stack.pop()
            self.call(tr, pid, tid, fn, a, last, len(stack), unfinished=True)
            if not stack:
                calls.enter.append(tick)
                calls.exit.append(last_tick)
        while regions:
            a, r = regions.pop()
            self.region(tr, pid, tid, r, a, last, unfinished=True)
        order = sorted(range(len(calls.enter)), key=calls.enter.__getitem__)
        calls.enter = [calls.enter[k] for k in order]
        calls.exit = [calls.exit[k] for k in order]
        return calls

    def call(self, tr: RankTrace, pid: int, tid: int, fn: int, a: float, b: float,
             depth: int, unfinished: bool = False) -> None:
        self.summary.calls += 1
        dur = round(max(0.0, b - a), 3)
        if not depth and not unfinished:  # the common case, formatted directly: fast
            name = self.quoted.get((tr.rank, fn))
            if name is None:
                name = self.quoted[(tr.rank, fn)] = json.dumps(tr.fn(fn))
            self.out.raw(f'{{"ph":"X","name":{name},"cat":"mpi","pid":{pid},"tid":{tid},'
                         f'"ts":{a!r},"dur":{dur!r}}}')
            return
        ev: dict[str, Any] = {"ph": "X", "name": tr.fn(fn), "cat": "mpi", "pid": pid,
                              "tid": tid, "ts": a, "dur": dur}
        args: dict[str, Any] = {}
        if depth:
            args["nested"] = depth
        if unfinished:
            args["unfinished"] = "the trace ends inside this call"
        ev["args"] = args
        self.out.append(ev)

    def region(self, tr: RankTrace, pid: int, tid: int, rid: int, a: float, b: float,
               unfinished: bool = False) -> None:
        ev: dict[str, Any] = {"ph": "X", "name": tr.region(rid), "cat": "region", "pid": pid,
                              "tid": tid, "ts": a, "dur": round(max(0.0, b - a), 3)}
        if unfinished:
            ev["args"] = {"unfinished": "the trace ends inside this region"}
        self.out.append(ev)

    # ---------------------------------------------------------------- transfers

    def transfers(self, tr: RankTrace, thread: int, calls: Calls) -> None:
        x = tr.transfers.get(thread)
        if x is None:
            return
        pid, tid = pid_of(tr.rank), tid_of(tr.rank, thread)
        ev = tr.events.get(thread)
        last_tick = int(ev["t"].max()) if ev is not None and len(ev) else 0
        names = x.dtype.names or ()
        for i, values in enumerate(x.tolist()):
            rec = dict(zip(names, values, strict=True))
            case = int(rec["case"])
            tb, te = int(rec["t_begin"]), int(rec["t_end"])
            call_b = calls.around(tb) if case != CASE_END_ONLY else None
            call_e = calls.around(te) if case != CASE_BEGIN_ONLY else None
            if case == CASE_IN_CALL:
                a, b = tb, call_b[1] if call_b else tb
                call_e = call_b
            elif case == CASE_ACROSS:
                a, b = tb, te
            elif case == CASE_BEGIN_ONLY:
                a, b = tb, max(tb, last_tick)
            else:
                a, b = (call_e[0] if call_e else te), te
            self.transfer(tr, pid, tid, f"{tr.rank}.{thread}.{i}", rec, a, b)
            self.endpoint(tr, pid, tid, rec, case, call_b, call_e)

    def transfer(self, tr: RankTrace, pid: int, tid: int, ident: str, rec: dict[str, Any], a: int,
                 b: int) -> None:
        kind, fn = int(rec["kind"]), tr.fn(int(rec["fn"]))
        nbytes, xfer = int(rec["bytes"]), float(rec["xfer_s"])
        lo, hi = float(rec["min_s"]), float(rec["max_s"])
        case = CASE_NAMES[int(rec["case"])]
        name = (f"{fn} {format_size(max(nbytes, 0))}: overlap {fmt_time(lo)}–{fmt_time(hi)}"
                f" of {fmt_time(xfer)}")
        peer = int(rec["peer"])
        args: dict[str, Any] = {
            "fn": fn, "kind": tr.kind(kind), "bytes": nbytes, "case": case,
            "xfer_s": xfer, "min_overlap_s": lo, "max_overlap_s": hi,
            "min_overlap_pct": round(100 * lo / xfer, 2) if xfer > 0 else None,
            "max_overlap_pct": round(100 * hi / xfer, 2) if xfer > 0 else None,
            "region": tr.region(int(rec["region"])),
        }
        if kind in (KIND_SEND, KIND_RECV):
            args["peer"] = peer if peer >= 0 else "unknown"
        elif kind >= 16:
            args["comm_size"] = peer
        if int(rec["flags"]) & FLAG_HAS_KEY:
            args["request"] = hex(int(rec["key"]))
        if int(rec["flags"]) & FLAG_CLAMPED:
            args["clamped"] = "transfer time exceeded the begin-end span: min cut to max"
        common = {"cat": "transfer", "name": name, "pid": pid, "tid": tid,
                  "id2": {"local": ident}}
        self.out.append({**common, "ph": "b", "ts": self.us(tr, a), "args": args})
        self.out.append({**common, "ph": "e", "ts": self.us(tr, b)})
        self.summary.transfers += 1

    def endpoint(self, tr: RankTrace, pid: int, tid: int, rec: dict[str, Any], case: int,
                 call_b: tuple[int, int] | None, call_e: tuple[int, int] | None) -> None:
        """Sends and receives with a known peer join the matching (message_flows)."""
        kind, peer, nbytes = int(rec["kind"]), int(rec["peer"]), int(rec["bytes"])
        if self.by_rules or kind not in (KIND_SEND, KIND_RECV) or peer < 0:
            return
        if kind == KIND_SEND and call_b is not None:
            a, b = self.us(tr, call_b[0]), self.us(tr, call_b[1])
            order = float(tr.seconds(int(rec["t_begin"])))
            self.sends[(tr.rank, peer, nbytes)].append(
                Endpoint(order, pid, tid, round(a + min(NS, (b - a) / 2), 3)))
        elif kind == KIND_RECV and call_e is not None and case != CASE_END_ONLY:
            a, b = self.us(tr, call_e[0]), self.us(tr, call_e[1])
            order = float(tr.seconds(int(rec["t_begin"])))
            self.recvs[(peer, tr.rank, nbytes)].append(
                Endpoint(order, pid, tid, round(b - min(NS, (b - a) / 2), 3)))

    def matched_endpoints(self) -> None:
        """Version-2 traces: the pairs of profile/trace/match.py, one (sender, receiver, bytes) key
        per pair so that flows() pairs exactly them."""
        from .match import match_messages
        from .timeline import rank_timeline

        by_rank = {t.rank: t for t in self.traces}
        matched = match_messages([rank_timeline(t) for t in self.traces])
        for i, (s, r) in enumerate(matched.pairs):
            ts, tr_ = by_rank[s.rank], by_rank[r.rank]
            post = self.calls.get((s.rank, s.thread), Calls()).around(s.t_post)
            if post is None or r.done_enter is None or r.t_done is None:
                continue
            a, b = self.us(ts, post[0]), self.us(ts, post[1])
            key = (s.rank, r.rank, i)
            self.sends[key].append(Endpoint(0.0, pid_of(s.rank), tid_of(s.rank, s.thread),
                                            round(a + min(NS, (b - a) / 2), 3)))
            a, b = self.us(tr_, r.done_enter), self.us(tr_, r.t_done)
            self.recvs[key].append(Endpoint(0.0, pid_of(r.rank), tid_of(r.rank, r.thread),
                                            round(b - min(NS, (b - a) / 2), 3)))
            self.flow_bytes[key] = max(s.bytes, 0)
        self.summary.unmatched_sends += matched.unmatched_sends
        self.summary.unmatched_recvs += matched.unmatched_recvs

    def flows(self) -> None:
        flow_id = 0
        for key in sorted(set(self.sends) | set(self.recvs)):
            sends = sorted(self.sends.get(key, []), key=lambda e: e.order)
            recvs = sorted(self.recvs.get(key, []), key=lambda e: e.order)
            n = min(len(sends), len(recvs))
            self.summary.unmatched_sends += len(sends) - n
            self.summary.unmatched_recvs += len(recvs) - n
            src, dst, nbytes = key
            nbytes = self.flow_bytes.get(key, nbytes) if self.by_rules else nbytes
            name = f"message {format_size(nbytes)}"
            for s, r in zip(sends[:n], recvs[:n], strict=True):
                flow_id += 1
                common = {"cat": "message", "name": name, "id": flow_id}
                self.out.append({**common, "ph": "s", "pid": s.pid, "tid": s.tid, "ts": s.ts,
                                 "args": {"from": src, "to": dst, "bytes": nbytes}})
                self.out.append({**common, "ph": "f", "bp": "e", "pid": r.pid, "tid": r.tid,
                                 "ts": r.ts})
        self.summary.flows = flow_id

    # ---------------------------------------------------------------- ranks

    def rank(self, tr: RankTrace) -> None:
        pid = pid_of(tr.rank)
        self.out.append({"ph": "M", "name": "process_name", "pid": pid,
                         "args": {"name": f"rank {tr.rank}"}})
        self.out.append({"ph": "M", "name": "process_sort_index", "pid": pid,
                         "args": {"sort_index": tr.rank}})
        for thread in tr.threads:
            calls = self.thread(tr, thread)
            self.calls[(tr.rank, thread)] = calls
            self.transfers(tr, thread, calls)
            self.summary.threads += 1

    def run(self, notes: list[str]) -> None:
        self.fh.write('{"traceEvents":[')
        for tr in self.traces:
            self.rank(tr)
        if self.by_rules:
            self.matched_endpoints()
        self.flows()
        self.summary.notes.extend(notes)
        if self.summary.unmatched_sends or self.summary.unmatched_recvs:
            self.summary.notes.append(
                f"{self.summary.unmatched_sends} sends and {self.summary.unmatched_recvs} "
                "receives without a partner got no flow ("
                + ("" if self.by_rules else "non-blocking MPI_ANY_SOURCE receives, or ")
                + "partners missing from a trace: cut by the cap, or the rank stopped)")
        self.fh.write('],"displayTimeUnit":"ns","otherData":')
        json.dump({
                "source": "mpi-overlap trace",
                "clock": "microseconds on rank 0's clock from the first event; ranks aligned "
                         "by a ping-pong with rank 0 at MPI_Init and at MPI_Finalize",
                "flows": "matched by communicator, tag and MPI's non-overtaking order"
                         if self.by_rules else "matched per (sender, receiver, bytes) in "
                         "posting order; tags are not recorded (a version-1 trace)",
                "unmatched_sends": self.summary.unmatched_sends,
                "unmatched_receives": self.summary.unmatched_recvs,
                "notes": self.summary.notes,
            }, self.fh, separators=(",", ":"))
        self.fh.write("}")


def to_chrome(traces: list[RankTrace], fh: TextIO, notes: list[str]) -> Summary:
    """Writes the trace-event document of a run's rank traces to fh; returns what went into
    it. `notes` (what the timeline does not show) go into its otherData."""
    conv = _Converter(sorted(traces, key=lambda t: t.rank), fh)
    conv.run(notes)
    return conv.summary
