"""Locks on the state directory (MPI_OVERLAP_HOME), so that concurrent commands take turns
where sharing would break something:

* `build-<build dir>`: one CMake configure and build of a toolchain at a time (two at once
  on a fresh state directory both failed in configure); the second command waits and
  then finds the build done (build.py checks its stamp again once it holds the lock);
* `calibrate`: one calibration at a time on the machine, because two measured at once
  measure each other's contention (433 µs against 104 µs seen) and both write the table;
  a profile that waited finds the table made meanwhile and uses it;
* `toolchains`: the registry's read-modify-write (toolchains.json) and a wheel prefix.

fcntl.flock on `<state>/locks/<name>.lock`: the kernel releases it when the holder exits,
however it exits (a crash, SIGKILL), so a lock is never left stale. The holder writes its
pid and what it is doing into the file; a command that has to wait says so on stderr:
"waiting for another mpi-overlap (pid N) to finish building mpich …". Locks are
reentrant within one process, and always taken in the order calibrate → build →
toolchains, so that two commands never wait for each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import UserError
from .paths import state_dir

Say = Callable[[str], None]

_held: dict[str, int] = {}  # lock name -> depth, in this process


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def lock_path(name: str) -> Path:
    return state_dir() / "locks" / f"{name}.lock"


def holder(path: Path) -> str:
    """What the holder of the lock file at `path` wrote: 'pid N <doing>', or ''."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()[:200]
    except OSError:
        return ""


@contextmanager
def state_lock(name: str, doing: str, *, say: Say | None = None) -> Iterator[None]:
    """Hold lock `name` of the state directory while the block runs; `doing` ("building
    mpich") is what a command that has to wait is told."""
    if _held.get(name):
        _held[name] += 1
        try:
            yield
        finally:
            _held[name] -= 1
        return
    path = lock_path(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as err:
        raise UserError(f"cannot create the lock file {path}: {err.strerror or err}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = holder(path)
            pid, _, what = other.removeprefix("pid ").partition(" ")
            who = f"another mpi-overlap (pid {pid})" if pid.isdigit() else "another mpi-overlap"
            (say or _stderr)(f"waiting for {who} to finish {what or name} …")
            fcntl.flock(fd, fcntl.LOCK_EX)  # a signal interrupts the wait (interrupts.py)
        _write_holder(fd, f"pid {os.getpid()} {doing}\n")
        _held[name] = 1
        try:
            yield
        finally:
            _held.pop(name, None)
            _write_holder(fd, "")
    finally:
        os.close(fd)  # releases the lock


def _write_holder(fd: int, text: str) -> None:
    with contextlib.suppress(OSError):  # only the waiting message would lose its pid
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
