"""`mpi-overlap bench polling --quick` on 2 ranks per wheel toolchain: valid documents, a
figure, a one-line finding from the data, the figures list, and consistency: no sample
completes more messages than its polls could (window per poll), availability is positive
and at most 1 within noise (median over the points), messages move at every size; the
notes on bandwidth falling with more frequent polling agree with the data (a report note,
not an assertion about the MPI). Unit tests of the analysis on synthetic
samples."""

from __future__ import annotations

import statistics
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.benchmarks.polling import SPEC
from mpi_overlap.benchmarks.polling.analysis import NOISE
from mpi_overlap.benchmarks.polling.analysis import analyze as analyze_polling
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

FIGURES = {"availability_fast_poll", "bandwidth_fast_poll_gbs", "available_interval_us",
           "bandwidth_available_gbs", "bandwidth_slow_poll_gbs", "cost_per_poll_ns"}


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_polling_quick(tmp_path: Path, tc: str) -> None:
    ensure_built(get_toolchain(tc))
    out = tmp_path / "runs"
    # --quick's sizes and intervals with 3 samples a point instead of 5: every check
    # below holds per sample or per point (11 s less on two toolchains)
    proc = run_cli("bench", "polling", "--mpi", tc, "--quick", "--samples", "3", "-n", "2",
                   "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "polling"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    html = (run_dir / "report.html").read_text()
    assert "Polling method (MPI_Test in the work loop)" in html and "<svg" in html

    res, a = run.result["results"], run.analysis
    window = res["window"]
    assert len(res["points"]) == res["points_planned"] == 4 * 4
    for p in res["points"]:
        assert len(p["samples"]) == res["samples_per_point"]
        for s in p["samples"]:
            assert s["polls"] == p["chunks"]
            # each poll tests `window` receives: it cannot complete more
            assert s["messages"] <= s["polls"] * window
            assert s["work_ns"] > 0 and s["dry_ns"] > 0
    for size in {p["size"] for p in res["points"]}:
        # rank 1 keeps sends in flight through every sample: messages move at each size
        # (not necessarily in every sample: Intel MPI moved no 4 MiB message in some 40 ms
        # loops polling every 1 µs on the loaded 2-core machine)
        assert sum(s["messages"] for p in res["points"] if p["size"] == size
                   for s in p["samples"]) >= 1

    points = [p for s in a["series"] for p in s["points"]]
    assert len(points) == len(res["points"])
    for p in points:
        assert p["bound_ok"] is True
        assert p["availability"] > 0
        assert p["bandwidth_gbs"] >= 0
        assert p["messages_per_poll"] <= window
    # availability <= 1 within noise: the dry loop is the messaging loop minus its MPI calls
    assert statistics.median(p["availability"] for p in points) <= 1.1 or disturbed(run)
    # the notes say exactly where more frequent polling moved less (beyond NOISE)
    for s in a["series"]:
        drops = [[x["interval_us"], y["interval_us"]] for x, y in pairwise(s["points"])
                 if x["bandwidth_gbs"] * NOISE < y["bandwidth_gbs"]]
        assert s["bandwidth_drops_with_polling"] == drops
    assert len(a["notes"]) == sum(len(s["bandwidth_drops_with_polling"]) for s in a["series"])

    finding = a["finding"]
    assert finding and "\n" not in finding
    head = next(s for s in a["series"] if s["size"] == a["headline_size"])
    first = head["points"][0]
    assert a["headline_size"] == 65536
    assert (f"every 1 µs: availability {first['availability']:.2f}, "
            f"{first['bandwidth_gbs']:.2f} GB/s") in finding
    figures = {f["name"]: f for f in a["figures"]}
    assert set(figures) == FIGURES
    assert figures["availability_fast_poll"]["value"] == first["availability"]
    assert figures["cost_per_poll_ns"]["kind"] == "cost"


# ----- the analysis on synthetic samples (no MPI) ------------------------------------------

def _result(bw_by_interval: dict[float, int], *, dry: float = 9e6, work: float = 1e7,
            window: int = 2) -> dict[str, Any]:
    points = []
    for interval, messages in bw_by_interval.items():
        polls = 100
        points.append({"size": 65536, "interval_us": interval, "chunk_units": 10,
                       "chunks": polls,
                       "samples": [{"work_ns": work, "dry_ns": dry, "polls": polls,
                                    "messages": messages} for _ in range(5)]})
    return {"results": {"window": window, "points": points}}


def test_analysis_synthetic() -> None:
    a = analyze_polling(_result({1.0: 150, 10.0: 100, 100.0: 20}))
    assert analysis_errors(a) == []
    (s,) = a["series"]
    p = s["points"][0]
    assert p["availability"] == pytest.approx(0.9)
    assert p["bandwidth_gbs"] == pytest.approx(150 * 65536 / 1e7)
    assert p["messages_per_poll"] == pytest.approx(1.5)
    assert p["cost_per_poll_ns"] == pytest.approx(1e6 / 100)
    assert p["bound_ok"] is True
    assert s["available_interval_us"] == 1.0
    assert s["bandwidth_drops_with_polling"] == [] and a["notes"] == []
    assert "every 1 µs: availability 0.90" in a["finding"]

    # more frequent polling moving less (beyond noise) is noted, not hidden
    b = analyze_polling(_result({1.0: 10, 10.0: 100}, dry=5e6))
    assert b["series"][0]["bandwidth_drops_with_polling"] == [[1.0, 10.0]]
    assert "polling every 1 µs moved less than every 10 µs" in b["notes"][0]
    assert "availability never reached 0.90" in b["finding"]
    # a sample completing more messages than polls x window breaks the bound
    c = analyze_polling(_result({1.0: 201}))
    assert c["series"][0]["points"][0]["bound_ok"] is False


def test_polling_args() -> None:
    def native(**values):
        return SPEC.to_native(values, quick=values.pop("quick", False), verbose=False)

    assert native(quick=True) == ["--quick"]  # the program's quick sizes
    assert native(intervals="1,10,100", samples=3) == [
        "--intervals", "1.0,10.0,100.0", "--samples", "3"]
    for bad in ("10,1", "0,1", "a"):
        with pytest.raises(UserError):
            native(intervals=bad)
