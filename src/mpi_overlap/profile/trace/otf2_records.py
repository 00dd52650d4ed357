"""What `mpi-overlap export otf2` writes on each location (one per rank and thread), in the
order it must be written: every rank trace's events as ENTER/LEAVE of MPI functions and
user regions, the messages and collectives of its timeline (profile/trace/timeline.py) as OTF2's
MPI records placed inside the calls that posted and completed them, and the points where
the overlap metrics grow. Pure: no otf2 import, so the walk is tested and timed alone;
profile/trace/otf2_export.py turns these records into the archive.

OTF2 needs, per location, records in time order and ENTER/LEAVE properly nested; MPI
records must sit inside their call (after its ENTER, before its LEAVE). So every record is
placed by (ticks, position): the trace's events keep their own positions (their order in
the file), a post goes just after its call's ENTER, a completion just before its LEAVE,
with its ticks clamped into the call. Sorting by that key keeps the events' order (a
thread's ticks never decrease in its trace; where a clock read on another core did, they
are raised to the previous one, and counted).
"""

from __future__ import annotations

import bisect
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from .reader import (
    CASE_BEGIN_ONLY,
    CASE_IN_CALL,
    EV_ENTER,
    EV_EXIT,
    EV_REGION_BEGIN,
    EV_REGION_END,
    KIND_RECV,
    KIND_SEND,
    RankTrace,
)
from .timeline import CollCall, Message, RankTimeline


class Op(IntEnum):
    """What a record is (its payload in Location.args)."""

    ENTER = 0  # (region name, is a user region)
    LEAVE = 1  # (region name, is a user region)
    SEND = 2  # (message,)  MPI_Send-like: posted and done in one call
    ISEND = 3  # (message, request id)
    ISEND_DONE = 4  # (message, request id)
    IRECV_REQUEST = 5  # (message, request id)
    RECV = 6  # (message,)
    IRECV = 7  # (message, request id)
    COLL_BEGIN = 8  # (collective call,)
    COLL_END = 9  # (collective call,)
    METRIC = 10  # (transfer s, min overlap s, max overlap s, waiting s): increments


@dataclass
class Location:
    """One thread of one rank: its records as columns (ticks of its rank, position,
    operation, payload) in the order they were added; order() gives the writing order."""

    rank: int
    thread: int
    ticks: list[int] = field(default_factory=list)
    pos: list[float] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    args: list[tuple[object, ...]] = field(default_factory=list)
    # the thread's outermost MPI calls in order: enter and exit ticks (raised as written),
    # and the positions of their ENTER and LEAVE
    enter: list[int] = field(default_factory=list)
    exit: list[int] = field(default_factory=list)
    enter_pos: list[int] = field(default_factory=list)
    exit_pos: list[int] = field(default_factory=list)
    first: int = 0
    last: int = 0
    clock_raised: int = 0  # events whose ticks ran back and were raised
    unpaired: int = 0  # EXITs or region ends without their opening event

    def add(self, ticks: int, pos: float, op: Op, *args: object) -> None:
        self.ticks.append(ticks)
        self.pos.append(pos)
        self.ops.append(op)
        self.args.append(args)

    def call_at(self, ticks: int) -> int | None:
        """The index of the outermost call open at `ticks`, None when none is."""
        i = bisect.bisect_right(self.enter, ticks) - 1
        return i if i >= 0 and ticks <= self.exit[i] else None

    def in_call(self, ticks: int, op: Op, *args: object, at_end: bool = False) -> bool:
        """Adds a record inside the call open at `ticks`: after its ENTER, or (at_end)
        before its LEAVE. False (nothing added) when no call is open then."""
        i = self.call_at(ticks)
        if i is None:
            return False
        t = min(max(ticks, self.enter[i]), self.exit[i])
        self.add(t, self.exit_pos[i] - 0.5 if at_end else self.enter_pos[i] + 0.5, op, *args)
        return True

    def at_exit(self, call: int, op: Op, *args: object) -> None:
        self.add(self.exit[call], self.exit_pos[call] - 0.5, op, *args)

    def order(self) -> np.ndarray:
        """The indices of the records in writing order."""
        n = len(self.ticks)
        return np.lexsort((np.arange(n), np.asarray(self.pos, dtype=np.float64),
                           np.asarray(self.ticks, dtype=np.uint64)))


