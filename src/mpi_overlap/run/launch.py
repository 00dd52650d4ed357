"""Launching MPI jobs: build the command line, run it under a time limit, follow progress.

MPI's own launcher is the distributed engine: mpiexec of the toolchain, or whatever the
user names with --launcher (e.g. "srun --mpi=pmix"). Native programs report progress as
stderr lines `@mo-progress done=I total=N label=TEXT`; everything else they print goes to
the run directory's logs untouched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

from ..core import interrupts, machine_load
from ..core.errors import UserError
from ..core.file_output import WriteError
from ..core.procs import KILL_GRACE_S, ExitWatch, session_members, stop_processes, stop_session
from ..core.ui import ProgressFn
from ..platform.toolchains import Toolchain, names_other_hosts, usable_cores
from . import job_cpu, mpich_leftovers, slurm_launch, thread_census
from .rundir import STDERR_FILE, STDOUT_FILE

_PROGRESS = re.compile(r"^@mo-progress done=(\d+) total=(\d+) label=(.*)$")

# A line the job wrote (with its newline) and whether it came from its stderr.
EchoFn = Callable[[str, bool], None]


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

    def record(self, where: str) -> dict[str, Any]:
        """What a timed launch's record keeps of it (`where`: its folder in the run
        directory): disturbed when other processes or the hypervisor took CPU from it."""
        return {"dir": where, "status": self.status, "message": self.message,
                "elapsed_s": self.elapsed_s,
                "disturbed": bool((self.host_load or {}).get("disturbed"))}


# -n is refused above MAX_RANKS whatever the launcher (a typo such as -n 1000000000 must
# not start anything), and with the toolchain's own mpiexec above OVERSUBSCRIBE_FACTOR
# ranks per usable core unless oversubscription is asked for (--oversubscribe, or
# MPI_OVERLAP_OVERSUBSCRIBE=1), or a batch allocation or host file tells mpiexec to place
# ranks on other nodes: far more ranks than cores on one machine measure only their own
# contention (16 calibration ranks spinning on 2 cores never finished).
MAX_RANKS = 1 << 20
OVERSUBSCRIBE_FACTOR = 4
OVERSUBSCRIBE_ENV = "MPI_OVERLAP_OVERSUBSCRIBE"


def check_ranks_bound(ranks: int, *, local: bool) -> None:
    """Refuse a rank count out of all proportion (see MAX_RANKS, OVERSUBSCRIBE_FACTOR)."""
    if ranks < 1:
        raise UserError(f"number of ranks must be at least 1 (got {ranks})")
    if ranks > MAX_RANKS:
        raise UserError(f"-n {ranks}: more than {MAX_RANKS} ranks is not a plausible job")
    cores = usable_cores()
    if (local and ranks > OVERSUBSCRIBE_FACTOR * cores
            and os.environ.get(OVERSUBSCRIBE_ENV, "") not in ("1", "true", "yes")
            and not names_other_hosts(os.environ)):
        raise UserError(f"-n {ranks} is more than {OVERSUBSCRIBE_FACTOR} ranks per core on "
                        f"this machine ({cores} cores): add --oversubscribe to run them anyway, "
                        "or --launcher to start them elsewhere")


def launch_command(
    tc: Toolchain, ranks: int, argv: list[str], launcher: str | None = None
) -> list[str]:
    """The full command that starts `argv` on `ranks` ranks: the user's launcher, else
    srun (or Hydra's Slurm launcher for the MPICH wheel) inside a Slurm allocation
    (slurm_launch.py), else the toolchain's mpiexec."""
    slurm = slurm_launch.slurm_launch(tc, ranks) if launcher is None else None
    srun = slurm.prefix if slurm is not None else None
    if launcher is not None and slurm_launch.requested_nodes() is not None:
        raise UserError("--nodes goes with the automatic srun launch inside an allocation; "
                        "with --launcher, put the node count in the launcher")
    check_ranks_bound(ranks, local=launcher is None and srun is None)
    if srun is not None:
        return srun + argv
    if launcher is not None:
        try:
            prefix = shlex.split(launcher)
        except ValueError as err:
            raise UserError(f"cannot parse --launcher '{launcher}': {err}") from None
        if not prefix:
            raise UserError("--launcher is empty: name a launch command, e.g. "
                            "--launcher 'srun --mpi=pmix'")
        if shutil.which(prefix[0]) is None and not Path(prefix[0]).is_file():
            raise UserError(f"launcher '{prefix[0]}' not found")
        # The user's launcher decides placement; we only add the rank count if missing.
        if not any(
            tok in ("-n", "-np", "--ntasks") or tok.startswith("--ntasks=") for tok in prefix
        ):
            prefix += ["-n", str(ranks)]
        return prefix + argv
    return mpiexec_command(tc, ranks, argv)


def launch_record(tc: Toolchain, ranks: int, launcher: str | None) -> dict[str, str]:
    """run.json's "launcher": which kind started the ranks and why (launch_command's
    choice, made again: inside an allocation srun's placement is asked once)."""
    if launcher is not None:
        return {"kind": "user", "why": "--launcher"}
    slurm = slurm_launch.slurm_launch(tc, ranks)
    if slurm is not None:
        return slurm.record()
    return {"kind": "mpiexec", "why": "no Slurm allocation: this machine's own mpiexec"}


def mpiexec_command(tc: Toolchain, ranks: int, argv: list[str]) -> list[str]:
    """The toolchain's own mpiexec starting `argv` on `ranks` ranks of this machine:
    bound to cores when they fit, oversubscribed when they do not."""
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
    echo: EchoFn | None = None,
) -> LaunchResult:
    """Run `cmd` with stdout/stderr logged in `run_dir`; stop the whole job (its session,
    procs.py) on timeout or when a signal asked mpi-overlap to stop (interrupts.py).
    With `echo`, every line the job writes also goes to it as it comes (the program's
    own output, live on the terminal: `profile`), with whether it came from stderr."""
    start = time.monotonic()
    began = time.time()  # a file's mtime is wall-clock time (mpich_leftovers.sweep below)
    signum = interrupts.requested()
    if signum is not None:  # stopped before this launch began: do not start it
        return LaunchResult("interrupted", None, interrupts.stopped_message(signum), 0.0)
    load_before = machine_load.sample()
    with contextlib.ExitStack() as logs:
        try:
            out = logs.enter_context(open(run_dir / STDOUT_FILE, "w"))
            err_log = open(run_dir / STDERR_FILE, "w")  # noqa: SIM115 (closed below)
        except OSError as err:
            raise WriteError(run_dir / STDERR_FILE, err) from None
        # its last flush may fail on a full disk: the pump has recorded that already
        logs.callback(_close, err_log)
        pump = _Pump(err_log, progress, echo=(lambda line: echo(line, True)) if echo else None)
        out_pump = _Pump(out, None, echo=(lambda line: echo(line, False)) if echo else None,
                         progress_lines=False)
        try:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE if echo else out,
                                    stderr=subprocess.PIPE, text=True,
                                    errors="replace", bufsize=1, start_new_session=True)
        except FileNotFoundError:
            raise UserError(f"launcher '{cmd[0]}' not found") from None
        except PermissionError:
            raise UserError(f"launcher '{cmd[0]}' is not executable") from None
        reader = threading.Thread(target=pump.run, args=(proc.stderr,), daemon=True)
        reader.start()
        out_reader = None
        if echo:
            out_reader = threading.Thread(target=out_pump.run, args=(proc.stdout,), daemon=True)
            out_reader.start()
        census = thread_census.start(proc.pid)  # the launcher and the ranks below it
        # Inside an allocation the ranks are slurmd's, not ours: followed apart (job_cpu.py).
        job_watch = job_cpu.start(env.get("SLURM_JOB_ID")) if load_before is not None else None
        try:
            with ExitWatch(proc) as watch:
                status, message = _wait(watch, timeout_s, start)
        except BaseException:  # a second signal, or a bug: never leave the job running
            stop_session(proc)
            if census is not None:
                census.stop()
            if job_watch is not None:
                job_watch.stop()
            raise
        rc = proc.returncode
        reader.join(timeout=KILL_GRACE_S)
        if out_reader is not None:
            out_reader.join(timeout=KILL_GRACE_S)
        threads = None
        if census is not None:
            threads = census.stop()
            # Ranks the launcher left behind (killed by it and still ending, or not): they
            # are in their proxies' sessions, which _wait's stop does not reach, and they
            # map the MPICH segment that the sweep below removes only once nothing maps it.
            stop_processes(census.left_behind())
        job_load = job_watch.stop() if job_watch is not None else None
    failed_writes = [(p.write_error, name) for p, name in
                     ((pump, STDERR_FILE), (out_pump, STDOUT_FILE)) if p.write_error is not None]
    for error, name in failed_writes:
        status = "failed"
        message = _join(message, f"cannot write {run_dir / name}: {error.strerror or error}")
    if not failed_writes and status == "complete" and rc != 0:
        status = "failed"
        detail = next((ln for ln in reversed(pump.tail) if ln.strip()), "no error output")
        message = f"exited with status {rc}: {detail.strip()}"
    mpich_leftovers.sweep(since=began)  # what an MPICH job that did not finalize left
    return LaunchResult(status=status, returncode=rc, message=message,
                        elapsed_s=time.monotonic() - start,
                        host_load=machine_load.between(load_before, machine_load.sample(),
                                                       job=job_load),
                        threads=threads)


