"""The CLI's one signal path: SIGINT, SIGTERM and SIGHUP all stop mpi-overlap the same way.

While no run directory is open, a signal raises `Stopped` at once (a build, a probe, a
report: their child processes are stopped by procs.py on the way out). While a run is
open (rundir.begin_run .. end_run) the signal is only recorded: the launch wait in
launch.run_job sees it within a tenth of a second, stops the job's whole session, and the
run is finished as `interrupted` with everything it measured; rundir.end_run then raises
`Stopped`, so a suite or a characterization stops at once instead of going on with its
next benchmark. A second signal while the first is being acted on raises at once (the
CLI then marks the open run interrupted itself: cli.main).

The exit status is the shell's convention, 128 + the signal number: 130 (SIGINT),
143 (SIGTERM), 129 (SIGHUP).
"""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """Raised to unwind the CLI after a signal; `runs`: the run directories it left.
    A BaseException, so that no `except Exception` of a series (suite.run_one) swallows
    it, and not a KeyboardInterrupt, which click would turn into a bare Abort."""

    def __init__(self, signum: int, runs: list[Path] | None = None) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum
        self.runs = list(runs or [])

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


_received: int | None = None  # the first signal received, until the CLI exits
_holds = 0  # open run directories: signals are recorded, not raised


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def stopped_message(signum: int) -> str:
    """What a run stopped by signal `signum` records as its message."""
    return f"interrupted by {signal_name(signum)}; the results measured so far are kept"


def _handler(signum: int, frame: FrameType | None) -> None:
    global _received
    first = _received is None
    if first:
        _received = signum
    if _holds == 0 or not first:
        raise Stopped(_received or signum)


def install() -> None:
    """Route SIGINT, SIGTERM and SIGHUP to the handler (the CLI's main thread only)."""
    for sig in SIGNALS:
        signal.signal(sig, _handler)


def requested() -> int | None:
    """The signal that asked mpi-overlap to stop, or None."""
    return _received


def check(runs: list[Path] | None = None) -> None:
    """Raise Stopped when a signal arrived (after the caller finished what it was doing)."""
    if _received is not None:
        raise Stopped(_received, runs)


def hold() -> None:
    """A run directory was opened: record signals instead of raising them."""
    global _holds
    _holds += 1


def release() -> None:
    global _holds
    _holds = max(0, _holds - 1)
