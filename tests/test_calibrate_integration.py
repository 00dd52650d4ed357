"""`mpi-overlap calibrate --quick -n 2` end to end: a pingpong and a collectives run
directory, a table under the state directory stamped with the fingerprints mo_fingerprint
prints, times that make physical sense, the collective series for 2 ranks, and
find_or_calibrate finding it again (or refusing a foreign one, or adding only the
collectives of another communicator size).

Real measurements on a small shared machine, so the checks are ones that hold through
noise: positive times, a 0-byte message well under 100 µs, and t(64M) > t(1M) > t(1K)
(each step is 64x or more bytes, far beyond any noise seen); for the collectives the
invariants of their statistic and, between sizes 1024x apart, the same order.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.build import ensure_built, executable
from mpi_overlap.calibrate import find_or_calibrate
from mpi_overlap.errors import UserError
from mpi_overlap.rundir import load_run
from mpi_overlap.schema import result_errors, run_errors
from mpi_overlap.toolchains import get_toolchain
from mpi_overlap.xfer_table import BLOCKING_COLL_OPS, COLL_OPS, read_table, save_table
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

KIB, MIB = 1 << 10, 1 << 20


def _mo_fingerprint(name: str) -> dict:
    tc = get_toolchain(name)
    exe = executable(ensure_built(tc), "mo_fingerprint")
    out = subprocess.run([str(exe)], env=tc.environment(), capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module", params=toolchain_params())
def calibrated(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, str]:
    """(toolchain, run directory base, stdout) of one `calibrate --quick -n 2`."""
    toolchain = request.param
    tmp = tmp_path_factory.mktemp(f"calibrate-{toolchain}")
    out = tmp / "runs"
    proc = run_cli("calibrate", "--mpi", toolchain, "--quick", "-n", "2", "--out", str(out),
                   timeout=600, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return toolchain, out, proc.stdout


def _table_of(toolchain: str, stdout: str) -> Path:
    m = re.search(rf"^{re.escape(toolchain)}: table (\S+\.table)$", stdout, re.M)
    assert m, stdout
    return Path(m.group(1))


@pytest.mark.timing
def test_calibrate_quick_writes_a_fitting_table(calibrated: tuple[str, Path, str],
                                                tmp_path: Path) -> None:
    toolchain, out, stdout = calibrated
    table = read_table(_table_of(toolchain, stdout))
    assert "64 MiB" in stdout and "intra" in stdout

    # The calibration is two ordinary, valid runs.
    runs = sorted((load_run(p) for p in out.iterdir() if (p / "run.json").is_file()),
                  key=lambda r: r.benchmark)
    assert [r.benchmark for r in runs] == ["collectives", "pingpong"]
    for run in runs:
        assert run.complete
        assert run_errors(run.meta) == [] and result_errors(run.result) == []

    fp = _mo_fingerprint(toolchain)
    assert (table.machine_fp, table.machine_key) == (fp["machine_fp"], fp["machine_key"])
    assert (table.toolchain_fp, table.toolchain_key) == (fp["toolchain_fp"], fp["toolchain_key"])
    assert re.fullmatch(r"[0-9a-f]{16}", table.machine_fp)
    assert table.toolchain_name == toolchain and (table.ranks, table.nodes) == (2, 1)
    assert table.path.name == f"{toolchain}-{table.machine_fp}-{table.toolchain_fp}.table"

    points = dict(table.points["intra"])
    assert set(points) >= {0, KIB, MIB, 64 * MIB}
    assert all(t > 0 for t in points.values())
    assert points[0] < 100e-6, points[0]
    assert points[64 * MIB] > points[MIB] > points[KIB], points
    assert "inter" not in table.points  # one node

    # profile's entry point finds this table without measuring again...
    assert find_or_calibrate(get_toolchain(toolchain), out_base=tmp_path) == table.path
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
    # ...and refuses one made elsewhere unless forced.
    foreign = tmp_path / "foreign.table"
    foreign.write_text(table.path.read_text().replace(
        f"machine {table.machine_fp}", "machine 0123456789abcdef"))
    with pytest.raises(UserError, match=r"another machine: .*--table PATH --force-table"):
        find_or_calibrate(get_toolchain(toolchain), table=foreign)
    assert find_or_calibrate(get_toolchain(toolchain), table=foreign, force_table=True) == foreign


def test_calibrate_writes_the_collectives_of_2_ranks(calibrated: tuple[str, Path, str]) -> None:
    toolchain, _, stdout = calibrated
    table = read_table(_table_of(toolchain, stdout))
    # (the state directory is shared: series of other sizes may be there from other runs)
    assert table.version == 2 and 2 in table.coll_sizes
    two = {op: pts for (op, n), pts in table.coll.items() if n == 2}
    assert set(two) == set(COLL_OPS)  # every op, blocking and not
    for op, pts in two.items():
        want = {0} if op in ("barrier", "ibarrier") else {0, KIB, 64 * KIB, MIB}
        assert {b for b, _ in pts} == want, (op, pts)
        assert all(t >= 0 for _, t in pts) and all(t > 0 for b, t in pts if b > 0)
    # Every op is shown (blocking / non-blocking in one row).
    assert "collectives on 2 ranks" in stdout
    assert all(re.search(rf"^. {op} ", stdout, re.M) for op in BLOCKING_COLL_OPS)


@pytest.mark.timing
def test_collectives_result_is_consistent(calibrated: tuple[str, Path, str]) -> None:
    _, out, _ = calibrated
    (run_dir,) = [p for p in out.iterdir() if "collectives" in p.name]
    res = load_run(run_dir).result["results"]
    assert (res["comm_size"], res["nodes"]) == (2, 1)
    series = {s["op"]: s for s in res["series"]}
    assert list(series) == [op for pair in zip(BLOCKING_COLL_OPS, COLL_OPS[22:], strict=True)
                            for op in pair]  # each blocking op, then its twin
    for op, s in series.items():
        assert s["complete"] and s["nonblocking"] == (op.startswith("i") and op in COLL_OPS[22:])
        assert s["mpi_function"] == "MPI_" + op[0].upper() + op[1:]
        for p in s["sizes"]:
            # The statistics' invariants (exact up to rounding): median and mean of the
            # slowest rank lie between its fastest and slowest iteration, and the mean is
            # at least the mean of the ranks' means (OSU's figure).
            assert 8 <= p["iterations"] <= 1000 and p["visits"] == 3  # --quick: 3 passes
            assert p["min_s"] <= p["time_s"] <= p["max_s"]
            assert p["min_s"] * (1 - 1e-12) <= p["mean_s"] <= p["max_s"] * (1 + 1e-12)
            assert p["rank_mean_s"] <= p["mean_s"] * (1 + 1e-12)

    def t(op: str, nbytes: int) -> float:
        return next(p["time_s"] for p in series[op]["sizes"] if p["bytes"] == nbytes)

    # 1024x the bytes is never faster: 1 MiB moves far more data than noise adds to 1 KiB.
    for op in ("bcast", "allreduce", "alltoall", "ibcast", "iallreduce"):
        assert t(op, MIB) > t(op, KIB), (op, t(op, KIB), t(op, MIB))
    # A non-blocking collective posted and at once waited moves the same 1 MiB, so it takes
    # at least one copy of it: more than 10 µs (100 GB/s; this VM copies at a few GB/s).
    # A measurement that did not wait would take about 1 µs. (Not a fraction of the
    # blocking op's time: implementations use other algorithms for the two, and Open MPI
    # 5's blocking 1 MiB bcast took 12 ms against 86 µs non-blocking on this loaded VM.)
    for op in ("ibcast", "iallreduce", "ialltoall", "iallgather", "igather", "iscatter"):
        assert t(op, MIB) > 10e-6, (op, t(op, MIB))


def test_profile_entry_adds_only_missing_collectives(calibrated: tuple[str, Path, str],
                                                     tmp_path: Path) -> None:
    toolchain, _, stdout = calibrated
    if toolchain != "mpich":
        pytest.skip("one toolchain is enough for the bookkeeping")
    path = _table_of(toolchain, stdout)
    # The state directory is shared: make sure size 1 is missing (an earlier run of this
    # test may have added it).
    loaded = read_table(path)
    before = replace(loaded, coll={k: v for k, v in loaded.coll.items() if k[1] != 1})
    save_table(path, before)
    # 1 rank: the collectives of comm size 1 are missing; pingpong is not run again.
    assert find_or_calibrate(get_toolchain(toolchain), ranks=1, out_base=tmp_path) == path
    (run_dir,) = list(tmp_path.iterdir())
    assert load_run(run_dir).benchmark == "collectives"
    after = read_table(path)
    assert after.points == before.points
    assert after.coll_sizes == sorted({1, *before.coll_sizes})
    assert {k: v for k, v in after.coll.items() if k[1] != 1} == before.coll
    assert {op for op, n in after.coll if n == 1} == set(COLL_OPS)
    # Now nothing is missing for either size.
    assert find_or_calibrate(get_toolchain(toolchain), ranks=1, out_base=tmp_path) == path
    assert find_or_calibrate(get_toolchain(toolchain), ranks=2, out_base=tmp_path) == path
    assert len(list(tmp_path.iterdir())) == 1