def _close(log: TextIO) -> None:
    with contextlib.suppress(OSError):
        log.close()


def _join(message: str | None, more: str) -> str:
    return (message + "; " if message else "") + more


_POLL_S = 0.1  # how soon a launch notices a signal


def _wait(watch: ExitWatch, timeout_s: float | None, start: float) -> tuple[str, str | None]:
    """Wait for the job (watch.proc); (status, message) once it ended, timed out or was
    stopped."""
    proc = watch.proc
    deadline = None if timeout_s is None else start + timeout_s
    while True:
        signum = interrupts.requested()
        if signum is not None:
            stop_session(proc)
            return "interrupted", interrupts.stopped_message(signum)
        wait = _POLL_S if deadline is None else min(_POLL_S, max(0.0, deadline - time.monotonic()))
        if not watch.ended(wait):
            if deadline is not None and time.monotonic() >= deadline:
                stop_session(proc)
                assert timeout_s is not None
                return "timeout", (f"timed out after {timeout_s:g} s; the results measured so "
                                   "far are kept")
            continue
        # The launcher is gone; ranks it left behind in the session are stopped too.
        if session_members(proc.pid):
            stop_session(proc)
        return "complete", None


class _Pump:
    """Copies one of the job's streams into its log (stderr: taking out progress lines)
    and to `echo` when given. A write error (a full disk) is recorded, not raised: the
    pipe is still drained, else the job would block on it."""

    def __init__(self, log: TextIO, progress: ProgressFn | None, *,
                 echo: Callable[[str], None] | None = None, progress_lines: bool = True) -> None:
        self.log = log
        self.progress = progress
        self.echo = echo
        self.progress_lines = progress_lines
        self.tail: list[str] = []
        self.write_error: OSError | None = None

    def run(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            m = _PROGRESS.match(line.rstrip("\n")) if self.progress_lines else None
            if m:
                if self.progress:
                    self.progress(int(m.group(1)), int(m.group(2)), m.group(3))
                continue
            self.tail.append(line.rstrip("\n"))
            del self.tail[:-20]
            if self.echo is not None:
                self.echo(line)
            if self.write_error is None:
                try:
                    self.log.write(line)
                    self.log.flush()
                except OSError as err:
                    self.write_error = err
