"""`mpi-overlap export hatchet RUN_DIR`: a profile as Hatchet's literal format, loaded
here by Hatchet itself: the root holds the job's totals over ranks, each breakdown
(function, size bin, region) the sums of its children, the same numbers as the profile
analysis — including the open last size bin (≥ 1 GiB)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli
from fake_runs import run_dir
from test_analysis_profile import MIB, Group, make_result, rank_doc
from test_report_profile import write_run

ht = pytest.importorskip("hatchet", reason="llnl-hatchet is in the dev extra (make setup)")
GIB = 1 << 30


def _rank(r: int, isend: float) -> dict:
    # MPI_Isend loses 0.1 s on rank 0 and 0.2 s on rank 1; MPI_Irecv loses nothing
    return rank_doc(r, [
        Group("MPI_Isend", "exchange", MIB, 2 * MIB, 5, isend, 0.1, isend - 0.1 * (r + 1)),
        Group("MPI_Irecv", "exchange", GIB, None, 5, 0.5, 0.1, 0.5),
    ], size=2, comp={"exchange": 1.0})


def test_hatchet_reads_the_export(tmp_path: Path) -> None:
    result = make_result([_rank(0, 1.0), _rank(1, 2.0)])
    result["app"]["argv"] = ["/home/u/halo"]
    d = write_run(tmp_path, "profile-run", result)
    proc = run_cli("export", "hatchet", str(d))
    assert proc.returncode == 0, proc.stderr
    literal = json.loads((d / "hatchet.json").read_text())
    gf = ht.GraphFrame.from_literal(literal)
    df = gf.dataframe.reset_index(drop=True).set_index("name")
    assert df.loc["exchange", "xfer_s"] == pytest.approx(4.0)  # region: 1.5 + 2.5
    assert df.loc["MPI_Isend", "xfer_s"] == pytest.approx(3.0)
    assert df.loc["MPI_Isend", "nonoverlap_s"] == pytest.approx(0.3)
    assert df.loc["MPI_Isend", "worst_rank"] == 1  # the rank losing most there
    assert df.loc["by function", "xfer_s"] == pytest.approx(4.0)
    assert df.loc["1 MiB–2 MiB", "xfer_s"] == pytest.approx(3.0)
    assert df.loc["≥ 1 GiB", "xfer_s"] == pytest.approx(1.0)  # the open last bin
    root = literal[0]
    assert root["frame"]["name"] == "halo" and root["metrics"]["xfer_s"] == pytest.approx(4.0)
    assert [c["frame"]["name"] for c in root["children"]] == ["by function", "by size",
                                                              "by region"]


def test_only_a_profile_is_exported(tmp_path: Path) -> None:
    d = run_dir(tmp_path, "overhead", {"results": {}})
    one_line_error(run_cli("export", "hatchet", str(d)), "not a profile run", code=2)
