"""The both-ends rule for eager messages whose data had arrived before their receive
(profile/analysis/twosided_bounds.py, `arrived_window`; docs/method.md, "Both ends of a message"):
worked cases on a receiver's timeline, without MPI."""

from __future__ import annotations

import numpy as np
import pytest

from mpi_overlap.calibration.xfer_parts import EAGER, Part, SizeParts
from mpi_overlap.calibration.xfer_table import XferTable
from mpi_overlap.profile.analysis.twosided_bounds import CallTimes, arrived_window, window_bounds

US = 1e-6
# The receiver: MPI_Barrier [0, 10] µs, computes [10, 5010], MPI_Recv [5010, 5027].
CALLS = CallTimes(np.array([0.0, 5010 * US]), np.array([10 * US, 5027 * US]), 0.0, 6000 * US)
X, O_S, O_R = 3.7 * US, 1.0 * US, 0.2 * US  # one-way time and overheads at 4 KiB
EPS = 1.5 * US  # the pair's clock error


def test_data_sent_early_arrived_and_its_transfer_overlapped_the_computation() -> None:
    """Rank 1 posted its send at 510 µs and it returned at 511 µs: the data was in rank
    0's MPI by 511 + L + ε, long before the receive at 5010 µs. Rank 0 computed through
    that window, so all of the transfer but o_r overlapped: 95 %, where the rule without
    the parts proved nothing (the 17 µs receive could hold the whole 3.7 µs)."""
    latency = X - O_S - O_R
    win = arrived_window(510 * US, 511 * US, 5010 * US, latency, EPS)
    assert win == pytest.approx((510 * US - EPS, 511 * US + latency + EPS))
    b = window_bounds(CALLS, *win, X - O_R)
    assert b.lo == pytest.approx(X - O_R) and b.hi == pytest.approx(X - O_R)
    assert b.lo / X > 0.9
    # without the parts: the receiver's whole window, the receive able to hold it all
    whole = window_bounds(CALLS, 510 * US - EPS, 5027 * US, X)
    assert whole.lo == 0


def test_a_late_sender_s_data_had_not_arrived() -> None:
    """The send returned after the receive was posted (or too close to it for the clocks
    to tell): no split, the receiver's window keeps the whole transfer."""
    latency = X - O_S - O_R
    assert arrived_window(5020 * US, 5021 * US, 5010 * US, latency, EPS) is None
    assert arrived_window(5000 * US, 5008 * US, 5010 * US, latency, EPS) is None
    assert arrived_window(510 * US, None, 5010 * US, latency, EPS) is None


def test_the_table_gives_eager_parts_up_to_its_limit_only() -> None:
    part = Part(O_S, O_S, O_S)
    table = XferTable(machine_fp="0" * 16, machine_key="m", toolchain_fp="1" * 16,
                      toolchain_key="t", toolchain_name="mpich", ranks=2, nodes=1,
                      created="x", points={"intra": [(0, 2 * US), (4096, X), (65536, 14 * US)]},
                      parts={("intra", 0): SizeParts(0, EAGER, part, Part(O_R, O_R, O_R), part),
                             ("intra", 4096): SizeParts(4096, EAGER, part,
                                                        Part(O_R, O_R, O_R), part)},
                      eager_limits={"intra": 4096})
    assert table.eager_parts("intra", 2048, X) == pytest.approx((O_S, O_R))
    assert table.eager_parts("intra", 4096, 0.5 * US) == pytest.approx((0.5 * US, O_R))
    assert table.eager_parts("intra", 8192, X) is None
    assert table.eager_parts("inter", 0, X) == pytest.approx((O_S, O_R))  # priced as intra
