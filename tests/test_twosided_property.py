"""Two-sided overlap bounds (profile/analysis/twosided_bounds.py) against timelines whose true
transfers are known (tests/twosided_simulator.py), with each rank's clock offset by up to
its stated alignment error:

* the two-sided bounds contain the true overlap of both ends in every generated case;
* they are never looser than the one-sided bounds (the paper's case over the side's own
  [post, completion]) where both bound the same thing: always on the sender, and on the
  receiver when the send was posted after the receive (its window then lies inside the
  receive's own); the reported bounds, which intersect the two there, neither;
* hand-worked cases: a late sender's wait inflates nothing, and a blocking receive of data
  that arrived early gets a lower bound above 0 where the one-sided bound (which assumes
  the data moved only after the post) is 0 and, here, wrong.
"""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.profile.analysis.twosided_bounds import (
    Bounds,
    CallTimes,
    case2,
    intersect,
    receiver_window,
    sender_window,
    window_bounds,
)
from property_examples import examples
from twosided_simulator import Rank, SimMessage, overlap, simulate

TOL = 1e-12
SETTINGS = settings(max_examples=examples(400), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def observed(rank: Rank) -> CallTimes:
    o = rank.offset
    return CallTimes(rank.enter + o, rank.exit + o, rank.first + o, rank.last + o)


def sides(s: Rank, r: Rank, m: SimMessage) -> dict[str, Bounds | bool]:
    """One-sided, two-sided and reported bounds of both ends, from observed times."""
    cs, cr = observed(s), observed(r)
    eps = s.eps + r.eps
    ps, ds = m.post_s + s.offset, m.done_s + s.offset
    pr, dr = m.post_r + r.offset, m.done_r + r.offset
    one_s = window_bounds(cs, ps, ds, m.xfer)
    one_r = window_bounds(cr, pr, dr, m.xfer)
    two_s = window_bounds(cs, *sender_window(ps, ds, dr, eps), m.xfer)
    a, b, nested = receiver_window(ps, pr, dr, eps)
    two_r = window_bounds(cr, a, b, m.xfer)
    return {"one_s": one_s, "one_r": one_r, "two_s": two_s, "two_r": two_r, "nested": nested,
            "rep_s": intersect(one_s, two_s), "rep_r": intersect(one_r, two_r) if nested else two_r}


def truths(s: Rank, r: Rank, m: SimMessage) -> tuple[float, float]:
    return (overlap(m.true_s, m.true_s + m.xfer, s.comp()),
            overlap(m.true_r, m.true_r + m.xfer, r.comp()))


def contains(b: Bounds, x: float) -> bool:
    return b.lo - TOL <= x <= b.hi + TOL


def not_looser(two: Bounds, one: Bounds) -> bool:
    return two.lo >= one.lo - TOL and two.hi <= one.hi + TOL


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_two_sided_bounds_contain_the_truth(seed: int) -> None:
    s, r, msgs = simulate(random.Random(seed))
    for m in msgs:
        b = sides(s, r, m)
        true_s, true_r = truths(s, r, m)
        assert contains(b["two_s"], true_s), (m, b, true_s)
        assert contains(b["two_r"], true_r), (m, b, true_r)
        assert contains(b["rep_s"], true_s), (m, b, true_s)
        assert contains(b["rep_r"], true_r), (m, b, true_r)
        assert not b["two_s"].clamped and not b["two_r"].clamped  # the windows hold xfer


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_two_sided_bounds_are_never_looser(seed: int) -> None:
    s, r, msgs = simulate(random.Random(seed))
    for m in msgs:
        b = sides(s, r, m)
        assert not_looser(b["two_s"], b["one_s"]), (m, b)
        assert not_looser(b["rep_s"], b["one_s"]), (m, b)
        if b["nested"]:
            assert not_looser(b["two_r"], b["one_r"]), (m, b)
            assert not_looser(b["rep_r"], b["one_r"]), (m, b)
        assert b["rep_s"].lo <= b["rep_s"].hi and b["rep_r"].lo <= b["rep_r"].hi


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_one_sided_receiver_bound_holds_when_data_moved_after_the_post(seed: int) -> None:
    """The simulator's truth is the one-sided bounds' too, where its assumption holds: the
    receiver's transfer after the receive's post (the sender's always)."""
    s, r, msgs = simulate(random.Random(seed))
    for m in msgs:
        b = sides(s, r, m)
        true_s, true_r = truths(s, r, m)
        assert contains(b["one_s"], true_s)
        if m.true_r >= m.post_r:
            assert contains(b["one_r"], true_r)


def test_split_of_a_window() -> None:
    calls = CallTimes(np.array([1.0, 4.0]), np.array([2.0, 6.0]), 1.0, 6.0)
    assert calls.split(0.0, 3.0) == (1.0, 1.0, 1.0)  # unknown before the first event
    assert calls.split(1.5, 5.0) == (2.0, 1.5, 0.0)
    assert calls.split(5.0, 7.0) == (0.0, 1.0, 1.0)
    assert calls.split(3.0, 3.0) == (0.0, 0.0, 0.0)


def test_case2_and_clamping() -> None:
    assert case2(2.0, comp=5.0, lib=1.0) == Bounds(1.0, 2.0)
    assert case2(2.0, comp=0.5, lib=0.5) == Bounds(0.5, 0.5, True)
    assert case2(2.0, comp=1.0, lib=3.0, unknown=1.0) == Bounds(0.0, 2.0)


def test_late_sender_wait_is_not_overlap() -> None:
    """Known answer (a): rank 0 waits 5 ms in MPI_Recv for a send posted 5 ms late. The
    receiver's window starts at the send's post, inside the receive: no overlap."""
    recv = CallTimes(np.array([0.0]), np.array([5.01e-3]), 0.0, 5.01e-3)
    send = CallTimes(np.array([5e-3]), np.array([5.005e-3]), 0.0, 5.005e-3)
    eps, xfer = 2e-6, 3e-6
    a, b, nested = receiver_window(5e-3, 0.0, 5.01e-3, eps)
    assert nested
    assert window_bounds(recv, a, b, xfer).hi == 0.0
    assert window_bounds(send, *sender_window(5e-3, 5.005e-3, 5.01e-3, eps), xfer).hi == 0.0


def test_early_data_gives_a_positive_lower_bound() -> None:
    """Known answer (b): rank 1 sends 4 KiB at 1 ms; rank 0 computes until 5 ms, then its
    MPI_Recv takes 0.5 µs. The data moved while rank 0 computed: one-sided [0, 0] (in the
    call), two-sided min = xfer − 0.5 µs > 0 and at most the true overlap."""
    xfer = 3e-6
    recv = CallTimes(np.array([0.0, 5e-3]), np.array([1e-5, 5e-3 + 5e-7]), 0.0, 5e-3 + 5e-7)
    one = window_bounds(recv, 5e-3, 5e-3 + 5e-7, xfer)
    assert one.hi == 0.0
    a, b, nested = receiver_window(1e-3, 5e-3, 5e-3 + 5e-7, 2e-6)
    assert not nested
    two = window_bounds(recv, a, b, xfer)
    assert math.isclose(two.lo, xfer - 5e-7) and two.lo > 0
    true = overlap(1.001e-3, 1.001e-3 + xfer, [(1e-5, 5e-3)])
    assert two.lo <= true <= two.hi
