"""MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE) (docs/profiler.md, "The cost inside one launch"):
while a rank is paused the profiler's wrappers record nothing, and the next MPI_Pcontrol
resumes them. mo_halo --profiler-ab N (native/apps/app_ab.h) pauses every other block of
N iterations, so its profile must hold exactly half of the iterations' point-to-point
calls of a run without blocks, and the program's results must not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.analysis.block_pairs import block_paused
from mpi_overlap.platform.build import ensure_built, executable
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

ITERATIONS, BLOCK = 200, 10  # 20 blocks: 10 running, 10 paused


def _profiled_halo(tmp: Path, *extra: str) -> tuple[dict, dict[str, int]]:
    """mo_halo under `profile`: its result's one mode and rank 0's calls per function."""
    tc = get_toolchain("mpich")
    exe = executable(ensure_built(tc), "mo_halo")
    out = tmp / "runs"
    tmp.mkdir()
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--no-report", "--out", str(out),
                   "--", str(exe), "--local", "8", "--modes", "nonblocking", "--iterations",
                   str(ITERATIONS), "--warmup", "0", "--output", str(tmp / "halo.json"), *extra,
                   timeout=600, cwd=tmp)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    assert load_run(run_dir).complete
    (mode,) = json.loads((tmp / "halo.json").read_text())["results"]["modes"]
    rank0 = json.loads((run_dir / "profile.rank-0.json").read_text())
    assert rank0["status"] == "complete"
    calls = {f["fn"]: f["calls"] for f in rank0["profile"]["by_function"]}
    return mode, calls


def test_a_paused_rank_records_none_of_its_calls(tmp_path: Path) -> None:
    whole, all_calls = _profiled_halo(tmp_path / "whole")
    half, some_calls = _profiled_halo(tmp_path / "blocks", "--profiler-ab", str(BLOCK))
    # the program computed the same thing either way
    assert half["checksum"] == whole["checksum"] and half["sum"] == whole["sum"]
    assert len(half["iter_time_s"]) == ITERATIONS
    # every iteration posts its exchange with Irecv and Isend and waits in Waitall; only
    # the running blocks' are in the profile (the paused ones went straight to the MPI)
    for fn in ("MPI_Irecv", "MPI_Isend", "MPI_Waitall"):
        assert all_calls[fn] > 0 and all_calls[fn] % ITERATIONS == 0, (fn, all_calls)
        assert some_calls[fn] * 2 == all_calls[fn], (fn, some_calls[fn], all_calls[fn])
    # The switches: each pause is a call made while running, so the profile counts it;
    # each resume is made while paused (monitoring off at its start), so it does not.
    paused = [block_paused(b) for b in range(ITERATIONS // BLOCK)]
    pauses = sum(1 for b, p in enumerate(paused) if p and (b == 0 or not paused[b - 1]))
    assert pauses == 5
    assert some_calls["MPI_Pcontrol"] == pauses and "MPI_Pcontrol" not in all_calls
