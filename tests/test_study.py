"""`mpi-overlap study halo|cg` on 2 ranks (MPICH wheel), one repetition of one size: the
run directory holds a launch without and one with the profiler, every mode of the app in
each, the profiler's bounds per mode; the analysis compares every mode with the
baseline and gives the profiler's cost on the app; the report shows it all. Figures are
measured on a shared machine: the checks are structural and the bounds' invariants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.analysis.block_pairs import COLD_PAIRS
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

MODES = {"halo": {"blocking", "nonblocking", "overlap", "overlap-test", "diagonal"},
         "cg": {"allreduce", "iallreduce"}}


@pytest.mark.parametrize("app", ["halo", "cg"])
def test_study_quick(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli("study", app, "--quick", "--reps", "1", "--sizes", "32", "-n", "2",
                   "--iterations", "12", "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == f"study-{app}"
    assert result_errors(run.result) == [] and analysis_errors(run.analysis) == []
    baseline = {"halo": "nonblocking", "cg": "allreduce"}[app]
    launches = run.result["launches"]
    assert sorted(x["profiled"] for x in launches) == [False, True]
    assert run.result["args"][-2:] == ["--iterations", "12"]  # after the app's --quick
    for x in launches:
        assert {m["mode"] for m in x["modes"]} == MODES[app]
        assert (run_dir / x["dir"] / "result.json").is_file()
        # --iterations reached the app and won over its --quick default
        app_result = json.loads((run_dir / x["dir"] / "result.json").read_text())
        assert app_result["results"]["iterations"] == 12
    (profiled,) = [x for x in launches if x["profiled"]]
    assert profiled["profile_status"] == "complete"
    # what the launch paid the profiler once: its parts add up to it
    once = profiled["library_s"]
    assert once["ranks"] == 2 and once["per_launch_s"] > 0
    assert once["per_launch_s"] == pytest.approx(sum(
        once[k] or 0.0 for k in ("init_s_max", "finalize_s_max", "gather_s", "reduce_s")))
    assert set(profiled["bounds"]) == MODES[app]
    for mode, b in profiled["bounds"].items():
        assert b["transfers"] > 0, mode  # every mode's transfers fell into its regions
        assert 0.0 <= b["min_s"] <= b["max_s"] <= b["xfer_s"] * (1 + 1e-9), (mode, b)

    a = run.analysis
    (size,) = a["sizes"]
    assert {c["mode"] for c in size["comparisons"]} == MODES[app] - {baseline}
    assert all(c["verdict"] != "no data" for c in size["comparisons"])
    # one per compared mode, and one per mode that applies the baseline's advice
    advised = {"halo": {"overlap", "overlap-test"}, "cg": {"iallreduce"}}[app] & MODES[app]
    assert {c["mode"] for c in size["advice"]} == advised
    assert all(c["bound_s"] is not None and c["verdict"] != "no data" for c in size["advice"])
    # and one for the cost inside the cost launch, one for what the profiled launch paid once
    assert len(a["conclusions"]) == len(MODES[app]) - 1 + len(advised) + 2
    assert a["conclusions"][-2].startswith("Inside 1 launch (blocks of 8 iterations")
    assert a["conclusions"][-1].startswith("Once per launch the profiler took ")
    # the cost launch: the baseline alone, as many iterations as every mode's, in blocks
    (cost,) = run.result["cost_launches"]
    assert cost["status"] == "complete" and cost["profile_status"] == "complete"
    assert cost["unmonitored_transfers"] == 0  # the profiler paused where asked
    cost_result = json.loads((run_dir / cost["dir"] / "result.json").read_text())
    assert [m["mode"] for m in cost_result["results"]["modes"]] == [baseline]
    assert cost_result["results"]["iterations"] == 12 * len(MODES[app])
    assert len(cost["block_s"]) == 12 * len(MODES[app]) // 8 and all(t > 0 for t in cost["block_s"])
    inside = a["profiler_overhead"]["inside_launches"]
    # each launch's first, cold pair is left out (cg's quick launch has only that one)
    assert inside["launches"] == 1
    assert inside["pairs"] == max(0, len(cost["block_s"]) // 2 - COLD_PAIRS)
    assert a["profiler_overhead"]["once_per_launch"]["launches"] == 1
    assert a["profiler_overhead"]["pairs"] == 1
    # each mode keeps its mean MPI time per rank, so the cost per unit of computation is
    # there (its ratio: with / without, each run time over it)
    assert all(0 <= m["mpi_time_s_mean"] < m["run_time_s"] for x in launches for m in x["modes"])
    assert a["profiler_overhead"]["per_computation"]["pairs"] == 1
    assert a["finding"] and "\n" not in a["finding"] and "profiler cost on the app" in a["finding"]
    html = (run_dir / "report.html").read_text()
    assert f"Case study: {app}" in html and "<svg" in html and "target ≤ 1 %" in html


def test_unknown_study_is_one_line(tmp_path: Path) -> None:
    proc = run_cli("study", "lulesh", "--out", str(tmp_path), timeout=60)
    assert proc.returncode == 2 and "unknown study 'lulesh' (known: halo, cg)" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("study", "halo", "--sizes", "2", "--out", str(tmp_path), timeout=60)
    assert proc.returncode == 2 and "--sizes" in proc.stderr
    proc = run_cli("study", "cg", "--iterations", "0", "--out", str(tmp_path), timeout=60)
    assert proc.returncode == 2 and "--iterations must be between 1 and" in proc.stderr
    assert "Traceback" not in proc.stderr
    # halo's cost launch runs its five modes' iterations in one: 200,001 would ask the app
    # for more than its bound, refused before any launch rather than failing there
    proc = run_cli("study", "halo", "--iterations", "200001", "--out", str(tmp_path),
                   timeout=60)
    assert proc.returncode == 2 and "between 1 and 200000 for study halo" in proc.stderr
    assert "Traceback" not in proc.stderr and not list(tmp_path.iterdir())
