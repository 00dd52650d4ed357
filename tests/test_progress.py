"""`mpi-overlap bench progress --quick` on 2 ranks per wheel toolchain: valid documents, a
figure, a one-line finding from the data, the figures list, and consistency: every size,
ordering and sender mode has a verdict that agrees with its samples; arrival lies within
the watch loop; watched fractions in [0, 1]. With MPICH_ASYNC_PROGRESS=1 (MPICH) the
large-message verdict changes to yes/partly, or the analysis explains why not from the
measured numbers; likewise Open MPI's TCP progress thread. Unit tests of the verdict logic
on synthetic samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from mpi_overlap.benchmarks.progress import SPEC
from mpi_overlap.benchmarks.progress.analysis import YES_SHARE, _async_setting, verdict_of
from mpi_overlap.benchmarks.progress.analysis import analyze as analyze_progress
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

FIGURES = {"arrived_large_receiver_first_pct", "arrived_large_sender_first_pct",
           "arrived_small_receiver_first_pct", "largest_arrived_receiver_first_bytes",
           "largest_arrived_sender_first_bytes", "arrival_large_receiver_first_us",
           "async_progress_setting", "latency_small_us", "compute_slowdown_pct",
           "dry_slowdown_pct"}


def _run(tmp_path: Path, tc: str, *args: str, env: dict[str, str] | None = None):
    ensure_built(get_toolchain(tc))
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "runs"
    proc = run_cli("bench", "progress", "--mpi", tc, "-n", "2", "--out", str(out), *args,
                   env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "progress"
    assert result_errors(run.result) == []
    assert analysis_errors(run.analysis) == []
    return run, run_dir


def _check_consistency(run: Any) -> None:
    res, a = run.result["results"], run.analysis
    assert len(res["points"]) == res["points_planned"]
    for p in res["points"]:
        assert p["data_errors"] == 0, p["size"]  # MPI_Wait delivered the payload
        assert len(p["dry"]["samples"]) == res["samples_per_case"]
        assert {(c["ordering"], c["sender"]) for c in p["cases"]} == {
            (o, s) for o in ("sender-first", "receiver-first") for s in ("computes", "waits")}
        for c in p["cases"]:
            assert len(c["samples"]) == res["samples_per_case"]
            for s in c["samples"]:
                assert 0.0 <= s["fraction"] <= 1.0
                assert 0 <= s["chunks"] <= p["max_chunks"]
                if s["arrived_ns"] is not None:
                    # everything arrived at a look inside the loop, after the first byte
                    assert s["fraction"] == 1.0
                    assert s["first_ns"] is not None and s["first_ns"] <= s["arrived_ns"]
                    assert s["arrived_ns"] <= s["elapsed_ns"]
                else:  # watching ran out of budget: every chunk was done
                    assert s["chunks"] == p["max_chunks"]
    for pt in a["points"]:
        assert len(pt["cases"]) == 4
        for c in pt["cases"]:
            raw = next(rc for p in res["points"] if p["size"] == pt["size"]
                       for rc in p["cases"]
                       if (rc["ordering"], rc["sender"]) == (c["ordering"], c["sender"]))
            fr = [s["fraction"] for s in raw["samples"]]
            arrived = [s["arrived_ns"] is not None for s in raw["samples"]]
            assert c["verdict"] in ("yes", "no", "partly")
            assert (c["verdict"], c["arrived_share"]) == verdict_of(fr, arrived)
            assert 0.0 <= c["arrived_share"] <= 1.0
            if c["verdict"] == "yes":
                # arrival within the budget of work, in wall time stretched by the slowdown
                # of the work loop measured in the same samples
                stretch = max(1.0, max(s["elapsed_ns"] / 1e3 / pt["budget_us"]
                                       for s in raw["samples"]))
                assert c["arrival_us"] <= pt["budget_us"] * stretch
            if c["verdict"] == "no":
                assert c["arrival_us"] is None and c["first_us"] is None


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("tc", toolchain_params(systems=False))
def test_progress_quick(tmp_path: Path, tc: str) -> None:
    run, run_dir = _run(tmp_path, tc, "--quick")
    html = (run_dir / "report.html").read_text()
    assert "Asynchronous progress (data arrival without MPI calls)" in html and "<svg" in html
    res, a = run.result["results"], run.analysis
    assert [p["size"] for p in res["points"]] == [1024, 8192, 65536, 1 << 20, 4 << 20]
    _check_consistency(run)

    finding = a["finding"]
    assert finding and "\n" not in finding
    small = a["points"][0]
    assert f"1 KiB one-way {small['transfer_us']:.1f} us" in finding
    assert a["verdict_ranges"]["receiver-first"] in finding
    figures = {f["name"]: f for f in a["figures"]}
    assert set(figures) == FIGURES
    assert figures["latency_small_us"]["value"] == small["transfer_us"]
    assert figures["latency_small_us"]["kind"] == "cost"
    assert a["explanation"] and str(a["points"][-1]["cases"][0]["n"]) in a["explanation"]
    # what the MPI says about asynchronous progress is recorded, read back where it can be
    info = res["async_progress"]
    assert info["thread_level"].startswith("MPI_THREAD_")
    if tc == "mpich":
        assert {"name": "MPIR_CVAR_ASYNC_PROGRESS", "value": 0} in info["cvars"]
        assert a["async_progress"]["enabled"] is False


# Asynchronous progress switched on through the CLI's environment (the toolchain keeps
# os.environ; the launcher passes it to the ranks), against the same run with it off:
# MPICH's progress thread, and Open MPI's TCP BTL progress thread (the wheel is built
# without general async progress: ompi_info says "OMPI progress: no").
ASYNC = {
    "mpich": ("MPIR_CVAR_ASYNC_PROGRESS", {}, "MPICH_ASYNC_PROGRESS"),
    "openmpi": ("btl_tcp_progress_thread", {"OMPI_MCA_btl": "tcp,self"},
                "OMPI_MCA_btl_tcp_progress_thread"),
}


@pytest.mark.mpi
@pytest.mark.parametrize("tc", [p for p in toolchain_params(systems=False)
                                if p.values[0] in ASYNC])
def test_progress_async_progress(tmp_path: Path, tc: str) -> None:
    """The large verdict changes to yes/partly with the progress thread on, or the
    explanation gives the measured reason."""
    cvar, common, switch = ASYNC[tc]
    sizes = ("--sizes", "1k,1M", "--samples", "5", "--launches", "1")
    base, _ = _run(tmp_path / "off", tc, *sizes, env={**common, switch: "0"})
    on, _ = _run(tmp_path / "on", tc, *sizes, env={**common, switch: "1"})
    _check_consistency(on)
    info = on.result["results"]["async_progress"]
    assert {"name": cvar, "value": 1} in info["cvars"]
    assert on.analysis["async_progress"]["enabled"] is True
    assert base.analysis["async_progress"]["enabled"] is False
    assert on.analysis["async_progress"]["setting"] == f"{cvar}=1"
    if tc == "mpich":
        # MPICH upgrades to MPI_THREAD_MULTIPLE and starts a progress thread
        assert info["thread_level"] == "MPI_THREAD_MULTIPLE"
        threads_off = base.result["results"]["async_progress"]["threads_in_process"]
        assert info["threads_in_process"] > threads_off

    def large(run: Any) -> dict[str, Any]:
        return next(c for c in run.analysis["points"][-1]["cases"]
                    if (c["ordering"], c["sender"]) == ("receiver-first", "computes"))

    before, after = large(base), large(on)
    if after["verdict"] != before["verdict"]:
        assert after["verdict"] in ("yes", "partly")
        assert after["arrived_samples"] + after["partial_samples"] > 0
    else:
        why = on.analysis["explanation"]
        assert why and f"threads in the process: {info['threads_in_process']}" in why
        assert f"{after['budget_us']:.0f} us" in why


# ----- the analysis on synthetic samples (no MPI) ------------------------------------------

def test_verdict_of() -> None:
    assert verdict_of([1.0] * 7, [True] * 7) == ("yes", 1.0)
    assert verdict_of([1.0] * 6 + [0.0], [True] * 6 + [False])[0] == "yes"  # 6/7 >= YES_SHARE
    assert verdict_of([0.0] * 5, [False] * 5) == ("no", 0.0)
    assert verdict_of([0.25, 0, 0], [False] * 3)[0] == "partly"  # first bytes only
    assert verdict_of([1.0, 0, 0, 0], [True, False, False, False]) == ("partly", 0.25)
    assert verdict_of([], []) == ("none", 0.0)
    assert 0.8 < YES_SHARE <= 0.9


def _sample(arrived: float | None, fraction: float, chunks: int = 10) -> dict[str, Any]:
    return {"arrived_ns": arrived, "first_ns": arrived if fraction else None,
            "fraction": fraction, "elapsed_ns": 1e6, "wait_ns": 100.0, "chunks": chunks}


def _synthetic(kind: str, *, on: int) -> dict[str, Any]:
    def cases(size_kind: str) -> list[dict[str, Any]]:
        if size_kind == "yes":
            s = [_sample(5e5, 1.0) for _ in range(4)]
        elif size_kind == "partly":
            s = [_sample(None, 0.5, 400) for _ in range(4)]
        else:
            s = [_sample(None, 0.0, 400) for _ in range(4)]
        return [{"ordering": o, "sender": m, "samples": s}
                for o in ("sender-first", "receiver-first") for m in ("computes", "waits")]

    points = [{"size": size, "transfer_ns": 1e3 * (i + 1), "budget_ns": 1e7, "chunk_ns": 25e3,
               "chunk_units": 1000, "max_chunks": 400, "data_errors": 0,
               "dry": {"samples": [_sample(None, 0.0, 400)]},
               "cases": cases("yes" if size == 1024 else kind)}
              for i, size in enumerate((1024, 65536, 1 << 20))]
    return {"harness": {"work": {"calibration": {"max": 40.0}}},
            "results": {"async_progress": {"thread_level": "MPI_THREAD_MULTIPLE",
                                           "threads_in_process": 3 if on else 2,
                                           "cvars": [{"name": "MPIR_CVAR_ASYNC_PROGRESS",
                                                      "value": on}], "env": []},
                        "points": points}}


def test_analysis_synthetic() -> None:
    a = analyze_progress(_synthetic("no", on=1))
    assert analysis_errors(a) == []
    assert a["verdict_ranges"]["receiver-first"] == "yes 1 KiB, no 64 KiB–1 MiB"
    assert a["async_progress"] == {**a["async_progress"], "enabled": True,
                                   "setting": "MPIR_CVAR_ASYNC_PROGRESS=1"}
    # on, but nothing arrived: the explanation says so with the measured numbers
    why = a["explanation"]
    assert "asynchronous progress is on" in why and "10000 us budget" in why
    assert "threads in the process: 3" in why
    figures = {f["name"]: f["value"] for f in a["figures"]}
    assert figures["arrived_large_receiver_first_pct"] == 0.0
    assert figures["arrived_small_receiver_first_pct"] == 100.0
    assert figures["latency_small_us"] == 1.0
    assert figures["largest_arrived_receiver_first_bytes"] == 1024.0  # yes only at 1 KiB

    p = analyze_progress(_synthetic("partly", on=0))
    assert {f["name"]: f["value"] for f in p["figures"]}[
        "largest_arrived_sender_first_bytes"] == float(1 << 20)
    assert p["verdict_ranges"]["sender-first"] == "yes 1 KiB, partly 64 KiB–1 MiB"
    assert p["points"][-1]["cases"][0]["partial_samples"] == 4
    assert "MPIR_CVAR_ASYNC_PROGRESS=0" in p["finding"]


def test_async_setting() -> None:
    def setting(cvars: list[dict[str, Any]], env: tuple[str, ...] = ()) -> Any:
        return _async_setting({"cvars": cvars, "env": list(env)})

    assert setting([{"name": "MPIR_CVAR_ASYNC_PROGRESS", "value": 0},
                    {"name": "MPIR_CVAR_CH4_MAX_PROGRESS_THREADS", "value": -1}]) == (
        False, "MPIR_CVAR_ASYNC_PROGRESS=0")
    assert setting([{"name": "btl_tcp_progress_thread", "value": 1}]) == (
        True, "btl_tcp_progress_thread=1")
    assert setting([{"name": "btl_tcp_progress_thread", "value": None}],
                   ("MPICH_ASYNC_PROGRESS=1",))[0] is True
    assert setting([]) == (None, "no asynchronous-progress setting reported")


def test_progress_args() -> None:
    def native(**values):
        return SPEC.to_native(values, quick=values.pop("quick", False), verbose=False)

    assert native(quick=True) == ["--quick"]  # the program's quick sizes
    assert native(sizes="1k,4M", samples=3, budget_factor=5.0) == [
        "--sizes", "1k,4M", "--samples", "3", "--budget-factor", "5.0"]
    with pytest.raises(UserError):
        native(sizes="0,1k")
    with pytest.raises(UserError):
        native(budget_factor=0.5)