def walk_events(tr: RankTrace, thread: int) -> Location:
    """ENTER/LEAVE records of one thread's MPI calls and user regions, and its outermost
    calls. A region ended while regions or calls opened after it are still open closes
    them first (OTF2 needs nesting; the trace's other readers do the same); what is still
    open at the thread's last event ends there."""
    loc = Location(tr.rank, thread)
    ev = tr.events.get(thread)
    if ev is None or not len(ev):
        return loc
    raw = ev["t"]
    ticks_arr = np.maximum.accumulate(raw)
    loc.clock_raised = int(np.count_nonzero(ticks_arr != raw))
    ticks, types, ids = ticks_arr.tolist(), ev["type"].tolist(), ev["id"].tolist()
    loc.first, loc.last = ticks[0], ticks[-1]
    stack: list[tuple[bool, int]] = []  # open entries: (is a user region, id)
    mpi_depth = 0
    call_start = (0, 0)

    def close_to(k: int, t: int, pos: float) -> None:
        nonlocal mpi_depth
        while len(stack) > k:
            region, ident = stack.pop()
            name = tr.region(ident) if region else tr.fn(ident)
            loc.add(t, pos, Op.LEAVE, name, region)
            if not region:
                mpi_depth -= 1
                if mpi_depth == 0:
                    loc.enter.append(call_start[0])
                    loc.enter_pos.append(call_start[1])
                    loc.exit.append(t)
                    loc.exit_pos.append(int(pos))

    for i, typ in enumerate(types):
        t = ticks[i]
        if typ == EV_ENTER:
            if mpi_depth == 0:
                call_start = (t, i)
            stack.append((False, ids[i]))
            mpi_depth += 1
            loc.add(t, i, Op.ENTER, tr.fn(ids[i]), False)
        elif typ == EV_REGION_BEGIN:
            stack.append((True, ids[i]))
            loc.add(t, i, Op.ENTER, tr.region(ids[i]), True)
        elif typ in (EV_EXIT, EV_REGION_END):
            want_region = typ == EV_REGION_END
            k = next((k for k in range(len(stack) - 1, -1, -1)
                      if stack[k][0] == want_region
                      and (not want_region or stack[k][1] == ids[i])), None)
            if k is None:
                loc.unpaired += 1
                continue
            close_to(k, t, i)
    close_to(0, loc.last, len(types))
    return loc


@dataclass
class Skipped:
    """What the archive leaves out, counted for the user."""

    unnamed: int = 0  # messages without a communicator, tag or peer the archive can name
    inter: int = 0  # messages and collectives on intercommunicators
    uncompleted: int = 0  # requests whose completion is not in this thread's calls
    outside_calls: int = 0  # records whose call the thread's events do not hold
    no_op: int = 0  # collectives OTF2 has no operation for (neighbourhood ones)


@dataclass
class RequestIds:
    """OTF2 request ids: unique per location while outstanding; simply numbered."""

    next: int = 1

    def new(self) -> int:
        self.next += 1
        return self.next - 1


def _not_writable(comm: int, writable: Collection[int], inter: set[int],
                  skipped: Skipped) -> bool:
    if comm in writable:
        return False
    if comm in inter:
        skipped.inter += 1
    else:
        skipped.unnamed += 1
    return True


