"""A calibration that cannot silently lie (issues 11 and 35): `calibrate --quick` while
two CPU-bound spinners keep both cores busy (loadgen.py) gives a table that either agrees
with a quiet calibration taken just before within their 95 % intervals (or within
AGREEMENT_FLOOR) at every size both measured, or is marked and not used: suspect (then
`profile` and the profiler library refuse it with one line) or worse than the stored
one, written beside it while the stored one stays in use, which one line says. The
first holds by construction where the quiet table is `ok` (table_trust.replacement).

The spinners are on record in the table's load line; they are no verdict of their own:
the intervals show what they did to the estimates (xfer_quality.py).

The quiet reference is honest only when it was itself `ok`: otherwise the comparison is
not made and the test checks the verdict path alone. The state directory's table is
restored afterwards, so later tests do not inherit a table measured under load.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import run_cli
from loadgen import cpu_load
from mpi_overlap.calibration.calibrate import fingerprint
from mpi_overlap.calibration.table_trust import disagreement
from mpi_overlap.calibration.xfer_table import XferTable, read_table, table_path
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

TOOLCHAIN = "mpich"
SUSPECT_EXIT = 4


@pytest.fixture
def state_table() -> Iterator[Path]:
    """The state directory's table for mpich here, put back as it was afterwards."""
    tc = get_toolchain(TOOLCHAIN)
    fp = fingerprint(tc)
    path = table_path(tc, fp.machine_fp, fp.toolchain_fp)
    saved = path.read_bytes() if path.is_file() else None
    yield path
    if saved is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(saved)
    # a busy table that contradicted the quiet one, or a worse one, was written beside it
    for verdict in ("suspect", "noisy"):
        path.with_name(path.name.removesuffix(".table") + f".{verdict}.table").unlink(
            missing_ok=True)


def _calibrate(tmp_path: Path, name: str) -> tuple[int, str, str, XferTable, list]:
    out = tmp_path / name
    proc = run_cli("calibrate", "--mpi", TOOLCHAIN, "--quick", "-n", "2", "--out", str(out),
                   timeout=900, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    m = re.search(rf"^{TOOLCHAIN}: table (\S+\.table)$", proc.stdout, re.M)
    assert m, (proc.stdout[-2000:], proc.stderr[-2000:])
    copy = tmp_path / f"{name}.table"
    copy.write_bytes(Path(m.group(1)).read_bytes())
    runs = [load_run(p) for p in sorted(out.iterdir()) if "pingpong" in p.name]
    return proc.returncode, proc.stdout, proc.stderr, read_table(copy), runs


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("mpi-overlap: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_calibrate_under_load_agrees_or_is_refused(tmp_path: Path, state_table: Path) -> None:
    rc, _, _, quiet, _ = _calibrate(tmp_path, "quiet")
    assert rc in (0, SUSPECT_EXIT)
    with cpu_load(2):
        rc, stdout, stderr, loaded, runs = _calibrate(tmp_path, "loaded")

    # The spinners are on record beside the verdict.
    assert runs and all(r.meta["host_load"]["disturbed"] for r in runs), \
        [r.meta.get("host_load") for r in runs]
    assert loaded.load and "other processes used" in loaded.load
    assert f"{TOOLCHAIN}: verdict {loaded.verdict}: " in stdout
    written = Path(re.search(rf"^{TOOLCHAIN}: table (\S+\.table)$", stdout, re.M).group(1))
    in_use = read_table(state_table)

    if loaded.verdict == "suspect":
        assert rc == SUSPECT_EXIT
        assert "is marked suspect" in _one_error_line(stderr)
        if written != state_table:  # set aside: the stored table stays in use
            assert written.name.endswith(".suspect.table") and "stays in use" in stderr
            assert in_use.verdict != "suspect"
        _profile_refuses(tmp_path, loaded)
        return
    assert rc == 0, stderr[-2000:]
    if written != state_table:  # worse than the stored one: beside it, said in one line
        assert written.name.endswith(f".{loaded.verdict}.table") and "stays in use" in stderr
        return
    if quiet.verdict != "ok":
        pytest.skip(f"the quiet reference was not quiet ({quiet.verdict}: "
                    f"{quiet.verdict_reason}): the loaded table's verdict ({loaded.verdict}) "
                    "was checked, the comparison not made")
    # In use, so it agrees with the quiet table within the intervals at every size.
    assert disagreement(loaded, quiet) is None, loaded.verdict_reason


def _profile_refuses(tmp_path: Path, table: XferTable) -> None:
    """`profile --table` refuses a suspect table with one line (exit 4) and runs nothing;
    the library refuses it too (its rank profiles say why), unless forced."""
    tc = get_toolchain(TOOLCHAIN)
    ensure_built(tc)
    app = build_dir_for(tc) / "tests" / "profiled_app"
    out = tmp_path / "profile-runs"
    proc = run_cli("profile", "--mpi", TOOLCHAIN, "-n", "2", "--table", str(table.path),
                   "--out", str(out), "--", str(app), "blocking", "1024", "5", cwd=tmp_path,
                   timeout=300)
    assert proc.returncode == SUSPECT_EXIT, (proc.stdout, proc.stderr)
    line = _one_error_line(proc.stderr)
    assert "is marked suspect" in line and "--force-table" in line
    assert not out.exists() or not any(out.iterdir()), "nothing was launched"
