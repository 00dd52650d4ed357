"""Collectives end to end: `mpi-overlap profile -n 2` on native/tests/coverage_coll.c, which
runs every collective blocking once, non-blocking once (post, 5 ms of computation, wait) and
persistent twice (start, 5 ms, wait), each region apart, each operation with its own message
size; and on native/tests/iallreduce_app.c, an unmodified program, under Debian's Open MPI.

Expectations, by hand from the programs and docs/method.md ("Collectives"):
- one transfer per blocking and non-blocking call, two per persistent request;
- blocking collectives: the first case, no overlap (min = max = 0);
- non-blocking and persistent ones: the second case, and as the computation between post
  and wait (5 ms) is far longer than any of these transfers, max = xfer_time;
- every event's message size exactly as the size table of coverage_coll.c says, checked
  with one size bin [s, s+1) per expected size s;
- nothing unattributed, nothing begin-only or end-only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.core.documents import result_errors
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

INT, DOUBLE = 4, 8

# Message size of each operation on (rank 0, rank 1) in coverage_coll.c; rank 0 is the root
# and works in place where it can.
SIZES: dict[str, tuple[int, int]] = {
    "Barrier": (0, 0),
    "Bcast": (100 * INT, 100 * INT),
    "Reduce": (101 * INT, 101 * INT),
    "Allreduce": (102 * INT, 102 * INT),
    "Scan": (103 * INT, 103 * INT),
    "Exscan": (104 * INT, 104 * INT),
    "Reduce_scatter_block": (105 * INT, 105 * INT),
    "Reduce_scatter": (106 * INT, 108 * INT),  # recvcounts[my rank]
    "Allgather": (110 * INT, 110 * INT),  # in place: from the receive side
    "Alltoall": (111 * INT, 111 * INT),
    "Neighbor_allgather": (112 * INT, 112 * INT),
    "Neighbor_alltoall": (113 * INT, 113 * INT),
    "Gather": (114 * INT, 114 * INT),
    "Gatherv": ((116 + 120) * INT // 2, 120 * INT),  # root: sum / comm size
    "Scatter": (122 * INT, 122 * INT),
    "Scatterv": ((124 + 128) * INT // 2, 128 * INT),
    "Allgatherv": ((130 + 134) * INT // 2, (130 + 134) * INT // 2),
    "Alltoallv": ((136 + 140) * INT // 2, (138 + 142) * INT // 2),
    "Alltoallw": ((144 * INT + 73 * DOUBLE) // 2, (148 * INT + 75 * DOUBLE) // 2),
    "Neighbor_allgatherv": (156 * INT, 152 * INT),  # one in-neighbour
    "Neighbor_alltoallv": (164 * INT, 160 * INT),
    "Neighbor_alltoallw": (84 * DOUBLE, 170 * INT),
}
STEMS = tuple(SIZES)
PERSISTENT_STARTS = 2


def _nonblocking(stem: str) -> str:
    return f"MPI_I{stem[0].lower()}{stem[1:]}"


def _edges() -> list[int]:
    sizes = sorted({s for pair in SIZES.values() for s in pair if s > 0})
    return [e for s in sizes for e in (s, s + 1)]


def _bin_of(edges: list[int], size: int) -> tuple[int, int | None]:
    lo = 0
    for e in edges:
        if size < e:
            return lo, e
        lo = e
    return lo, None


def _profile(tmp_path: Path, toolchain: str, app: str, *args: str, extra: tuple[str, ...] = ()):
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    exe = build_dir_for(tc) / "tests" / app
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", toolchain, "-n", "2", "--out", str(out), "--no-report",
                   *extra, "--", str(exe), *args, timeout=600, cwd=tmp_path)
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file()) if out.is_dir() else []
    assert proc.returncode == 0, proc.stderr
    assert runs, proc.stdout
    run = load_run(runs[-1])
    assert run.status == "complete" and run.result["status"] == "complete"
    assert result_errors(run.result) == []
    return run, runs[-1]


# Counters that would mean an event was lost or could not be attributed.
UNATTRIBUTED = (
    "unmonitored_transfers",
    "handle_reused",
    "handle_shared",
    "proc_null",
    "cancelled",
    "start_unknown",
    "freed_active",
    "free_unknown",
    "inactive_completions",
    "unfinished",
    "region_mismatch",
    "region_overflow",
    "out_of_memory",
)


@pytest.mark.parametrize("toolchain", toolchain_params(systems=False))
def test_every_collective_is_one_transfer_with_its_size_and_case(tmp_path, toolchain):
    edges = _edges()
    run, run_dir = _profile(tmp_path, toolchain, "coverage_coll", "5",
                            extra=("--bins", ",".join(map(str, edges))))
    # All three wheels (MPICH 5, Open MPI 5, Intel MPI 2021) have MPI-4 persistent
    # collectives.
    assert "persistent collectives yes" in (run_dir / "stdout.log").read_text()
    n = len(STEMS)
    for rank in (0, 1):
        p = run.result["ranks"][rank]["profile"]
        fns = {f["fn"]: f for f in p["by_function"]}
        for stem in STEMS:
            for name, transfers in (
                (f"MPI_{stem}", 1),
                (_nonblocking(stem), 1),
                (f"MPI_{stem}_init", PERSISTENT_STARTS),
            ):
                f = fns.get(name)
                where = f"rank {rank} {name}: {f}"
                assert f is not None and f["calls"] == 1 and f["transfers"] == transfers, where
                assert f["xfer_s"] > 0, where
                if name == f"MPI_{stem}":  # blocking: inside one call
                    assert f["min_s"] == 0 and f["max_s"] == 0, where
                else:  # 5 ms of computation between post and wait, far above the transfer
                    assert f["max_s"] == pytest.approx(f["xfer_s"], rel=1e-9), where
                    assert 0 <= f["min_s"] <= f["max_s"], where
        assert fns["MPI_Start"]["calls"] == PERSISTENT_STARTS * n
        assert fns["MPI_Request_free"]["calls"] == n
        assert fns["MPI_Wait"]["calls"] == n + PERSISTENT_STARTS * n

        assert p["cases"] == {
            "in-call": n,
            "across-calls": n + PERSISTENT_STARTS * n,
            "begin-only": 0,
            "end-only": 0,
        }
        assert p["totals"]["transfers"] == (2 + PERSISTENT_STARTS) * n
        regions = {r["region"]: r["transfers"] for r in p["by_region"] if r["transfers"]}
        assert regions == {"blocking": n, "nonblocking": n, "persistent": PERSISTENT_STARTS * n}
        assert {c: p["counters"][c] for c in UNATTRIBUTED} == dict.fromkeys(UNATTRIBUTED, 0)

        # every transfer's size, through bins [s, s+1)
        expected: dict[tuple[int, int | None], int] = {}
        for stem in STEMS:
            key = _bin_of(edges, SIZES[stem][rank])
            expected[key] = expected.get(key, 0) + 2 + PERSISTENT_STARTS
        got = {(b["lo"], b["hi"]): b["transfers"] for b in p["by_bin"]}
        assert got == expected, f"rank {rank}"


def _debian_openmpi() -> str | None:
    present = {tc.name for tc in list_toolchains()}
    return next((n for n in ("debian-openmpi", "system-mpi") if n in present), None)


ITERS, DOUBLES = 10, 1024


@pytest.mark.skipif(_debian_openmpi() is None,
                    reason="no Debian Open MPI toolchain registered (mpi-overlap toolchain add "
                           "debian-openmpi --mpicc /usr/bin/mpicc)")
def test_unmodified_iallreduce_program_under_debian_openmpi(tmp_path):
    toolchain = _debian_openmpi()
    assert toolchain is not None
    assert "Open MPI v4" in (get_toolchain(toolchain).library_version or "")
    run, _ = _profile(tmp_path, toolchain, "iallreduce_app", str(DOUBLES), str(ITERS), "2")
    for rank in (0, 1):
        p = run.result["ranks"][rank]["profile"]
        fns = {f["fn"]: f for f in p["by_function"]}
        f = fns["MPI_Iallreduce"]
        assert f["calls"] == ITERS and f["transfers"] == ITERS
        assert p["cases"] == {"in-call": 0, "across-calls": ITERS, "begin-only": 0,
                              "end-only": 0}
        t = p["totals"]
        assert t["transfers"] == ITERS and t["xfer_s"] > 0
        assert 0 <= t["min_s"] <= t["max_s"] <= t["xfer_s"]
        # 2 ms of computation between post and wait, far above an 8 KiB transfer
        assert t["max_s"] == pytest.approx(t["xfer_s"], rel=1e-9)
        # 1024 doubles: the power-of-two bin [8 KiB, 16 KiB)
        bins = {(b["lo"], b["hi"]): b["transfers"] for b in p["by_bin"]}
        assert bins == {(8192, 16384): ITERS}
        assert {c: p["counters"][c] for c in UNATTRIBUTED} == dict.fromkeys(UNATTRIBUTED, 0)
