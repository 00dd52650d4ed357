"""Running the system's own tools (ip, tc, nsenter, munged, slurmctld ...) for the
cluster: a failure becomes one line that names the command and what it said."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from ..core.errors import UserError
from ..core.procs import run_tool


def run(argv: Sequence[str], *, what: str, check: bool = True,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `argv`; with `check`, a non-zero exit raises UserError('<what>: <cmd> failed:
    <its last stderr line>')."""
    try:  # in a session of its own, stopped whole on a timeout (procs.run_tool)
        proc = run_tool(list(argv), timeout_s=timeout)
    except FileNotFoundError:
        raise UserError(f"{what}: '{argv[0]}' not found") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"{what}: '{' '.join(argv)}' did not finish in {timeout:.0f} s") \
            from None
    if check and proc.returncode != 0:
        said = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise UserError(f"{what}: '{' '.join(argv)}' failed (exit {proc.returncode})"
                        + (f": {said[-1]}" if said else ""))
    return proc


def missing_tools(names: Sequence[str]) -> list[str]:
    return [n for n in names if shutil.which(n) is None]
