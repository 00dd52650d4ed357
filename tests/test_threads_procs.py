"""threads-procs: analysis on hand-made documents, and (marker `mpi`) a quick run per
wheel toolchain with the consistency checks of issue 6, experiment 8."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.analysis.stats import summarize
from mpi_overlap.benchmarks.registry import BENCHMARKS
from mpi_overlap.benchmarks.threads_procs.analysis import analyze as analyze_threads_procs
from mpi_overlap.core import documents as schema
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params


def _launch(kind: str, rates: list[list[float]], share: float = 1.0) -> dict:
    return {
        "workers_kind": kind, "requested": "x", "provided": "x", "call": "MPI_Send",
        "calls_per_worker": 1000, "online_cpus": 2, "reps_done": len(rates[0]),
        "counts": [{"workers": i + 1, "msgs_per_s": sorted(r)[len(r) // 2],
                    "rate": summarize(r), "samples_msgs_per_s": r,
                    "cpu_share_min": [share] * len(r)} for i, r in enumerate(rates)],
    }


def test_analysis_of_a_made_up_run() -> None:
    p1 = [100.0, 101.0, 99.0, 100.0, 100.5]
    doc = {"results": {"launches": [
        _launch("processes", [p1, [2 * v for v in p1]]),
        _launch("threads", [[80.0, 81.0, 79.0, 80.0, 80.5], [60.0, 61.0, 59.0, 60.0, 60.5]]),
    ]}}
    a = analyze_threads_procs(doc)
    assert a["processes"][1]["speedup"]["ratio"] == pytest.approx(2.0)
    assert a["threads"][1]["speedup"]["ratio"] == pytest.approx(0.75)
    assert a["multiple_over_single"]["ratio"] == pytest.approx(0.8)
    assert a["multiple_cost_pct"] == pytest.approx(20.0)
    assert a["oversubscribed"] is False
    assert "2 processes reach 2.00x" in a["finding"]
    assert "2 threads reach 0.75x" in a["finding"]
    assert "costs 20.0 %" in a["finding"]


def test_registered_in_the_overhead_suite() -> None:
    b = BENCHMARKS["threads-procs"]
    assert (b.suite, b.suite_order) == ("overhead", 70)
    launches = b.launches(2, True)
    assert [x.ranks for x in launches] == [None, 1]
    assert "multiple" in launches[1].args


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_quick_run(tc: str, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli("bench", "threads-procs", "--quick", "-n", "2", "--mpi", tc,
                   "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.status == "complete"
    assert schema.result_errors(run.result) == []
    assert (run_dir / "threads-procs.svg").read_text().startswith("<svg")
    a = run.analysis
    finding = a["finding"]
    assert "\n" not in finding and re.search(r"\d", finding)
    assert f"{a['processes'][1]['speedup']['ratio']:.2f}x" in finding
    # the thread-level cost: a finite ratio (MULTIPLE + 1 thread over SINGLE + 1 process)
    assert math.isfinite(a["multiple_over_single"]["ratio"])
    assert a["provided_multiple"] is not None
    assert [s["workers"] for s in a["processes"]] == [1, 2]
    # How much 2 processes gain over 1 is a timing, and this machine's two vCPUs do not
    # always give two cores' work (seen: 1.14x [1.07, 1.19] with both processes holding a
    # whole CPU and no foreign load recorded): it is the benchmark's figure, reported with
    # its interval in the finding above, not a pass/fail claim. What holds on any machine:
    # each side's CPU share is a share, and the speedup lies in its own interval.
    for side in a["processes"]:
        assert 0.0 < side["cpu_share"] <= 1.05, side
    speedup = a["processes"][1]["speedup"]
    assert 0.0 < speedup["ci95_low"] <= speedup["ratio"] <= speedup["ci95_high"], speedup
