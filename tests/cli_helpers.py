"""Running the `mpi-overlap` CLI from tests as a user would: a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "mpi_overlap.cli"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 900,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=cwd, check=False)
