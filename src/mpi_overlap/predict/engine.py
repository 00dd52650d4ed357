"""The replay engine: one discrete-event pass over a program (program.py) with a priority
queue of call entries, on the costs of a target (model.py). docs/method.md, "Predicting
by replay", states the rules; in short:

* computation between two calls is kept as recorded: a call's next one is entered the
  recorded gap after it returns;
* a call returns at max(its enter, the completion of every operation it completes) plus
  its *residual*: the part of the recorded call that the model does not explain (the
  mean, over that function's calls of that kind on that rank, of the recorded
  duration minus its recorded waiting and the model's in-call cost at the recorded
  table and times, a rendezvous end's wait for its partner's next MPI call included:
  recorded_moves; the median where the target packs messages that crossed nodes into
  one), moved to the target's transport first (residuals; on a target with
  a smaller T, what a receive on a link took beyond the table's T goes to the message's
  T instead, on_target and with_flight). A call that
  replays nothing
  (MPI_Comm_rank, a message without a partner) keeps its recorded duration;
* an eager message's send completes o_s after its post (the posting call holds until
  then: o_s is the sender's own work), its data is in the receiver's MPI
  T - o_r after the post, and its receive completes o_r after max(the completing call's
  enter, that arrival). A rendezvous message moves whole, T, once both ends' MPI has
  polled it after its post: in the call that completes it, or in an earlier call that
  waited (progress "calls": its handshake and copy need both ends' MPI; "async": from
  the later post, whatever the ends do); both ends complete when it has moved;
* a link direction (an ordered pair of nodes) carries one message's G s at a time
  (model.link_waits): a transfer that starts while it is busy starts when it is free
  and arrives that much later; at the recorded times the same wait is part of the
  in-call cost (model.incall_at), so that the residual does not hold it too;
* a collective's members leave at their synchronisation time (the last member's enter;
  for a broadcast or scatter the root's, for a reduce or gather the root waits for the
  last) plus the collective's time;
* `none`: every message, eager ones too, moves whole only once both ends' MPI has
  polled it (as a rendezvous message does), and no end completes before the model's
  time (a non-blocking collective: once every member is in the call that completes it);
  on a busy link, no call returns before it does in the model's replay;
  `perfect`: it costs nothing beyond the synchronisation (a receive completes at
  max(its call's enter, the send's post), a send at its post).
* a Change (an advice item's, gains.py) hides some ends, polls some from their post,
  or scales computation, under the model's rules.

Every completion time is a max-plus expression of enter times with non-negative costs,
so `perfect` never gives later times than the model and `none` never earlier ones
(tests/test_predict_property.py checks it on generated programs).
"""

from __future__ import annotations

import gc
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..calibration.xfer_table import blocking_op
from . import native
from .model import (
    Costs,
    Moves,
    call_kind,
    incall_at,
    link_waits,
    message_work,
    moves_into_a_node,
    residual_key,
)
from .program import (
    COLL_BLOCK,
    COLL_DONE,
    COLL_POST,
    RECV_BLOCK,
    RECV_DONE,
    RECV_POST,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Call,
    Program,
)

ONE_TO_N = frozenset({"bcast", "scatter", "scatterv"})
N_TO_ONE = frozenset({"reduce", "gather", "gatherv"})
# A function's unexplained time per call (kind of call, rank) is the mean over its calls,
# so the replay keeps the recorded total: the time is skewed upwards (on quiet traced
# mo_halo and mo_cg runs at 1 Gbit/s the top 5 % of calls held 8-59 % of it, up to 2-3 ms
# a call), and a lower statistic left it out of every replay. The median replayed the
# traces' own runs 2-10 % short in run time and 7-20 % in MPI time; the mean -1.3 to
# +4.0 % and -2.5 to +6.7 % (docs/method.md, "The residual's statistic"). Rules that cut
# the tail (a 5 or 10 % trimmed mean, Tukey's fences at 1.5, 3 and 10 IQR) fell between.
# Where a target packs messages that crossed nodes into one (moves_into_a_node), the
# median: that tail is the network transport's (an 18 KiB MPI_Isend of 1.8 ms), which
# shared memory does not have; with the mean mo_cg's one-node MPI time came out 8-13
# points higher with the same probe (+14.6 and +24.4 % against +6.6 and +11.5 %). For
# every function, not only those whose calls move such messages: the collectives crossed
# the network too (the median for the point-to-point functions alone left cg's one-node
# MPI time +27.7 and +12.6 % against +19.7 and -0.1 % with the same probes).
# The share of a call's unexplained time that is its own where the receives it completes
# may have been held up on the link (engine.on_target): the least its function and kind
# of call took on the rank, as a low quantile so that one odd call does not set it.
FLIGHT_QUANTILE = 0.1
# What a receive took beyond the table's T, as a fraction of it (engine._flight): the
# median fraction of a function's receives, which a link's queueing sets for most of them.
FLIGHT_FRACTION_QUANTILE = 0.5


@dataclass
class Change:
    """What an advice item changes in a replay (gains.py; docs/method.md, "Advice gains
    from replay"), applied under the model's overlap rules only. Per side (0 the send's
    end, 1 the receive's), the messages whose end is *hidden*: it completes as if its
    transfer cost nothing beyond the model's overheads (a send at its post, plus o_s if
    eager; a receive at max(its completing call's enter, the send's post), plus o_r if
    eager), still waiting for its partner's post; and the messages whose end is *polled
    from its post* (MPI_Test in the computation after the post: a rendezvous end counts as
    polled at its post). Per rank and call, a factor on the computation after the call
    (None: as recorded)."""

    hidden: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
    polled: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
    compute: list[list[float]] | None = None


