"""mpi-overlap commands started as a user would start them (a CLI of its own, with the
cluster's environment), for the checks that then compare what they wrote with something
measured outside them: the wire (wire_run.py), another placement (predict_check.py)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from ..core.errors import UserError

_COMPLETE = " — "  # `<toolchain>: complete — <run dir>` (the profile's last line)


def run_cli(what: str, argv: list[str], *, env: dict[str, str], timeout_s: float,
            accept: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """`mpi-overlap ARGV`; an exit status outside `accept` is one line naming `what`, the
    command's own last word and the command."""
    cmd = [sys.executable, "-m", "mpi_overlap.cli", *argv]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s,
                          check=False)
    if proc.returncode not in accept:
        said = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise UserError(f"{what} failed (exit {proc.returncode}): "
                        f"{said[-1] if said else 'no message'}; command: {shlex.join(cmd)}")
    return proc


def traced_profile(what: str, toolchain: str, profile_args: list[str], program: list[str], *,
                   env: dict[str, str], timeout_s: float, grace_s: float = 120) -> Path:
    """The run directory of `mpi-overlap profile --mpi TOOLCHAIN --trace --no-report
    PROFILE_ARGS -- PROGRAM`; a run that did not complete is one line (run_cli). `grace_s`
    beyond `timeout_s` covers what the profile does around the program."""
    argv = ["profile", "--mpi", toolchain, "--trace", "--no-report", "--timeout",
            str(timeout_s), *profile_args, "--", *program]
    proc = run_cli(f"{what}: the profile run", argv, env=env, timeout_s=timeout_s + grace_s)
    done = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"{toolchain}: complete")]
    if not done:
        raise UserError(f"{what}: the profile run did not say it completed; command: "
                        f"mpi-overlap {shlex.join(argv)}")
    return Path(done[-1].split(_COMPLETE, 1)[1].strip())
