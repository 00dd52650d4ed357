"""sync-overlap: `bench sync-overlap --quick` on 2 ranks per wheel toolchain (valid documents,
the report section with its plot, a one-line finding from the data, the figures), the
limit's consistency (it lies between two measured sizes, every smaller size completed,
rank 0 waits for the receiver's delay past it), the acceptance test (an MPI control
variable moves the detected limit) and the detection on synthetic data."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.analysis.protocol_switch import HEADER_ALLOWANCE
from mpi_overlap.benchmarks.sync_overlap import SPEC
from mpi_overlap.benchmarks.sync_overlap.analysis import (
    agreement,
    detect_limit,
    reported_limit,
)
from mpi_overlap.benchmarks.sync_overlap.analysis import analyze as analyze_sync_overlap
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

FIGURES = {"eager_limit_bytes", "eager_limit_first_no_bytes", "mpi_reported_limit_bytes",
           "limit_agrees", "seed_overlap_pct", "wait_largest_us", "isend_small_us",
           "compute_slowdown_pct"}


def _run(tmp_path: Path, tc: str, *extra: str, env: dict[str, str] | None = None):
    ensure_built(get_toolchain(tc))
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "runs"
    proc = run_cli("bench", "sync-overlap", "--mpi", tc, "--quick", "-n", "2", "--out", str(out),
                   *extra, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "sync-overlap"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    return run, run_dir


def _check_limit(run) -> dict[str, Any]:
    """The limit lies between two measured sizes; every smaller size completed; the C
    program's bracket is the analysis's."""
    res, a = run.result["results"], run.analysis
    lim = a["limit"]
    assert lim["status"] == "bracketed", lim
    by_size = {p["bytes"]: p for p in res["points"]}
    yes, no = lim["last_yes_bytes"], lim["first_no_bytes"]
    assert yes in by_size and no in by_size and yes < no
    assert by_size[yes]["completed"] and not by_size[no]["completed"]
    assert all(p["completed"] for b, p in by_size.items() if b < no)
    assert res["limit"]["last_yes_bytes"] == yes and res["limit"]["first_no_bytes"] == no
    # --quick: powers of two, then 6 bisection steps (or down to 1 byte).
    assert no - yes <= max(1, yes // 64)
    return lim


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_sync_overlap_quick(tmp_path: Path, tc: str) -> None:
    run, run_dir = _run(tmp_path, tc)
    html = (run_dir / "report.html").read_text()
    assert "Synchronization–computation overlap and the eager limit" in html and "<svg" in html
    assert (run_dir / "sync-overlap.svg").is_file()

    res, a = run.result["results"], run.analysis
    assert res["order"] == "sender-first"
    for p in res["points"]:
        assert len(p["tests"]) == res["samples_per_point"]
        assert all(0 <= t <= res["max_tests"] for t in p["tests"])
        assert p["completed_fraction"] == pytest.approx(
            sum(t > 0 for t in p["tests"]) / len(p["tests"]))
    lim = _check_limit(run)

    # Rank 0 skips MPI_Wait once a test succeeded; when none did, rank 1 first does the
    # same work as rank 0 (work_us) before posting its receive: the wait covers it.
    rows = {r["bytes"]: r for r in a["points"]}
    work_us = res["work_us"]
    for b, r in rows.items():
        if r["completed_fraction"] == 1.0:
            assert r["wait_us"] < 0.1 * work_us, (b, r)
        if r["completed_fraction"] == 0.0:
            assert r["wait_us"] > 0.5 * work_us, (b, r)

    # A send that completed before the receive was posted left its data at the receiver:
    # the receive of the paper's seed test (after a quarter of the work) mostly returns before
    # rank 0 calls MPI_Wait (a descheduled rank 1 can miss single samples, hence the generous
    # margin).
    alone = sorted(r["seed_alone_fraction"] for r in rows.values() if r["completed"])
    assert alone and (alone[len(alone) // 2] > 0.5 or disturbed(run)), alone

    figs = {f["name"]: f for f in a["figures"]}
    assert set(figs) == FIGURES
    assert figs["eager_limit_bytes"]["value"] == lim["last_yes_bytes"]
    assert figs["eager_limit_bytes"]["kind"] == "info"
    assert {f["kind"] for f in a["figures"]} == {"info", "overlap", "cost"}
    assert figs["wait_largest_us"]["value"] > 0.5 * work_us
    finding = a["finding"]
    assert "\n" not in finding
    assert f"up to {lim['last_yes_bytes']:,} B".replace(",", " ") in finding

    # The MPI's own limit: both wheels expose one and the detected limit agrees with it.
    names = {c["name"] for c in res["mpi_cvars"]}
    if get_toolchain(tc).flavor in ("mpich", "openmpi"):
        assert a["reported"]["bytes"] is not None and a["reported"]["source"] in names
        assert a["agrees"] is True, (lim, a["reported"])


@pytest.mark.mpi
@pytest.mark.skipif("mpich" not in {t.name for t in list_toolchains()},
                    reason="toolchain 'mpich' not added")
@pytest.mark.timing
def test_mpich_cvars_move_the_limit(tmp_path: Path) -> None:
    """Acceptance: MPICH's protocol thresholds, set through the process environment of the
    CLI (tc.environment() passes os.environ on), move the detected limit with them: down
    to the CMA rendezvous threshold, and up with a larger shared-memory cell."""
    base, _ = _run(tmp_path / "default", "mpich", "--no-report")
    lim0 = _check_limit(base)
    assert base.analysis["reported"]["bytes"] == 8192 and base.analysis["agrees"] is True

    low, _ = _run(tmp_path / "low", "mpich", "--no-report",
                  env={"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": "4096"})
    lim1 = _check_limit(low)
    cvars = {c["name"]: c["value"] for c in low.result["results"]["mpi_cvars"]}
    assert cvars["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == 4096  # the setting took
    assert low.analysis["reported"] == {**low.analysis["reported"], "bytes": 4095,
                                        "source": "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"}
    assert lim1["first_no_bytes"] <= 4096 and lim1["first_no_bytes"] > 4096 - HEADER_ALLOWANCE
    assert lim1["first_no_bytes"] < lim0["last_yes_bytes"]
    assert low.analysis["agrees"] is True

    high, _ = _run(tmp_path / "high", "mpich", "--no-report", env={
        "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "32768",
        "MPIR_CVAR_CH4_PACK_BUFFER_SIZE": "65536",  # MPICH asserts it holds a cell
        "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": "65536"})
    lim2 = _check_limit(high)
    assert high.analysis["reported"]["bytes"] == 32768
    assert lim2["first_no_bytes"] > 32768 - HEADER_ALLOWANCE and lim2["last_yes_bytes"] <= 32768
    assert lim2["last_yes_bytes"] > lim0["first_no_bytes"]
    assert high.analysis["agrees"] is True


# ---- detection on synthetic data (no MPI) ------------------------------------------


def _pts(spec: dict[int, bool]) -> list[dict[str, Any]]:
    return [{"bytes": b, "completed": c} for b, c in spec.items()]


def test_detect_limit_brackets() -> None:
    lim = detect_limit(_pts({1: True, 4096: True, 8192: False, 16384: False, 6144: True,
                             7168: False}))
    assert lim == {"status": "bracketed", "last_yes_bytes": 6144, "first_no_bytes": 7168,
                   "monotonic": True, "width_bytes": 1024}


def test_detect_limit_edges_and_shapes() -> None:
    assert detect_limit([])["status"] == "no-points"
    lim = detect_limit(_pts({1: True, 2: True}))
    assert lim["status"] == "all-complete"
    assert (lim["last_yes_bytes"], lim["first_no_bytes"]) == (2, None)
    lim = detect_limit(_pts({1: False, 2: True}))
    assert lim["status"] == "none-complete" and lim["first_no_bytes"] == 1
    assert lim["monotonic"] is False
    # A size completing again above the first failure is reported, not hidden.
    lim = detect_limit(_pts({256: True, 512: False, 1024: True, 2048: False}))
    assert (lim["last_yes_bytes"], lim["first_no_bytes"], lim["monotonic"]) == (256, 512, False)
    # Points without a verdict are left out.
    lim = detect_limit([{"bytes": 8, "completed": True}, {"bytes": 16, "completed": None},
                        {"bytes": 32, "completed": False}])
    assert (lim["last_yes_bytes"], lim["first_no_bytes"]) == (8, 32)


def test_reported_limit_mpich_and_openmpi() -> None:
    mpich = {"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": 8192,
             "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": 8192}
    assert reported_limit(mpich)["bytes"] == 8192
    assert reported_limit(mpich)["source"] == "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"
    low = {**mpich, "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": 4096}
    assert (reported_limit(low)["bytes"], reported_limit(low)["source"]) == (
        4095, "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD")
    no_cma = {"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": 16384,
              "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": -1}
    assert reported_limit(no_cma)["bytes"] == 16384
    ompi = {"btl_sm_max_inline_send": 256, "btl_sm_eager_limit": 4096}
    rep = reported_limit(ompi)
    assert rep["bytes"] == 256 and rep["family"] == "openmpi-ob1" and "4096" in rep["note"]
    vader = reported_limit({"btl_vader_max_inline_send": 256})
    assert vader["source"] == "btl_vader_max_inline_send"
    assert reported_limit({"something_else": 1})["bytes"] is None


def test_agreement_allows_header_bytes() -> None:
    def lim(yes: int, no: int) -> dict[str, Any]:
        return {"status": "bracketed", "last_yes_bytes": yes, "first_no_bytes": no}

    assert agreement(lim(8112, 8113), 8192) is True  # 80 B of MPICH cell header
    assert agreement(lim(4095, 4096), 4095) is True
    assert agreement(lim(256, 257), 256) is True
    assert agreement(lim(8192, 8193), 4095) is False  # above the reported limit
    assert agreement(lim(2048, 2049), 8192) is False  # far below it
    assert agreement(lim(8000, 8064), 8192) is False
    assert agreement({"status": "all-complete"}, 8192) is None
    assert agreement(lim(1, 2), None) is None


def _synthetic_result(limit_bytes: int) -> dict[str, Any]:
    """A result document whose sends complete up to limit_bytes, with the wait and seed
    samples such a run gives."""
    sizes = sorted({2**k for k in range(0, 17)} | {limit_bytes, limit_bytes + 1})
    points = []
    for b in sizes:
        done = b <= limit_bytes
        wait = 20.0 if done else 200000.0
        stats = {"n": 3, "min": 1.0, "median": 1.0, "mean": 1.0, "max": 1.0, "stdev": 0.0,
                 "ci95_low": 1.0, "ci95_high": 1.0}
        points.append({
            "bytes": b, "phase": "coarse", "completed_fraction": 1.0 if done else 0.0,
            "completed": done, "tests": [1.0] * 3 if done else [0.0] * 3,
            "seed_alone_fraction": 1.0, "seed_alone": [1.0] * 3,
            "isend_ns": {**stats, "median": 300.0}, "wait_ns": stats, "work_ns": stats,
            "alone_ns": stats, "tp0_ns": stats, "tp1_ns": stats, "tp1_ratio": stats,
            "wait_samples_ns": [wait] * 3, "work_samples_ns": [202000.0, 200000.0, 201000.0],
            "alone_samples_ns": [200000.0] * 3, "tp1_ratio_samples": [0.25, 0.26, 0.25]})
    return {"results": {
        "order": "sender-first", "receiver_hold": "shared-memory flag", "samples_per_point": 3,
        "work_us": 200.0, "work_units": 1000, "max_tests": 16, "refine_steps_done": 0,
        "limit": {"last_yes_bytes": limit_bytes, "first_no_bytes": limit_bytes + 1,
                  "monotonic": True},
        "mpi_cvars": [{"name": "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", "value": 8192},
                      {"name": "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "value": 8192}],
        "cvar_note": None, "points": points}}


def test_analysis_on_synthetic_run() -> None:
    a = analyze_sync_overlap(_synthetic_result(8112))
    assert analysis_errors(a) == []
    assert a["limit"]["last_yes_bytes"] == 8112 and a["limit"]["first_no_bytes"] == 8113
    assert a["agrees"] is True
    figs = {f["name"]: f["value"] for f in a["figures"]}
    assert set(figs) == FIGURES
    assert figs["eager_limit_bytes"] == 8112 and figs["mpi_reported_limit_bytes"] == 8192
    assert figs["wait_largest_us"] == pytest.approx(200.0)
    assert figs["isend_small_us"] == pytest.approx(0.3)
    assert figs["seed_overlap_pct"] == 100.0
    assert figs["compute_slowdown_pct"] == pytest.approx(0.5)
    assert a["finding"].startswith(
        "MPI_Isend completes without the receiver up to 8 112 B (limit in 8 112–8 113 B); "
        "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE = 8 192 B agrees")
    # The same data with a limit far from the MPI's: the finding says so.
    a = analyze_sync_overlap(_synthetic_result(1000))
    assert a["agrees"] is False and "disagrees" in a["finding"]
    # Every size completing: the limit lies above the sweep.
    doc = copy.deepcopy(_synthetic_result(8112))
    for p in doc["results"]["points"]:
        p["completed"], p["completed_fraction"] = True, 1.0
    a = analyze_sync_overlap(doc)
    assert a["limit"]["status"] == "all-complete" and "limit above the sweep" in a["finding"]


def test_sync_overlap_args() -> None:
    assert SPEC.to_native({}, quick=True, verbose=False) == ["--quick"]
    assert SPEC.to_native({"sizes": "1:64K", "samples": 3, "work_us": 50, "refine_steps": 0,
                           "resolution": 8}, quick=False, verbose=False) == [
        "--sizes", "1:64K", "--samples", "3", "--work-us", "50", "--refine-steps", "0",
        "--resolution", "8"]
