"""The checks on the bounds end to end, where their answer is certain: `mpi-overlap profile
-n 2` of native/tests/profiled_app.c under a transfer-time table that says every message
takes 10 s (forced with --force-table). No call and no post → completion interval of that
program comes near 10 s, so every transfer must be flagged, on every rank: each in-call
transfer against its call, each across-call transfer against its interval, and the
headline must say so. No timing threshold is involved.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

ITERS = 5
XFER_S = 10.0  # the table's time for any size: far longer than any call of the program


def _profile(tmp_path: Path, mode: str):
    table = tmp_path / "slow.table"
    table.write_text("mpi-overlap-xfer-table 2\ncreated x\nmachine 0000000000000000 cpu=none\n"
                     "toolchain 0000000000000000 none\ntoolchain_name none\nranks 2 nodes 1\n"
                     f"intra 0 {XFER_S!r}\nintra 1048576 {XFER_S!r}\n")
    tc = get_toolchain("mpich")
    ensure_built(tc)
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--out", str(out), "--table",
                   str(table), "--force-table", "--", str(build_dir_for(tc) / "tests" /
                                                          "profiled_app"),
                   mode, "4096", str(ITERS), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert result_errors(run.result) == [] and analysis_errors(run.analysis) == []
    return run, run_dir


def _headline(analysis: dict) -> str:
    return analysis["findings"][1]


def test_every_in_call_transfer_of_a_too_slow_table_is_flagged(tmp_path):
    run, run_dir = _profile(tmp_path, "blocking")
    for doc in run.result["ranks"]:
        p = doc["profile"]
        inc, acr = p["checks"]["in_call"], p["checks"]["across_calls"]
        # Send or Recv, and Sendrecv_replace's two transfers, in one call each
        assert p["cases"]["in-call"] == 3 * ITERS and inc["unchecked"] == 0
        assert inc["transfers"] == 3 * ITERS and inc["flagged"]["transfers"] == 3 * ITERS
        assert p["counters"]["xfer_exceeds_call"] == 3 * ITERS
        assert inc["calls"] == inc["calls_beyond"] == 2 * ITERS
        assert inc["xfer_s"] == pytest.approx(3 * ITERS * XFER_S)
        # the two transfers of a Sendrecv_replace count once against their call
        assert inc["longest_s"] == pytest.approx(2 * ITERS * XFER_S)
        assert inc["beyond_s"] == pytest.approx(inc["longest_s"] - inc["call_s"])
        assert 0 < inc["flagged"]["excess_s"] < inc["flagged"]["xfer_s"]
        assert acr["flagged"]["transfers"] == 0
        assert p["checks"]["beyond_s"] == pytest.approx(inc["beyond_s"])
        assert {(r["fn"], r["check"]) for r in p["checks"]["by_function"]} == {
            ("MPI_Send" if doc["rank"] == 0 else "MPI_Recv", "in-call"),
            ("MPI_Sendrecv_replace", "in-call")}
        assert [(r["lo"], r["check"]) for r in p["checks"]["by_bin"]] == [(4096, "in-call")]
    c = run.analysis["checks"]
    assert c["flagged"] and c["flagged_pct"] == pytest.approx(100.0)
    assert _headline(run.analysis).startswith(
        f"Checks on the bounds: transfers carrying 100 % of the transfer time "
        f"({6 * ITERS} transfers, ")
    html = (run_dir / "report.html").read_text()
    assert re.search(r"<h2[^>]*>Checks on the bounds — ", html) and "not trustworthy" in html


def test_every_across_call_transfer_of_a_too_slow_table_is_flagged(tmp_path):
    run, _ = _profile(tmp_path, "post-compute-wait")
    for doc in run.result["ranks"]:
        p = doc["profile"]
        acr = p["checks"]["across_calls"]
        assert p["cases"]["across-calls"] == ITERS
        assert acr["transfers"] == acr["flagged"]["transfers"] == ITERS
        assert p["counters"]["xfer_exceeds_span"] == ITERS
        assert 0 < acr["flagged"]["excess_s"] < acr["flagged"]["xfer_s"]
        assert p["checks"]["beyond_s"] == pytest.approx(acr["flagged"]["excess_s"])
        assert p["checks"]["in_call"]["flagged"]["transfers"] == 0
    assert run.analysis["checks"]["flagged"]
    assert "across-call transfers longer than the time from their post to their completion" \
        in _headline(run.analysis)
