"""The overlap bounds of a timeline (predict/bounds.py, issue 36 item 1): worked by hand on
a two-rank program (the profiler's case 1, case 2 and its cut where the table overstates
a transfer, a non-blocking collective, an end the profile did not count), and on
generated programs the bounds' own invariants on the recorded and the replayed timeline
alike. That the recorded bounds are the profiler's own is checked on traced runs
(tests/test_predict_replay.py)."""

from __future__ import annotations

import random

import pytest

from mpi_overlap.predict.bounds import call_bounds, totals
from mpi_overlap.predict.engine import recorded, replay, residuals
from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.program import (
    COLL_DONE,
    COLL_POST,
    RECV_BLOCK,
    RECV_DONE,
    RECV_POST,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Coll,
    Msg,
)
from predict_synth import costs as random_costs
from predict_synth import program, two_ranks

MS = 1e-3


def _hand_made():
    # rank 0: MPI_Isend at 1 ms (0.01 ms in it), computes to 3 ms, MPI_Wait 0.2 ms;
    # then MPI_Iallreduce at 4 ms, MPI_Wait at 4.5 ms; then MPI_Irecv of message 1 whose
    # MPI_Wait follows 0.05 ms later.
    # rank 1: MPI_Recv of message 0 (one call), the collective likewise, MPI_Send's
    # message 1 in MPI_Send (a send end the profile did not count).
    prog = two_ranks(
        [("MPI_Isend", [(SEND_POST, 0)], 1 * MS, 1.01 * MS),
         ("MPI_Wait", [(SEND_DONE, 0)], 3 * MS, 3.2 * MS),
         ("MPI_Iallreduce", [(COLL_POST, 0)], 4 * MS, 4.02 * MS),
         ("MPI_Wait", [(COLL_DONE, 0)], 4.5 * MS, 4.6 * MS),
         ("MPI_Irecv", [(RECV_POST, 1)], 5 * MS, 5.01 * MS),
         ("MPI_Wait", [(RECV_DONE, 1)], 5.06 * MS, 5.3 * MS)],
        [("MPI_Recv", [(RECV_BLOCK, 0)], 0.5 * MS, 2.6 * MS),
         ("MPI_Iallreduce", [(COLL_POST, 0)], 4 * MS, 4.01 * MS),
         ("MPI_Wait", [(COLL_DONE, 0)], 4.4 * MS, 4.6 * MS),
         ("MPI_Send", [(SEND_BLOCK, 1)], 4.9 * MS, 5.2 * MS)])
    prog.msgs += [Msg(0, 1, 1 << 20), Msg(1, 0, 1 << 20, profiled=0b10)]
    prog.colls.append(Coll("iallreduce", (0, 1), -1, 8, unprofiled=frozenset({1})))
    c = Costs(T=[1.5 * MS, 1.0 * MS], o_s=[0.0, 0.0], o_r=[0.0, 0.0], eager=[False, False],
              coll=[0.3 * MS])
    return prog, c


def test_the_profilers_cases_worked_by_hand() -> None:
    prog, c = _hand_made()
    b0, b1 = call_bounds(prog, recorded(prog), c)
    # message 0's send (case 2): D = 3.2 - 1 = 2.2 ms, in MPI L = 0.01 + 0.2 ms:
    # max = min(D - L, T) = 1.5 ms, min = T - L = 1.29 ms; counted at the posting call
    assert (b0.transfers[1], b0.xfer_s[1]) == (1, pytest.approx(1.5 * MS))
    assert b0.max_s[1] == pytest.approx(1.5 * MS)
    assert b0.min_s[1] == pytest.approx(1.29 * MS)
    assert b0.transfers[2] == 0  # a completion counts at its post
    # the collective (case 2 on rank 0): D = 0.6 ms, L = 0.12 ms: max = min(0.48, 0.3),
    # min = 0.3 - 0.12; rank 1's call was not counted by the profile
    assert b0.max_s[3] == pytest.approx(0.3 * MS)
    assert b0.min_s[3] == pytest.approx(0.18 * MS)
    assert sum(b1.transfers[2:4]) == 0
    # message 1's receive: T = 1 ms over D = 0.3 ms, of which 0.05 computed: the table
    # overstates it, min = T - L = 0.75 ms is cut to max = 0.05 ms
    assert b0.max_s[5] == pytest.approx(0.05 * MS)
    assert b0.min_s[5] == pytest.approx(0.05 * MS)
    # rank 1: message 0's receive in one call (case 1), message 1's send not counted
    assert (b1.transfers[1], b1.xfer_s[1], b1.max_s[1], b1.min_s[1]) == (
        1, pytest.approx(1.5 * MS), 0.0, 0.0)
    assert b1.transfers[4] == 0
    t0 = totals(b0)
    assert t0["transfers"] == 3
    assert t0["nonoverlap_s"] == pytest.approx(t0["xfer_s"] - t0["max_s"])
    assert t0["xfer_s"] == pytest.approx(2.8 * MS)


@pytest.mark.parametrize("seed", range(40))
def test_bounds_are_ordered_on_generated_programs(seed: int) -> None:
    """0 ≤ min ≤ max ≤ transfer time, per call, on the recorded timeline and on the replay
    under every overlap rule; each counted end once: as many transfers as message ends
    and collective calls."""
    rng = random.Random(seed)
    prog = program(rng, rng.randint(2, 6), rng.randint(3, 12))
    c = random_costs(rng, prog)
    resid = residuals(prog, c)
    ends = 2 * len(prog.msgs) + sum(len(cl.members) for cl in prog.colls)
    timelines = [recorded(prog)] + [replay(prog, c, resid, overlap)
                                    for overlap in ("model", "none", "perfect")]
    for tl in timelines:
        bounds = call_bounds(prog, tl, c)
        assert sum(totals(b)["transfers"] for b in bounds) == ends
        for b in bounds:
            for n, x, lo, hi in zip(b.transfers, b.xfer_s, b.min_s, b.max_s, strict=True):
                assert n >= 0 and 0.0 <= lo <= hi <= x + 1e-15
                assert n or x == lo == hi == 0.0
