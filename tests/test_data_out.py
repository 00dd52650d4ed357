"""`mpi_overlap.load(run_dir)`: run directories as pandas DataFrames — a profile per rank
and entry, a benchmark's points (one nested level flattened), the headline figures — and
a directory that is not a run refused with the usual one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

import mpi_overlap
from fake_runs import run_dir
from mpi_overlap.errors import UserError


def test_a_profile_is_one_row_per_rank_and_entry(tmp_path: Path) -> None:
    def rank(r: int, nonoverlap: float) -> dict:
        return {"rank": r, "host": f"n{r}", "profile": {
            "totals": {"xfer_s": 1.0, "min_s": 0.2},
            "by_function": [{"fn": "MPI_Isend", "nonoverlap_s": nonoverlap},
                            {"fn": "MPI_Wait", "nonoverlap_s": 0.0}],
            "by_bin": [{"lo": 0, "hi": 1024, "transfers": 3}]}}

    run = mpi_overlap.load(run_dir(tmp_path, "profile",
                                    {"ranks": [rank(0, 0.5), rank(1, 0.25)]}))
    fn = run.frames["by_function"]
    assert list(fn["rank"]) == [0, 0, 1, 1] and list(fn["host"]) == ["n0", "n0", "n1", "n1"]
    assert fn.groupby("fn")["nonoverlap_s"].sum().to_dict() == {"MPI_Isend": 0.75,
                                                                "MPI_Wait": 0.0}
    assert run.frames["totals"].shape[0] == 2 and run.frames["by_bin"]["transfers"].sum() == 6
    assert "by_region" not in run.frames  # not in these profiles


def test_a_benchmark_gives_its_points_and_figures(tmp_path: Path) -> None:
    result = {"results": {"directions": [
        {"direction": "send", "sizes": [{"size": 0, "avail": {"value": 0.9}},
                                        {"size": 1024, "avail": {"value": 0.8}}]},
        {"direction": "recv", "sizes": [{"size": 0, "avail": {"value": 0.1}}]}]}}
    analysis = {"figures": [{"name": "latency_small_us", "value": 1.5, "unit": "µs"}]}
    run = mpi_overlap.load(run_dir(tmp_path, "overhead", result, analysis))
    sizes = run.frames["directions.sizes"]
    assert list(sizes["direction"]) == ["send", "send", "recv"]
    assert list(sizes["avail.value"]) == [0.9, 0.8, 0.1]
    assert run.frames["figures"].set_index("name")["value"]["latency_small_us"] == 1.5
    assert run.benchmark == "overhead"


def test_not_a_run_directory_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        mpi_overlap.load(tmp_path)


def test_report_tables_round_trip_from_their_csv(tmp_path: Path) -> None:
    """A table written as CSV with the report (csv_tables.py) reads back as the page shows
    it: the same headers and cells, commas and quotes included."""
    import json

    from mpi_overlap.report.csv_tables import write_csv_tables
    from mpi_overlap.report.html import HtmlTable, Section

    d = run_dir(tmp_path, "overhead", {"results": {}})
    rows = [("0 B", "1.20", 'a "quoted", comma'), ("1 KiB", "—", "")]
    table = HtmlTable("send — overhead per size", ("size", "µs", "note"), rows,
                      [("left", "num", "left")] * 2)
    listed = write_csv_tables([Section("Host overhead", None, [], [table])], d)
    (d / "report.json").write_text(json.dumps({"tables": listed}))
    back = mpi_overlap.load(d).report_tables()["send — overhead per size"]
    assert list(back.columns) == ["size", "µs", "note"]
    assert [tuple(r) for r in back.itertuples(index=False)] == rows


def test_csv_tables_that_do_not_fit_leave_none_behind(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk half-way through the tables: the ones written are removed (no half set,
    and their space is what run.json needs to say the report failed), the error goes on."""
    import errno

    from mpi_overlap.file_output import WriteError
    from mpi_overlap.report import csv_tables
    from mpi_overlap.report.html import HtmlTable, Section

    real = csv_tables.write_text
    calls = []

    def fill_up(path: Path, text: str) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise WriteError(path, OSError(errno.ENOSPC, "No space left on device"))
        real(path, text)

    monkeypatch.setattr(csv_tables, "write_text", fill_up)
    tables = [HtmlTable(f"t{i}", ("a",), [("1",)], [("left",)]) for i in range(4)]
    with pytest.raises(WriteError) as err:
        csv_tables.write_csv_tables([Section("s", None, [], tables)], tmp_path)
    assert err.value.disk_full
    assert list((tmp_path / "tables").glob("*.csv")) == []
