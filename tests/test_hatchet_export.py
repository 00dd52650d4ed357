"""`mpi-overlap export hatchet RUN_DIR`: a profile as Hatchet's literal format, loaded
here by Hatchet itself: the root holds the totals over ranks, each breakdown (function,
size bin, region) the sums of its children."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli
from fake_runs import run_dir

ht = pytest.importorskip("hatchet", reason="llnl-hatchet is in the dev extra (make setup)")


def _rank(r: int, isend: float) -> dict:
    return {"rank": r, "host": f"n{r}", "profile": {
        "totals": {"xfer_s": isend + 0.5, "min_s": 0.1, "max_s": 0.4, "nonoverlap_s": 0.2},
        "by_function": [{"fn": "MPI_Isend", "xfer_s": isend, "nonoverlap_s": 0.1 * (r + 1)},
                        {"fn": "MPI_Irecv", "xfer_s": 0.5, "nonoverlap_s": 0.0}],
        "by_bin": [{"lo": 1024, "hi": 2048, "xfer_s": isend + 0.5}],
        "by_region": [{"region": "exchange", "xfer_s": isend + 0.5}]}}


def test_hatchet_reads_the_export(tmp_path: Path) -> None:
    result = {"app": {"argv": ["/home/u/halo"]}, "ranks": [_rank(0, 1.0), _rank(1, 2.0)]}
    d = run_dir(tmp_path, "profile", result)
    proc = run_cli("export", "hatchet", str(d))
    assert proc.returncode == 0, proc.stderr
    literal = json.loads((d / "hatchet.json").read_text())
    gf = ht.GraphFrame.from_literal(literal)
    df = gf.dataframe.reset_index(drop=True).set_index("name")
    assert df.loc["exchange", "xfer_s"] == pytest.approx(4.0)  # region: 1.5 + 2.5
    assert df.loc["MPI_Isend", "xfer_s"] == pytest.approx(3.0)
    assert df.loc["MPI_Isend", "nonoverlap_s_max_rank"] == pytest.approx(0.2)
    assert df.loc["by function", "xfer_s"] == pytest.approx(4.0)
    assert df.loc["1 KiB – 2 KiB", "xfer_s"] == pytest.approx(4.0)
    root = literal[0]
    assert root["frame"]["name"] == "halo" and root["metrics"]["xfer_s"] == pytest.approx(4.0)
    assert [c["frame"]["name"] for c in root["children"]] == ["by function", "by size",
                                                              "by region"]


def test_only_a_profile_is_exported(tmp_path: Path) -> None:
    d = run_dir(tmp_path, "overhead", {"results": {}})
    one_line_error(run_cli("export", "hatchet", str(d)), "not a profile run", code=2)
