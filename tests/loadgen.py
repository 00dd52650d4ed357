"""A deterministic CPU load beside the tests: N processes that spin until stopped.

`make test-loaded` runs the tests marked `timing` with MPI_OVERLAP_TEST_LOAD=2 (two
spinning processes on this 2-core machine, as when a developer builds something while
the tests run); conftest.py starts them for the whole session. The tests must then pass
all the same: a measurement either holds or the analysis flags it as disturbed.

The spinners run in their own process group, so they are stopped as one, and they also
stop by themselves when the process that started them is gone (they poll its pid), so a
killed pytest leaves nothing spinning.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

ENV = "MPI_OVERLAP_TEST_LOAD"

# Spins, looking every ~50 ms of work whether its starter is still alive.
_SPINNER = """
import os, sys
parent = int(sys.argv[1])
while True:
    x = 0
    for i in range(200000):
        x += i
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        sys.exit(0)
"""


def requested() -> int:
    """How many spinners the environment asks for (0 = none); bad values are an error."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return 0
    try:
        n = int(raw)
    except ValueError:
        raise SystemExit(f"{ENV} must be a whole number of processes (got {raw!r})") from None
    if not 0 <= n <= 64:
        raise SystemExit(f"{ENV} must be between 0 and 64 (got {n})")
    return n


@contextmanager
def cpu_load(n: int) -> Iterator[list[int]]:
    """Run `n` CPU-bound spinners for the duration; yields their pids."""
    if n <= 0:
        yield []
        return
    # A group of their own (in our session: a process can join only a group of its own
    # session), so that one killpg stops them all.
    first = subprocess.Popen([sys.executable, "-c", _SPINNER, str(os.getpid())],
                             preexec_fn=os.setpgrp)
    procs = [first]
    try:
        for _ in range(n - 1):
            procs.append(subprocess.Popen(
                [sys.executable, "-c", _SPINNER, str(os.getpid())],
                preexec_fn=lambda: os.setpgid(0, first.pid)))
        yield [p.pid for p in procs]
    finally:
        with suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
        for p in procs:
            p.wait()
