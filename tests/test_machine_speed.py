"""The machine's speed around the predict check's runs (cluster/machine_speed.py): a
reference's change from a speed, slower or faster, on its worst CPU; a run waits for the
machine at the trace's speed for at most its time; mo_machine_speed gives a figure on
every CPU. No MPI launch: mo_machine_speed is MPI-free (the default toolchain's build
has it)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from mpi_overlap.cluster.machine_speed import (
    CHANGE_PCT,
    SpeedLog,
    change_pct,
    changed,
    fastest_of,
    measure,
)


def test_the_worst_cpu_of_either_reference_slower_or_faster() -> None:
    trace = [10.0, 20.0]
    assert change_pct([[10.0, 20.0]], trace) == pytest.approx(0.0)
    # the worse of the two references, on its worse CPU, faster as much as slower
    assert change_pct([[11.0, 20.0], [10.0, 30.0]], trace) == pytest.approx(50.0)
    assert change_pct([[5.0, 20.0]], trace) == pytest.approx(50.0)
    assert changed(change_pct([[10.0, 20.0 * (1 + 1.01 * CHANGE_PCT / 100)]], trace))
    assert not changed(change_pct([[10.0, 20.0 * (1 - 0.99 * CHANGE_PCT / 100)]], trace))
    assert fastest_of([10.0, 22.0], [12.0, 20.0]) == [10.0, 20.0]
    nan = float("nan")
    assert fastest_of([nan, 22.0], [12.0, nan]) == [12.0, 22.0]


def test_a_cpu_without_a_figure_judges_nothing() -> None:
    assert change_pct([[11.0, 30.0]], [10.0, math.nan]) == pytest.approx(10.0)
    assert change_pct([[math.nan, math.nan]], [10.0, 20.0]) is None
    assert change_pct([[1.0]], [1.0, 2.0]) is None and not changed(None)


def _fake_exe(tmp_path: Path, figures: list[float]) -> Path:
    """A stand-in for mo_machine_speed printing the next of `figures` each time, the
    same on every CPU (a run's references, taken all CPUs at once, read one line each;
    each process takes its number under the lock, since the CPUs' processes of one
    reference run side by side)."""
    (tmp_path / "figures").write_text("\n".join(map(str, figures)) + "\n")
    exe = tmp_path / "speed"
    exe.write_text(f"""#!/bin/sh
cd {tmp_path}
i=$(flock lock sh -c 'n=$(($(cat n 2>/dev/null || echo 0) + 1)); echo $n > n; echo $n')
sed -n "$(( (i - 1) / {len(os.sched_getaffinity(0))} + 1 ))p" figures
""")
    exe.chmod(0o755)
    return exe


def test_a_run_waits_for_the_traces_speed_at_most_its_wait(tmp_path: Path) -> None:
    log = SpeedLog(_fake_exe(tmp_path, [1.0, 2.0, 0.5, 1.05, 3.0, 3.0]), wait_s=60)
    cpus = len(os.sched_getaffinity(0))
    assert log.at_speed(None) == [1.0] * cpus  # a base run: the machine as it is
    # 2.0 is slower, 0.5 faster than the trace's 1.0; 1.05 is within CHANGE_PCT
    assert log.at_speed([1.0] * cpus) == [1.05] * cpus and len(log.refs) == 4
    log.wait_s = 0
    assert log.at_speed([1.0] * cpus)[0] == 3.0  # no time to wait: the reference as it is
    assert log.best() == [0.5] * cpus and SpeedLog(Path("/x")).best() is None


def _built_exe() -> Path:
    from mpi_overlap.platform.build import build_dir_for, ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    tc = get_toolchain("mpich")
    ensure_built(tc)
    return build_dir_for(tc) / "replay" / "mo_machine_speed"


def test_mo_machine_speed_times_every_cpu() -> None:
    got = measure(_built_exe())
    assert len(got) == len(os.sched_getaffinity(0))
    # 50 sweeps of a 1.1 MB slab: milliseconds, not nothing and not seconds
    assert all(1e-4 < s < 1.0 for s in got), got


def test_a_missing_program_is_one_line(tmp_path: Path) -> None:
    from mpi_overlap.core.errors import UserError

    with pytest.raises(UserError, match="is not built"):
        measure(tmp_path / "mo_machine_speed")


def test_mo_machine_speed_says_its_usage() -> None:
    import subprocess

    proc = subprocess.run([str(_built_exe()), "-1"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: mo_machine_speed CPU")
