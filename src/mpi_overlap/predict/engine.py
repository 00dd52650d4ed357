"""The replay engine: one discrete-event pass over a program (program.py) with a priority
queue of call entries, on the costs of a target (model.py). docs/method.md, "Predicting
by replay", states the rules; in short:

* computation between two calls is kept as recorded: a call's next one is entered the
  recorded gap after it returns;
* a call returns at max(its enter, the completion of every operation it completes) plus
  its *residual*: the part of the recorded call that the model does not explain (the
  median, over that function's calls on that rank, of the recorded duration minus
  its recorded waiting and the model's in-call cost at the recorded table). A call that
  replays nothing (MPI_Comm_rank, a message without a partner) keeps its recorded
  duration;
* an eager message's send completes o_s after its post, its data is in the receiver's MPI
  T - o_r after the post, and its receive completes o_r after max(the completing call's
  enter, that arrival). A rendezvous message moves whole, T, once both ends' MPI has
  polled it after its post: in the call that completes it, or in an earlier call that
  waited (progress "calls": its handshake and copy need both ends' MPI; "async": from
  the later post, whatever the ends do); both ends complete when it has moved;
* a collective's members leave at their synchronisation time (the last member's enter;
  for a broadcast or scatter the root's, for a reduce or gather the root waits for the
  last) plus the collective's time;
* `none`: every message, eager ones too, moves whole only once both ends' MPI has
  polled it (as a rendezvous message does), and no end completes before the model's
  time (a non-blocking collective: once every member is in the call that completes it);
  `perfect`: it costs nothing beyond the synchronisation (a receive completes at
  max(its call's enter, the send's post), a send at its post).
* a Change (an advice item's, gains.py) hides some ends, polls some from their post,
  or scales computation, under the model's rules.

Every completion time is a max-plus expression of enter times with non-negative costs,
so `perfect` never gives later times than the model and `none` never earlier ones
(tests/test_predict_property.py checks it on generated programs).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from ..calibration.xfer_table import blocking_op
from .model import Costs, incall_cost
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
    Program,
)

ONE_TO_N = frozenset({"bcast", "scatter", "scatterv"})
N_TO_ONE = frozenset({"reduce", "gather", "gatherv"})
# The typical call's unexplained time. Measured on quiet traced mo_halo and mo_cg runs
# (docs/method.md): the lower quartile left 4-12 % of the MPI time out (the unexplained
# time is skewed upwards), the mean spreads a rare long call (a rank descheduled inside
# MPI) over every call of the function.
RESIDUAL_QUANTILE = 0.5


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


def residuals(prog: Program, recorded_costs: Costs) -> list[dict[str, float]]:
    """Per rank and function: the median of (recorded duration - the call's
    recorded waiting - the model's in-call cost at the recorded table), not below 0."""
    waits = call_waits(prog, recorded(prog))
    out: list[dict[str, float]] = []
    for rank, calls in enumerate(prog.calls):
        per_fn: dict[str, list[float]] = {}
        for i in range(1, len(calls) - 1):
            c = calls[i]
            if c.ops:
                per_fn.setdefault(c.fn, []).append(max(
                    0.0, c.duration - waits[rank][i]
                    - incall_cost(recorded_costs, c.ops)))
        out.append({fn: float(np.quantile(v, RESIDUAL_QUANTILE)) for fn, v in per_fn.items()})
    return out


def replay(prog: Program, c: Costs, resid: list[dict[str, float]], overlap: str = "model",
           progress: str = "calls", change: Change = NO_CHANGE) -> Replay:
    n = prog.ranks
    nmsg, ncoll = len(prog.msgs), len(prog.colls)
    nan = float("nan")
    S0 = [nan] * nmsg
    R0 = [nan] * nmsg
    Sc = [nan] * nmsg  # enter of the call that completes the send
    Rc = [nan] * nmsg
    # first time each end's rank was in MPI after the post: its completing call, or an
    # earlier call that waited (MPI polls every pending request there)
    Ps = [nan] * nmsg
    Pr = [nan] * nmsg
    sdone = [nan] * nmsg
    rdone = [nan] * nmsg
    swait = [-1] * nmsg  # rank whose current call waits for this end, -1 none
    rwait = [-1] * nmsg
    # by side (0 the send's end, 1 the receive's: a message op's code & 1)
    post, comp, poll = (S0, R0), (Sc, Rc), (Ps, Pr)
    done, wait = (sdone, rdone), (swait, rwait)
    cpost: list[dict[int, float]] = [{} for _ in range(ncoll)]
    centr: list[dict[int, float]] = [{} for _ in range(ncoll)]  # completing calls' enters
    cdone: list[dict[int, float]] = [{} for _ in range(ncoll)]
    csync: list[dict[int, float]] = [{} for _ in range(ncoll)]
    cwait: list[dict[int, bool]] = [{} for _ in range(ncoll)]
    T, o_s, o_r, eager, tcoll = c.T, c.o_s, c.o_r, c.eager, c.coll
    perfect, none = overlap == "perfect", overlap == "none"
    async_ = progress == "async"
    hid_s, hid_r = change.hidden
    hiding = bool(hid_s or hid_r)
    at_post = change.polled
    polling = bool(at_post[0] or at_post[1])
    colls = prog.colls
    bases = [_sync_op(cl.op) for cl in colls]
    calls = prog.calls
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

    # per call: what it adds after its completions (its residual, or for a call that
    # replays nothing its recorded duration) and the computation after it
    extra = [[resid[r].get(c_.fn, 0.0) if c_.ops else c_.exit - c_.enter for c_ in cs]
             for r, cs in enumerate(calls)]
    gaps = prog.gaps()
    if change.compute is not None:
        gaps = [[g * f for g, f in zip(gs, fs, strict=True)]
                for gs, fs in zip(gaps, change.compute, strict=True)]
    push = heapq.heappush

    def finish(r: int) -> None:
        nonlocal seq
        i = cur[r]
        f = tmax[r] + extra[r][i]
        exits[r][i] = f
        nx = f + gaps[r][i]
        seq += 1
        push(heap, (nx, seq, r))

    def resolved(r: int, t: float) -> None:
        if t > tmax[r]:
            tmax[r] = t
        need[r] -= 1
        if need[r] == 0:
            finish(r)

    def set_done(side: int, k: int, t: float) -> None:
        done[side][k] = t
        waiting = wait[side]
        r = waiting[k]
        if r >= 0:
            waiting[k] = -1
            resolved(r, t)

    def msg(k: int) -> None:
        s0, r0 = S0[k], R0[k]
        if perfect:
            if s0 == s0 and sdone[k] != sdone[k]:
                set_done(0, k, s0)
            if s0 == s0 and Rc[k] == Rc[k] and rdone[k] != rdone[k]:
                set_done(1, k, max(Rc[k], s0))
        elif none:  # the model's times, and no move before both ends poll
            if Ps[k] != Ps[k] or Pr[k] != Pr[k]:
                return
            both = max(Ps[k], Pr[k]) + T[k]
            if not eager[k]:
                if sdone[k] != sdone[k]:
                    set_done(0, k, both)
                    set_done(1, k, both)
                return
            if sdone[k] != sdone[k]:
                set_done(0, k, max(s0 + o_s[k], both))
            if Rc[k] == Rc[k] and rdone[k] != rdone[k]:
                set_done(1, k, max(max(Rc[k], s0 + T[k] - o_r[k]) + o_r[k], both))
        elif eager[k]:
            if s0 == s0 and sdone[k] != sdone[k]:
                set_done(0, k, s0 + o_s[k])
            if s0 == s0 and Rc[k] == Rc[k] and rdone[k] != rdone[k]:
                # a hidden receive's data is there at the post (Change)
                arrive = s0 if hiding and k in hid_r else s0 + T[k] - o_r[k]
                set_done(1, k, max(Rc[k], arrive) + o_r[k])
        else:  # rendezvous
            if hiding and s0 == s0:  # hidden ends (Change) need only the send's post
                if k in hid_s and sdone[k] != sdone[k]:
                    set_done(0, k, s0)
                if k in hid_r and Rc[k] == Rc[k] and rdone[k] != rdone[k]:
                    set_done(1, k, max(Rc[k], s0))
            if async_:  # moves from the later post, whatever the ends do
                if s0 != s0 or r0 != r0:
                    return
                t = max(s0, r0) + T[k]
            elif Ps[k] == Ps[k] and Pr[k] == Pr[k]:
                t = max(Ps[k], Pr[k]) + T[k]
            else:
                return
            if sdone[k] != sdone[k]:
                set_done(0, k, t)
            if rdone[k] != rdone[k]:
                set_done(1, k, t)

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
        base = bases[j]
        tc = 0.0 if perfect else tcoll[j]
        root = cl.root
        full = len(entries) == len(members)
        if base in ONE_TO_N and root in members:
            if root not in entries:
                return
            if m == root:
                for x, own in entries.items():
                    if x not in cdone[j]:
                        done_at(j, x, own if x == root else max(own, entries[root]), tc)
            else:
                done_at(j, m, max(entries[m], entries[root]), tc)
        elif base in N_TO_ONE and root in members:
            if m != root:
                done_at(j, m, entries[m], tc)
            if full:
                done_at(j, root, max(entries.values()), tc)
        elif full:
            last = max(entries.values())
            for x in members:
                done_at(j, x, last, tc)

    for r in range(n):
        if len(calls[r]) >= 2:
            cs = calls[r]
            enters[r][0], exits[r][0] = cs[0].enter, cs[0].exit
            seq += 1
            push(heap, (cs[0].exit + gaps[r][0], seq, r))
        else:
            ended[r] = True

    pop = heapq.heappop
    while heap:
        t, _, r = pop(heap)
        i = cur[r] + 1
        cur[r] = i
        enters[r][i] = t
        cs = calls[r]
        if i == len(cs) - 1:  # the last call (MPI_Finalize): the rank's end
            ended[r] = True
            continue
        ops = cs[i].ops
        # the call's enter and exit and each operation (Program.events counts the same)
        events += 2 + len(ops)
        need[r] = 1  # held until every operation is registered
        tmax[r] = t
        for op, k in ops:
            if op < COLL_BLOCK:  # a message's end: op & 1 is its side, 0 send, 1 receive
                side = op & 1
                if op <= RECV_POST:
                    post[side][k] = t
                    if polling and k in at_post[side]:  # polled from its post (Change)
                        poll[side][k] = t
                    elif none or not eager[k]:
                        outstanding[r].append(~k if side else k)  # ~k: the receive's end
                    msg(k)
                    continue
                if op >= SEND_BLOCK:
                    post[side][k] = t
                comp[side][k] = t
                polled = poll[side]
                first = polled[k] != polled[k]
                if first:
                    polled[k] = t
                d = done[side][k]
                if d == d:
                    if d > tmax[r]:
                        tmax[r] = d
                    if first and hiding:  # a hidden end done early: its partner may
                        msg(k)  # still wait for this poll
                else:
                    need[r] += 1
                    wait[side][k] = r
                    msg(k)
            elif op != COLL_DONE:  # COLL_BLOCK, COLL_POST
                cpost[k][r] = t
                if op == COLL_BLOCK:
                    centr[k][r] = t
                    need[r] += 1
                    cwait[k][r] = True
                coll(k, r)
            else:  # COLL_DONE
                centr[k][r] = t
                if r in cdone[k]:
                    tmax[r] = max(tmax[r], cdone[k][r])
                else:
                    need[r] += 1
                    cwait[k][r] = True
                    coll(k, r)
        pend = outstanding[r]
        if pend and (need[r] > 1 or tmax[r] > t):
            # the call waits for a completion: MPI polls this rank's pending requests
            outstanding[r] = []
            for x in pend:
                if x >= 0 and Ps[x] != Ps[x]:
                    Ps[x] = t
                    msg(x)
                elif x < 0 and Pr[~x] != Pr[~x]:
                    Pr[~x] = t
                    msg(~x)
        resolved(r, t)
    unresolved = [r for r in range(n) if not ended[r]]
    return Replay(enter=enters, exit=exits, send_post=S0, recv_post=R0, coll_sync=csync,
                  events=events, unresolved=unresolved)


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
