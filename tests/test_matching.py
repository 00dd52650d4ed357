"""`mpi-overlap bench matching --quick` on 2 ranks per wheel toolchain (and once on 4
oversubscribed ranks): valid documents, a figure in the report, a one-line finding
computed from the data, and the internal consistency of the result.

Timings on a shared 2-core machine are noisy: the checks compare quantities of one run
with generous margins (a receive past 4096 queued requests against the same receive with
an empty queue), or are structural.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.analysis.stats import line_fit
from mpi_overlap.benchmarks.matching import SPEC
from mpi_overlap.benchmarks.matching.analysis import analyze as analyze_matching
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

QUICK_M = [0] + [2**k for k in range(13)]  # 0, 1, ..., 4096


def _run(tmp_path: Path, tc: str, *args: str):
    ensure_built(get_toolchain(tc))
    out = tmp_path / "runs"
    proc = run_cli("bench", "matching", "--mpi", tc, "--out", str(out), *args, timeout=600,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "matching"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    html = (run_dir / "report.html").read_text()
    assert "Matching queues" in html and "<svg" in html
    return run, proc


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_matching_quick(tmp_path: Path, tc: str) -> None:
    run, proc = _run(tmp_path, tc, "--quick", "-n", "2")
    res = run.result["results"]
    assert res["ranks"] == 2 and res["queues"] == ["posted", "unexpected"]
    assert res["oversubscribed"] is (res["cores"] < 2)
    assert len(res["points"]) == res["points_planned"]
    for queue in ("posted", "unexpected"):
        m_pts = [p for p in res["points"] if p["queue"] == queue and p["sweep"] == "M"]
        assert [p["m"] for p in m_pts] == QUICK_M
        n_pts = [p for p in res["points"] if p["queue"] == queue and p["sweep"] == "N"]
        assert [(p["m"], p["n"]) for p in n_pts] == [(1, 1)]
        for p in res["points"]:
            assert p["queued"] == p["m"] * p["n"]
            assert p["time"]["n"] == res["samples_per_point"] == len(p["samples_ns"])
            assert p["time_ns"] is not None and p["time_ns"] > 0

    queues = {q["queue"]: q for q in run.analysis["queues"]}
    assert set(queues) == {"posted", "unexpected"}  # both measured
    posted = queues["posted"]
    times = {p["m"]: p["time_ns"] for p in posted["m_points"]}
    # Per-request cost positive, and the time grows with M at large M: 4096 queued
    # receives cost far more than the noise of one receive on an empty queue.
    assert posted["fit_m"]["slope_ns"] > 0
    assert times[4096] > times[0] + 1000
    # Non-decreasing within noise at large M, judged on each point's fastest sample (the
    # one least disturbed by other work on the machine): 2x the requests, >= 0.7x the time.
    fastest = {p["m"]: p["time"]["min"] for p in res["points"]
               if p["queue"] == "posted" and p["sweep"] == "M"}
    for m in (512, 1024, 2048):
        assert fastest[2 * m] >= 0.7 * fastest[m], (m, fastest)
    assert fastest[4096] > fastest[512]
    for queue in queues.values():
        assert queue["verdict"] in ("grows with queue length", "constant",
                                    "falls with queue length", "unclear")
        if queue["fit_lower"] and queue["fit_upper"] and queue["fit_lower"]["slope_ns"] > 0:
            ratio = queue["fit_upper"]["slope_ns"] / queue["fit_lower"]["slope_ns"]
            assert queue["growth_ratio"] == pytest.approx(ratio)

    finding = run.analysis["finding"]
    assert finding and "\n" not in finding
    assert f"{posted['fit_m']['slope_ns']:.1f} ns per posted receive" in finding
    assert finding in proc.stdout.replace("\n", " ") or finding[:60] in proc.stdout
    report = (run.path / "report.json").read_text()
    assert '"finding"' in report


@pytest.mark.mpi
def test_matching_oversubscribed_n_sweep(tmp_path: Path) -> None:
    run, _ = _run(tmp_path, "mpich", "-n", "4", "--max-m", "8", "--samples", "3",
                  "--launches", "1")
    res = run.result["results"]
    for queue in ("posted", "unexpected"):
        n_pts = [p for p in res["points"] if p["queue"] == queue and p["sweep"] == "N"]
        assert [p["n"] for p in n_pts] == [1, 2, 3]
    assert res["oversubscribed"] is (res["cores"] < 4)
    if res["oversubscribed"]:
        assert any("oversubscribed" in w for w in run.result["warnings"])
        assert "oversubscribed" in run.analysis["finding"]
    assert all(q["fit_n"] is not None for q in run.analysis["queues"])


def test_line_fit_and_verdict() -> None:
    fit = line_fit([0, 1, 2, 4], [10, 12, 14, 18])
    assert fit["slope_ns"] == pytest.approx(2.0) and fit["intercept_ns"] == pytest.approx(10.0)
    assert line_fit([1, 1], [2, 3]) is None

    def doc(per: float, grow: float) -> dict:
        pts = []
        for m in QUICK_M:
            t = 100 + per * m + (grow * (m - 2048) if m > 2048 else 0)
            stats = {"n": 1, "min": t, "median": t, "mean": t, "max": t, "stdev": None,
                     "ci95_low": t, "ci95_high": t}
            pts.append({"queue": "posted", "sweep": "M", "m": m, "n": 1, "queued": m,
                        "time_ns": t, "time": stats, "samples_ns": [t]})
        return {"results": {"queues": ["posted"], "points": pts, "oversubscribed": False}}

    flat = analyze_matching(doc(5.0, 0.0))
    assert flat["queues"][0]["verdict"] == "constant"
    assert "5.0 ns per posted receive" in flat["finding"]
    grown = analyze_matching(doc(5.0, 20.0))
    assert grown["queues"][0]["verdict"] == "grows with queue length"
    assert grown["queues"][0]["grows_from_m"] == 2048
    assert "(above M = 2048)" in grown["finding"]
    assert analysis_errors(flat) == []


def test_matching_args() -> None:
    def native(**values):
        return SPEC.to_native(values, quick=values.pop("quick", False), verbose=False)

    assert native(queue="posted", max_m=64, quick=True) == [
        "--queue", "posted", "--max-m", "64", "--quick"]
    with pytest.raises(UserError):
        native(queue="sideways")
    with pytest.raises(UserError):
        native(max_m=0)
