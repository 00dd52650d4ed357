"""Stopping a child of the CLI as a whole (core/procs.py): its session, and the processes
below it that started sessions of their own, as Hydra's Slurm launcher starts srun (a
fresh clone's run left such an srun waiting under PID 1 after its job was stopped), and
those a launcher leaves behind when it ends, as MPICH's ranks after an MPI_Abort (a
loaded run found one still mapping its shared-memory segment when the launch swept it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpi_overlap.core.procs import (
    ExitWatch,
    alive,
    descendants,
    signal_all,
    start_time,
    stop_processes,
    stop_session,
)
from mpi_overlap.run import launch, thread_census

# A launcher standing for Hydra's mpiexec: a child in a session of its own (setsid), which
# waits, its pid written to argv[1], and the launcher itself waiting argv[2] seconds: 300
# for one stopped with its child, less for one that ends and leaves its child behind, as
# mpiexec leaves a rank whose proxy started a session of its own.
_LAUNCHER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         start_new_session=True)
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(float(sys.argv[2]))
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
    launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(pidfile), "300"],
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


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])


def test_stop_processes_stops_the_same_processes_only() -> None:
    ours, other = _sleeper(), _sleeper()
    try:
        ticks = start_time(ours.pid)
        assert ticks is not None and alive(ours.pid, ticks) and not alive(ours.pid, ticks + 1)
        # `other`'s pid given with another start time stands for a pid reused since.
        other_ticks = start_time(other.pid)
        assert other_ticks is not None
        found = stop_processes({ours.pid: ticks, other.pid: other_ticks + 1}, grace_s=2.0)
        assert found == [ours.pid]
        assert ours.wait(timeout=10) == -signal.SIGTERM
        assert other.poll() is None, "a process not named (another start time) was stopped"
    finally:
        signal_all([ours.pid, other.pid], signal.SIGKILL)
        ours.wait()
        other.wait()


def test_a_launch_stops_what_its_launcher_left_behind(tmp_path: Path) -> None:
    # The launcher outlives its child's start by more than the census's period (SAMPLE_S),
    # so that a reading sees the child however late a loaded machine starts it.
    pidfile = tmp_path / "child.pid"
    cmd = [sys.executable, "-c", _LAUNCHER, str(pidfile), "2.5"]
    outcome = launch.run_job(cmd, dict(os.environ), tmp_path, timeout_s=120)
    child = _wait_for(pidfile)
    try:
        assert outcome.status == "complete", outcome.message
        assert not alive(child), "the launcher's child outlived the launch"
    finally:
        signal_all([child], signal.SIGKILL)


def test_the_census_sees_a_child_left_behind_before_its_first_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A job that fails at once ends before the census's first reading: its early look
    # alone must have seen the child (the first reading is put out of reach here).
    monkeypatch.setattr(thread_census, "FIRST_S", 60.0)
    pidfile = tmp_path / "child.pid"
    launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(pidfile), "1.5"],
                                start_new_session=True)
    child = _wait_for(pidfile)  # then the launcher lives 1.5 s more: the look is within it
    census = thread_census.start(launcher.pid)
    assert census is not None
    try:
        launcher.wait(timeout=60)
        census.stop()
        assert child in census.left_behind()
        assert stop_processes(census.left_behind(), grace_s=2.0) == [child]
        assert not alive(child)
    finally:
        signal_all([child], signal.SIGKILL)


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
