"""A traced `mpi-overlap profile` run started as a user would start it (a CLI of its own,
under salloc or with srun as its launcher), for the checks that then compare its run
directory with something measured outside it: the wire (wire_run.py), another placement
(predict_check.py)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from ..errors import UserError

_COMPLETE = " — "  # `<toolchain>: complete — <run dir>` (the profile's last line)


def traced_profile(what: str, toolchain: str, profile_args: list[str], program: list[str], *,
                   env: dict[str, str], timeout_s: float, prefix: list[str] | None = None,
                   grace_s: float = 120) -> Path:
    """The run directory of `[prefix] mpi-overlap profile --mpi TOOLCHAIN --trace
    --no-report PROFILE_ARGS -- PROGRAM`; a run that did not complete is one line naming
    `what`, the profile's own last word and the command. `grace_s` beyond `timeout_s`
    covers what the profile does around the program (an automatic calibration)."""
    cmd = [*(prefix or []), sys.executable, "-m", "mpi_overlap.cli", "profile", "--mpi",
           toolchain, "--trace", "--no-report", "--timeout", str(timeout_s), *profile_args,
           "--", *program]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=timeout_s + grace_s, check=False)
    done = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"{toolchain}: complete")]
    if proc.returncode != 0 or not done:
        said = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise UserError(f"{what}: the profile run failed (exit {proc.returncode}): "
                        f"{said[-1] if said else 'no message'}; command: {shlex.join(cmd)}")
    return Path(done[-1].split(_COMPLETE, 1)[1].strip())
