"""What-if runs of `profile` (docs/profiler.md, "What-if runs"): --env-matrix runs the
program once per setting and reports the runs side by side; --compare-bare times K
interleaved pairs of launches without and with the profiler and states its cost with an
interval. The cost's arithmetic is checked on made-up launches; the runs on profiled_app."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.profile.run.compare_bare import sentence, summarize
from mpi_overlap.run.rundir import load_run


def _launch(rep: int, profiled: bool, elapsed: float, status: str = "complete") -> dict:
    return {"rep": rep, "profiled": profiled, "status": status, "elapsed_s": elapsed,
            "disturbed": False, "dir": "", "message": None}


def test_the_cost_is_the_geometric_mean_of_the_pairs_with_its_interval():
    launches = [_launch(1, False, 1.0), _launch(1, True, 1.1),
                _launch(2, True, 2.2), _launch(2, False, 2.0),
                _launch(3, False, 1.0), _launch(3, True, 1.21)]
    cost = summarize(launches, 3, None)
    assert [p["rep"] for p in cost["pairs"]] == [1, 2, 3]
    want = math.exp((math.log(1.1) * 2 + math.log(1.21)) / 3)
    assert cost["ratio"] == pytest.approx(want)
    assert cost["ci95_low"] < cost["ratio"] < cost["ci95_high"]
    # three pairs whose interval (ratio -1.0 % to +30.2 %) is wider than the +13.6 %
    # measured: not resolved, and no figure said as the cost
    said = sentence(cost)
    assert said is not None and "3 interleaved pairs" in said
    assert "is not resolved (95 % CI -1.0 to +30.2 % is wider than the +13.6 %" in said
    assert "× as long" not in said


def test_a_cost_the_pairs_resolve_is_stated_with_its_interval():
    launches = [x for rep in range(1, 9)
                for x in (_launch(rep, False, 10.0), _launch(rep, True, 10.5 + 0.01 * rep))]
    cost = summarize(launches, 8, None)
    assert sentence(cost) == ("The profiler made this program's launches 1.054× as long "
                              "(95 % interval 1.052–1.057), from 8 interleaved pairs of "
                              "launches without and with it.")
    one = summarize(launches[:2], 1, None)
    assert "is not resolved (1 launch pair, fewer than 3)" in sentence(one)


def test_a_failed_launch_leaves_its_pair_out_and_says_why():
    cost = summarize([_launch(1, False, 1.0), _launch(1, True, 0.5, "failed")], 2,
                     "rep01-with: exited with status 1")
    assert cost["pairs"] == [] and cost["ratio"] is None
    assert sentence(cost) == "The profiler's cost was not measured: rep01-with: exited with " \
                             "status 1."


def test_reps_without_compare_bare_is_one_line(tmp_path):
    proc = run_cli("profile", "--reps", "3", "--", "true", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--reps counts the launches of --compare-bare" in proc.stderr
    assert "Traceback" not in proc.stderr


def _app() -> Path:
    tc = get_toolchain("mpich")
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "profiled_app"


@pytest.mark.mpi
def test_env_matrix_runs_each_setting_and_compare_bare_times_the_cost(tmp_path):
    out = tmp_path / "runs"
    proc = run_cli("profile", "-n", "2", "--out", str(out), "--env-matrix", "MO_WHATIF=a,b",
                   "--compare-bare", "--reps", "2", "--", str(_app()), "post-compute-wait",
                   "4096", "3", timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = sorted((load_run(p) for p in out.iterdir() if (p / "run.json").is_file()),
                  key=lambda r: r.label)
    assert [r.label for r in runs] == ["mpich MO_WHATIF=a", "mpich MO_WHATIF=b"]
    for run, value in zip(runs, "ab", strict=True):
        assert run.meta["env_overrides"] == {"MO_WHATIF": value}
        cost = run.result["cost"]
        assert len(cost["launches"]) == 4 and len(cost["pairs"]) == 2
        assert {lc["profiled"] for lc in cost["launches"]} == {False, True}
        assert cost["ratio"] > 0
        # the timed launch with the profiler wrote its profiles beside it, not over the run's
        with_dir = run.path / next(lc["dir"] for lc in cost["launches"] if lc["profiled"])
        assert sorted(p.name for p in with_dir.glob("profile.rank-*.json")) == \
            ["profile.rank-0.json", "profile.rank-1.json"]
        analysis = json.loads((run.path / "analysis.json").read_text())
        # two pairs: fewer than a cost is stated on, so "not resolved", with why
        assert "The profiler's cost on this program's launches is not resolved (2 launch " \
               "pairs, fewer than 3), from 2 interleaved pairs" in " ".join(analysis["findings"])
    assert "Profile runs side by side" in proc.stdout
    assert "mpich MO_WHATIF=a" in proc.stdout and "mpich MO_WHATIF=b" in proc.stdout
