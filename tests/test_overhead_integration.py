"""The overhead benchmark end to end on 2 ranks: build, launch, result, analysis, report.

Runs on every toolchain that is present: mpich (always) and openmpi (added by `make
test`) are expected in CI; intel and a system MPI are tested where registered and
skipped with the reason otherwise. These are real measurements on a noisy 2-core machine,
so assertions are about what must hold within the confidence intervals, not about values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.core.documents import analysis_errors, result_errors, run_errors
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

QUICK = ["--quick", "--sizes", "0,4k,64k,1M", "-n", "2"]


def _bench(tmp_path: Path, *args: str) -> tuple[object, Path]:
    out = tmp_path / "runs"
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = run_cli("bench", "overhead", *args, "--out", str(out), timeout=900, cwd=tmp_path)
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file()) if out.is_dir() else []
    return proc, (runs[-1] if runs else out)


def _sizes(run) -> list[tuple[str, dict]]:
    return [(d["direction"], s) for d in run.analysis["directions"] for s in d["sizes"]]


@pytest.mark.parametrize("toolchain", toolchain_params())
def test_overhead_runs_and_validates(toolchain: str, tmp_path: Path) -> None:
    proc, run_dir = _bench(tmp_path, "--mpi", toolchain, *QUICK)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = load_run(run_dir)
    assert run.status == "complete"
    assert run_errors(run.meta) == []
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    prov = run.result["provenance"]
    assert prov["toolchain"] == toolchain and prov["ranks"] == 2
    assert prov["mpi_library_version"].split()[0] in run.meta["toolchain"]["mpi_library_version"]
    assert len(prov["hosts"]) == 2 and len(prov["cpu_binding"]) == 2
    got = {(d, s["size"]) for d, s in _sizes(run)}
    assert got == {(d, n) for d in ("send", "recv") for n in (0, 4096, 65536, 1 << 20)}
    assert (run_dir / "report.html").is_file()
    report = json.loads((run_dir / "report.json").read_text())
    assert report  # the summary for scripts exists and is JSON


def _within(est: dict, lo: float, hi: float) -> bool:
    """The estimate's 95 % CI reaches into [lo, hi]."""
    return est["ci95_high"] >= lo and est["ci95_low"] <= hi


def _check_physical(run) -> int:
    """Availability within [0, 100] and overhead >= 0 within their CIs, or the size is
    flagged as not ok with a reason; returns how many sizes gave an estimate."""
    estimated = 0
    for direction, s in _sizes(run):
        if s["availability_pct"]["value"] is None:
            assert s["verdict"] != "ok" and s["reason"], (direction, s["size"])
            continue
        estimated += 1
        where = f"{direction} {s['size']} B: {s}"
        # availability = 1 - overhead / (base_t - origin) is clipped to [0, 100] for
        # display, so check the unclipped quantity it comes from:
        # 0 <= overhead <= base_t - origin within the overhead's CI.
        room = s["base_t_us"]["value"] - s["fit"]["origin_us"]
        physical = _within(s["overhead_us"], 0.0, room) and _within(
            s["availability_pct"], 0.0, 100.0
        )
        # Noise on this shared VM can push a tiny size's knee past base_t (seen in CI:
        # 0 B send, overhead -0.23 us). That is acceptable only if the analysis says so:
        # an unphysical estimate must never be reported as "ok".
        if not physical:
            assert s["verdict"] != "ok" and s["reason"], where
    return estimated


def _disturbed(run) -> bool:
    return bool((run.meta.get("host_load") or {}).get("disturbed"))


@pytest.mark.timing
def test_default_toolchain_figures_are_physical_or_flagged(tmp_path: Path) -> None:
    """Availability within [0, 100] and overhead >= 0 within their CIs for every size the
    analysis calls ok, anything else flagged with its reason; most sizes give an estimate
    unless the run records that other processes disturbed it.

    Whether two launches agree within their intervals is not tested here: a run's
    intervals cover the noise within that launch only, and on a shared VM the machine's
    state moves between launches (the recv 1 MiB transfer 104 us in one launch and 83 us in
    the next; five pairs of runs in a row disagreed once in five `make test`s). That is a
    benchmark claim, measured with intervals over launches, not a pass/fail test."""
    proc, run_dir = _bench(tmp_path, *QUICK)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = load_run(run_dir)
    estimated = _check_physical(run)
    assert estimated >= len(_sizes(run)) // 2 or _disturbed(run), (
        f"only {estimated} of {len(_sizes(run))} sizes gave an estimate on an undisturbed "
        f"machine: {[(d, s['size'], s['verdict'], s['reason']) for d, s in _sizes(run)]}")


def test_launches_are_compared_in_the_report(tmp_path: Path) -> None:
    """--launches 2: two launches of the same setting, alternating order trivially, each
    its own run directory tagged with one group; the report compares them per size, and
    the between-launch interval holds every launch's value (or the verdict says
    unstable)."""
    proc, _ = _bench(tmp_path, "--quick", "--sizes", "64k,1M", "-n", "2", "--launches", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "runs"
    runs = [load_run(p) for p in sorted(out.iterdir()) if (p / "run.json").is_file()]
    assert [r.meta["replicate"]["index"] for r in runs] == [1, 2]
    assert len({r.meta["replicate"]["group"] for r in runs}) == 1
    assert [r.label for r in runs] == ["mpich launch 1/2", "mpich launch 2/2"]
    for run in runs:
        assert run_errors(run.meta) == []
    (report_dir,) = [p for p in out.iterdir() if p.name.startswith("report-")]
    (group,) = json.loads((report_dir / "report.json").read_text())["replication"]
    assert group["launches"] == 2 and group["verdict"] in ("stable", "unstable", "single")
    keys = {q["key"] for q in group["quantities"]}
    assert {"send/65536/availability_pct", "recv/1048576/overhead_us"} <= keys
    for q in group["quantities"]:
        if q["n"] >= 2:
            assert q["contains_every_launch"] is True and q["verdict"] in ("stable", "unstable")
            assert (q["verdict"] == "unstable") == (q["reason"] is not None)
    assert "Replication: overhead on mpich, 2 launches" in (report_dir / "report.html").read_text()


def test_timeout_keeps_partial_results(tmp_path: Path) -> None:
    # 0:4M takes about 15 s here: 5 s stops it with some sizes measured
    proc, run_dir = _bench(tmp_path, "-n", "2", "--sizes", "0:4M", "--timeout", "5",
                           "--launches", "1")
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr
    run = load_run(run_dir)
    assert run.status == "timeout"
    assert "timed out after 5 s" in run.meta["message"]
    if run.result is not None:  # whatever was measured before the kill is kept, marked
        assert run.result["status"] == "running"
        assert result_errors(run.result) == []
    html = (run_dir / "report.html").read_text() if (run_dir / "report.html").is_file() else ""
    assert run.result is None or "incomplete" in html.lower()
