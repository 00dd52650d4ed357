"""`mpi-overlap bench nbc-overlap --quick` on 2 ranks per wheel toolchain (under the
profiler): valid documents, the report's section and plot, a one-line finding from the
data, the figures, and internal consistency: 0 <= overlap <= 100 (OSU, IMB), the profiler's
min <= max per rank and summed, per-rank min <= max of the OSU %, and MPI_Test calls do not
lower the overlap (median over all cases of the paired difference, measured side by side in
the same run; single small cases are noisier than that). Plus the formulas on synthetic
data (no MPI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.analysis.overlap_formulas import imb_pct, osu_pct
from mpi_overlap.benchmarks.nbc_overlap import SPEC
from mpi_overlap.benchmarks.nbc_overlap.analysis import LIMITS
from mpi_overlap.benchmarks.nbc_overlap.analysis import analyze as analyze_nbc_overlap
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

COLLECTIVES = ["Ibarrier", "Ibcast", "Igather", "Iscatter", "Ireduce", "Iallreduce",
               "Iallgather", "Ialltoall", "Ireduce_scatter_block", "Ireduce_scatter", "Iscan",
               "Iexscan"]
FIGURES = {"osu_overlap_pct_largest": "overlap", "osu_overlap_pct_largest_tests": "overlap",
           "imb_overlap_pct_largest": "overlap", "osu_overlap_min_pct": "overlap",
           "osu_overlap_max_pct": "overlap", "imb_overlap_max_pct": "overlap",
           "profiler_min_pct_largest": "overlap", "profiler_max_pct_largest": "overlap",
           "iallreduce_small_t_pure_us": "cost", "compute_slowdown_pct_largest": "info"}


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_nbc_overlap_quick(tmp_path: Path, tc: str) -> None:
    ensure_built(get_toolchain(tc))
    out = tmp_path / "runs"
    proc = run_cli("bench", "nbc-overlap", "--mpi", tc, "--quick", "-n", "2", "-t", "8",
                   "--validate", "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "nbc-overlap"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    html = (run_dir / "report.html").read_text()
    assert "Non-blocking collective overlap (OSU, IMB, profiler bounds)" in html
    assert "<svg" in html

    res = run.result["results"]
    assert res["profiler_loaded"] is True and res["tests"] == 8
    # every collective; Ibarrier once, the others at the 3 quick sizes
    assert len(res["cases"]) == res["cases_planned"] == 1 + 11 * 3
    assert sorted({c["collective"] for c in res["cases"]}) == sorted(COLLECTIVES)
    a = run.analysis
    assert a["bounds"]["available"] is True and a["problems"] == []
    for c in a["cases"]:
        assert [v["tests"] for v in c["variants"]] == [0, 8]
        # the data every collective delivered were right (OSU's -c), on every run
        assert c["valid"] is True, c
        assert c["verdict"] in ("ok", "disturbed")
        assert (c["verdict"] == "ok") == (c["reason"] is None)
        lo, hi = c["t_pure_ci_us"]
        assert lo <= c["t_pure_us"] <= hi and c["t_pure_after_us"] > 0
        assert c["t_pure_us"] <= c["t_pure_p90_us"] * 1.0000001 <= c["t_pure_p99_us"] * 1.0000001
        for v in c["variants"]:
            assert len(v["ranks"]) == 2
            assert 0.0 <= v["osu_pct"] <= 100.0 and 0.0 <= v["imb_pct"] <= 100.0
            # the per-iteration non-overlapped time is >= 0: OSU never above 100 unclipped
            assert v["osu_raw_max_pct"] <= LIMITS["osu_max_pct"]
            assert v["osu_rank_min_pct"] <= v["osu_pct"] <= v["osu_rank_max_pct"]
            assert v["profiler_min_pct"] is not None, (c["collective"], c["bytes"])
            assert 0.0 <= v["profiler_min_pct"] <= v["profiler_max_pct"] <= 100.0
            for r in v["ranks"]:
                assert r["profiler_min_pct"] <= r["profiler_max_pct"]
                lo, hi = r["osu_pct_iqr"]
                assert lo <= r["osu_pct"] <= hi  # quartiles bracket the median
    checks = a["checks"]
    assert checks["osu_within_0_100"] and checks["profiler_min_le_max"]
    assert checks["cases_compared"] == len(a["cases"])
    # An empirical expectation, not physics: checked on undisturbed runs.
    assert checks["tests_not_lower"] or disturbed(run), checks

    assert checks["cases_invalid"] == 0 and checks["cases_validated"] == len(a["cases"])
    figures = {f["name"]: f for f in a["figures"]}
    assert {n: f["kind"] for n, f in figures.items()} == FIGURES
    finding = a["finding"]
    assert finding and "\n" not in finding
    # The headline comes from the cases whose t_pure held; the disturbed ones are counted.
    if checks["cases_disturbed"]:
        assert f"{checks['cases_disturbed']} disturbed" in finding, finding
    osu = figures["osu_overlap_pct_largest"]["value"]
    if osu is not None:
        assert f"{osu:.0f} % without MPI_Test" in finding
        assert f"IMB {figures['imb_overlap_pct_largest']['value']:.0f} %" in finding
    t_pure = figures["iallreduce_small_t_pure_us"]["value"]
    assert t_pure is None or (t_pure > 0 and f"costs {t_pure:.2f} µs" in finding)


def test_formulas() -> None:
    # OSU: t_pure 10, overall 12, compute 10 of which tests 1 -> not overlapped 3 -> 70 %
    assert osu_pct(10.0, 12.0 - (10.0 - 1.0)) == pytest.approx(70.0)
    assert osu_pct(10.0, 25.0) == 0.0  # clipped
    assert osu_pct(0.0, 1.0) is None
    # IMB: (10 + 10 - 12) / max(10, 10) = 0.8
    assert imb_pct(10.0, 10.0, 12.0) == pytest.approx(80.0)
    assert imb_pct(10.0, 5.0, 10.0) == pytest.approx(50.0)
    assert imb_pct(10.0, 10.0, 25.0) == 0.0 and imb_pct(10.0, 10.0, 9.0) == 100.0


def _variant(tests: int, overall: list[float], nonov: list[float], region: str) -> dict:
    n = len(overall)
    return {"tests": tests, "region": region, "t_overall_us": overall,
            "t_compute_us": [10.0] * n, "t_test_us": [1.0 if tests else 0.0] * n,
            "t_wait_us": [1.0] * n, "t_post_us": [0.1] * n, "t_nonoverlap_us": nonov,
            "t_nonoverlap_q25_us": [x - 0.5 for x in nonov],
            "t_nonoverlap_q75_us": [x + 0.5 for x in nonov]}


def test_analysis_synthetic() -> None:
    result = {"results": {
        "profiler_loaded": True, "tests": 4, "cases_planned": 1, "cases": [{
            "collective": "Iallreduce", "size": 1024, "bytes": 1024, "iterations": 50,
            "t_pure_max_us": 10.0, "work_units": 100, "work_us_nominal": 10.0,
            "t_pure_us": [10.0, 8.0], "t_cpu_us": [10.0, 10.0],
            "variants": [_variant(0, [18.0, 19.0], [8.0, 9.0], "Iallreduce/1024/t0"),
                         _variant(4, [12.0, 11.0], [3.0, 2.0], "Iallreduce/1024/t4")]}]}}
    region = {"region": "Iallreduce/1024/t0", "xfer_s": 2.0, "min_s": 0.5, "max_s": 1.5,
              "transfers": 50}
    region4 = dict(region, region="Iallreduce/1024/t4", min_s=1.0, max_s=2.0)
    profiles = {r: {"profile": {"by_region": [region, region4]}} for r in (0, 1)}
    a = analyze_nbc_overlap(result, profiles=profiles)
    assert analysis_errors(a) == []
    (case,) = a["cases"]
    v0, v4 = case["variants"]
    # per rank: 100 - 100*8/10 = 20, 100 - 100*9/8 < 0 -> 0; mean 10
    assert v0["osu_rank_max_pct"] == pytest.approx(20.0) and v0["osu_rank_min_pct"] == 0.0
    assert v0["osu_pct"] == pytest.approx(10.0)
    # IMB from the rank with the largest t_ovrl (rank 1: (8 + 10 - 19)/10 < 0 -> 0)
    assert v0["imb_rank"] == 1 and v0["imb_pct"] == 0.0
    assert v4["imb_rank"] == 0 and v4["imb_pct"] == pytest.approx(80.0)
    assert (v0["profiler_min_pct"], v0["profiler_max_pct"]) == (25.0, 75.0)
    assert (v4["profiler_min_pct"], v4["profiler_max_pct"]) == (50.0, 100.0)
    assert a["checks"]["tests_gain_median_pts"] == pytest.approx(v4["osu_pct"] - v0["osu_pct"])
    assert a["checks"]["tests_not_lower"] is True
    assert "Iallreduce 1 KiB costs 9.00 µs" in a["finding"]
    # a profile without the region is reported, not ignored
    b = analyze_nbc_overlap(result, profiles={0: {"profile": {"by_region": []}}})
    assert any("no region 'Iallreduce/1024/t0'" in p for p in b["problems"])


def test_disturbed_t_pure_and_clipped_osu_are_marked() -> None:
    """t_pure measured again after the overlapped loops: 412 µs against 177 µs (issue 15)
    with disjoint intervals makes the case disturbed and keeps it out of the headline; an
    OSU % below zero even at the favourable quartile is marked clipped."""
    case = {
        "collective": "Iallreduce", "size": 1024, "bytes": 1024, "iterations": 50,
        "t_pure_max_us": 412.0, "work_units": 100, "work_us_nominal": 412.0,
        "t_pure_us": [412.0, 400.0], "t_cpu_us": [412.0, 412.0],
        "t_pure_ci_low_us": [405.0, 395.0], "t_pure_ci_high_us": [420.0, 405.0],
        "t_pure_after_us": [177.0, 398.0], "t_pure_after_ci_low_us": [170.0, 390.0],
        "t_pure_after_ci_high_us": [185.0, 404.0],
        "variants": [_variant(0, [800.0, 800.0], [450.0, 450.0], "Iallreduce/1024/t0")]}
    ok_case = dict(case, collective="Ibcast", t_pure_us=[10.0, 10.0],
                   t_pure_ci_low_us=[9.0, 9.0], t_pure_ci_high_us=[11.0, 11.0],
                   t_pure_after_us=[10.5, 10.2], t_pure_after_ci_low_us=[9.5, 9.5],
                   t_pure_after_ci_high_us=[11.5, 11.0], invalid_elements=0,
                   variants=[_variant(0, [18.0, 19.0], [8.0, 9.0], "Ibcast/1024/t0")])
    result = {"results": {"profiler_loaded": False, "tests": 0, "cases_planned": 2,
                          "cases": [case, ok_case]}}
    a = analyze_nbc_overlap(result)
    assert analysis_errors(a) == []
    bad, good = a["cases"]
    assert bad["verdict"] == "disturbed" and "rank 0" in bad["reason"] and "412" in bad["reason"]
    assert bad["variants"][0]["osu_clipped"] and bad["variants"][0]["osu_pct"] == 0.0
    assert good["verdict"] == "ok" and good["valid"] is True
    assert a["checks"]["cases_disturbed"] == 1 and a["checks"]["variants_clipped"] == 1
    figs = {f["name"]: f["value"] for f in a["figures"]}
    assert figs["osu_overlap_pct_largest"] == pytest.approx(good["variants"][0]["osu_pct"])
    assert figs["iallreduce_small_t_pure_us"] is None  # the Iallreduce case is disturbed
    assert "1 disturbed" in a["finding"]
    # wrong data make the case invalid
    result["results"]["cases"][1] = dict(ok_case, invalid_elements=3)
    b = analyze_nbc_overlap(result)
    assert b["cases"][1]["verdict"] == "invalid" and "no trustworthy case" in b["finding"]


def test_nbc_overlap_args() -> None:
    def native(**values):
        return SPEC.to_native(values, quick=values.pop("quick", False), verbose=False)

    assert native(tests=4, quick=True) == ["--tests", "4", "--quick"]
    assert native(collectives="iallreduce,Ibcast") == [
        "--collectives", "iallreduce,Ibcast"]
    from mpi_overlap.core.errors import UserError
    with pytest.raises(UserError, match="unknown value 'Ifoo'"):
        native(collectives="Ifoo")
    with pytest.raises(UserError):
        native(tests=-1)
    assert native(datatype="Double", validate=True) == [
        "--datatype", "double", "--validate"]
    with pytest.raises(UserError, match="--datatype"):
        native(datatype="char")


@pytest.mark.mpi
def test_async_progress_on_two_ranks_is_oversubscribed_and_gives_no_finding(
        tmp_path: Path) -> None:
    """Issue 15: MPICH_ASYNC_PROGRESS=1 gives each rank a progress thread; each rank is
    bound to one core, so its two threads share it. The 1 variant must be flagged
    oversubscribed and give no overlap figure as a finding."""
    out = tmp_path / "runs"
    proc = run_cli("bench", "nbc-overlap", "--quick", "-n", "2", "-t", "0", "--collectives",
                   "Iallreduce", "--sizes", "8,64k", "--env-matrix",
                   "MPICH_ASYNC_PROGRESS=0,1", "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [load_run(p) for p in sorted(out.iterdir()) if (p / "run.json").is_file()]
    by_setting = {r.meta["env_overrides"]["MPICH_ASYNC_PROGRESS"]: r for r in runs}
    on = by_setting["1"]
    guard = on.meta["guard"]
    assert guard["verdict"] == "oversubscribed", (guard, on.meta.get("threads"))
    assert "progress" in guard["oversubscribed"]["change"]
    finding = on.analysis["finding"]
    assert finding.startswith("oversubscribed") and "%" not in finding.split(":")[0]
    for fig in on.analysis["figures"]:
        if fig["kind"] in ("overlap", "cost"):
            assert fig["value"] is None and fig["withheld"] == "oversubscribed"
    assert by_setting["0"].meta["guard"]["verdict"] != "oversubscribed"
    report = (tmp_path / "runs").glob("report-*/report.html")
    html = next(report).read_text()
    assert "oversubscribed" in html and "to measure" in html
