"""Running the `mpi-overlap` CLI from tests as a user would: a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from mpi_overlap.core.procs import run_tool

CLI = [sys.executable, "-m", "mpi_overlap.cli"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 900,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`timeout` is a last resort for a hung test and must exceed the command's own limit
    (a benchmark's quick limit is up to 300 s, 900 s for a suite): the command's limit
    stops the MPI job and keeps what it measured; this one only kills the CLI."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    # In a session of its own, stopped whole when the test is interrupted (a TERM of
    # pytest becomes Ctrl-C: conftest.py): launchers and ranks the CLI started go with it.
    return run_tool([*CLI, *args], env=full_env, timeout_s=timeout,
                    cwd=str(cwd) if cwd is not None else None)


def disturbed(run: object) -> bool:
    """Whether a loaded run (rundir.Run) records that other processes or the hypervisor
    took CPU from it (run.json's host_load, machine_load.py). Timing claims are checked
    only on undisturbed runs; physics and structure are checked on every run."""
    meta = getattr(run, "meta", None) or {}
    return bool((meta.get("host_load") or {}).get("disturbed"))


def one_line_error(proc: subprocess.CompletedProcess[str], *fragments: str,
                   code: int | None = None) -> str:
    """Assert the CLI failed with exactly one `mpi-overlap: error:` line on stderr (other
    non-blank lines are allowed only when they are progress or info lines before it), no
    traceback, and `code` as its exit status when given; returns the line."""
    assert proc.returncode != 0, proc.stdout
    if code is not None:
        assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("mpi-overlap:")]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith("mpi-overlap: error: "), errors[0]
    for frag in fragments:
        assert frag in errors[0], errors[0]
    return errors[0]


def processes_with_env(marker: str) -> list[str]:
    """Live processes (not zombies) whose environment holds `marker`: what a CLI started
    with that marker in its environment left running (mpiexec, proxies, ranks inherit it)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2:].split()[:1]
        if needle in environ and state != [b"Z"]:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry}: {command}")
    return found


def profile_test_app_traced(mpi: str, app: str, base: Path) -> Path:
    """`mpi-overlap profile --trace` of native/tests' program `app` on 2 ranks of toolchain
    `mpi` (the test is skipped where that toolchain is missing), run in `base`; returns the
    run directory."""
    import pytest

    from mpi_overlap.core.errors import UserError
    from mpi_overlap.platform.build import build_dir_for, ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    try:
        tc = get_toolchain(mpi)
    except UserError as err:
        pytest.skip(f"toolchain {mpi}: {err}")
    ensure_built(tc)
    exe = build_dir_for(tc) / "tests" / app
    proc = run_cli("profile", "--mpi", mpi, "-n", "2", "--trace", "--no-report",
                   "--out", str(base / "runs"), "--", str(exe), timeout=600, cwd=base)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = sorted(p for p in (base / "runs").iterdir() if (p / "run.json").is_file())
    return runs[-1]


def own_state_dir(tmp_path: Path) -> Path:
    """A state directory of its own under `tmp_path` that shares the built programs and the
    toolchain registry of the tests' state directory, and copies of its transfer-time
    tables without their collective series for 3 ranks and without failure records (what
    a test records stays in here)."""
    from mpi_overlap.calibration.xfer_table import in_use
    from mpi_overlap.core.paths import state_dir
    from mpi_overlap.platform.build import ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    shared = state_dir()
    ensure_built(get_toolchain("mpich"))
    home = tmp_path / "state"
    home.mkdir()
    (home / "build").symlink_to(shared / "build")
    if (shared / "toolchains.json").is_file():
        shutil.copy(shared / "toolchains.json", home)
    (home / "xfer-tables").mkdir()
    # the tables in use only: one set aside beside a better one is no table a run uses
    for table in (t for t in (shared / "xfer-tables").glob("*.table") if in_use(t)):
        lines = [ln for ln in table.read_text().splitlines(keepends=True)
                 if not (ln.startswith("coll ") and ln.split()[2:3] == ["3"])]
        (home / "xfer-tables" / table.name).write_text("".join(lines))
    return home