def add_messages(loc: Location, messages: list[Message], members: dict[int, dict[int, int]],
                 inter: set[int], skipped: Skipped, ids: RequestIds) -> tuple[int, int]:
    """The MPI point-to-point records of this thread's messages: MpiSend/MpiRecv inside a
    blocking call, MpiIsend → MpiIsendComplete and MpiIrecvRequest → MpiIrecv from the
    posting call to the completing one. `members`: the communicators the archive defines
    (id -> world rank -> rank in it), `inter`: the intercommunicators among the others. A
    receive counts once its completion is written (it carries the matched source, tag and
    size), a send once its post is. Returns (sends, receives) written."""
    sends = recvs = 0
    for m in messages:
        if _not_writable(m.comm, members, inter, skipped):
            continue
        if m.peer not in members[m.comm] or m.tag < 0:
            skipped.unnamed += 1
            continue
        own_completion = m.t_done is not None and m.done_enter is not None
        if m.kind == KIND_SEND and m.blocking:
            ok = loc.in_call(m.t_post, Op.SEND, m)
            sends += ok
        elif m.kind == KIND_SEND:
            rid = ids.new()
            ok = loc.in_call(m.t_post, Op.ISEND, m, rid)
            sends += ok
            if ok and own_completion:
                ok = loc.in_call(int(m.t_done or 0), Op.ISEND_DONE, m, rid, at_end=True)
            elif ok:
                skipped.uncompleted += 1
        elif m.kind == KIND_RECV and m.blocking:
            if m.t_done is None:
                skipped.uncompleted += 1
                continue
            ok = loc.in_call(m.t_done, Op.RECV, m, at_end=True)
            recvs += ok
        elif m.kind == KIND_RECV:
            rid = ids.new()
            ok = loc.in_call(m.t_post, Op.IRECV_REQUEST, m, rid)
            if ok and own_completion:
                ok = loc.in_call(int(m.t_done or 0), Op.IRECV, m, rid, at_end=True)
                recvs += ok
            elif ok:
                skipped.uncompleted += 1
        else:
            continue
        if not ok:
            skipped.outside_calls += 1
    return sends, recvs


def add_collectives(loc: Location, calls: list[CollCall], writable: set[int], inter: set[int],
                    ops: set[int], skipped: Skipped) -> int:
    """MpiCollectiveBegin/End around every collective call of this thread: blocking ones
    span the call (begin after its ENTER, end before its LEAVE); non-blocking ones span
    the posting call, since the trace links no completion to them. `ops`: the collective
    kinds OTF2 has an operation for. Returns the collectives written."""
    written = 0
    for c in calls:
        if _not_writable(c.comm, writable, inter, skipped):
            continue
        if c.kind not in ops:
            skipped.no_op += 1
            continue
        i = loc.call_at(c.t_enter)
        if i is None:
            skipped.outside_calls += 1
            continue
        loc.add(max(c.t_enter, loc.enter[i]), loc.enter_pos[i] + 0.5, Op.COLL_BEGIN, c)
        loc.at_exit(i, Op.COLL_END, c)
        written += 1
    return written


def add_transfer_metrics(loc: Location, tr: RankTrace) -> None:
    """A metric point where each of this thread's transfers ends (the profile counts it
    there): the exit of an in-call transfer's call, the completing call of one across
    calls, the thread's last event for one that never ended."""
    x = tr.transfers.get(loc.thread)
    if x is None or not len(x):
        return
    cases, tb, te = x["case"].tolist(), x["t_begin"].tolist(), x["t_end"].tolist()
    xfer, lo, hi = x["xfer_s"].tolist(), x["min_s"].tolist(), x["max_s"].tolist()
    for j in range(len(x)):
        inc = (xfer[j], lo[j], hi[j], 0.0)
        if cases[j] == CASE_BEGIN_ONLY:
            loc.add(loc.last, float("inf"), Op.METRIC, *inc)
            continue
        t = tb[j] if cases[j] == CASE_IN_CALL else te[j]
        i = loc.call_at(t)
        if i is not None:
            loc.at_exit(i, Op.METRIC, *inc)
        else:  # ticks outside the thread's calls: at its own time, after what is there
            loc.add(max(t, loc.first), float("inf"), Op.METRIC, *inc)


def add_wait_metric(loc: Location, call: int, seconds: float) -> None:
    loc.at_exit(call, Op.METRIC, 0.0, 0.0, 0.0, seconds)


def locations_of(tl: RankTimeline) -> dict[int, Location]:
    """The walked threads of one rank (every thread with events or transfers)."""
    return {thread: walk_events(tl.trace, thread) for thread in tl.trace.threads}
