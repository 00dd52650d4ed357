"""Words that do not contradict each other (issue 35, "Why" point 5): the overlap
sentence's range prints both ends with one precision, and as one figure where they print
alike; a profile whose transfers all began and ended inside blocking calls says it cannot
see into them and then claims no non-overlapped time (profile/analysis/headline.py)."""

from __future__ import annotations

from mpi_overlap.profile.analysis.profile import analyze_profile
from test_analysis_profile import KIB, NO_REGION, Group, make_result, rank_doc

MS = 1e-3


def _blocking(one_irecv: bool, call_s: float = 0.0) -> dict:
    """Two ranks exchanging 74 blocking 1 KiB messages (9.03 ms transfer time in all);
    with one_irecv, rank 1 also posts one 463 ns MPI_Irecv that may have overlapped."""
    send = [Group("MPI_Send", NO_REGION, KIB, 2 * KIB, 37, 4.515 * MS, 0.0, 0.0)]
    recv = [Group("MPI_Recv", NO_REGION, KIB, 2 * KIB, 37, 4.515 * MS, 0.0, 0.0)]
    if one_irecv:
        recv.append(Group("MPI_Irecv", NO_REGION, KIB, 2 * KIB, 1, 463e-9, 0.0, 463e-9))
    docs = [
        rank_doc(0, send, size=2, comp={NO_REGION: 0.5},
                 calls={"MPI_Send": (37, call_s)}, cases={"in-call": 37, "across-calls": 0}),
        rank_doc(1, recv, size=2, comp={NO_REGION: 0.5},
                 calls={"MPI_Recv": (37, call_s)},
                 cases={"in-call": 37, "across-calls": 1 if one_irecv else 0}),
    ]
    return make_result(docs)


def _overlap_finding(a: dict) -> str:
    return next(f for f in a["findings"] if "Overlap" in f)


def test_a_range_whose_ends_round_alike_reads_as_one_figure() -> None:
    a = analyze_profile(_blocking(one_irecv=True))
    assert 0 < a["job"]["max_pct"] < 0.05 and a["job"]["min_pct"] == 0
    text = _overlap_finding(a)
    assert "between 0 % and 0.0 %" not in text
    assert text.startswith("Overlap 0.0 % of 9.03 ms transfer time (75 transfers")


def test_all_in_call_claims_no_time_it_could_not_see() -> None:
    """'this layer cannot see into the call … at least 9.03 ms (100 %) was not overlapped'
    was one sentence: an all-in-call profile now says what it cannot see and stops."""
    for call_s in (0.0, 1.0):  # transfers a sizeable part of the MPI time, or negligible
        a = analyze_profile(_blocking(one_irecv=False, call_s=call_s))
        text = _overlap_finding(a)
        assert "cannot see into" in text and "no measured absence of overlap" in text
        assert "was not overlapped" not in text and "(100 %)" not in text, text
        assert "9.03 ms" in text  # the transfer time itself is still given
