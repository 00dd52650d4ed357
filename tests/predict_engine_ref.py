"""The replay engine's event pass as it was before its speed work (src/mpi_overlap/predict/
engine.py at 9fddfad, verbatim but for its imports): the oracle that
tests/test_predict_same_replay.py holds the faster engine to, bit for bit, on generated
programs under every overlap and progress rule and every kind of Change. Not used by the
package; change it only together with a deliberate change of the replay's rules."""

from __future__ import annotations

import heapq

from mpi_overlap.predict.engine import N_TO_ONE, NO_CHANGE, ONE_TO_N, Change, Replay, _sync_op
from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.program import (
    COLL_BLOCK,
    COLL_DONE,
    RECV_POST,
    SEND_BLOCK,
    Program,
)


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

