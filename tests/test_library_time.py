"""The profiler's own time once per launch (profile/analysis/library_time.py): the slowest rank's
MPI_Init and MPI_Finalize, then rank 0's gather and reduction, summed; absent where no
rank recorded it. No MPI: rank documents written by hand."""

from __future__ import annotations

import pytest

from mpi_overlap.profile.analysis.library_time import LibraryTime, library_time_finding


def _doc(init: float | None, finalize: float | None = None) -> dict:
    lib = {} if init is None else {"init": init, **({} if finalize is None else
                                                     {"finalize": finalize})}
    return {"rank": 0, "library_s": lib} if lib else {"rank": 0}


def test_the_launch_pays_the_slowest_rank_and_rank_0s_collective_steps() -> None:
    acc = LibraryTime()
    for init, fin in ((0.021, 0.001), (0.025, 0.002), (0.022, 0.0015)):
        acc.add(_doc(init, fin))
    lt = acc.result({"gather_s": 0.0004}, {"reduce_s": 0.0002})
    assert lt is not None
    assert (lt["ranks"], lt["init_s_max"], lt["init_s_median"]) == (3, 0.025, 0.022)
    assert lt["per_launch_s"] == pytest.approx(0.025 + 0.002 + 0.0004 + 0.0002)
    text = library_time_finding(lt)
    assert text is not None and "25.0 ms in MPI_Init" in text and "27.6 ms in all" in text


def test_no_figure_where_no_rank_recorded_it() -> None:
    acc = LibraryTime()
    acc.add(_doc(None))
    assert acc.result({"gather_s": 0.001}, None) is None and library_time_finding(None) is None
    # a snapshot has its init but no finalize yet; no job file, no statistics
    acc.add(_doc(0.02))
    lt = acc.result(None, None)
    assert lt is not None and lt["finalize_s_max"] is None and lt["per_launch_s"] == 0.02
