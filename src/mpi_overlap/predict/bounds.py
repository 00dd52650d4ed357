"""The overlap bounds of a replayed (or the recorded) timeline (issue 36, item 1): each
transfer's minimum and maximum overlapped time by the profiler's own three cases
(docs/method.md, "Overlap bounds"; native/profiler/mop_bounds.h), computed on the
timeline's enters and exits with the target's transfer times, per call that posted it.

The recorded timeline with the run's table gives the profiler's figures back (tests/
test_predict_replay.py checks them against each rank's profile), so a prediction's bounds
and the profile's speak of the same transfers in the same terms: a message end or a
collective call that the profile counted (not under MPI_Pcontrol(0)), one transfer each,
its time the whole table time (T, or the collective's), begun at the enter of the call
that posted it and ended at the exit of the call that completed it."""

from __future__ import annotations

from dataclasses import dataclass

from .engine import Replay
from .model import Costs
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

# a completion's posting op, to find where its transfer began
_POST_OF = {SEND_DONE: SEND_POST, RECV_DONE: RECV_POST, COLL_DONE: COLL_POST}


@dataclass(slots=True)
class CallBounds:
    """One rank's transfers, summed per call that posted them (lists indexed like the
    rank's calls): how many, their transfer time, and their least and most overlapped
    time."""

    transfers: list[int]
    xfer_s: list[float]
    min_s: list[float]
    max_s: list[float]


def _counted(prog: Program, r: int, op: int, k: int) -> bool:
    """Whether the profile counted this end (a message end's bit, a collective's rank)."""
    if op in (COLL_BLOCK, COLL_POST, COLL_DONE):
        return r not in prog.colls[k].unprofiled
    side = 1 if op & 1 else 0  # a receive's codes are odd (program.py)
    return bool(prog.msgs[k].profiled >> side & 1)


def call_bounds(prog: Program, rep: Replay, c: Costs) -> list[CallBounds]:
    """Per rank, the bounds of the transfers it posted, per posting call, on `rep`'s
    timeline and with `c`'s transfer times. Case 1 (posted and completed in one call):
    min = max = 0. Case 2, with D the time from the posting call's enter to the completing
    call's exit and L the time inside MPI calls in between (both calls included):
    max = min(D − L, T), min = max(0, T − L), min cut to max where T > D (the table
    overstates the transfer; the profiler counts it in xfer_exceeds_span). A transfer
    whose completion the replay does not hold (none here: the program places an end only
    with both) would be case 3."""
    T, tcoll = c.T, c.coll
    out: list[CallBounds] = []
    for r, cs in enumerate(prog.calls):
        n = len(cs)
        en, ex = rep.enter[r], rep.exit[r]
        lib = [0.0] * (n + 1)  # time inside MPI before call i
        for i in range(n):
            lib[i + 1] = lib[i] + (ex[i] - en[i])
        b = CallBounds([0] * n, [0.0] * n, [0.0] * n, [0.0] * n)
        posted: dict[tuple[int, int], int] = {}
        for i in range(n):
            for op, k in cs[i].ops:
                if op in (SEND_POST, RECV_POST, COLL_POST):
                    posted[(op, k)] = i
                    continue
                if not _counted(prog, r, op, k):
                    continue
                t = tcoll[k] if op in (COLL_BLOCK, COLL_DONE) else T[k]
                if op in (SEND_BLOCK, RECV_BLOCK, COLL_BLOCK):
                    at, lo, hi = i, 0.0, 0.0
                else:
                    at = posted.pop((_POST_OF[op], k), i)
                    if at == i:
                        lo = hi = 0.0
                    else:
                        in_mpi = lib[i + 1] - lib[at]
                        hi = min(max(0.0, ex[i] - en[at] - in_mpi), t)
                        lo = max(0.0, t - in_mpi)
                        lo = min(lo, hi)
                b.transfers[at] += 1
                b.xfer_s[at] += t
                b.min_s[at] += lo
                b.max_s[at] += hi
        out.append(b)
    return out


def totals(b: CallBounds) -> dict[str, float]:
    """A rank's transfers and bounds (the profile's `totals` keys), with the time not
    overlapped (transfer time − the most overlapped)."""
    xfer, hi = sum(b.xfer_s), sum(b.max_s)
    return {"transfers": sum(b.transfers), "xfer_s": xfer, "min_s": sum(b.min_s),
            "max_s": hi, "nonoverlap_s": xfer - hi}
