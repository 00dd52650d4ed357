"""The time budget of an automatic collective calibration (calibrate.AUTO_COLL_BUDGET_S):
mo_collectives starts no new (op, size) after it, the series it measured go into the
table with a note that they were cut, and later runs reuse them instead of measuring
again; a complete calibration removes the note."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import own_state_dir
from mpi_overlap.calibration.calibrate import _cut_note, calibrate_collectives, find_or_calibrate
from mpi_overlap.calibration.xfer_table import read_table, save_table, write_table
from mpi_overlap.platform.toolchains import get_toolchain
from test_xfer_table import _result


def _collectives(complete: list[bool]) -> dict:
    return {"results": {"comm_size": 16, "series": [
        {"op": op, "complete": c, "sizes": [{"bytes": 0, "time_s": 1e-5}]}
        for op, c in zip(("bcast", "reduce", "allreduce"), complete, strict=False)]}}


def test_a_cut_calibration_leaves_a_note_and_a_complete_one_none() -> None:
    note = _cut_note(_collectives([False, False, False]), 16, 25.0, 2, Path("/runs/c"))
    assert note is not None
    assert note.startswith("cut by the 25 s limit of an automatic calibration: 2 of 3 ")
    assert "'mpi-overlap calibrate -n 16' measures them all" in note
    assert _cut_note(_collectives([True, True, True]), 16, None, 3, Path("/runs/c")) is None
    asked = _cut_note(_collectives([True, False]), 2, 5.0, 1, Path("/runs/c"),
                      "--collectives-budget")
    assert asked is not None and asked.startswith("cut by the 5 s limit of --collectives-budget")


def test_the_note_is_kept_in_the_table_file_per_communicator_size(tmp_path: Path) -> None:
    path = write_table(tmp_path / "t.table", _result(), "mpich",
                       coll={("bcast", 16): [(0, 1e-5)], ("bcast", 4): [(0, 3e-6)]})
    table = read_table(path).with_coll_note(16, "cut by the 25 s limit").with_coll_note(4, "x")
    save_table(path, table)
    again = read_table(path)
    assert again.coll_note(16) == "cut by the 25 s limit" and again.coll_note(4) == "x"
    assert again.coll_note(8) is None
    save_table(path, again.with_coll_note(16, None))  # a complete calibration of 16 ranks
    assert read_table(path).coll_note(16) is None and read_table(path).coll_note(4) == "x"


@pytest.mark.mpi
def test_a_budget_cuts_the_calibration_and_later_runs_reuse_what_it_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPI_OVERLAP_HOME", str(own_state_dir(tmp_path)))
    tc = get_toolchain("mpich")
    runs = tmp_path / "runs"
    path = find_or_calibrate(tc, ranks=2, out_base=runs)  # the point-to-point part
    assert not read_table(path).has_coll(3)
    calibrate_collectives(tc, path, ranks=3, quick=True, out_base=runs, budget_s=0.3)
    table = read_table(path)
    assert table.has_coll(3), "the first (op, size) is always measured"
    measured = len([k for k in table.coll if k[1] == 3])
    assert measured < 44, "0.3 s cannot measure all 44 collectives on 3 ranks"
    assert table.coll_note(3) is not None and table.coll_note(3).startswith(
        f"cut by the 0.3 s limit of an automatic calibration: {measured} of 44 ")
    made = sorted(runs.iterdir())
    assert find_or_calibrate(tc, ranks=3, out_base=runs) == path
    assert sorted(runs.iterdir()) == made, "a later run measured the collectives again"
