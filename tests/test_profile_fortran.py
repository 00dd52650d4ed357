"""Fortran programs under the profiler (native/tests/fortran/): `mpi-overlap profile -n 2`
on Debian's Open MPI 4.1 (toolchain `system-mpi`, whose Fortran bindings call PMPI_
directly, so only the profiler's Fortran entry points see them), Debian's MPICH 4.0
(`debian-mpich`, whose bindings call the C MPI_ functions: nothing may be recorded twice)
and, where registered, Intel MPI's wheel (mpif.h programs only: it ships no mpi module for
the system's gfortran).
The expected figures follow from each program's fixed pattern (ITERS = 10 per phase,
2 ranks); see the header comment of each program.

Skipped with the reason where a toolchain is not registered (`make toolchains` registers
both where Debian's packages are installed; .ci/run installs them) or its build has no
Fortran (no MPI Fortran wrapper: the reason is the build's fortran-status.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import FORTRAN_STATUS, build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

ITERS = 10
FORTRAN_TOOLCHAINS = ("system-mpi", "debian-mpich", "intel")
HALO_STEPS = 100


def _toolchains() -> list:
    present = {tc.name for tc in list_toolchains()}
    return [
        pytest.param(name, id=name, marks=[] if name in present else [pytest.mark.skip(
            reason=f"toolchain '{name}' not registered (make toolchains registers it where "
                   "Debian's libopenmpi-dev/libmpich-dev, gfortran are installed)")])
        for name in FORTRAN_TOOLCHAINS
    ]


def fortran_program(toolchain: str, name: str) -> Path:
    """Program `name` of native/tests/fortran built for the toolchain; skips the test where
    the build has no Fortran or no such program."""
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    bdir = build_dir_for(tc)
    status = (bdir / FORTRAN_STATUS).read_text().strip()
    if not status.startswith("enabled"):
        pytest.skip(f"no Fortran in the {toolchain} build: {status}")
    prog = bdir / "tests" / "fortran" / name
    if not prog.is_file() and name != "f08_p2p":
        pytest.skip(f"{name} not built for {toolchain}: its MPI has no mpi module for this "
                    "Fortran compiler")
    return prog


_RUNS: dict[tuple[str, str], object] = {}


def _profile(tmp_path_factory: pytest.TempPathFactory, toolchain: str, name: str, *args: str):
    """The run of program `name` (profiled once per toolchain for all tests here)."""
    key = (toolchain, name)
    if key not in _RUNS:
        prog = fortran_program(toolchain, name)
        out = tmp_path_factory.mktemp(f"{name}-{toolchain}")
        proc = run_cli("profile", "--mpi", toolchain, "-n", "2", "--out", str(out / "runs"),
                       "--", str(prog), *args, timeout=600, cwd=out)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        runs = sorted(p for p in (out / "runs").iterdir() if (p / "run.json").is_file())
        run = load_run(runs[-1])
        assert run.result["status"] == "complete"
        _RUNS[key] = run
    return _RUNS[key]


def _profiles(run) -> list[dict]:
    return [run.result["ranks"][rank]["profile"] for rank in (0, 1)]


def _fns(p: dict) -> dict[str, dict]:
    return {f["fn"]: f for f in p["by_function"]}


def _bin(p: dict, lo: int) -> dict:
    return next(b for b in p["by_bin"] if b["lo"] == lo)


def _attributed(p: dict) -> None:
    assert p["cases"]["begin-only"] == 0 and p["cases"]["end-only"] == 0
    c = p["counters"]
    assert c["unfinished"] == 0 and c["inactive_completions"] == 0
    assert c["out_of_memory"] == 0 and c["region_mismatch"] == 0


@pytest.mark.parametrize("toolchain", _toolchains())
def test_point_to_point_calls_transfers_and_bounds(tmp_path_factory, toolchain):
    run = _profile(tmp_path_factory, toolchain, "f_p2p")
    for p in _profiles(run):
        _attributed(p)
        # A 2+2, B 1+1 (in the call), C 2 (persistent), D 2, E 2, F 80 once
        assert p["totals"]["transfers"] == 10 * ITERS + 80
        assert p["cases"]["in-call"] == 2 * ITERS
        fns = _fns(p)
        transfers = {"MPI_Isend": 2 * ITERS + 40, "MPI_Irecv": 3 * ITERS + 40,
                     "MPI_Issend": ITERS, "MPI_Send": ITERS, "MPI_Recv": ITERS,
                     "MPI_Send_init": ITERS, "MPI_Recv_init": ITERS}
        for fn, n in transfers.items():
            assert fns[fn]["transfers"] == n, fn
        # Exactly once per Fortran call, whether or not the MPI's own bindings call MPI_.
        calls = {"MPI_Init": 1, "MPI_Finalize": 1, "MPI_Isend": 2 * ITERS + 40,
                 "MPI_Irecv": 3 * ITERS + 40, "MPI_Waitall": 2 * ITERS + 1,
                 "MPI_Waitany": 3 * ITERS, "MPI_Startall": ITERS, "MPI_Send_init": 1,
                 "MPI_Recv_init": 1, "MPI_Request_free": 2, "MPI_Get_count": ITERS}
        for fn, n in calls.items():
            assert fns[fn]["calls"] == n, fn
        assert fns["MPI_Testall"]["calls"] >= ITERS
        # 64 KiB (A) and 128 KiB (C) posted 5 ms of computation before their wait: far
        # longer than they take, so all of it may have been overlapped.
        for lo in (65536, 131072):
            b = _bin(p, lo)
            assert b["transfers"] == 2 * ITERS
            assert b["max_s"] == pytest.approx(b["xfer_s"], rel=1e-9)
            assert 0 <= b["min_s"] <= b["max_s"]
        # 32 KiB (B): blocking, nothing overlapped.
        b = _bin(p, 32768)
        assert b["transfers"] == 2 * ITERS and b["xfer_s"] > 0
        assert b["min_s"] == 0 and b["max_s"] == 0
        b = _bin(p, 8)
        assert b["transfers"] == 4 * ITERS + 80  # D, E, F
        assert 0 <= b["min_s"] <= b["max_s"] <= b["xfer_s"] * (1 + 1e-9)
        assert p["totals"]["comp_s"] >= 2 * ITERS * 0.005 * 0.9


@pytest.mark.parametrize("toolchain", _toolchains())
def test_collective_calls_are_seen_once(tmp_path_factory, toolchain):
    # The program itself checks MPI_IN_PLACE (Allreduce, Reduce) and MPI_BOTTOM (Bcast of
    # an absolute-address type): a sentinel passed to C as a buffer fails it.
    run = _profile(tmp_path_factory, toolchain, "f_coll")
    for p in _profiles(run):
        fns = _fns(p)
        calls = {"MPI_Bcast": ITERS + 1, "MPI_Allreduce": ITERS, "MPI_Reduce": ITERS,
                 "MPI_Iallreduce": ITERS, "MPI_Wait": ITERS, "MPI_Barrier": ITERS,
                 "MPI_Type_commit": 1, "MPI_Type_free": 1}
        for fn, n in calls.items():
            assert fns[fn]["calls"] == n, fn


@pytest.mark.parametrize("toolchain", _toolchains())
def test_collective_transfers(tmp_path_factory, toolchain):
    """Per the collective contract (docs/method.md): blocking collectives are transfers
    inside their call, MPI_Iallreduce one from its call to MPI_Wait. Needs the collective
    C wrappers, which are built separately; skipped until the profile has them."""
    run = _profile(tmp_path_factory, toolchain, "f_coll")
    if all(_fns(p)["MPI_Bcast"]["transfers"] == 0 for p in _profiles(run)):
        pytest.skip("collective transfer wrappers not in this build")
    for p in _profiles(run):
        _attributed(p)
        fns = _fns(p)
        for fn, n in {"MPI_Bcast": ITERS + 1, "MPI_Allreduce": ITERS, "MPI_Reduce": ITERS,
                      "MPI_Barrier": ITERS, "MPI_Iallreduce": ITERS}.items():
            assert fns[fn]["transfers"] == n, fn
        for fn in ("MPI_Bcast", "MPI_Allreduce", "MPI_Reduce", "MPI_Barrier"):
            assert fns[fn]["min_s"] == 0 and fns[fn]["max_s"] == 0, fn
        assert p["cases"]["in-call"] == 4 * ITERS + 1
        assert p["cases"]["across-calls"] == ITERS
        # 1024 doubles reduced behind 5 ms of computation
        ia = fns["MPI_Iallreduce"]
        assert ia["xfer_s"] > 0 and ia["max_s"] == pytest.approx(ia["xfer_s"], rel=1e-9)
        assert _bin(p, 8192)["transfers"] == 2 * ITERS + 1  # Bcast 8 KiB, Iallreduce 8 KiB


@pytest.mark.parametrize("toolchain", _toolchains())
def test_regions_and_pcontrol_from_fortran(tmp_path_factory, toolchain):
    run = _profile(tmp_path_factory, toolchain, "f_regions")
    for p in _profiles(run):
        _attributed(p)
        regions = {r["region"]: r for r in p["by_region"]}
        ex, inner, solo = regions["exchange"], regions["inner"], regions["solo"]
        assert ex["transfers"] == 2 * ITERS  # Isend + Irecv
        assert ex["max_s"] == pytest.approx(ex["xfer_s"], rel=1e-9)  # 2 ms computation
        assert inner["transfers"] == 2 * ITERS  # Sendrecv: two in-call transfers
        assert inner["min_s"] == 0 and inner["max_s"] == 0
        # 'solo   ' and 'solo' are one region: trailing blanks are no part of a name
        assert solo["transfers"] == 0 and solo["comp_s"] >= 0.003 * 0.9
        assert "solo   " not in regions
        assert p["counters"]["unmonitored_transfers"] == 2 * ITERS
        assert _fns(p)["MPI_Pcontrol"]["calls"] == ITERS  # PCONTROL(1) starts unmonitored
        assert p["totals"]["transfers"] == 4 * ITERS


@pytest.mark.parametrize("toolchain", _toolchains())
def test_unmodified_halo_exchange_has_plausible_bounds(tmp_path_factory, toolchain):
    run = _profile(tmp_path_factory, toolchain, "f_halo", str(HALO_STEPS))
    for p in _profiles(run):
        _attributed(p)
        t = p["totals"]
        fns = _fns(p)
        # Two ranks: one real neighbour (a send and a receive a step), one MPI_PROC_NULL
        # side (counted, moves nothing).
        assert fns["MPI_Isend"]["calls"] == 2 * HALO_STEPS
        assert fns["MPI_Irecv"]["calls"] == 2 * HALO_STEPS
        assert p["counters"]["proc_null"] == 2 * HALO_STEPS
        assert p["cases"]["across-calls"] == 2 * HALO_STEPS
        assert fns["MPI_Waitall"]["calls"] == HALO_STEPS
        assert fns["MPI_Allreduce"]["calls"] == HALO_STEPS // 10
        assert 0 <= t["min_s"] <= t["max_s"] <= t["xfer_s"] * (1 + 1e-9)
        for fn in ("MPI_Isend", "MPI_Irecv"):
            f = fns[fn]
            assert f["transfers"] == HALO_STEPS
            # The interior update between post and wait (254 columns of 4096 rows) takes
            # far longer than a 32 KiB ghost column needs: all of it may be overlapped.
            assert 0 <= f["min_s"] <= f["max_s"]
            assert f["xfer_s"] > 0 and f["max_s"] == pytest.approx(f["xfer_s"], rel=1e-6)


@pytest.mark.parametrize("toolchain", _toolchains())
def test_mpi_f08_program(tmp_path_factory, toolchain):
    if not fortran_program(toolchain, "f08_p2p").is_file():
        pytest.skip("f08_p2p not built: the MPI has no mpi_f08 module, or the profiler does "
                    "not know its mpi_f08 entry points (docs/profiler.md, 'Fortran')")
    run = _profile(tmp_path_factory, toolchain, "f08_p2p")
    for p in _profiles(run):
        _attributed(p)
        fns = _fns(p)
        for fn, n in {"MPI_Init": 1, "MPI_Finalize": 1, "MPI_Isend": 3 * ITERS,
                      "MPI_Irecv": 3 * ITERS, "MPI_Waitall": ITERS, "MPI_Waitany": 3 * ITERS,
                      "MPI_Allreduce": ITERS}.items():
            assert fns[fn]["calls"] == n, fn
        assert fns["MPI_Test"]["calls"] >= 2 * ITERS
        assert fns["MPI_Isend"]["transfers"] == 3 * ITERS
        assert fns["MPI_Irecv"]["transfers"] == 3 * ITERS
        assert p["cases"]["across-calls"] == 6 * ITERS
        b = _bin(p, 65536)  # 64 KiB behind 5 ms of computation
        assert b["transfers"] == 2 * ITERS
        assert b["max_s"] == pytest.approx(b["xfer_s"], rel=1e-9)
