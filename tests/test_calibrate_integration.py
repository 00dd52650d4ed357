"""`mpi-overlap calibrate --quick -n 2` end to end: a pingpong run directory, a table
under the state directory stamped with the fingerprints mo_fingerprint prints, times that
make physical sense, and find_or_calibrate finding it again (or refusing a foreign one).

Real measurements on a small shared machine, so the checks are ones that hold through
noise: positive times, a 0-byte message well under 100 µs, and t(64M) > t(1M) > t(1K)
(each step is 64x or more bytes, far beyond any noise seen).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.build import ensure_built, executable
from mpi_overlap.calibrate import find_or_calibrate
from mpi_overlap.errors import UserError
from mpi_overlap.rundir import load_run
from mpi_overlap.schema import result_errors, run_errors
from mpi_overlap.toolchains import get_toolchain
from mpi_overlap.xfer_table import read_table
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

KIB, MIB = 1 << 10, 1 << 20


def _mo_fingerprint(name: str) -> dict:
    tc = get_toolchain(name)
    exe = executable(ensure_built(tc), "mo_fingerprint")
    out = subprocess.run([str(exe)], env=tc.environment(), capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("toolchain", toolchain_params())
def test_calibrate_quick_writes_a_fitting_table(toolchain: str, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli("calibrate", "--mpi", toolchain, "--quick", "-n", "2", "--out", str(out),
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr

    m = re.search(rf"^{re.escape(toolchain)}: table (\S+\.table)$", proc.stdout, re.M)
    assert m, proc.stdout
    table = read_table(Path(m.group(1)))
    assert "64 MiB" in proc.stdout and "intra" in proc.stdout

    # The calibration is an ordinary, valid run.
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.complete and run.benchmark == "pingpong"
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
    assert find_or_calibrate(get_toolchain(toolchain)) == table.path
    # ...and refuses one made elsewhere unless forced.
    foreign = tmp_path / "foreign.table"
    foreign.write_text(table.path.read_text().replace(
        f"machine {table.machine_fp}", "machine 0123456789abcdef"))
    with pytest.raises(UserError, match=r"another machine: .*--table PATH --force-table"):
        find_or_calibrate(get_toolchain(toolchain), table=foreign)
    assert find_or_calibrate(get_toolchain(toolchain), table=foreign, force_table=True) == foreign