NO_CHANGE = Change()


@dataclass
class Replay:
    """Per rank: every call's enter and exit (seconds; the first call's exit and the last
    call's enter are the window of the run), and the pass's event count."""

    enter: list[list[float]]
    exit: list[list[float]]
    send_post: list[float]  # per message
    recv_post: list[float]
    coll_sync: list[dict[int, float]]  # per collective: member -> synchronisation time
    events: int = 0
    unresolved: list[int] = field(default_factory=list)  # ranks left waiting (a deadlock)
    engine: str = "python"  # the pass that ran: "c" (native.py) or "python" (_pass)
    engine_note: str | None = None  # why the Python pass ran where C was wanted
    # per message: its wait for its link direction (model.link_waits) as the pass booked
    # it; 0 where it shares none, NaN where its transfer never started; empty: not
    # replayed (the recorded run: recorded_link_waits)
    link_wait: list[float] = field(default_factory=list)


def call_key(call: Call) -> str:
    """The name its residual is kept under (model.residual_key): function and kind."""
    return residual_key(call.fn, call_kind(call.ops))


def call_keys(prog: Program) -> list[list[str]]:
    """call_key of every call, per rank: worked out on the program's first use and kept
    with it (Program.keys), since every replay of it (one per advice item) reads them."""
    if prog.keys is None:
        prog.keys = [[call_key(c) for c in cs] for cs in prog.calls]
    return prog.keys


def residuals(prog: Program, recorded_costs: Costs,
              target_costs: Costs | None = None) -> list[dict[str, float]]:
    """Per rank, function and kind of call (call_key: one that ends messages only as
    their sender, only as their receiver, or any other): the mean over those calls of
    the call's unexplained time (recorded duration - its recorded waiting - the model's
    in-call cost at the recorded table and times, model.incall_at, which counts an
    eager receive's time in flight; not below 0). Without `target_costs` (or with costs
    that change nothing) as recorded; on another target as on_target says."""
    return on_target(prog, recorded_costs, target_costs)[0]


def on_target(prog: Program, recorded_costs: Costs, target_costs: Costs | None = None,
              carried: float = 1.0, probed: dict[int, float] | None = None,
              ) -> tuple[list[dict[str, float]], list[float]]:
    """The residuals (residuals) and, per message, the time in flight the recorded table
    does not price, on the target (0 where nothing moves), which with_flight adds to the
    target's T. On another target as docs/method.md says ("Predicting by replay", the
    residual on another transport, and the time in flight the table does not price):

    * a call that does a message's own work at the recorded table (an eager send's post,
      a rendezvous end's completion, a receive's completion, a blocking send or receive:
      the calls whose in-call cost is that message's) holds that work's unexplained part
      (datatype packing, copies beyond the table's contiguous ping-pong). It is kept, split
      evenly over those ends, and each share goes to the call that does the end's work on
      the target (a send's post if eager there, else the call that completes it);
    * of a call that completes receives whose T the target changes, only the least its
      function and kind of call took on that rank (the FLIGHT_QUANTILE of their
      unexplained times) is the call's own; the rest is time the data took beyond the
      table's T (a link the messages keep busy, which a ping-pong does not), split evenly
      over those receives, each as a fraction of its recorded T: the median fraction of
      the function and kind times the target's T is added to the message's T;
    * any other call (a post that moves nothing yet, an eager send's completion, a
      collective) holds the transport's own time per call: its class's zero-byte time
      (Costs.floor, per operation) is taken out and the target's put in, not below 0.

    A key's residual is the sum, over the keys its time comes from, of the mean over
    its calls of what each brought (one term, its own, where nothing moves).

    `carried`: the share of an end's own work that goes to the target where its message
    crossed nodes as recorded and stays within one there (model.moves_into_a_node): 1
    keeps it whole (the prediction), 0 leaves it out (the other end of the range that
    `predict` gives for such a placement: what the network's transport spent per message
    is not what shared memory spends, docs/method.md). `probed`: per such message, the
    work each of its ends does on the target as measured there (probe.py), which such an
    end gets instead, whatever its recorded share."""
    as_recorded = recorded(prog)
    waits = call_waits(prog, as_recorded)
    posts = as_recorded.send_post
    link = recorded_link_waits(recorded_costs, as_recorded)
    moves = recorded_moves(prog, as_recorded)
    # the calls' tail stays where the network's transport does (see the residual's
    # statistic, above)
    packs = target_costs is not None and any(
        moves_into_a_node(recorded_costs, target_costs, k) for k in range(len(prog.msgs)))
    typical = np.median if packs else np.mean
    out: list[dict[str, float]] = []
    extra = [0.0] * len(prog.msgs)
    crossed = _crossed(prog)
    keys_of = call_keys(prog)
    for rank, calls in enumerate(prog.calls):
        keys = keys_of[rank]
        counted = [i for i in range(1, len(calls) - 1) if calls[i].ops]
        unexplained = {i: max(0.0, calls[i].duration - waits[rank][i]
                              - incall_at(recorded_costs, calls[i].ops, calls[i].enter, posts,
                                          link, moves))
                       for i in counted}
        # per call: what it holds on the target, by the function it came from
        parts: list[dict[str, float]] = [{} for _ in calls]
        where = _op_calls(calls) if target_costs is not None else {}
        if target_costs is not None:
            _flight(calls, keys, counted, unexplained, recorded_costs, target_costs, crossed,
                    extra)
        for i in counted:
            c = calls[i]
            key = keys[i]
            res = unexplained[i]
            if target_costs is None:
                parts[i][key] = res
                continue
            ends = _work_ends(recorded_costs, c.ops)
            if not ends:
                res += _floor_change(recorded_costs, target_costs, c.ops)
                parts[i][key] = res if res > 0.0 else 0.0
                continue
            # each end's share to the call that does its work on the target; what stays
            # is kept whole (a target that moves nothing gives the recorded residual)
            kept = res
            share = res / len(ends)
            for k, side in ends:
                j = _work_call(target_costs, where, i, k, side)
                part = share
                if (carried != 1.0 or probed) and moves_into_a_node(recorded_costs,
                                                                    target_costs, k):
                    got = probed.get(k) if probed else None
                    part = got if got is not None else share * carried
                    if got is not None and side == 0 and not target_costs.eager[k]:
                        part = 0.0  # a rendezvous move's own: in its T (departures)
                if j != i:
                    parts[j][key] = parts[j].get(key, 0.0) + part
                    kept -= share
                elif part != share:  # left out where it was
                    kept -= share - part
            parts[i][key] = parts[i].get(key, 0.0) + (kept if kept > 0.0 else 0.0)
        per_key: dict[str, list[dict[str, float]]] = {}
        for i in counted:
            per_key.setdefault(keys[i], []).append(parts[i])
        out.append({key: _typical_parts(key, v, typical) for key, v in per_key.items()})
    return out, extra


