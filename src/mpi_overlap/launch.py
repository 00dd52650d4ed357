"""Launching MPI jobs: build the command line, run it under a time limit, follow progress.

MPI's own launcher is the distributed engine: mpiexec of the toolchain, or whatever the
user names with --launcher (e.g. "srun --mpi=pmix"). Native programs report progress as
stderr lines `@mo-progress done=I total=N label=TEXT`; everything else they print goes to
the run directory's logs untouched.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import machine_load, thread_census
from .errors import UserError
from .rundir import STDERR_FILE, STDOUT_FILE
from .toolchains import Toolchain, usable_cores

_PROGRESS = re.compile(r"^@mo-progress done=(\d+) total=(\d+) label=(.*)$")
_KILL_GRACE_S = 5.0

ProgressFn = Callable[[int, int, str], None]


@dataclass
class LaunchResult:
    status: str  # complete | failed | timeout | interrupted
    returncode: int | None
    message: str | None
    elapsed_s: float
    # What else ran on the machine meanwhile (machine_load.between); None off Linux.
    host_load: dict[str, Any] | None = None
    # How many of the job's threads ran on how many cores (thread_census.py).
    threads: dict[str, Any] | None = None


def launch_command(
    tc: Toolchain, ranks: int, argv: list[str], launcher: str | None = None
) -> list[str]:
    """The full command that starts `argv` on `ranks` ranks."""
    if ranks < 1:
        raise UserError(f"number of ranks must be at least 1 (got {ranks})")
    if launcher:
        try:
            prefix = shlex.split(launcher)
        except ValueError as err:
            raise UserError(f"cannot parse --launcher '{launcher}': {err}") from None
        if not prefix:
            raise UserError("--launcher is empty")
        if shutil.which(prefix[0]) is None and not Path(prefix[0]).is_file():
            raise UserError(f"launcher '{prefix[0]}' not found")
        # The user's launcher decides placement; we only add the rank count if missing.
        if not any(
            tok in ("-n", "-np", "--ntasks") or tok.startswith("--ntasks=") for tok in prefix
        ):
            prefix += ["-n", str(ranks)]
        return prefix + argv
    cmd = [tc.mpiexec]
    if ranks > usable_cores():
        cmd += tc.oversubscribe_args()
    else:
        cmd += tc.bind_args()
    return [*cmd, "-n", str(ranks), *argv]


def run_job(
    cmd: list[str],
    env: dict[str, str],
    run_dir: Path,
    *,
    timeout_s: float | None,
    progress: ProgressFn | None = None,
) -> LaunchResult:
    """Run `cmd` with stdout/stderr logged in `run_dir`; kill the whole job on timeout."""
    stdout_path = run_dir / STDOUT_FILE
    stderr_path = run_dir / STDERR_FILE
    start = time.monotonic()
    tail: list[str] = []
    load_before = machine_load.sample()
    with open(stdout_path, "w") as out, open(stderr_path, "w") as err_log:
        try:
            proc = subprocess.Popen(
                cmd,
                env=env,
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise UserError(f"launcher '{cmd[0]}' not found") from None
        except PermissionError:
            raise UserError(f"launcher '{cmd[0]}' is not executable") from None

        def pump() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                m = _PROGRESS.match(line.rstrip("\n"))
                if m:
                    if progress:
                        progress(int(m.group(1)), int(m.group(2)), m.group(3))
                    continue
                err_log.write(line)
                err_log.flush()
                tail.append(line.rstrip("\n"))
                del tail[:-20]

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        census = thread_census.start(proc.pid)  # the launcher and the ranks below it
        status, message = "complete", None
        try:
            rc: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            rc = proc.returncode
            status = "timeout"
            message = f"timed out after {timeout_s:g} s; the results measured so far are kept"
        except KeyboardInterrupt:
            _kill_group(proc)
            rc = proc.returncode
            status = "interrupted"
            message = "interrupted by the user; the results measured so far are kept"
        reader.join(timeout=_KILL_GRACE_S)
        threads = census.stop() if census is not None else None
    if status == "complete" and rc != 0:
        status = "failed"
        detail = next((ln for ln in reversed(tail) if ln.strip()), "no error output")
        message = f"exited with status {rc}: {detail.strip()}"
    return LaunchResult(
        status=status,
        returncode=rc,
        message=message,
        elapsed_s=time.monotonic() - start,
        host_load=machine_load.between(load_before, machine_load.sample()),
        threads=threads,
    )


def _kill_group(proc: subprocess.Popen) -> None:
    """Stop mpiexec and every rank it started (they share our new session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=_KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue
