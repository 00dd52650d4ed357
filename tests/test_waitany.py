"""`mpi-overlap bench waitany --quick` on 2 ranks per wheel toolchain: valid documents, a
figure, a one-line finding from the data, and consistency: each call over 1024 requests
takes longer than over one request, by a margin that noise on one call does not reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.benchmarks.waitany import SPEC
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_waitany_quick(tmp_path: Path, tc: str) -> None:
    ensure_built(get_toolchain(tc))
    out = tmp_path / "runs"
    proc = run_cli("bench", "waitany", "--mpi", tc, "--quick", "-n", "2", "--out", str(out),
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "waitany"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    html = (run_dir / "report.html").read_text()
    assert "MPI_Waitany / MPI_Testany / MPI_Waitsome scaling" in html and "<svg" in html

    res = run.result["results"]
    assert [p["n"] for p in res["points"]] == [2**k for k in range(11)]
    assert len(res["points"]) == res["points_planned"]
    for p in res["points"]:
        for key in ("waitany", "testany", "waitsome"):
            assert len(p[key]["samples_ns"]) == res["samples_per_point"]
            assert p[key]["time_ns"] is not None and p[key]["time_ns"] > 0
        assert p["testany"]["calls_median"] >= 1

    calls = {c["key"]: c for c in run.analysis["calls"]}
    for c in calls.values():
        first, last = c["first"], c["last"]
        assert first["n"] == 1 and last["n"] == 1024
        # 1024 requests scanned at >= 1 ns each, against one call's noise.
        assert last["time_ns"] > first["time_ns"] + 500, c["call"]
        assert c["fit"]["slope_ns"] > 0

    finding = run.analysis["finding"]
    assert finding and "\n" not in finding
    assert f"{calls['waitany']['fit']['slope_ns']:.2f} ns per posted request" in finding
    assert f"Testany {calls['testany']['fit']['slope_ns']:.2f}" in finding


def test_waitany_args() -> None:
    assert SPEC.to_native({"max_n": 64, "samples": 3}, quick=False, verbose=False) == [
        "--max-n", "64", "--samples", "3"]
    assert SPEC.to_native({}, quick=True, verbose=False) == ["--quick"]
    with pytest.raises(UserError, match="--max-n must be at least 1"):
        SPEC.to_native({"max_n": 0}, quick=False, verbose=False)
