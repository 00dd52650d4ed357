"""Stopping a child of the CLI as a whole (core/procs.py): its session, and the processes
below it that started sessions of their own, as Hydra's Slurm launcher starts srun (a
fresh clone's run left such an srun waiting under PID 1 after its job was stopped)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpi_overlap.core.procs import ExitWatch, alive, descendants, signal_all, stop_session

# A launcher standing for Hydra's mpiexec: a child in a session of its own (setsid), which
# writes its pid and then waits, and the launcher itself waiting on it.
_LAUNCHER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         start_new_session=True)
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(300)
"""


def _wait_for(path: Path) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written")


def test_a_child_in_a_session_of_its_own_is_stopped_with_the_launcher(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(pidfile)],
                                start_new_session=True)
    child = _wait_for(pidfile)
    try:
        assert child in descendants(launcher.pid)
        stop_session(launcher, grace_s=2.0)
        assert launcher.returncode is not None
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the launcher's child in its own session outlived it"
    finally:  # on a failure, nothing of the test is left running
        signal_all([launcher.pid, child], signal.SIGKILL)
        launcher.wait()


def _exit_watch_ends() -> None:
    """A child that ends when its stdin closes: not ended before, ended and reaped (its
    status kept) after, the pidfd (where there is one) closed with the block."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(7)"],
                            stdin=subprocess.PIPE)
    with ExitWatch(proc) as watch:
        assert not watch.ended(0.05) and proc.returncode is None  # still reading
        assert proc.stdin is not None
        proc.stdin.close()  # now it ends
        deadline = time.monotonic() + 60
        while not watch.ended(0.1):
            assert time.monotonic() < deadline, "the child's end was not seen"
        assert proc.returncode == 7
        fd = watch.fd
    assert watch.fd is None
    if fd is not None:  # its number may be reused since, but not by a pidfd of ours
        link = Path(f"/proc/self/fd/{fd}")
        assert not link.exists() or "pidfd" not in os.readlink(link)


def test_exit_watch_sees_a_child_end_and_reaps_it() -> None:
    _exit_watch_ends()


def test_exit_watch_without_a_pidfd_waits_as_popen_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where os.pidfd_open is missing (not Linux, Python without it) or refused."""
    def refused(pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", refused)
    _exit_watch_ends()
