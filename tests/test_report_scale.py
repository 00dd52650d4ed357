"""The report-scale benchmark's parts that decide what it measures (report_scale.py):
synthetic run directories hold N renumbered copies of the source's rank profiles and say
they are synthetic, and the report reads them like any profile run. Its timings are a
benchmark's (`make bench-report-scale`), never asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.errors import UserError
from mpi_overlap.report_scale import _parse_ranks, synthesize
from test_report_profile import sample_result, write_run


def test_synthetic_ranks_are_renumbered_copies_of_the_source(tmp_path: Path) -> None:
    source = write_run(tmp_path, "source", sample_result(), analysis=False)
    out = tmp_path / "ranks-5"
    synthesize(source, 5, out)
    result = json.loads((out / "result.json").read_text())
    base = json.loads((source / "result.json").read_text())["ranks"]
    assert [d["rank"] for d in result["ranks"]] == [0, 1, 2, 3, 4]
    assert {d["size"] for d in result["ranks"]} == {5}
    assert result["ranks_expected"] == 5 and result["missing_ranks"] == []
    for i, doc in enumerate(result["ranks"]):  # the profile of rank i is source rank i % 2's
        assert doc["profile"] == base[i % 2]["profile"]
    meta = json.loads((out / "run.json").read_text())
    assert meta["ranks"] == 5 and "5 copies" in meta["synthetic"]
    # ... and the report reads it as a 5-rank profile run
    proc = run_cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    analysis = json.loads((out / "analysis.json").read_text())
    assert len(analysis["ranks"]) == 5


def test_a_source_without_rank_profiles_is_refused(tmp_path: Path) -> None:
    empty = dict(sample_result(), ranks=[])
    source = write_run(tmp_path, "empty", empty, analysis=False)
    with pytest.raises(UserError, match="not a profile run with rank profiles"):
        synthesize(source, 4, tmp_path / "out")


@pytest.mark.parametrize("text", ["", "0", "12,x", "-3"])
def test_bad_rank_lists_are_one_line_errors(text: str) -> None:
    with pytest.raises(UserError, match="--ranks takes"):
        _parse_ranks(text)
