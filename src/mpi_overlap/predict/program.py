"""What the replay engine replays: per rank, its outermost MPI calls in order with the
computation before each, and what each call does to messages and collectives (post,
complete, both); the messages as matched pairs and the collectives as matched instances.

Built from a traced run with the trace machinery (profile/trace/reader.py, timeline.py,
match.py): nothing here re-reads events. Only the thread that called MPI_Init is
replayed (its calls are the rank's timeline); messages of other threads, and ends
without a partner in the traces, are left out, and a call left with nothing to replay
keeps its recorded duration. Tests build programs directly (a synthetic trace).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..profile.trace.dtypes import Layout
from ..profile.trace.match import Matched
from ..profile.trace.timeline import RankTimeline

# Operations of a call (op code, index of the message or collective instance). A message
# end's codes are below COLL_BLOCK, a send's even and a receive's odd: the engine takes
# the end's side from the low bit.
SEND_POST, RECV_POST, SEND_DONE, RECV_DONE, SEND_BLOCK, RECV_BLOCK = range(6)
COLL_BLOCK, COLL_POST, COLL_DONE = range(6, 9)


@dataclass(slots=True)
class Call:
    """One outermost MPI call: its recorded enter and exit (aligned seconds), its function,
    the operations it makes (in program order) and its call site (the return address its
    ENTER event holds; 0 unknown), which names it in the profile's advice (gains.py)."""

    fn: str
    enter: float
    exit: float
    ops: list[tuple[int, int]] = field(default_factory=list)
    site: int = 0

    @property
    def duration(self) -> float:
        return self.exit - self.enter


@dataclass(slots=True)
class Msg:
    """A matched point-to-point message."""

    sender: int
    receiver: int
    nbytes: int
    # the ends the profile counted: bit 0 the send, bit 1 the receive (bounds.py). Out of
    # the repr, which tests/test_predict_same_replay.py digests as the replay's input.
    profiled: int = field(default=3, repr=False)
    # each end's datatype layout (profile/trace/dtypes.py), the send's and the receive's;
    # None where it is one contiguous block or not known
    layouts: tuple[Layout | None, Layout | None] = field(default=(None, None), repr=False)


@dataclass(slots=True)
class Coll:
    """A matched collective instance: its op (the table's name, "i" prefixed for a
    non-blocking one), its members (world ranks), its root (world rank, -1 none) and the
    largest per-process block a member gave."""

    op: str
    members: tuple[int, ...]
    root: int
    nbytes: int
    # members whose call the profile did not count (out of the repr, as Msg.profiled)
    unprofiled: frozenset[int] = field(default=frozenset(), repr=False)


@dataclass
class Program:
    calls: list[list[Call]]  # per rank, in order; [0] is MPI_Init, [-1] MPI_Finalize
    msgs: list[Msg] = field(default_factory=list)
    colls: list[Coll] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)  # per rank ("" unknown)
    left_out: dict[str, int] = field(default_factory=dict)  # what was not replayed, why
    # the C replay pass's arrays, made on the first replay (predict/native.py: Layout),
    # and per rank and call the key its residual is kept under (engine.call_keys): out of
    # the repr and comparisons, which are of the program itself
    layout: Any = field(default=None, init=False, repr=False, compare=False)
    keys: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def ranks(self) -> int:
        return len(self.calls)

    def gaps(self) -> list[list[float]]:
        """Per rank and call, the recorded computation after it (0 after the last): what
        the replay keeps between calls, and what an imbalance item rescales (gains.py)."""
        return [[cs[i + 1].enter - cs[i].exit for i in range(len(cs) - 1)] + [0.0]
                for cs in self.calls]

    def events(self) -> int:
        """Enter and exit of every replayed call and every operation in them."""
        return sum(2 * (len(c) - 2) + sum(len(x.ops) for x in c[1:-1]) for c in self.calls)


class _Locator:
    """The outermost call of a rank's main thread that holds a time (ticks)."""

    def __init__(self, tl: RankTimeline, thread: int) -> None:
        th = tl.threads[thread]
        self.enter = th.enter.tolist()
        self.exit = th.exit.tolist()

    def index(self, t: int | None) -> int | None:
        if t is None:
            return None
        i = bisect_right(self.enter, t) - 1
        return i if i >= 0 and t <= self.exit[i] else None


def _main_thread(tl: RankTimeline) -> int | None:
    return min(tl.threads) if tl.threads else None


def _layout(tl: RankTimeline, ident: int) -> Layout | None:
    """A message end's datatype layout (None: contiguous or not known)."""
    return tl.trace.dtypes.get(ident) if ident else None


