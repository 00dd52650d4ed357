"""The machine's speed around the predict check's runs (cluster/machine_speed.py): a run
is judged against the fastest reference of the check, a run waits for the machine to be
at speed for at most its time, and mo_machine_speed gives a figure on every CPU. No MPI
launch: mo_machine_speed is MPI-free (the default toolchain's build has it)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from mpi_overlap.cluster.machine_speed import SLOW_PCT, SpeedLog, is_slow, measure


def _log(*refs: list[float]) -> SpeedLog:
    return SpeedLog(Path("/nonexistent"), refs=[list(r) for r in refs])


def test_the_slowest_cpu_against_the_fastest_reference_of_each() -> None:
    log = _log([10.0, 20.0], [12.0, 18.0])
    assert log.best() == [10.0, 18.0]
    assert log.slowdown_pct([[10.0, 18.0]]) == pytest.approx(0.0)
    # the worse of the two references, on its worse CPU
    assert log.slowdown_pct([[11.0, 18.0], [10.0, 27.0]]) == pytest.approx(50.0)
    assert is_slow(log.slowdown_pct([[10.0, 18.0 * (1 + 1.01 * SLOW_PCT / 100)]]))
    assert not is_slow(log.slowdown_pct([[10.0, 18.0 * (1 + 0.99 * SLOW_PCT / 100)]]))


def test_a_cpu_without_a_figure_judges_nothing() -> None:
    log = _log([10.0, math.nan], [11.0, math.nan])
    assert log.best()[0] == 10.0 and math.isnan(log.best()[1])
    assert log.slowdown_pct([[11.0, 30.0]]) == pytest.approx(10.0)
    assert log.slowdown_pct([[math.nan, math.nan]]) is None
    assert _log().slowdown_pct([[1.0]]) is None and not is_slow(None)


def _fake_exe(tmp_path: Path, figures: list[float]) -> Path:
    """A stand-in for mo_machine_speed printing the next of `figures` each time, the
    same on every CPU (a run's references, taken all CPUs at once, read one line each)."""
    (tmp_path / "figures").write_text("\n".join(map(str, figures)) + "\n")
    exe = tmp_path / "speed"
    exe.write_text(f"""#!/bin/sh
cd {tmp_path}
flock lock sh -c 'n=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) > n'
sed -n "$(( ($(cat n) - 1) / {len(os.sched_getaffinity(0))} + 1 ))p" figures
""")
    exe.chmod(0o755)
    return exe


def test_a_run_waits_for_the_machine_at_speed_at_most_its_wait(tmp_path: Path) -> None:
    log = SpeedLog(_fake_exe(tmp_path, [1.0, 2.0, 2.0, 1.05, 3.0]), wait_s=60)
    log.take()  # the machine at speed: 1.0
    ref = log.at_speed()  # 2.0 and 2.0 are slow, 1.05 is within SLOW_PCT
    assert ref == [1.05] * len(ref) and len(log.refs) == 4
    log.wait_s = 0
    assert log.at_speed()[0] == 3.0  # no time to wait: the reference as it is


def test_mo_machine_speed_times_every_cpu() -> None:
    from mpi_overlap.platform.build import build_dir_for, ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    tc = get_toolchain("mpich")
    ensure_built(tc)
    exe = build_dir_for(tc) / "replay" / "mo_machine_speed"
    got = measure(exe)
    assert len(got) == len(os.sched_getaffinity(0))
    # 50 sweeps of a 1.1 MB slab: milliseconds, not nothing and not seconds
    assert all(1e-4 < s < 1.0 for s in got), got


def test_mo_machine_speed_says_its_usage() -> None:
    import subprocess

    from mpi_overlap.platform.build import build_dir_for
    from mpi_overlap.platform.toolchains import get_toolchain

    exe = build_dir_for(get_toolchain("mpich")) / "replay" / "mo_machine_speed"
    if not exe.exists():
        pytest.skip("built by test_mo_machine_speed_times_every_cpu")
    proc = subprocess.run([str(exe), "-1"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: mo_machine_speed CPU")
