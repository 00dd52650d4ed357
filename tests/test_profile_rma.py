"""One-sided communication (MPI RMA) end to end: `mpi-overlap profile` on
native/tests/coverage_rma.c, whose epochs fix what the profile must hold.

Each operation is a transfer from its call to the call that completes it at the
origin (docs/method.md, "One-sided communication"), so with ITERS iterations of K
operations per kind the counts per posting function and per region are known
exactly; every operation is followed by milliseconds of computation before its
completion, far above its transfer time, so its maximum overlap is its whole
transfer time; and nothing may be left begin-only, end-only or unfinished. Two more
runs cover what is counted rather than guessed: a flush on another thread than the
puts, and puts whose synchronization the profiler cannot see (they end at
MPI_Win_free).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

ITERS, K, WORK_MS = 3, 4, 5.0
KIB = 1024

# Transfers per rank, by posting function, for one iteration, in units of K.
PER_FN = {
    "MPI_Put": 6,  # fence 1, pscw 1, lock 2, lock_all 2
    "MPI_Get": 3,  # fence, lock, lock_all
    "MPI_Rput": 1,
    "MPI_Rget": 1,
    "MPI_Raccumulate": 1,
    "MPI_Rget_accumulate": 1,
    "MPI_Accumulate": 1,
    "MPI_Get_accumulate": 1,
    "MPI_Fetch_and_op": 1,
    "MPI_Compare_and_swap": 1,
}
# The large-count region, where the header declares MPI-4's _c functions.
PER_FN_LARGE = {
    f"MPI_{op}_c": 1
    for op in ("Put", "Get", "Accumulate", "Get_accumulate", "Rput", "Rget", "Raccumulate",
               "Rget_accumulate")
}
PER_REGION = {"fence": 2, "pscw": 1, "lock": 3, "lock_all": 3, "request": 4, "atomics": 4}
PER_REGION_LARGE = {"large_count": 8}
# Per size bin (lo bytes), units of K: 64 KiB puts and gets, 8 KiB accumulates (the
# result's size for those that fetch one), 8-byte Fetch_and_op and Compare_and_swap.
PER_BIN = {64 * KIB: 11, 8 * KIB: 4, 8: 2}
PER_BIN_LARGE = {64 * KIB: 4, 8 * KIB: 4}
# Synchronization calls per iteration (one each unless said).
SYNC_CALLS = {"MPI_Win_fence": 2, "MPI_Win_complete": 1, "MPI_Win_flush": 1,
              "MPI_Win_flush_local": 1, "MPI_Win_unlock": 1, "MPI_Win_flush_all": 1,
              "MPI_Win_flush_local_all": 1, "MPI_Win_unlock_all": 3}
SYNC_CALLS_LARGE = {"MPI_Win_flush_all": 1, "MPI_Win_unlock_all": 1}
# Whether the toolchain's mpi.h is MPI-4 (large counts): Open MPI 5 declares no _c.
LARGE_COUNT = {"mpich": True, "intel": True, "openmpi": False}


def _expected(base: dict, large_part: dict, *, large: bool, scale: int = K * ITERS) -> dict:
    """`base` (plus `large_part` where the large-count region ran), times `scale`."""
    out = {key: units * scale for key, units in base.items()}
    if large:
        for key, units in large_part.items():
            out[key] = out.get(key, 0) + units * scale
    return out


def _app(toolchain: str) -> Path:
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "coverage_rma"


@pytest.fixture(scope="module", params=toolchain_params(systems=False))
def profiled(request, tmp_path_factory):
    toolchain = request.param
    tmp = tmp_path_factory.mktemp(f"rma-{toolchain}")
    out = tmp / "runs"
    proc = run_cli("profile", "--mpi", toolchain, "-n", "2", "--out", str(out), "--",
                   str(_app(toolchain)), str(ITERS), str(K), str(WORK_MS), timeout=600, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file())
    run = load_run(runs[-1])
    assert run.status == "complete" and run.result["status"] == "complete"
    profiles = [d["profile"] for d in run.result["ranks"]]
    assert len(profiles) == 2
    large = "large_count" in {r["region"] for r in profiles[0]["by_region"]}
    if toolchain in LARGE_COUNT:
        assert large == LARGE_COUNT[toolchain]
    return toolchain, profiles, large


def test_every_operation_is_one_transfer_of_its_function_and_region(profiled):
    _, profiles, large = profiled
    per_fn = _expected(PER_FN, PER_FN_LARGE, large=large)
    per_region = _expected(PER_REGION, PER_REGION_LARGE, large=large)
    per_bin = _expected(PER_BIN, PER_BIN_LARGE, large=large)
    for p in profiles:
        fns = {f["fn"]: f for f in p["by_function"]}
        assert {fn: fns[fn]["transfers"] for fn in per_fn} == per_fn
        regions = {r["region"]: r for r in p["by_region"]}
        assert {r: regions[r]["transfers"] for r in per_region} == per_region
        bins = {b["lo"]: b["transfers"] for b in p["by_bin"] if b["transfers"]}
        assert {lo: bins.get(lo, 0) for lo in per_bin} == per_bin
        # the K puts to MPI_PROC_NULL per iteration are calls but no transfers
        assert fns["MPI_Put"]["calls"] == per_fn["MPI_Put"] + K * ITERS
        assert p["counters"]["proc_null"] == K * ITERS
        sync = _expected(SYNC_CALLS, SYNC_CALLS_LARGE, large=large, scale=ITERS)
        assert {fn: fns[fn]["calls"] for fn in sync} == sync
        assert fns["MPI_Win_free"]["calls"] == 1


def test_every_transfer_spans_calls_and_none_is_left_open(profiled):
    _, profiles, large = profiled
    total = sum(_expected(PER_FN, PER_FN_LARGE, large=large).values())
    for p in profiles:
        # second case (begin and end in different calls) for every one-sided transfer
        assert p["cases"]["across-calls"] == total
        assert p["cases"]["begin-only"] == 0 and p["cases"]["end-only"] == 0
        c = p["counters"]
        for name in ("unfinished", "rma_other_thread", "rma_freed_pending", "out_of_memory",
                     "freed_active", "unmonitored_transfers"):
            assert c[name] == 0, name


def test_computation_far_longer_than_the_transfer_gives_full_max_overlap(profiled):
    _, profiles, large = profiled
    fns_expected = _expected(PER_FN, PER_FN_LARGE, large=large)
    regions_expected = _expected(PER_REGION, PER_REGION_LARGE, large=large)
    for p in profiles:
        cells = [f for f in p["by_function"] if f["fn"] in fns_expected]
        cells += [r for r in p["by_region"] if r["region"] in regions_expected]
        for cell in cells:
            # WORK_MS of computation between every operation and its completion
            assert cell["xfer_s"] > 0
            assert cell["max_s"] == pytest.approx(cell["xfer_s"], rel=1e-9)
            assert 0 <= cell["min_s"] <= cell["max_s"]
            assert cell["nonoverlap_s"] == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize("toolchain", toolchain_params(systems=False))
def test_a_synchronization_on_another_thread_ends_the_operations_and_is_counted(tmp_path,
                                                                                toolchain):
    # A second thread posts K puts per iteration, the main thread's flush_all completes
    # them; the second thread's next one-sided call ends them (after the main thread's
    # WORK_MS of computation, which the second thread spent waiting: max = xfer).
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", toolchain, "-n", "2", "--out", str(out), "--",
                   str(_app(toolchain)), str(ITERS), str(K), str(WORK_MS), "threads",
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = load_run(sorted(p for p in out.iterdir() if (p / "run.json").is_file())[-1])
    assert run.result["status"] == "complete"
    for doc in run.result["ranks"]:
        p = doc["profile"]
        assert doc["threads"] == 2
        put = next(f for f in p["by_function"] if f["fn"] == "MPI_Put")
        assert put["transfers"] == K * ITERS and put["calls"] == (K + 1) * ITERS
        assert put["max_s"] == pytest.approx(put["xfer_s"], rel=1e-9)
        c = p["counters"]
        assert c["rma_other_thread"] == K * ITERS and c["proc_null"] == ITERS
        assert p["cases"]["across-calls"] == K * ITERS
        assert p["cases"]["begin-only"] == 0 and p["cases"]["end-only"] == 0
        assert c["unfinished"] == 0 and c["rma_freed_pending"] == 0


def test_operations_whose_completion_was_not_seen_end_at_window_free_and_are_counted(tmp_path):
    # PMPI_Win_unlock_all (as a Fortran binding calling PMPI_ would) completes the puts
    # unseen; they are still pending at MPI_Win_free, where they end, counted.
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--out", str(out), "--",
                   str(_app("mpich")), str(ITERS), str(K), str(WORK_MS), "unseen-sync",
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = load_run(sorted(p for p in out.iterdir() if (p / "run.json").is_file())[-1])
    for doc in run.result["ranks"]:
        p = doc["profile"]
        region = next(r for r in p["by_region"] if r["region"] == "unseen_sync")
        assert region["transfers"] == K * ITERS
        assert region["max_s"] == pytest.approx(region["xfer_s"], rel=1e-9)
        assert p["counters"]["rma_freed_pending"] == K * ITERS
        assert p["cases"]["across-calls"] == K * ITERS
        assert p["cases"]["begin-only"] == 0 and p["counters"]["unfinished"] == 0
