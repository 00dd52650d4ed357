"""`mpi-overlap bench inflation --quick` on 2 ranks per wheel toolchain (Strohbeen,
computation inflation): valid documents, the figure, a one-line finding from the data,
the figures list, and consistency: every exchange sample contains its work (total >=
computation); knees lie inside the computation range; among sizes with a reliable knee
whose exchange time grows, the knee does not fall (within its interval; on an undisturbed
run at one speed of the machine's, cluster/machine_speed.py). Unit tests of
the knee on synthetic curves (no MPI)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.benchmarks.inflation import SPEC
from mpi_overlap.benchmarks.inflation.analysis import analyze as analyze_inflation
from mpi_overlap.benchmarks.inflation.analysis import fit_point, knee_summary
from mpi_overlap.cluster.machine_speed import change_pct, changed, measure
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

QUICK_SIZES = [1024, 65536, 1048576]
FIGURES = {"knee_us_smallest": "overlap", "knee_us_largest": "overlap",
           "hidden_pct_largest": "overlap", "after_knee_us_largest": "cost",
           "exchange_us_largest": "cost", "compute_slowdown_pct_largest": "cost"}


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_inflation_quick(tmp_path: Path, tc: str) -> None:
    ensure_built(get_toolchain(tc))
    # the machine's speed before and after (cluster/machine_speed.py): this VM changes
    # speed by 10-100 % with nothing the load guard sees, and the knees' order is a
    # timing claim (a fresh clone, 2026-12-02 07:39, undisturbed: a 64 KiB knee at
    # 0.62 us against 1.19 at 1 KiB)
    speed_exe = build_dir_for(get_toolchain(tc)) / "replay" / "mo_machine_speed"
    before = measure(speed_exe)
    out = tmp_path / "runs"
    proc = run_cli("bench", "inflation", "--mpi", tc, "--quick", "-n", "2", "--out", str(out),
                   timeout=600, cwd=tmp_path)
    steady = not changed(change_pct([measure(speed_exe)], before))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "inflation"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    html = (run_dir / "report.html").read_text()
    assert "Computation inflation (Strohbeen, Cray Gemini)" in html and "<svg" in html

    res = run.result["results"]
    n, nsteps = res["samples"], res["steps"]
    assert (n, nsteps) == (40, 16)
    assert [p["bytes"] for p in res["points"]] == QUICK_SIZES
    for p in res["points"]:
        steps = p["steps"]
        assert len(steps) == nsteps and steps[0]["work_units"] == 0
        units = [s["work_units"] for s in steps]
        assert units == sorted(set(units))  # strictly growing computation
        for s in steps:
            assert len(s["total_samples_us"]) == n == s["total"]["n"]
            # total = Irecv + Isend + work + Waitall: it contains the work of its sample
            for total, work in zip(s["total_samples_us"], s["work_inside_samples_us"],
                                   strict=True):
                assert total >= work

    points = run.analysis["points"]
    for p in points:
        xs = [s["computation_us"] for s in p["steps"] if s["work_units"] > 0]
        k = p["knee"]
        if k["knee_us"] is not None:
            assert min(xs) <= k["knee_us"] <= max(xs)
            lo, hi = k["knee_ci95"]
            assert lo <= hi
        # total contains the same work that was timed alone in separate samples: their
        # medians compare only when nothing else took the CPU (per sample, total >= the
        # work inside it holds always and is checked above).
        for s in p["steps"]:
            assert disturbed(run) or s["total_us"] >= 0.9 * s["computation_us"], (
                p["bytes"], s)
    # The knee does not fall with the message size where the exchange itself grows
    # (by 2x at least) and both fits are reliable: within the intervals, and a slack of
    # 0.5 µs or 25 % for knees of the same origin (what completes at posting). A timing
    # claim: checked on an undisturbed run only (beside two busy loops a 64 KiB knee came
    # out at 0.64 µs against 1.25 µs at 1 KiB), at one speed of the machine's.
    ok = ([] if disturbed(run) or not steady
          else [p for p in points if p["knee"]["verdict"] == "ok"])
    for a, b in pairwise(ok):
        if b["knee"]["exposed_us"] >= 2 * a["knee"]["exposed_us"]:
            low = a["knee"]["knee_ci95"][0]
            slack = max(0.5, 0.25 * low)
            assert b["knee"]["knee_ci95"][1] >= low - slack, (a["bytes"], b["bytes"])

    # A size without a knee (a disturbed sweep gives "no-knee") has its verdict and reason;
    # the figures come from the fitted sizes, whichever they are.
    figures = {f["name"]: f for f in run.analysis["figures"]}
    fitted = [p for p in points if p["knee"]["knee_us"] is not None]
    for p in points:
        assert p["knee"]["knee_us"] is not None or (
            p["knee"]["verdict"] != "ok" and p["knee"]["reason"]), p["knee"]
    if fitted:
        assert {k: f["kind"] for k, f in figures.items()} == FIGURES
        assert figures["knee_us_largest"]["value"] == fitted[-1]["knee"]["knee_us"]
    else:
        assert figures == {}

    finding = run.analysis["finding"]
    assert finding and "\n" not in finding
    assert "1 KiB" in finding and "1 MiB" in finding  # every size is named


# ---- unit tests (no MPI) --------------------------------------------------------------


def _curve(exchange: float, hidden: float, noise: float = 0.01, seed: int = 5,
           samples: int = 20) -> list[dict[str, Any]]:
    """Steps of a synthetic inflation sweep: total = max(exchange, x + (1-hidden)*exchange)
    i.e. `hidden` of the exchange fits behind the computation."""
    rng = np.random.default_rng(seed)
    xs = [0.0, *np.geomspace(0.05 * exchange, 8 * exchange, 15)]
    steps = []
    for x in xs:
        alone = x + 0.01 + noise * x * rng.random(samples)
        total = np.maximum(exchange, x + (1 - hidden) * exchange)
        total = total * (1 + noise * rng.random(samples))
        steps.append({"work_units": int(x * 100), "work_alone_samples_us": list(alone),
                      "total_samples_us": list(total),
                      "work_inside_samples_us": list(alone)})
    return steps


def test_knee_of_a_hidden_exchange() -> None:
    k = knee_summary(fit_point(_curve(100.0, hidden=0.9)))
    assert k["verdict"] == "ok" and k["hidden"]
    assert k["knee_us"] == pytest.approx(90.0, rel=0.1)
    assert k["knee_ci95"][0] <= 90.0 * 1.05 and k["knee_ci95"][1] >= 90.0 * 0.95
    assert k["exposed_us"] == pytest.approx(100.0, rel=0.05)
    assert k["after_knee_us"] == pytest.approx(10.0, abs=5.0)
    assert k["slope"] == pytest.approx(1.0, abs=0.1)


def test_no_overlap_is_not_hidden() -> None:
    # total = computation + the whole exchange: the knee sits at the start, nothing hidden
    k = knee_summary(fit_point(_curve(100.0, hidden=0.0)))
    assert not k["hidden"]
    assert k["hidden_pct"] is None or k["hidden_pct"] < 20.0


def test_knee_grows_with_the_exchange() -> None:
    small = knee_summary(fit_point(_curve(10.0, hidden=0.9, seed=1)))
    large = knee_summary(fit_point(_curve(400.0, hidden=0.9, seed=2)))
    assert small["knee_ci95"][1] < large["knee_ci95"][0]


def test_analysis_finding_and_figures() -> None:
    doc = {"results": {"points": [
        {"bytes": 1024, "pilot_exchange_us": 10.0, "steps": _curve(10.0, 0.9, seed=1)},
        {"bytes": 1 << 20, "pilot_exchange_us": 400.0, "steps": _curve(400.0, 0.0, seed=2)},
    ]}}
    a = analyze_inflation(doc)
    assert analysis_errors(a) == []
    small, large = a["points"]
    assert small["knee"]["hidden"] and not large["knee"]["hidden"]
    assert (f"communication is hidden once computation exceeds "
            f"{small['knee']['knee_us']:.3g} µs at 1 KiB") in a["finding"]
    assert "at 1 MiB" in a["finding"] and "\n" not in a["finding"]
    figures = {f["name"]: f["value"] for f in a["figures"]}
    assert figures["knee_us_smallest"] == small["knee"]["knee_us"]
    assert figures["exchange_us_largest"] == large["exchange_alone_us"]
    assert large["exchange_alone_us"] == pytest.approx(400.0, rel=0.02)


def test_too_few_steps() -> None:
    k = knee_summary(fit_point(_curve(10.0, 0.5)[:2]))
    assert k["verdict"] == "incomplete" and k["knee_us"] is None
    a = analyze_inflation({"results": {"points": []}})
    assert a["figures"] == [] and a["finding"] and analysis_errors(a) == []


def test_inflation_args() -> None:
    assert SPEC.to_native({}, quick=True, verbose=False) == ["--quick"]
    assert SPEC.to_native({"sizes": "4k", "samples": 5, "steps": 6}, quick=False,
                          verbose=False) == [
        "--sizes", "4k", "--samples", "5", "--steps", "6"]
