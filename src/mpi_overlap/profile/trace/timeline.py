"""One rank's trace as what the two-sided analysis needs: per thread, its outermost MPI
calls (for the computation and library time inside any window), its point-to-point
messages (posted where, completed in which call, with the communicator, tag and peer that
matching needs) and its collective calls (in posting order per communicator).

Read from the events of a version-2 trace (docs/profiler.md, "Message matching"): every
transfer event is followed by a MATCH event, every completion by a STATUS event. The
request bookkeeping follows the engine's (native/profiler/mop_process.c) closely enough to
pair each completion with its post: handles shared by several requests complete oldest
first, MPI_Request_get_status closes without freeing, MPI_Isendrecv's two transfers end
together, persistent requests post at each MPI_Start. Each message is linked to the
engine's transfer record (its a-priori transfer time and one-sided bounds) by handle and
posting time, or for in-call transfers by posting time and kind.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .reader import (
    EV_BEGIN,
    EV_END,
    EV_ENTER,
    EV_EXIT,
    EV_FREE,
    EV_INCALL,
    EV_JOIN,
    EV_MATCH,
    EV_PCONTROL,
    EV_PINIT,
    EV_REGION_BEGIN,
    EV_REGION_END,
    EV_START,
    EV_STATUS,
    KIND_RECV,
    KIND_SEND,
    MATCH_FROM_STATUS,
    PEER_ANY,
    TAG_ANY,
    RankTrace,
)

KIND_COLL = 16  # mop_kind: MOP_KIND_COLL + op
END_CANCELLED = 1
END_QUERY = 0x80


@dataclass(slots=True)
class Message:
    """One point-to-point transfer as one end saw it. Times are ticks of its rank."""

    rank: int
    thread: int
    kind: int  # KIND_SEND or KIND_RECV
    fn: int  # posting function id
    bytes: int  # posted (a receive: what its completion reports, once known)
    peer: int  # the other end's world rank, -1 unknown
    t_post: int  # the posting call's enter (MPI_Start's for persistent requests)
    blocking: bool  # begins and ends in one call (MPI_Send, MPI_Recv, Sendrecv)
    key: int = 0  # request handle bits (0 for in-call)
    comm: int = 0  # communicator id, 0 unknown
    tag: int = TAG_ANY
    named_peer: int = -1  # the peer as the call named it (PEER_ANY: MPI_ANY_SOURCE)
    t_done: int | None = None  # the completing call's exit (None: never seen complete)
    done_enter: int | None = None  # the completing call's enter
    done_fn: int = -1
    done_region: int = 0
    done_monitored: bool = True  # the completing call ran while monitoring was on
    record: int | None = None  # index into the thread's transfer records
    joined: bool = False  # ends with the entry before it (Isendrecv's receive)
    status: tuple[int, int] | None = None  # (source as comm rank, tag) from the completion
    layout: int = 0  # its datatype's layout in the trace's dtypes (0: contiguous, not known)


@dataclass(slots=True)
class CollCall:
    """One collective call (blocking or non-blocking) as one rank saw it."""

    rank: int
    thread: int
    fn: int
    kind: int  # mop_kind (KIND_COLL + op)
    bytes: int
    t_enter: int
    region: int
    blocking: bool
    comm: int = 0
    root: int = -1
    t_exit: int | None = None
    monitored: bool = True  # called while monitoring was on (MPI_Pcontrol)
    # A non-blocking collective's request and completion (the replay needs them; the
    # fields are a Message's, so that one request queue serves both).
    key: int = 0
    joined: bool = False
    t_done: int | None = None
    done_enter: int | None = None
    done_fn: int = -1
    done_region: int = 0
    done_monitored: bool = True


@dataclass
class ThreadTimeline:
    """A thread's outermost calls (sorted, ticks) and its first and last event."""

    enter: np.ndarray
    exit: np.ndarray
    first: int
    last: int


@dataclass
class RankTimeline:
    rank: int
    trace: RankTrace
    threads: dict[int, ThreadTimeline] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    collectives: list[CollCall] = field(default_factory=list)


