"""Running the `mpi-overlap` CLI from tests as a user would: a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "mpi_overlap.cli"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 900,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`timeout` is a last resort for a hung test and must exceed the command's own limit
    (a benchmark's quick limit is up to 300 s, 900 s for a suite): the command's limit
    stops the MPI job and keeps what it measured; this one only kills the CLI."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=cwd, check=False)


def disturbed(run: object) -> bool:
    """Whether a loaded run (rundir.Run) records that other processes or the hypervisor
    took CPU from it (run.json's host_load, machine_load.py). Timing claims are checked
    only on undisturbed runs; physics and structure are checked on every run."""
    meta = getattr(run, "meta", None) or {}
    return bool((meta.get("host_load") or {}).get("disturbed"))
