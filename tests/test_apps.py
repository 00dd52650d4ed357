"""The mini-applications mo_halo and mo_cg (issue 7, items 1 and 2) on 1, 2 and 4 ranks
under the MPICH wheel (4 ranks oversubscribe this 2-core machine; Hydra needs no flag for
that, and launch_command adds Open MPI's --oversubscribe where it would be needed).

Numerical results, not timings: mo_halo's checksums are bitwise the same in every exchange
mode and for every number of ranks, and equal those of the same stencil computed here with
numpy; overlap-test makes exactly K MPI_Testall calls per iteration; the number of requests
per iteration matches the decomposition. mo_cg's residual histories agree within the
stated relative tolerance (1e-10) across modes, rank counts and a numpy CG."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mpi_overlap.core.documents import result_errors
from mpi_overlap.platform.build import ensure_built, executable
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.launch import launch_command

RANKS = (1, 2, 4)
HALO_GRID = (12, 10, 9)  # odd extents: uneven blocks; 4 ranks split 1x2x2
HALO_ITERS = 6
HALO_TESTS = 3
HALO_MODES = ("blocking", "nonblocking", "overlap", "overlap-test", "diagonal")
CG_GRID = (14, 12, 10)
CG_ITERS = 25
CG_TOL = 1e-10
SEED = 7


def _run(tmp: Path, ranks: int, prog: str, *args: str) -> dict:
    tc = get_toolchain("mpich")
    exe = executable(ensure_built(tc), f"mo_{prog}")
    out = tmp / f"{prog}-{ranks}.json"
    cmd = launch_command(tc, ranks, [str(exe), *args, "--warmup", "2", "--output", str(out)])
    proc = subprocess.run(cmd, env=tc.environment(), capture_output=True, text=True, timeout=120,
                          cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["status"] == "complete" and result_errors(doc) == []
    return doc["results"]


@pytest.fixture(scope="module")
def halo(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict]:
    tmp = tmp_path_factory.mktemp("halo")
    grid = "x".join(map(str, HALO_GRID))
    return {n: _run(tmp, n, "halo", "--grid", grid, "--iterations", str(HALO_ITERS), "--tests",
                    str(HALO_TESTS), "--inflate", "2", "--seed", str(SEED)) for n in RANKS}


@pytest.fixture(scope="module")
def cg(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict]:
    tmp = tmp_path_factory.mktemp("cg")
    grid = "x".join(map(str, CG_GRID))
    return {n: _run(tmp, n, "cg", "--grid", grid, "--iterations", str(CG_ITERS), "--work-us", "5",
                    "--imbalance", "1", "--seed", str(SEED)) for n in RANKS}


# ---- the apps' seeded data and checksums, recomputed with numpy ----------------------

_M = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix64(x: np.ndarray) -> np.ndarray:
    """grid.c's app_mix64 (splitmix64's finalizer) on uint64 arrays, wrapping."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _gidx(shape: tuple[int, int, int]) -> np.ndarray:
    """Global linear index of every point, as an array indexed [k, j, i] (x fastest)."""
    nx, ny, nz = shape
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return (i + nx * (j + ny * k)).astype(np.uint64)


def _seeded(shape: tuple[int, int, int], seed: int, stream: int) -> np.ndarray:
    key = _mix64(np.uint64(seed) ^ _mix64(np.uint64(stream) + np.uint64(0x632BE59BD9B4E019)))
    bits = _mix64(key ^ _gidx(shape)) >> np.uint64(11)
    return bits.astype(np.float64) * 2.0**-53


def _hash(u: np.ndarray) -> str:
    with np.errstate(over="ignore"):
        h = _mix64(u.view(np.uint64) ^ _mix64(_gidx(HALO_GRID))).sum(dtype=np.uint64)
    return f"{int(h):016x}"


def _padded(u: np.ndarray) -> np.ndarray:
    return np.pad(u, 1)  # zero outside the grid


def _stencil(u: np.ndarray) -> np.ndarray:
    p = _padded(u)
    c = p[1:-1, 1:-1, 1:-1]
    # The apps' order: centre, x-1, x+1, y-1, y+1, z-1, z+1, then * (1/7).
    s = c + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1] \
        + p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1]
    return s * (1.0 / 7.0)


def _laplacian(u: np.ndarray) -> np.ndarray:
    p = _padded(u)
    return 6.0 * p[1:-1, 1:-1, 1:-1] - p[1:-1, 1:-1, :-2] - p[1:-1, 1:-1, 2:] - p[1:-1, :-2, 1:-1] \
        - p[1:-1, 2:, 1:-1] - p[:-2, 1:-1, 1:-1] - p[2:, 1:-1, 1:-1]


# ---- halo ------------------------------------------------------------------------


@pytest.mark.mpi
def test_halo_checksums_identical_across_modes_and_ranks(halo: dict[int, dict]) -> None:
    shape = (HALO_GRID[2], HALO_GRID[1], HALO_GRID[0])
    u = _seeded(HALO_GRID, SEED, 0).reshape(shape)
    for _ in range(HALO_ITERS):
        u = _stencil(u)
    expected = _hash(u)
    sums = set()
    for n, res in halo.items():
        assert res["ranks"] == n and res["grid"] == list(HALO_GRID)
        assert res["warmup_iterations"] == 2  # untimed, and not in the checksum
        assert [m["mode"] for m in res["modes"]] == list(HALO_MODES)
        assert res["checksums_identical"] is True
        for m in res["modes"]:
            assert m["complete"] and m["checksum"] == expected, (n, m["mode"])
            sums.add(m["sum"])
            assert len(m["iter_time_s"]) == HALO_ITERS
            assert 0 <= m["mpi_time_s"] <= m["run_time_s"]
    assert len(sums) == 1
    (total,) = sums
    assert total == pytest.approx(float(u.sum()), rel=1e-9)