def recorded_link_waits(c: Costs, rec: Replay) -> list[float]:
    """model.link_waits at the recorded times: a transfer starts at the send's post if
    eager, else at the later of the two posts (the replay's rendezvous starts once both
    ends have polled it, which the trace does not record)."""
    s0, r0 = rec.send_post, rec.recv_post
    return link_waits(c, [a if e else max(a, b) if a == a and b == b else math.nan
                          for a, b, e in zip(s0, r0, c.eager, strict=True)])


def _crossed(prog: Program) -> list[bool]:
    """Per message: whether its ranks were on different hosts in the recorded run (False
    where a host is not known)."""
    h = prog.hosts
    return [bool(h) and h[m.sender] != "" and h[m.receiver] != "" and h[m.sender] != h[m.receiver]
            for m in prog.msgs]


def _flight(calls: list[Call], keys: list[str], counted: list[int],
            unexplained: dict[int, float], rec: Costs, tgt: Costs, crossed: list[bool],
            extra: list[float]) -> None:
    """Per function and kind of call of one rank whose calls complete receives that the
    target prices otherwise: cut each call's unexplained time to the key's
    FLIGHT_QUANTILE (in `unexplained`), and add to each such receive's message in `extra`
    the key's median over its calls of the rest per receive, as a fraction of the
    message's recorded T, times the target's T."""
    moving: dict[int, list[int]] = {}  # per call, the receives it completes that move
    by_key: dict[str, list[int]] = {}
    for i in counted:
        recv = [k for k, side in _work_ends(rec, calls[i].ops)
                if side == 1 and crossed[k] and tgt.T[k] < rec.T[k]]
        if recv:
            moving[i] = recv
            by_key.setdefault(keys[i], []).append(i)
    for idx in by_key.values():
        own = float(np.quantile([unexplained[i] for i in idx], FLIGHT_QUANTILE))
        fractions: list[float] = []
        ends: list[int] = []
        for i in idx:
            recv = moving[i]
            rest = unexplained[i] - own if unexplained[i] > own else 0.0
            unexplained[i] -= rest
            fractions.extend(rest / len(recv) / rec.T[k] for k in recv)
            ends.extend(recv)
        f = float(np.quantile(fractions, FLIGHT_FRACTION_QUANTILE))
        for k in ends:
            extra[k] += f * tgt.T[k]


def departures(prog: Program, probed: dict[int, float]) -> list[float]:
    """Per message, how much later its data leaves on the target than the table says: a
    probed message's send end's work (probe.end_work), which is packing its layout, so
    its data moves after it. Added to the message's T (with_flight): an eager one arrives
    that much later, and the sender's post holds the work as its own (on_target); a
    rendezvous one moves that much longer, in the calls that complete it, and no call
    holds it again (on_target leaves it out there). Without this the work sat only in
    the sender's call after the data had left, and a chain of blocking exchanges (mo_halo
    blocking: MPI_Sendrecv one face at a time) waited for half of its datatype work."""
    out = [0.0] * len(prog.msgs)
    for k, work in probed.items():
        out[k] = work
    return out


def sent_from_completion(c: Costs, messages: set[int]) -> Costs:
    """The costs with `messages` moved as rendezvous ones are (no eager post, no o_s or
    o_r; their T as the table prices it): where the target's MPI queues a send in its
    post and moves it in the call that completes it (probe.deferred), its data leaves
    only once the sender polls it, as a rendezvous message's does."""
    if not messages:
        return c
    eager, o_s, o_r = list(c.eager), list(c.o_s), list(c.o_r)
    for k in messages:
        eager[k], o_s[k], o_r[k] = False, 0.0, 0.0
    return replace(c, eager=eager, o_s=o_s, o_r=o_r)