class _Walk:
    """The walk over one thread's events."""

    def __init__(self, tl: RankTimeline, thread: int,
                 statuses: dict[tuple[int, int], tuple[int, int]]) -> None:
        self.tl = tl
        self.thread = thread
        self.statuses = statuses
        self.depth = 0
        self.closing = False
        self.monitoring = True  # MPI_Pcontrol: what the profile counts
        self.call_monitored = True
        self.call_enter = 0
        self.call_fn = -1
        self.call_region = 0
        self.regions: list[int] = []
        self.open_in_call: list[Message | CollCall] = []  # closed at the call's exit
        # request key -> posts (messages, non-blocking collectives), oldest first
        self.pending: dict[int, deque[Message | CollCall]] = {}
        self.done: dict[int, int] = {}  # key -> entries a query closed, not yet freed
        self.persistent: dict[int, Message] = {}  # key -> description (a template)
        self.last: Message | CollCall | None = None  # what the next MATCH describes
        self.enters: list[int] = []
        self.exits: list[int] = []

    def region(self) -> int:
        return self.regions[-1] if self.regions else 0

    def post(self, msg: Message) -> None:
        self.tl.messages.append(msg)
        self.last = msg

    def close(self, msg: Message | CollCall, t: int, foreign: bool = False) -> None:
        """msg completed at t in the open outermost call (or, foreign, in another
        thread's call, which this one does not know)."""
        msg.t_done = t
        if foreign:
            return
        msg.done_enter = self.call_enter if self.depth > 0 or self.closing else t
        msg.done_fn = self.call_fn
        msg.done_region = self.call_region
        msg.done_monitored = self.call_monitored

    def message(self, t: int, key: int, nbytes: int, kind: int, fn: int, arg: int,
                blocking: bool) -> Message:
        return Message(rank=self.tl.rank, thread=self.thread, kind=kind, fn=fn, bytes=nbytes,
                       peer=arg, t_post=t, blocking=blocking,
                       key=key)

    def on_end(self, t: int, key: int, nbytes: int, reason: int, foreign: bool) -> None:
        queue = self.pending.get(key)
        query = bool(reason & END_QUERY)
        if not query and self.done.get(key):
            self.done[key] -= 1  # its transfer was closed by a query: nothing to close
            return
        if not queue:
            return
        first = queue.popleft()
        group = [first]
        while queue and queue[0].joined:
            group.append(queue.popleft())
        if query:
            self.done[key] = self.done.get(key, 0) + 1
        if reason & 0x7F == END_CANCELLED:
            for m in group:
                if isinstance(m, Message):
                    self.tl.messages.remove(m)
            return
        for m in group:
            if m.kind == KIND_RECV and nbytes >= 0:
                m.bytes = nbytes
            self.close(m, t, foreign)

    def run(self, ev: np.ndarray) -> None:
        types, ts, keys = ev["type"].tolist(), ev["t"].tolist(), ev["key"].tolist()
        nbytes, kinds, ids, args = (ev["bytes"].tolist(), ev["kind"].tolist(),
                                    ev["id"].tolist(), ev["arg"].tolist())
        statuses = self.statuses
        for i, typ in enumerate(types):
            t = ts[i]
            if typ == EV_ENTER:
                if self.depth == 0:
                    self.call_enter, self.call_fn, self.call_region = t, ids[i], self.region()
                    self.call_monitored = self.monitoring
                self.depth += 1
            elif typ == EV_EXIT:
                if self.depth == 0:
                    continue
                self.depth -= 1
                if self.depth == 0:
                    self.enters.append(self.call_enter)
                    self.exits.append(t)
                    self.closing = True  # the call that just ended completes them
                    for item in self.open_in_call:
                        if isinstance(item, Message):
                            self.close(item, t)
                        else:
                            item.t_exit = t
                    self.closing = False
                    self.open_in_call.clear()
            elif typ in (EV_BEGIN, EV_JOIN, EV_INCALL):
                kind = kinds[i]
                if kind >= KIND_COLL:
                    coll = CollCall(rank=self.tl.rank, thread=self.thread, fn=ids[i],
                                    kind=kind, bytes=nbytes[i], t_enter=t,
                                    region=self.region(), blocking=typ == EV_INCALL,
                                    monitored=self.monitoring)
                    self.tl.collectives.append(coll)
                    self.last = coll
                    if typ == EV_INCALL:
                        self.open_in_call.append(coll)
                    else:  # completed by a later Wait/Test, as a message's request
                        coll.key = keys[i]
                        self.pending.setdefault(keys[i], deque()).append(coll)
                    continue
                if kind not in (KIND_SEND, KIND_RECV):
                    self.last = None
                    continue
                msg = self.message(t, keys[i] if typ != EV_INCALL else 0, nbytes[i], kind,
                                   ids[i], args[i], typ == EV_INCALL)
                self.post(msg)
                if typ == EV_INCALL:
                    self.open_in_call.append(msg)
                else:
                    msg.joined = typ == EV_JOIN
                    self.pending.setdefault(keys[i], deque()).append(msg)
            elif typ == EV_PINIT:
                kind = kinds[i]
                if kind in (KIND_SEND, KIND_RECV):
                    self.persistent[keys[i]] = self.message(t, keys[i], nbytes[i], kind, ids[i],
                                                            args[i], False)
                    self.last = self.persistent[keys[i]]
                else:
                    self.persistent.pop(keys[i], None)
                    self.last = None
            elif typ == EV_START:
                tmpl = self.persistent.get(keys[i])
                if tmpl is not None:
                    msg = self.message(t, keys[i], tmpl.bytes, tmpl.kind, tmpl.fn, tmpl.peer,
                                       False)
                    msg.comm, msg.tag, msg.named_peer = tmpl.comm, tmpl.tag, tmpl.named_peer
                    msg.layout = tmpl.layout
                    self.tl.messages.append(msg)
                    self.pending.setdefault(keys[i], deque()).append(msg)
            elif typ == EV_END:  # arg > 0: another thread's call completed it
                self.on_end(t, keys[i], nbytes[i], kinds[i], args[i] > 0)
            elif typ == EV_STATUS:
                statuses[(keys[i], t)] = (args[i], nbytes[i])
            elif typ == EV_MATCH:
                item, self.last = self.last, None
                if isinstance(item, CollCall):
                    item.comm, item.root = keys[i], nbytes[i]
                elif item is not None:
                    item.comm, item.tag = keys[i], nbytes[i]
                    if kinds[i] & MATCH_FROM_STATUS:
                        item.status = (args[i], nbytes[i])
                    item.named_peer = args[i]
                    item.layout = ids[i]
            elif typ == EV_FREE:
                self.pending.pop(keys[i], None)
                self.done.pop(keys[i], None)
            elif typ == EV_PCONTROL:
                self.monitoring = args[i] != 0
            elif typ == EV_REGION_BEGIN:
                self.regions.append(ids[i])
            elif typ == EV_REGION_END:
                rid = ids[i]
                for k in range(len(self.regions) - 1, -1, -1):
                    if self.regions[k] == rid:
                        del self.regions[k:]
                        break


