"""`mpi-overlap bench comm-overlap --quick` on 2 ranks per wheel toolchain (Colmenares et al.
§III-B/§IV-B): valid documents, the figure, a one-line finding from the data, the
figures list, and consistency: every overlap sample contains its work; the improvement of
equation (1) cannot beat hiding the whole message (within a margin); the better test's
per-rank statistics are ordered and count the samples asked for. Unit tests of the
formulas and of the analysis on synthetic results (no MPI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.benchmarks.comm_overlap import SPEC
from mpi_overlap.benchmarks.comm_overlap.analysis import analyze as analyze_comm_overlap
from mpi_overlap.benchmarks.comm_overlap.analysis import (
    best_improvement_pct,
    hidden_pct,
    improvement_pct,
)
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.core.errors import UserError
from mpi_overlap.core.sizes import format_size
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

QUICK_SIZES = [1024, 65536, 1048576]
FIGURES = {"hidden_pct_largest": "overlap", "improvement_pct_largest": "overlap",
           "better_improvement_pct_rank0": "overlap", "better_improvement_pct_rank1": "overlap",
           "compute_slowdown_pct_largest": "cost", "message_us_largest": "cost",
           "message_us_smallest": "cost", "largest_bytes": "info"}
# Percentage points the measured improvement may lie below its bound: the work alone and
# the work inside the overlap version are separate samples of a noisy machine.
MARGIN_PCT = 15.0


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_comm_overlap_quick(tmp_path: Path, tc: str) -> None:
    ensure_built(get_toolchain(tc))
    out = tmp_path / "runs"
    proc = run_cli("bench", "comm-overlap", "--mpi", tc, "--quick", "-n", "2", "--out",
                   str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "comm-overlap"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    html = (run_dir / "report.html").read_text()
    assert "Communication–computation overlap (Colmenares et al., §III-B" in html
    assert "<svg" in html

    res = run.result["results"]
    n = res["samples"]
    assert n == 200 and [p["bytes"] for p in res["points"]] == QUICK_SIZES
    assert res["points_planned"] == len(QUICK_SIZES)
    for p in res["points"]:
        b = p["basic"]
        assert p["work_units"] >= 1
        for key in ("message", "workload", "overlap", "overlap_work"):
            assert len(b[f"{key}_samples_us"]) == n and b[key]["n"] == n
        # Each overlap sample times Isend + work + Wait, so it contains its own work.
        for total, work in zip(b["overlap_samples_us"], b["overlap_work_samples_us"],
                               strict=True):
            assert total >= work
        assert sorted(r["rank"] for r in p["better"]) == [0, 1]
        for r in p["better"]:
            for key in ("nonoverlap", "overlap", "nonoverlap_work", "overlap_work"):
                s = r[key]
                assert s["n"] == n, (p["bytes"], r["rank"], key)
                assert s["min"] <= s["median"] <= s["max"]
                assert s["min"] <= s["mean"] <= s["max"]
                assert s["stdev"] >= 0
            # T_total contains the work of the same sample
            assert r["overlap"]["max"] >= r["overlap_work"]["min"]
            assert r["nonoverlap"]["max"] >= r["nonoverlap_work"]["min"]

    points = run.analysis["points"]
    for p in points:
        b = p["basic"]
        assert b["complete"]
        tm, tw = b["message_us"], b["workload_us"]
        # Overlap cannot hide more than the whole message.
        # (medians of separately timed samples: they compare on an undisturbed run)
        assert b["improvement_pct"] >= -100.0 * tm / (tm + tw) - MARGIN_PCT \
            or disturbed(run), p["bytes"]
        lo, hi = b["improvement_ci95"]
        assert lo <= hi

    figures = {f["name"]: f for f in run.analysis["figures"]}
    assert {k: f["kind"] for k, f in figures.items()} == FIGURES
    large = points[-1]
    assert figures["message_us_largest"]["value"] == large["basic"]["message_us"]
    assert figures["largest_bytes"]["value"] == 1048576.0

    finding = run.analysis["finding"]
    assert finding and "\n" not in finding
    assert f"hides {large['basic']['hidden_pct']:.0f} % of the message time at 1 MiB" in finding
    assert f"T_overlap {large['basic']['overlap_us']:.3g} µs" in finding


# ---- unit tests (no MPI) --------------------------------------------------------------


def test_equation_one() -> None:
    # 5 us message + 10 us work, overlapped in 10 us: the message was hidden completely
    assert improvement_pct(10.0, 5.0, 10.0) == pytest.approx(-100.0 / 3.0)
    assert hidden_pct(10.0, 5.0, 10.0) == pytest.approx(100.0)
    assert best_improvement_pct(5.0, 10.0) == pytest.approx(-100.0 / 3.0)
    # no overlap: T_overlap = T_message + T_workload
    assert improvement_pct(15.0, 5.0, 10.0) == pytest.approx(0.0)
    assert hidden_pct(15.0, 5.0, 10.0) == pytest.approx(0.0)
    # the shorter of the two bounds what can be hidden
    assert best_improvement_pct(10.0, 5.0) == pytest.approx(-100.0 / 3.0)
    assert improvement_pct(1.0, 0.0, 0.0) is None


def _stats(values: list[float]) -> dict[str, Any]:
    import numpy as np

    a = np.asarray(values)
    return {"n": a.size, "min": float(a.min()), "median": float(np.median(a)),
            "mean": float(a.mean()), "max": float(a.max()), "stdev": float(a.std(ddof=1)),
            "ci95_low": float(a.mean()), "ci95_high": float(a.mean())}


def _synthetic(sizes: list[int], hide: float) -> dict[str, Any]:
    """Message time 0.1 us per KiB, work equal to it; `hide` of the message hidden."""
    import numpy as np

    rng = np.random.default_rng(3)
    points = []
    for size in sizes:
        tm = 0.1 * size / 1024
        m = tm * (1 + 0.01 * rng.random(50))
        w = tm * (1 + 0.01 * rng.random(50))
        o = tm * (2 - hide) * (1 + 0.01 * rng.random(50))
        better = []
        for rank in (0, 1):
            non = list(2 * tm * (1 + 0.01 * rng.random(50)))
            ovl = list((2 - hide) * tm * (1 + 0.01 * rng.random(50)))
            wk = list(tm * (1 + 0.01 * rng.random(50)))
            better.append({"rank": rank, "nonoverlap": _stats(non), "overlap": _stats(ovl),
                           "nonoverlap_work": _stats(wk), "overlap_work": _stats(wk)})
        points.append({
            "bytes": size, "work_units": 10, "work_us_nominal": tm, "pilot_message_us": tm,
            "basic": {"message_samples_us": list(m), "workload_samples_us": list(w),
                      "overlap_samples_us": list(o), "overlap_work_samples_us": list(w)},
            "better": better,
        })
    return {"results": {"points": points}}


def test_analysis_full_and_no_overlap() -> None:
    full = analyze_comm_overlap(_synthetic([1024, 1 << 20], hide=1.0))
    assert analysis_errors(full) == []
    large = full["points"][-1]["basic"]
    assert large["hidden_pct"] == pytest.approx(100.0, abs=3.0)
    assert large["improvement_pct"] == pytest.approx(-50.0, abs=2.0)
    assert large["improvement_ci95"][0] <= large["improvement_pct"] <= large["improvement_ci95"][1]
    ranks = full["points"][-1]["better"]
    assert all(r["improvement_pct"] == pytest.approx(-50.0, abs=2.0) for r in ranks)
    assert all(r["improvement_pct_median"] == pytest.approx(-50.0, abs=2.0) for r in ranks)
    assert f"hides {large['hidden_pct']:.0f} % of the message time at 1 MiB" in full["finding"]

    none = analyze_comm_overlap(_synthetic([1024, 1 << 20], hide=0.0))
    large = none["points"][-1]["basic"]
    assert large["hidden_pct"] == pytest.approx(0.0, abs=3.0)
    assert large["improvement_pct"] == pytest.approx(0.0, abs=2.0)
    figures = {f["name"]: f["value"] for f in none["figures"]}
    assert figures["hidden_pct_largest"] == large["hidden_pct"]
    assert f"at {format_size(1024)}" in none["finding"]


def test_analysis_without_points() -> None:
    a = analyze_comm_overlap({"results": {"points": []}})
    assert a["figures"] == [] and a["finding"]
    assert analysis_errors(a) == []


def test_comm_overlap_args() -> None:
    def native(**values):
        return SPEC.to_native(values, quick=values.pop("quick", False), verbose=False)

    assert native(quick=True) == ["--quick"]
    assert native(sizes="4k", samples=10, work_factor=2.0) == [
        "--sizes", "4k", "--samples", "10", "--work-factor", "2.0"]
    with pytest.raises(UserError):
        native(work_factor=0.0)
    with pytest.raises(UserError):
        native(samples=1)