def with_flight(c: Costs, extra: list[float]) -> Costs:
    """The target's costs with each message's time in flight beyond the table's added to
    its T (on_target; o_s and o_r unchanged, so an eager arrival moves by as much)."""
    return replace(c, T=[t + x for t, x in zip(c.T, extra, strict=True)])


def _typical_parts(key: str, parts: list[dict[str, float]], typical: Callable[..., Any]
                   ) -> float:
    """The typical value (np.mean or np.median) over the key's calls of its own part plus,
    per key that moved time into it, over its calls of what came (0 in a call nothing
    came to)."""
    total = float(typical([p.get(key, 0.0) for p in parts]))
    for src in sorted({s for p in parts for s in p} - {key}):
        total += float(typical([p.get(src, 0.0) for p in parts]))
    return total


def _op_calls(calls: list[Call]) -> dict[tuple[int, int], int]:
    """Per (operation, message or collective): the call of the rank that makes it."""
    return {(op, k): i for i, c in enumerate(calls) for op, k in c.ops}


def _work_ends(c: Costs, ops: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The message ends (message, 0 send / 1 receive) whose own work the model puts in a
    call with these operations (model.message_work)."""
    return [(k, work[0]) for op, k in ops if (work := message_work(c, op, k)) is not None]


def _work_call(c: Costs, where: dict[tuple[int, int], int], i: int, k: int, side: int) -> int:
    """The call that does end (k, side)'s work under costs c: a receive's completing
    call, an eager send's post, a rendezvous send's completing call; i (where the end
    was found) for a blocking end or one the traces hold no such call for."""
    if side == 1:
        return i
    return where.get((SEND_POST if c.eager[k] else SEND_DONE, k), i)


def _floor_change(rec: Costs, tgt: Costs, ops: list[tuple[int, int]]) -> float:
    """Sum over the operations of the target's zero-byte time of their class minus the
    recorded one (0 for one whose floor is not known)."""
    total = 0.0
    for op, k in ops:
        if op in (COLL_BLOCK, COLL_POST, COLL_DONE):
            a, b = rec.coll_floor, tgt.coll_floor
        else:
            a, b = rec.floor, tgt.floor
        if k < len(a) and k < len(b):
            total += b[k] - a[k]
    return total


def replay(prog: Program, c: Costs, resid: list[dict[str, float]], overlap: str = "model",
           progress: str = "calls", change: Change = NO_CHANGE,
           engine: str = "auto") -> Replay:
    """The pass: in C (native.py, native/replay/) where its library is built and
    `engine` is "auto" or "c", else in Python (_pass, the reference; "python" asks for
    it). Both give the same timelines bit for bit (tests/test_predict_native.py); the C
    pass hands the cases it leaves to Python back (None), and Replay.engine says which
    ran, with why where the C pass was wanted and not there. Python's cycle collector is
    off meanwhile: neither pass makes cycles, but the objects they allocate (the heap's
    entries, the layout's lists) start collections that walk every object of the program
    (millions for thousands of ranks: a third of an 8,192-rank replay's time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _replay(prog, c, resid, overlap, progress, change, engine)
    finally:
        if enabled:
            gc.enable()


def _replay(prog: Program, c: Costs, resid: list[dict[str, float]], overlap: str,
            progress: str, change: Change, engine: str) -> Replay:
    # `none` on a shared link: no call returns before it does in the model's replay. A
    # direction's order can differ between the two (an eager message takes the link at
    # its post in the model, at its move under `none`), so without it a message could
    # find the link free earlier under `none` than in the model.
    floor = None
    if overlap == "none" and any(x >= 0 for x in c.lane):
        floor = _replay(prog, c, resid, "model", progress, change, engine).exit
    note = None
    if engine != "python":
        lib, note = native.library()
        if lib is not None:
            got = native.run(lib, prog, c, resid, overlap, progress, change.hidden,
                             change.polled, change.compute, _rooted(prog), floor)
            if got is not None:
                enters, exits, s0, r0, csync, events, unresolved, waits = got
                return Replay(enter=enters, exit=exits, send_post=s0, recv_post=r0,
                              coll_sync=csync, events=events, unresolved=unresolved,
                              engine="c", link_wait=waits)
            note = "the C pass left this program to the Python pass"
        if engine == "c":
            raise RuntimeError(f"the C replay pass is not available: {note}")
    rep = _pass(prog, c, resid, overlap, progress, change, floor)
    rep.engine_note = note
    return rep


def _rooted(prog: Program) -> list[int]:
    """Per collective: 1 a root's own to all (bcast, scatter), 2 all to a root's (reduce,
    gather), 0 all to all (synchronised on the last member)."""
    out = [0] * len(prog.colls)
    for j, cl in enumerate(prog.colls):
        base = _sync_op(cl.op)
        if cl.root in cl.members:
            out[j] = 1 if base in ONE_TO_N else 2 if base in N_TO_ONE else 0
    return out


def _pass(prog: Program, c: Costs, resid: list[dict[str, float]], overlap: str,
          progress: str, change: Change, floor: list[list[float]] | None = None) -> Replay:
    # Written for speed (docs/method.md, "Speed"): the state is flat lists indexed by
    # message, the per-side dispatch spelled out, the calls that resolve a wait inlined,
    # and a rank's next call pushed and the next popped in one heap operation. The order
    # of the heap's entries (time, then push order) is the rules' order, so the result
    # is bit for bit that of the plain form (engine.py at 9fddfad:
    # tests/test_predict_same_replay.py).
    n = prog.ranks
    nmsg, ncoll = len(prog.msgs), len(prog.colls)
    nan = float("nan")
    S0 = [nan] * nmsg  # the send's post
    R0 = [nan] * nmsg
    Rc = [nan] * nmsg  # enter of the call that completes the receive
    # first time each end's rank was in MPI after the post: its completing call, or an
    # earlier call that waited (MPI polls every pending request there)
    Ps = [nan] * nmsg
    Pr = [nan] * nmsg
    sdone = [nan] * nmsg
    rdone = [nan] * nmsg
    swait = [-1] * nmsg  # rank whose current call waits for this end, -1 none
    rwait = [-1] * nmsg
    cpost: list[dict[int, float]] = [{} for _ in range(ncoll)]
    centr: list[dict[int, float]] = [{} for _ in range(ncoll)]  # completing calls' enters
    cdone: list[dict[int, float]] = [{} for _ in range(ncoll)]
    csync: list[dict[int, float]] = [{} for _ in range(ncoll)]
    cwait: list[dict[int, bool]] = [{} for _ in range(ncoll)]
    T, o_s, o_r, eager, tcoll = c.T, c.o_s, c.o_r, c.eager, c.coll
    perfect, none = overlap == "perfect", overlap == "none"
    # a link direction carries one message's G s at a time (model.link_waits): Tx is
    # each message's T plus its wait for the direction, set when its transfer starts
    # (an eager send's post; a rendezvous move, and every move under `none`), which the
    # pass reaches in time order. Not under `perfect` (transfers cost nothing).
    lane, occupy = c.lane, c.occupy
    lanes = bool(lane) and not perfect
    Tx = list(T) if lanes else T
    free = [-math.inf] * (max(lane, default=-1) + 1) if lanes else []
    booked = [False] * nmsg if lanes else []
    hold_post = not perfect  # an eager send's post holds its o_s (not where transfers are free)
    async_ = progress == "async"
    hid_s, hid_r = change.hidden
    hiding = bool(hid_s or hid_r)
    # per message: its eager rule inlined in the pass (the model's, nothing hidden)
    quick = eager if not (perfect or none or hiding) else [False] * nmsg
    # a message that moves only once both ends have polled it (under `none` every one,
    # else a rendezvous one with progress in calls): its post, unless polled there
    # (Change), completes nothing, since no end has polled it yet
    idle_post = none or not (async_ or hiding or perfect)
    at_s, at_r = change.polled  # polled from their post (Change)
    polling = bool(at_s or at_r)
    colls = prog.colls
    rooted = _rooted(prog)
    size = [len(cl.members) for cl in colls]
    calls = prog.calls
    keys = call_keys(prog)
    last = [len(cs) - 1 for cs in calls]
    enters: list[list[float]] = [[nan] * len(cs) for cs in calls]
    exits: list[list[float]] = [[nan] * len(cs) for cs in calls]
    cur = [0] * n
    need = [0] * n
    outstanding: list[list[int]] = [[] for _ in range(n)]  # rendezvous ends not yet polled
    tmax = [0.0] * n  # the current call's enter, then the latest completion it waits for
    ended = [False] * n
    heap: list[tuple[float, int, int]] = []
    seq = 0
    events = 0
    compute = change.compute
    push = heapq.heappush

    def next_enter(r: int, i: int) -> float:
        """Call i of rank r returns: its exit is the latest completion it waited for plus
        what it adds (its residual, or for a call that replays nothing its recorded
        duration); the next call is entered the recorded computation after it (Program.
        gaps, rescaled by a Change). Worked out here, per call as it returns, rather than
        in lists beforehand: building them cost as much as the rest of the pass."""
        cs = calls[r]
        c_ = cs[i]
        f = tmax[r] + (resid[r].get(keys[r][i], 0.0) if c_.ops else c_.exit - c_.enter)
        if floor is not None and floor[r][i] > f:  # `none` on a shared link (_replay)
            f = floor[r][i]
        exits[r][i] = f
        g = cs[i + 1].enter - c_.exit
        if compute is not None:
            g = g * compute[r][i]
        return f + g

    def resolved(r: int, t: float) -> None:
        """One of rank r's waits is over at t: its call returns once none is left."""
        nonlocal seq
        if t > tmax[r]:
            tmax[r] = t
        left = need[r] - 1
        need[r] = left
        if not left:
            seq += 1
            push(heap, (next_enter(r, cur[r]), seq, r))

    def book(k: int, t: float) -> None:
        """Message k's transfer starts at t: it waits for its direction (Tx)."""
        booked[k] = True
        x = lane[k]
        if x >= 0:
            f = free[x]
            if f > t:
                Tx[k] = T[k] + (f - t)
                t = f
            free[x] = t + occupy[k]

    def send_done(k: int, t: float) -> None:
        sdone[k] = t
        r = swait[k]
        if r >= 0:
            swait[k] = -1
            resolved(r, t)

    def recv_done(k: int, t: float) -> None:
        rdone[k] = t
        r = rwait[k]
        if r >= 0:
            rwait[k] = -1
            resolved(r, t)

    # msg(k): the message's ends that its known times now complete, each once, by the
    # overlap rule.
    def msg_perfect(k: int) -> None:
        s0 = S0[k]
        if s0 != s0:
            return
        if sdone[k] != sdone[k]:
            send_done(k, s0)
        rc = Rc[k]
        if rc == rc and rdone[k] != rdone[k]:
            recv_done(k, max(rc, s0))

    def msg_none(k: int) -> None:  # the model's times, and no move before both ends poll
        ps, pr = Ps[k], Pr[k]
        if ps != ps or pr != pr:
            return
        if lanes and not booked[k]:
            book(k, max(ps, pr))
        both = max(ps, pr) + Tx[k]
        if not eager[k]:
            if sdone[k] != sdone[k]:
                send_done(k, both)
                recv_done(k, both)
            return
        s0 = S0[k]
        if sdone[k] != sdone[k]:
            send_done(k, max(s0 + o_s[k], both))
        rc = Rc[k]
        if rc == rc and rdone[k] != rdone[k]:
            recv_done(k, max(max(rc, s0 + T[k] - o_r[k]) + o_r[k], both))

    def msg_model(k: int) -> None:
        s0 = S0[k]
        if eager[k]:
            if s0 != s0:
                return
            if sdone[k] != sdone[k]:
                send_done(k, s0 + o_s[k])
            rc = Rc[k]
            if rc == rc and rdone[k] != rdone[k]:
                # a hidden receive's data is there at the post (Change)
                arrive = s0 if hiding and k in hid_r else s0 + Tx[k] - o_r[k]
                recv_done(k, max(rc, arrive) + o_r[k])
            return
        # rendezvous
        if hiding and s0 == s0:  # hidden ends (Change) need only the send's post
            if k in hid_s and sdone[k] != sdone[k]:
                send_done(k, s0)
            if k in hid_r:
                rc = Rc[k]
                if rc == rc and rdone[k] != rdone[k]:
                    recv_done(k, max(rc, s0))
        if async_:  # moves from the later post, whatever the ends do
            r0 = R0[k]
            if s0 != s0 or r0 != r0:
                return
            if lanes and not booked[k]:
                book(k, max(s0, r0))
            t = max(s0, r0) + Tx[k]
        else:
            ps, pr = Ps[k], Pr[k]
            if ps != ps or pr != pr:
                return
            if lanes and not booked[k]:
                book(k, max(ps, pr))
            t = max(ps, pr) + Tx[k]
        if sdone[k] != sdone[k]:
            send_done(k, t)
        if rdone[k] != rdone[k]:
            recv_done(k, t)

    msg = msg_perfect if perfect else msg_none if none else msg_model

    def done_at(j: int, m: int, sync: float, tc: float) -> None:
        csync[j][m] = sync
        t = sync + tc
        cdone[j][m] = t
        if cwait[j].pop(m, False):
            resolved(m, t)

    def coll(j: int, m: int) -> None:
        """Member m's entry (post, or completing call under `none`) was just noted: the
        members whose synchronisation time is now known leave, each once."""
        cl = colls[j]
        entries = centr[j] if none else cpost[j]
        members = cl.members
        kind = rooted[j]
        tc = 0.0 if perfect else tcoll[j]
        root = cl.root
        full = len(entries) == len(members)
        if kind == 1:
            if root not in entries:
                return
            if m == root:
                for x, own in entries.items():
                    if x not in cdone[j]:
                        done_at(j, x, own if x == root else max(own, entries[root]), tc)
            else:
                done_at(j, m, max(entries[m], entries[root]), tc)
        elif kind == 2:
            if m != root:
                done_at(j, m, entries[m], tc)
            if full:
                done_at(j, root, max(entries.values()), tc)
        elif full:
            last_in = max(entries.values())
            sync, done, waiting = csync[j], cdone[j], cwait[j]
            t = last_in + tc
            for x in members:  # done_at, inlined: every member of a large collective
                sync[x] = last_in
                done[x] = t
                if waiting.pop(x, False):
                    resolved(x, t)

    for r in range(n):
        if len(calls[r]) >= 2:
            cs = calls[r]
            enters[r][0], exits[r][0] = cs[0].enter, cs[0].exit
            g = cs[1].enter - cs[0].exit
            if compute is not None:
                g = g * compute[r][0]
            seq += 1
            push(heap, (cs[0].exit + g, seq, r))
        else:
            ended[r] = True

    pop = heapq.heappop
    pushpop = heapq.heappushpop
    nxt: tuple[float, int, int] | None = None  # the last call's rank's next, not pushed yet
    while True:
        if nxt is not None:  # the same as pushing it, then popping
            t, _, r = pushpop(heap, nxt)
            nxt = None
        elif heap:
            t, _, r = pop(heap)
        else:
            break
        i = cur[r] + 1
        cur[r] = i
        enters[r][i] = t
        if i == last[r]:  # the last call (MPI_Finalize): the rank's end
            ended[r] = True
            continue
        cs = calls[r]
        call = cs[i]
        ops = call.ops
        # the call's enter and exit and each operation (Program.events counts the same)
        events += 2 + len(ops)
        need[r] = 1  # held until every operation is registered
        tmax[r] = t
        own = t  # the end of the o_s of the eager sends this call posts
        for op, k in ops:
            if op < COLL_BLOCK:  # a message's end: op & 1 is its side, 0 send, 1 receive
                if op & 1:
                    if op == RECV_POST:
                        R0[k] = t
                        if polling and k in at_r:  # polled from its post (Change)
                            Pr[k] = t
                            msg(k)
                        elif none or not eager[k]:
                            outstanding[r].append(~k)  # ~k: the receive's end
                            if not idle_post:
                                msg(k)
                        # else: an eager receive's post completes nothing (no rule
                        # moves before the send's post and the receive's completion)
                        continue
                    if op == RECV_BLOCK:
                        R0[k] = t
                    Rc[k] = t
                    first = Pr[k] != Pr[k]
                    if first:
                        Pr[k] = t
                    d = rdone[k]
                    if d == d:
                        if d > tmax[r]:
                            tmax[r] = d
                        if first and hiding:  # a hidden end done early: its partner
                            msg(k)  # may still wait for this poll
                    elif quick[k]:  # msg(k), when the send was posted: done at once
                        s0 = S0[k]
                        if s0 == s0:  # max(t, arrival) + o_r, as max() picks
                            d = s0 + Tx[k] - o_r[k]
                            d = (d if d > t else t) + o_r[k]
                            rdone[k] = d
                            if d > tmax[r]:
                                tmax[r] = d
                        else:
                            need[r] += 1
                            rwait[k] = r
                    else:
                        need[r] += 1
                        rwait[k] = r
                        msg(k)
                else:
                    if op == SEND_POST:
                        S0[k] = t
                        if lanes and eager[k] and not none:  # an eager transfer starts
                            book(k, t)
                        if hold_post and eager[k]:  # the sender's o_s, in the posting call
                            h = t + o_s[k]
                            if h > own:
                                own = h
                        if polling and k in at_s:
                            Ps[k] = t
                        elif none or not eager[k]:
                            outstanding[r].append(k)
                            if idle_post:
                                continue
                        if quick[k]:  # msg(k): its send done (nobody waits for it yet)
                            sdone[k] = t + o_s[k]
                            rc = Rc[k]
                            if rc == rc and rdone[k] != rdone[k]:
                                recv_done(k, max(rc, t + Tx[k] - o_r[k]) + o_r[k])
                        else:
                            msg(k)
                        continue
                    if op == SEND_BLOCK:
                        S0[k] = t
                        if lanes and eager[k] and not none:
                            book(k, t)
                    first = Ps[k] != Ps[k]
                    if first:
                        Ps[k] = t
                    d = sdone[k]
                    if d == d:
                        if d > tmax[r]:
                            tmax[r] = d
                        if first and hiding:
                            msg(k)
                    elif quick[k]:  # an MPI_Send: msg(k), inlined
                        d = t + o_s[k]
                        sdone[k] = d
                        if d > tmax[r]:
                            tmax[r] = d
                        rc = Rc[k]
                        if rc == rc and rdone[k] != rdone[k]:
                            recv_done(k, max(rc, t + Tx[k] - o_r[k]) + o_r[k])
                    else:
                        need[r] += 1
                        swait[k] = r
                        msg(k)
            elif op != COLL_DONE:  # COLL_BLOCK, COLL_POST
                cpost[k][r] = t
                if op == COLL_BLOCK:
                    centr[k][r] = t
                    need[r] += 1
                    cwait[k][r] = True
                # coll(k, r), which has nothing to do for a collective with no root
                # before its last member
                if rooted[k] or len(centr[k] if none else cpost[k]) == size[k]:
                    coll(k, r)
            else:  # COLL_DONE
                centr[k][r] = t
                if r in cdone[k]:
                    tmax[r] = max(tmax[r], cdone[k][r])
                else:
                    need[r] += 1
                    cwait[k][r] = True
                    if rooted[k] or len(centr[k] if none else cpost[k]) == size[k]:
                        coll(k, r)
        pend = outstanding[r]
        if pend and (need[r] > 1 or tmax[r] > t):
            # the call waits for a completion: MPI polls this rank's pending requests
            outstanding[r] = []
            for x in pend:
                if x >= 0:
                    if Ps[x] != Ps[x]:
                        Ps[x] = t
                        msg(x)
                elif Pr[~x] != Pr[~x]:
                    Pr[~x] = t
                    msg(~x)
        if own > tmax[r]:  # after the polls: an eager post's o_s is not a wait
            tmax[r] = own
        # the hold of the registration ends (tmax[r] is at least t): resolved(r, t), with
        # the rank's next call kept for the next pop
        left = need[r] - 1
        need[r] = left
        if not left:  # next_enter(r, i), inlined: most calls return here
            f = tmax[r] + (resid[r].get(keys[r][i], 0.0) if ops else call.exit - call.enter)
            if floor is not None and floor[r][i] > f:
                f = floor[r][i]
            exits[r][i] = f
            g = cs[i + 1].enter - call.exit
            if compute is not None:
                g = g * compute[r][i]
            seq += 1
            nxt = (f + g, seq, r)
    unresolved = [r for r in range(n) if not ended[r]]
    waits = ([Tx[k] - T[k] if booked[k] else nan for k in range(nmsg)] if lanes
             else [0.0] * nmsg)
    return Replay(enter=enters, exit=exits, send_post=S0, recv_post=R0, coll_sync=csync,
                  events=events, unresolved=unresolved, link_wait=waits)


def _sync_op(op: str) -> str:
    """The op whose synchronisation rule a collective follows: a non-blocking one's
    blocking op (ibcast: bcast's), else its own."""
    return blocking_op(op) or op


def recorded(prog: Program) -> Replay:
    """The recorded run in the replay's terms (the same measures, from the trace)."""
    nan = float("nan")
    S0 = [nan] * len(prog.msgs)
    R0 = [nan] * len(prog.msgs)
    post: list[dict[int, float]] = [{} for _ in prog.colls]
    for r, cs in enumerate(prog.calls):
        for call in cs:
            for op, k in call.ops:
                if op in (SEND_POST, SEND_BLOCK):
                    S0[k] = call.enter
                elif op in (RECV_POST, RECV_BLOCK):
                    R0[k] = call.enter
                elif op in (COLL_POST, COLL_BLOCK):
                    post[k][r] = call.enter
    sync: list[dict[int, float]] = []
    for j, cl in enumerate(prog.colls):
        entries = post[j]
        out: dict[int, float] = {}
        if len(entries) == len(cl.members):
            last = max(entries.values())
            base = _sync_op(cl.op)
            for m, own in entries.items():
                if base in ONE_TO_N and cl.root in entries:
                    out[m] = own if m == cl.root else max(own, entries[cl.root])
                elif base in N_TO_ONE and cl.root in entries:
                    out[m] = last if m == cl.root else own
                else:
                    out[m] = last
        sync.append(out)
    return Replay(enter=[[c.enter for c in cs] for cs in prog.calls],
                  exit=[[c.exit for c in cs] for cs in prog.calls],
                  send_post=S0, recv_post=R0, coll_sync=sync)


# the operations of a call that can wait, where the replay's MPI polls a rank's pending
# rendezvous ends (a post that completes nothing does not)
_POLLING_OPS = frozenset({SEND_DONE, RECV_DONE, SEND_BLOCK, RECV_BLOCK, COLL_BLOCK, COLL_DONE})


def recorded_moves(prog: Program, rec: Replay) -> Moves:
    """Per message, when both its ends had polled it at the recorded times: per end, the
    enter of the first call after its post on that rank that completes or blocks on
    anything (the calls where the replay's MPI polls, if they wait: whether they waited
    the trace does not say), the call that completes it at the latest; a blocking end
    polls in its own call. NaN where an end is not in the traces."""
    nan = float("nan")
    polled = ([nan] * len(prog.msgs), [nan] * len(prog.msgs))
    for cs in prog.calls:
        pending: list[tuple[int, int]] = []  # (side, message) posted, not polled yet
        for call in cs:
            if pending and any(op in _POLLING_OPS for op, _ in call.ops):
                for side, k in pending:
                    polled[side][k] = call.enter
                pending = []
            for op, k in call.ops:
                if op in (SEND_BLOCK, RECV_BLOCK):
                    polled[op - SEND_BLOCK][k] = call.enter
                elif op in (SEND_POST, RECV_POST):
                    pending.append((op - SEND_POST, k))
    sent, received = polled
    return Moves(start=[max(a, b) if a == a and b == b else nan
                        for a, b in zip(sent, received, strict=True)],
                 recv_post=rec.recv_post)


@dataclass(frozen=True)
class RankFigures:
    rank: int
    start_s: float
    end_s: float
    mpi_s: float
    waiting_s: float


def call_waits(prog: Program, rep: Replay) -> list[list[float]]:
    """Per rank and call: its longest wait (docs/method.md, "Waiting": late sender, late
    receiver, blocking collectives), cut to the call; 0 for the first and last call."""
    out = []
    for r, cs in enumerate(prog.calls):
        en, ex = rep.enter[r], rep.exit[r]
        waits = [0.0] * len(cs)
        for i in range(1, len(cs) - 1):
            a, b = en[i], ex[i]
            w = 0.0
            for op, k in cs[i].ops:
                if op in (RECV_DONE, RECV_BLOCK):
                    x = rep.send_post[k] - a
                elif op in (SEND_DONE, SEND_BLOCK):
                    rp = rep.recv_post[k]
                    x = rp - a if b > rp else 0.0
                elif op == COLL_BLOCK:
                    x = rep.coll_sync[k].get(r, a) - a
                else:
                    continue
                if x > w:
                    w = x
            waits[i] = min(w, max(b - a, 0.0))
        out.append(waits)
    return out


def figures(prog: Program, rep: Replay,
            waits: list[list[float]] | None = None) -> list[RankFigures]:
    """Per rank: its window (first call's exit to last call's enter), the time inside the
    calls between, and their waiting (call_waits; `waits` where the caller has them)."""
    out = []
    if waits is None:
        waits = call_waits(prog, rep)
    for r, cs in enumerate(prog.calls):
        if len(cs) < 2:
            continue
        en, ex = rep.enter[r], rep.exit[r]
        mpi = sum(ex[i] - en[i] for i in range(1, len(cs) - 1))
        out.append(RankFigures(r, ex[0], en[-1], mpi, sum(waits[r])))
    return out
