"""Locks per state directory (locks.py; issue 14, "Why" 6): a second command waits with a
message naming the first one's pid, then reuses what it made; a lock dies with its holder.
Before, two builds on a fresh state directory both failed in CMake configure, and two
calibrations measured each other's contention and both wrote the table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from cli_helpers import CLI, own_state_dir
from mpi_overlap.core.locks import lock_path, state_lock

HOLD = """
import sys, time
from mpi_overlap.core.locks import state_lock
with state_lock("demo", "holding the demo lock"):
    print("held", flush=True)
    time.sleep(float(sys.argv[1]))
"""


def _holder(seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(seconds)], text=True,
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_holder_waits_with_a_message_naming_the_first(isolated_home: Path) -> None:
    first = _holder(1.5)
    said: list[str] = []
    start = time.monotonic()
    with state_lock("demo", "waiting test", say=said.append):
        waited = time.monotonic() - start
        assert f"pid {os.getpid()} waiting test" in lock_path("demo").read_text()
    first.wait(timeout=30)
    assert said == [f"waiting for another mpi-overlap (pid {first.pid}) to finish holding "
                    "the demo lock …"]
    assert waited > 0.5


def test_a_lock_dies_with_its_holder(isolated_home: Path) -> None:
    first = _holder(600)
    first.send_signal(signal.SIGKILL)  # a crash: no cleanup runs
    first.wait(timeout=30)
    start = time.monotonic()
    with state_lock("demo", "after a crash", say=lambda m: None):
        assert time.monotonic() - start < 5


def test_locks_are_reentrant_within_a_process(isolated_home: Path) -> None:
    with state_lock("demo", "outer"), state_lock("demo", "inner", say=pytest.fail):
        pass


FAKE_NATIVE = """cmake_minimum_required(VERSION 3.20)
project(fake NONE)
file(APPEND "${CMAKE_BINARY_DIR}/configured.txt" "configure started\\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 3)
file(APPEND "${CMAKE_BINARY_DIR}/configured.txt" "configure ended\\n")
"""


@pytest.mark.mpi
def test_two_builds_on_a_fresh_state_directory_take_turns(tmp_path: Path) -> None:
    native = tmp_path / "native"
    native.mkdir()
    (native / "CMakeLists.txt").write_text(FAKE_NATIVE)
    env = dict(os.environ, MPI_OVERLAP_HOME=str(tmp_path / "state"),
               MPI_OVERLAP_NATIVE_DIR=str(native))
    procs = [subprocess.Popen([*CLI, "build"], env=env, cwd=tmp_path, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    waits = [err for _, err in results if "waiting for another mpi-overlap (pid" in err]
    assert len(waits) == 1, results
    assert "to finish building native/ for toolchain 'mpich'" in " ".join(waits[0].split())
    logs = list((tmp_path / "state" / "build").glob("*/configured.txt"))
    assert len(logs) == 1
    assert logs[0].read_text() == "configure started\nconfigure ended\n"  # once, not twice


def _interval(run_dir: Path) -> tuple[datetime, datetime]:
    meta = json.loads((run_dir / "run.json").read_text())
    parse = lambda t: datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    return parse(meta["started_utc"]), parse(meta["finished_utc"])


@pytest.mark.mpi
def test_two_calibrations_take_turns(tmp_path: Path) -> None:
    """Each calibration (ping-pong, then collectives) runs while the other waits."""
    home = own_state_dir(tmp_path)
    env = dict(os.environ, MPI_OVERLAP_HOME=str(home))
    procs = []
    for name in ("a", "b"):
        # one size and a 1 s collectives budget: the turn-taking is the point, not the
        # table; each calibration still runs its ping-pong and then its collectives (the
        # test took 4.4-5.3 s so, 16.6 s with sizes 0:4K and every collective)
        procs.append(subprocess.Popen([*CLI, "calibrate", "--quick", "--sizes", "0",
                                       "--collectives-budget", "1", "-n", "2", "--out",
                                       str(tmp_path / name)], env=env, cwd=tmp_path,
                                      text=True, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE))
        time.sleep(0.5)
    results = [p.communicate(timeout=600) for p in procs]
    # 4: a table that stayed suspect on a busy machine, written all the same (what is
    # checked here is the turn-taking, not the verdict)
    assert all(p.returncode in (0, 4) for p in procs), results
    waited = [err for _, err in results if "waiting for another mpi-overlap (pid" in err]
    assert len(waited) == 1 and "to finish calibrating toolchain 'mpich'" in " ".join(
        waited[0].split())
    spans = {name: [_interval(d) for d in sorted((tmp_path / name).iterdir())]
             for name in ("a", "b")}
    (a_start, a_end), (b_start, b_end) = ((s[0][0], s[-1][1]) for s in spans.values())
    assert a_end <= b_start or b_end <= a_start, spans  # one after the other