def build_program(timelines: list[RankTimeline], matched: Matched,
                  hosts: dict[int, str] | None = None) -> Program:
    """The program of a traced run; `timelines` ordered by rank, one per rank 0..n-1."""
    left: dict[str, int] = {}

    def skip(why: str, n: int = 1) -> None:
        left[why] = left.get(why, 0) + n

    calls: list[list[Call]] = []
    locs: dict[int, _Locator] = {}
    main: dict[int, int] = {}
    for tl in timelines:
        thread = _main_thread(tl)
        if thread is None:
            calls.append([])
            continue
        main[tl.rank] = thread
        locs[tl.rank] = _Locator(tl, thread)
        th = tl.threads[thread]
        enter = tl.trace.seconds(th.enter)
        exit_ = tl.trace.seconds(th.exit)
        assert isinstance(enter, np.ndarray) and isinstance(exit_, np.ndarray)
        names = _call_names(tl, thread, len(th.enter))
        calls.append([Call(fn, float(a), float(b), site=site) for (fn, site), a, b
                      in zip(names, enter.tolist(), exit_.tolist(), strict=True)])
        if len(tl.threads) > 1:
            skip("threads other than the main one (not replayed)", len(tl.threads) - 1)

    prog = Program(calls=calls)
    prog.hosts = [(hosts or {}).get(r, "") for r in range(len(calls))]

    for s, r in matched.pairs:
        at_s = _slots(s.rank, s.thread, s.t_post, s.done_enter, s.blocking, main, locs)
        at_r = _slots(r.rank, r.thread, r.t_post, r.done_enter, r.blocking, main, locs)
        if at_s is None or at_r is None:
            skip("messages with an end that cannot be placed")
            continue
        idx = len(prog.msgs)
        # an end without its transfer record was not counted (MPI_Pcontrol(0))
        prog.msgs.append(Msg(s.rank, r.rank, max(int(r.bytes), int(s.bytes), 0),
                             (s.record is not None) | (r.record is not None) << 1,
                             (_layout(timelines[s.rank], s.layout),
                              _layout(timelines[r.rank], r.layout))))
        _place(calls[s.rank], at_s, SEND_POST, SEND_DONE, SEND_BLOCK, idx)
        _place(calls[r.rank], at_r, RECV_POST, RECV_DONE, RECV_BLOCK, idx)
    for (comm, _), inst in sorted(matched.collectives.items()):
        some = next(iter(inst.values()))
        tr = timelines[some.rank].trace
        members = tr.comms.get(comm)
        whole = (members is not None and not members.remote
                 and len(inst) == len(members.local))
        at = [_slots(c.rank, c.thread, c.t_enter, c.done_enter, c.blocking, main, locs)
              for c in inst.values()] if whole else []
        if members is None or not whole or None in at:
            skip("collectives not complete in the traces (or on intercommunicators)")
            continue
        idx = len(prog.colls)
        op = tr.kind(some.kind)
        prog.colls.append(Coll(op, tuple(sorted(inst)), members.world_rank(some.root)
                               if some.root >= 0 else -1,
                               max(max(int(c.bytes) for c in inst.values()), 0),
                               frozenset(c.rank for c in inst.values() if not c.monitored)))
        for c, slots in zip(inst.values(), at, strict=True):
            _place(calls[c.rank], slots, COLL_POST, COLL_DONE, COLL_BLOCK, idx)
    prog.left_out = left
    return prog


def _slots(rank: int, thread: int, t_post: int, done_enter: int | None, blocking: bool,
           main: dict[int, int], locs: dict[int, _Locator]) -> tuple[int, int | None] | None:
    """The main-thread calls an end is in: (posting call, completing call; None for a
    blocking end, which is both), or None when it cannot be placed (another thread, outside
    the calls, a completion not seen)."""
    if main.get(rank) != thread:
        return None
    loc = locs[rank]
    i = loc.index(t_post)
    if i is None:
        return None
    if blocking:
        return i, None
    j = loc.index(done_enter)
    return (i, j) if j is not None and j >= i else None


def _place(calls: list[Call], slots: tuple[int, int | None], post_op: int, done_op: int,
           block_op: int, idx: int) -> None:
    i, j = slots
    if j is None:
        calls[i].ops.append((block_op, idx))
    else:
        calls[i].ops.append((post_op, idx))
        calls[j].ops.append((done_op, idx))


def _call_names(tl: RankTimeline, thread: int, n: int) -> list[tuple[str, int]]:
    """The function and call site (an ENTER's key: mop_event.h) of each outermost call, in
    enter order (from the ENTER events at depth 0, as timeline.py counts them)."""
    from ..profile.trace.reader import EV_ENTER, EV_EXIT

    ev = tl.trace.events[thread]
    types, ids, keys = ev["type"].tolist(), ev["id"].tolist(), ev["key"].tolist()
    out: list[tuple[int, str, int]] = []
    depth = 0
    ts = ev["t"].tolist()
    for typ, fid, t, key in zip(types, ids, ts, keys, strict=True):
        if typ == EV_ENTER:
            if depth == 0:
                out.append((t, tl.trace.fn(fid), key))
            depth += 1
        elif typ == EV_EXIT and depth > 0:
            depth -= 1
    if depth > 0 and out:  # the trace ends inside a call, which timeline.py leaves out
        out.pop()
    out.sort(key=lambda x: x[0])
    names = [(name, key) for _, name, key in out]
    return names[:n] + [("?", 0)] * (n - len(names))
