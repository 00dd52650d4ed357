"""The job's statistics (issue 19): the library reduces every rank's measures up a binomial
tree at MPI_Finalize (native/profiler/mop_reduce.h) and the analysis repeats the same order
over the rank documents (profile/documents/job_stats.py), so both give the same bits.

- the order: TreeReducer, going through the ranks one at a time, merges exactly as the
  tree does, for every job size (a merge that writes its order down shows it);
- what a cell keeps: sums, the ranks that have it, the worst rank (lowest on ties);
- a disabled rank or one without a document keeps its place and adds nothing.
The library's own file against the documents, on real runs: tests/test_profile_job_file.py.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mpi_overlap.profile.documents import job_stats as js


def _tree_as_the_library_runs_it(n: int) -> str:
    """mop_reduce_job's loop, with ranks as strings and a merge that writes (a+b)."""
    held = [str(r) for r in range(n)]
    mask = 1
    while mask < n:
        for r in range(0, n, 2 * mask):  # ranks without the bit take from rank + mask
            if r + mask < n:
                held[r] = f"({held[r]}+{held[r + mask]})"
        mask *= 2
    return held[0]


def test_the_reducer_merges_in_the_library_s_tree_order_for_every_job_size() -> None:
    for n in range(1, 70):
        tree = js.TreeReducer(lambda a, b: f"({a}+{b})")
        for r in range(n):
            tree.push(str(r))
        assert tree.result() == _tree_as_the_library_runs_it(n), n


def _doc(rank: int, xfer: float, hi: float, regions: dict[str, float], status: str = "complete"
         ) -> dict[str, Any]:
    cell = {"transfers": 1, "xfer_s": xfer, "min_s": 0.0, "max_s": hi}
    return {"rank": rank, "status": status, "profile": {
        "totals": {**cell, "comp_s": 1.0, "call_s": 0.5},
        "cases": {"in-call": 1}, "counters": {"events": 4, "outstanding_peak": rank + 1},
        "by_bin": [{"lo": 8, "hi": 16, **cell}],
        "by_function": [{"fn": "MPI_Isend", "calls": 2, "call_s": 0.25, **cell}],
        "by_region": [{"region": name, "comp_s": 0.1, "call_s": 0.2, "transfers": 1,
                       "xfer_s": x, "min_s": 0.0, "max_s": 0.0} for name, x in regions.items()],
    }}


def test_cells_keep_sums_ranks_and_the_worst_rank_lowest_on_ties() -> None:
    docs = [_doc(0, 1.0, 0.5, {"a": 2.0}), _doc(1, 1.0, 0.5, {"a": 3.0, "b": 1.0}),
            _doc(2, 9.0, 0.0, {}, status="disabled"), _doc(3, 1.0, 0.5, {"b": 1.0})]
    s = js.reduce_documents(docs, ranks=5)  # rank 4 wrote nothing
    assert s["ranks"] == 5 and s["ranks_with_data"] == 3
    assert s["totals"]["xfer_s"] == 3.0 and s["totals"]["nonoverlap_s"] == 1.5
    fn = s["by_function"]["MPI_Isend"]
    assert (fn["calls"], fn["ranks"], fn["worst_rank"], fn["worst_s"]) == (6, 3, 0, 0.5)
    a, b = s["by_region"]["a"], s["by_region"]["b"]
    assert (a["ranks"], a["worst_rank"], a["xfer_s"]) == (2, 1, 5.0)
    assert (b["ranks"], b["worst_rank"]) == (2, 1)  # a tie of 1.0: the lower rank
    assert s["counters"] == {"events": 12, "outstanding_peak": 4}  # a peak is the largest
    assert s["cases"] == {"in-call": 3}
    assert js.comparable(s)["by_bin"][(8, 16)]["worst_rank"] == 0


def test_counters_and_flagged_entries_list_the_lowest_16_ranks_and_count_all() -> None:
    def doc(rank: int) -> dict[str, Any]:
        d = _doc(rank, 1.0, 0.5, {})
        d["profile"]["counters"]["xfer_exceeds_call"] = rank % 2  # odd ranks only
        d["profile"]["checks"] = {
            "in_call": {"transfers": 2, "xfer_s": 1.0, "calls": 1, "call_s": 0.5,
                        "longest_s": 0.75, "calls_beyond": 1, "beyond_s": 0.25,
                        "unchecked": 0, "flagged": {"transfers": 1, "xfer_s": 0.75,
                                                    "excess_s": 0.25}},
            "across_calls": {"transfers": 1, "xfer_s": 2.0,
                             "flagged": {"transfers": 0, "xfer_s": 0.0, "excess_s": 0.0}},
            "beyond_s": 0.25,
            "by_function": [{"fn": "MPI_Recv", "check": "in-call", "transfers": 1,
                             "xfer_s": 0.75, "excess_s": 0.25}] if rank >= 3 else [],
            "by_bin": [],
        }
        return d

    s = js.reduce_documents([doc(r) for r in range(40)], ranks=40)
    assert s["counters_ranks"]["xfer_exceeds_call"] == (20, tuple(range(1, 32, 2)))
    assert s["counters_ranks"]["events"] == (40, tuple(range(16)))
    assert "xfer_exceeds_call" in s["counters"] and s["counters"]["xfer_exceeds_call"] == 20
    inc = s["checks"]["in_call"]
    assert (inc["calls"], inc["flagged_transfers"], inc["beyond_s"]) == (40, 40, 10.0)
    assert s["checks"]["across_calls"]["xfer_s"] == 80.0
    recv = s["checks"]["by_function"][("MPI_Recv", "in-call")]
    assert recv["who"] == (37, tuple(range(3, 19))) and recv["transfers"] == 37


@given(st.lists(st.floats(min_value=0, max_value=1e3, allow_nan=False), min_size=1,
                max_size=40))
def test_the_sums_are_the_tree_s_not_the_sequence_s(values: list[float]) -> None:
    """The job's transfer time is the tree's sum of the ranks' (which may differ from a
    running sum in the last bits): the order is what makes the two sides agree."""
    docs = [_doc(r, x, 0.0, {}) for r, x in enumerate(values)]
    tree = js.TreeReducer(lambda a, b: a + b)
    for x in values:
        tree.push(x)
    assert js.reduce_documents(docs, len(values))["totals"]["xfer_s"] == tree.result()