@pytest.mark.mpi
def test_halo_counts_tests_and_requests(halo: dict[int, dict]) -> None:
    for n, res in halo.items():
        modes = {m["mode"]: m for m in res["modes"]}
        for name, m in modes.items():
            per_rank = HALO_TESTS * HALO_ITERS if name == "overlap-test" else 0
            calls = (m["test_calls_per_rank_min"], m["test_calls_per_rank_max"])
            assert calls == (per_rank, per_rank), (n, name)
            assert m["test_calls_total"] == per_rank * n
        # Requests per iteration on the busiest rank: a receive and a send per neighbour.
        # 1 rank: none; 2 (1x1x2): one face; 4 (1x2x2): two faces, plus one edge in diagonal.
        faces, diagonal = {1: (0, 0), 2: (2, 2), 4: (4, 6)}[n]
        assert res["dims"] == {1: [1, 1, 1], 2: [1, 1, 2], 4: [1, 2, 2]}[n]
        assert modes["blocking"]["requests_per_iter_max"] == 0
        for name in ("nonblocking", "overlap", "overlap-test"):
            assert modes[name]["requests_per_iter_max"] == faces
        assert modes["diagonal"]["requests_per_iter_max"] == diagonal


# ---- cg --------------------------------------------------------------------------


def _numpy_cg() -> list[float]:
    shape = (CG_GRID[2], CG_GRID[1], CG_GRID[0])
    b = _seeded(CG_GRID, SEED, 1).reshape(shape)
    r, p = b.copy(), b.copy()
    rr = float(np.vdot(r, r))
    hist = [rr**0.5]
    for _ in range(CG_ITERS):
        q = _laplacian(p)
        alpha = rr / float(np.vdot(p, q))
        r = r - alpha * q
        rr_new = float(np.vdot(r, r))
        p = r + (rr_new / rr) * p
        rr = rr_new
        hist.append(rr**0.5)
    return hist


def _max_rel_diff(a: list[float], b: list[float]) -> float:
    assert len(a) == len(b)
    return max(abs(x - y) / max(abs(x), abs(y)) for x, y in zip(a, b, strict=True))


@pytest.mark.mpi
def test_cg_residual_histories_agree(cg: dict[int, dict]) -> None:
    reference = _numpy_cg()
    assert reference[-1] < 0.5 * reference[0]  # CG does converge on this problem
    for n, res in cg.items():
        assert res["ranks"] == n and res["residual_tolerance"] == CG_TOL
        assert res["residuals_agree"] is True and res["residuals_max_rel_diff"] <= CG_TOL
        assert [m["mode"] for m in res["modes"]] == ["allreduce", "iallreduce"]
        for m in res["modes"]:
            assert m["complete"] and len(m["residuals"]) == CG_ITERS + 1
            assert _max_rel_diff(m["residuals"], reference) <= CG_TOL, (n, m["mode"])
            assert m["reductions_per_rank"] == 2 * CG_ITERS
            assert m["relative_residual"] == pytest.approx(m["residuals"][-1] / m["residuals"][0])
            assert m["halo_time_s"] + m["reduce_time_s"] >= m["mpi_time_s"] * (1 - 1e-9)
            assert 0 <= m["mpi_time_s"] <= m["run_time_s"]
    # On one rank the two modes do bitwise the same arithmetic.
    one = cg[1]["modes"]
    assert one[0]["residuals"] == one[1]["residuals"]


@pytest.mark.mpi
def test_cg_restarts_before_its_residual_underflows(tmp_path: Path) -> None:
    # on an 8^3 grid r.r underflowed to 0 within 400 iterations, and the later ones
    # computed NaNs; now the solve starts again from x0 = 0 once the residual has fallen by
    # 1e-30 (native/apps/cg.c, CG_RESTART_FALL), in every mode alike
    res = _run(tmp_path, 2, "cg", "--grid", "8", "--iterations", "600", "--seed", str(SEED))
    assert res["residuals_agree"] is True
    for m in res["modes"]:
        hist = m["residuals"]
        assert all(isinstance(v, float) and v > 0 for v in hist), m["mode"]  # no NaN (null)
        restarts = [k for k in range(1, len(hist)) if hist[k] > 1e10 * hist[k - 1]]
        assert len(restarts) >= 2, m["mode"]
        # each restart comes once the residual has fallen by about 1e-30, never before,
        # and repeats the first iteration's residual exactly
        for k in restarts:
            assert 1e-33 < hist[k - 1] / hist[0] < 1e-30
            assert hist[k] == hist[1]
        assert min(hist) / hist[0] > 1e-33


@pytest.mark.mpi
@pytest.mark.parametrize("prog,arg", [("halo", "--modes=overlap,bogus"), ("cg", "--grid=1x2x3x4"),
                                      ("halo", "--profiler-ab=-1"), ("cg", "--profiler-ab=x")])
def test_apps_bad_flag_exits_2(tmp_path: Path, prog: str, arg: str) -> None:
    tc = get_toolchain("mpich")
    exe = executable(ensure_built(tc), f"mo_{prog}")
    proc = subprocess.run(launch_command(tc, 2, [str(exe), arg]), env=tc.environment(),
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count(f"mo_{prog}: error:") == 1, proc.stderr
