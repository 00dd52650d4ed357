"""Eager or rendezvous from the late receiver (docs/method.md, "Eager or rendezvous"): the
peer's MPI_Send while rank 0 waits before receiving returns at once when eager and waits
for the receive when rendezvous; results without it keep the rule by o_s (no MPI needed)."""

from __future__ import annotations

import pytest

from mpi_overlap.calibration.xfer_parts import (
    EAGER,
    LATE_SHARE,
    RENDEZVOUS,
    parts_from_pingpong,
)

US = 1e-6


def _size(nbytes: int, o_s: float, sender_over_delay: list[float] | None,
          delay: float = 10 * US) -> dict:
    """A size with 16 undisturbed samples of each part (µs as given) and, unless None,
    the peer's send times as shares of the receiver's delay."""
    n = 16
    o_r = {"samples_s": [0.2 * US] * n, "cpu_share": [1.0] * n}
    if sender_over_delay is not None:
        o_r["sender_s"] = [r * delay for r in sender_over_delay]
        o_r["delay_s"] = [delay] * len(sender_over_delay)
    return {"bytes": nbytes, "samples_s": [], "parts": {
        "o_s": {"samples_s": [o_s * US] * n, "cpu_share": [1.0] * n},
        "o_r": o_r,
        "g": {"samples_s": [0.5 * US] * n, "cpu_share": [1.0] * n}}}


def _protocols(sizes: list[dict], one_way_us: float) -> dict[int, str]:
    doc = {"results": {"pairs": [{"class": "intra", "sizes": sizes}]}}
    points = {"intra": [(s["bytes"], one_way_us * US) for s in sizes]}
    return {b: p.protocol for (_, b), p in parts_from_pingpong([doc], points).items()}


def test_a_send_slower_than_the_one_way_time_is_eager_when_it_never_waits() -> None:
    # A send whose own time exceeds the ping-pong's one-way time (a fast path that the
    # ping-pong takes and a lone send does not), back at 0.17-0.25 of the receiver's delay
    # (one sample disturbed: 28 D): eager, where the rule by o_s alone says rendezvous
    late = [0.22, 0.17, 0.25, 0.21, 28.06, 0.23, 0.2, 0.19]
    assert _protocols([_size(1024, 0.49, late)], 0.29) == {1024: EAGER}
    assert _protocols([_size(1024, 0.49, None)], 0.29) == {1024: RENDEZVOUS}


def test_a_send_that_needs_the_receivers_progress_is_whole() -> None:
    # Debian Open MPI 4.1, 1 KiB, beside a receiver outside MPI for the whole delay: the
    # send returned only when the receiver came back into MPI (1.0-1.3 D); its o_s (with
    # the receiver polling) is small all the same
    late = [1.02, 1.05, 1.3, 1.01, 1.04]
    assert _protocols([_size(1024, 0.05, late)], 0.29) == {1024: RENDEZVOUS}


def test_a_send_that_waits_for_the_receive_is_rendezvous_whatever_its_o_s() -> None:
    late = [1.15, 1.2, 11.98, 1.3, 1.16, 131.4]
    assert _protocols([_size(4096, 0.3, late)], 2.7) == {4096: RENDEZVOUS}


@pytest.mark.parametrize("late", [[0.1, 0.1], [], None])
def test_too_few_late_samples_fall_back_to_o_s(late) -> None:
    assert _protocols([_size(8, 0.1, late)], 1.0) == {8: EAGER}
    assert _protocols([_size(8, 0.9, late)], 1.0) == {8: RENDEZVOUS}


def test_the_threshold_is_the_share_of_the_delay() -> None:
    below, above = [LATE_SHARE * 0.9] * 5, [LATE_SHARE * 1.1] * 5
    assert _protocols([_size(64, 0.9, below), _size(128, 0.1, above)], 1.0) == \
        {64: EAGER, 128: RENDEZVOUS}


def test_damaged_late_fields_are_ignored() -> None:
    doc = _size(8, 0.1, [0.1] * 5)
    doc["parts"]["o_r"]["delay_s"] = [10 * US] * 4  # one short: not paired
    assert _protocols([doc], 1.0) == {8: EAGER}  # by o_s
    doc = _size(8, 0.9, [0.1] * 5)
    doc["parts"]["o_r"]["delay_s"] = [0.0] * 5  # no delay: no share
    assert _protocols([doc], 1.0) == {8: RENDEZVOUS}  # by o_s