def _link_records(tl: RankTimeline) -> None:
    """Each message's transfer record (the engine's xfer_s and one-sided bounds): by
    (handle, posting ticks, kind) for requests, (posting ticks, kind) in order for in-call
    transfers. Unmonitored transfers (MPI_Pcontrol(0)) have none."""
    for thread, recs in tl.trace.transfers.items():
        index: dict[tuple[int, int, int], deque[int]] = {}
        keys, tb, kinds = recs["key"].tolist(), recs["t_begin"].tolist(), recs["kind"].tolist()
        for j in range(len(recs)):
            index.setdefault((keys[j], tb[j], kinds[j]), deque()).append(j)
        for m in tl.messages:
            if m.thread != thread:
                continue
            queue = index.get((m.key, m.t_post, m.kind))
            if queue:
                m.record = queue.popleft()


def _resolve(tl: RankTimeline, statuses: dict[tuple[int, int], tuple[int, int]]) -> None:
    """Receives from MPI_ANY_SOURCE or with MPI_ANY_TAG: what their completion's status
    says (a comm rank, made a world rank through the communicator's members)."""
    for m in tl.messages:
        if m.kind != KIND_RECV:
            continue
        st = m.status
        if st is None and m.t_done is not None and (m.named_peer == PEER_ANY
                                                    or m.tag == TAG_ANY):
            st = statuses.get((m.key, m.t_done))
        if st is None:
            continue
        source, tag = st
        if m.tag == TAG_ANY or m.status is not None:
            m.tag = tag
        if m.named_peer == PEER_ANY or m.status is not None:
            comm = tl.trace.comms.get(m.comm)
            if comm is not None and source >= 0:
                m.peer = comm.world_rank(source)
            elif m.status is None:
                m.peer = -1


def rank_timeline(tr: RankTrace) -> RankTimeline:
    """The timeline of one rank's trace."""
    tl = RankTimeline(rank=tr.rank, trace=tr)
    statuses: dict[tuple[int, int], tuple[int, int]] = {}
    for thread in tr.threads:
        ev = tr.events.get(thread)
        if ev is None or not len(ev):
            continue
        w = _Walk(tl, thread, statuses)
        w.run(ev)
        last = int(ev["t"].max())
        for item in w.open_in_call:  # the trace ends inside this call
            if isinstance(item, CollCall):
                item.t_exit = last
        order = np.argsort(np.asarray(w.enters, dtype=np.uint64), kind="stable")
        tl.threads[thread] = ThreadTimeline(
            enter=np.asarray(w.enters, dtype=np.uint64)[order],
            exit=np.asarray(w.exits, dtype=np.uint64)[order],
            first=int(ev["t"].min()), last=last)
    _link_records(tl)
    _resolve(tl, statuses)
    return tl
