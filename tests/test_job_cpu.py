"""The job's own processes that slurmd started, and the cluster's daemons, are not foreign
load (run/job_cpu.py, run/machine_load.py; issue 39: on the emulated cluster the other
node's ranks run on this machine and made every calibration "noisy")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpi_overlap.core import machine_load
from mpi_overlap.core.machine_load import LoadSample
from mpi_overlap.run import job_cpu


def test_a_step_is_the_jobs_by_its_command_line() -> None:
    assert job_cpu.step_of("slurmstepd: [123.0]", "123")
    assert job_cpu.step_of("slurmstepd: [123.batch]", "123")
    assert job_cpu.step_of("slurmstepd: [123]", "123")
    assert not job_cpu.step_of("slurmstepd: [1234.0]", "123")
    assert not job_cpu.step_of("slurmstepd: [12.0]", "123")


def test_a_tree_counts_each_process_once_and_not_the_one_holding_us() -> None:
    # pid -> (name, ppid, start, CPU of itself and its reaped children)
    procs = {
        10: ("slurmstepd", 1, 100, 0.5),   # has reaped a rank: its CPU is in these 0.5 s
        11: ("mo_pingpong", 10, 101, 3.0),
        12: ("mo_pingpong", 10, 102, 2.0),
        20: ("slurmstepd", 1, 200, 0.1),   # a batch step holding mpi-overlap (pid 22)
        21: ("bash", 20, 201, 0.2),
        22: ("python3", 21, 202, 9.0),
        30: ("stress", 1, 300, 50.0),      # foreign
    }
    totals, pids = job_cpu.tree_totals(procs, {(10, 100), (20, 200), (10, 999)}, me=22)
    assert totals == {(10, 100): pytest.approx(5.5)}
    assert pids == {10, 11, 12}


def _burner(tmp_path: Path, job: str, cpu_s: float) -> subprocess.Popen:
    """A process named slurmstepd whose command line names step `job`.0 and whose child
    burns `cpu_s` of CPU, is reaped, and then it waits to be stopped."""
    exe = tmp_path / "slurmstepd"
    shutil.copy(os.path.realpath(sys.executable), exe)
    code = ("import subprocess,time\n"
            f"subprocess.run([{str(exe)!r}, '-c', 'import time\\n"
            f"while time.process_time() < {cpu_s}: pass'])\n"
            "print('done', flush=True)\ntime.sleep(30)\n")
    return subprocess.Popen([f"slurmstepd: [{job}.0]", "-c", code], executable=str(exe),
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONHOME": sys.base_prefix})


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")
def test_the_watch_counts_a_steps_ranks_after_they_are_reaped(tmp_path: Path) -> None:
    ours, other = job_cpu.start("4242"), job_cpu.start("4243")
    assert ours is not None and other is not None
    proc = _burner(tmp_path, "4242", 0.4)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
        time.sleep(2 * job_cpu.WATCH_S)  # the burning child is gone: only the parent's cutime
        cpu, pids = ours.stop()
        other_cpu, other_pids = other.stop()
    finally:
        proc.kill()
        proc.wait()
    assert cpu >= 0.35, "the reaped child's CPU counts to the job"
    assert proc.pid in pids
    assert other_cpu == 0.0 and not other_pids


def _sample(busy: float, own: float, procs: dict[int, tuple[str, float, int]]) -> LoadSample:
    return LoadSample(t=busy, busy_s=busy, steal_s=0.0, own_s=own, procs=procs)


def test_the_jobs_ranks_and_the_cluster_daemons_are_not_foreign() -> None:
    cpus = os.cpu_count() or 1
    before = _sample(0.0, 0.0, {5: ("slurmd", 1.0, 7), 6: ("munged", 0.5, 8)})
    wall = 10.0
    after = _sample(wall, 1.0, {5: ("slurmd", 1.6, 7), 6: ("munged", 0.9, 8),
                                9: ("slurmctld", 0.2, 9)})
    after.busy_s = 0.5 * wall * cpus  # half the machine busy
    load = machine_load.between(before, after, job=(after.busy_s - 1.0 - 1.2, {123}))
    assert load is not None
    assert load["job_cpu_s"] == pytest.approx(after.busy_s - 2.2)
    assert load["cluster_cpu_s"] == pytest.approx(1.2)
    assert load["foreign_cpu_s"] == pytest.approx(0.0, abs=1e-6) and not load["disturbed"]
    # outside an allocation nothing of the kind is subtracted: the same load is foreign
    plain = machine_load.between(before, after)
    assert plain is not None and "job_cpu_s" not in plain and plain["disturbed"]
    assert plain["foreign_cpu_s"] == pytest.approx(after.busy_s - 1.0)


def test_foreign_cpu_below_the_counters_resolution_is_not_a_disturbance() -> None:
    """The counters count whole clock ticks: 0.03 s of foreign CPU in a 0.2 s launch (7.5 %
    of 2 CPUs) is rounding, not another process; 0.1 s is one."""
    hz = os.sysconf("SC_CLK_TCK")
    cpus = os.cpu_count() or 1
    for foreign, disturbed in ((machine_load.RESOLUTION_TICKS / hz, False),
                               (machine_load.RESOLUTION_TICKS / hz + 0.07, True)):
        before, after = _sample(0.0, 0.0, {}), _sample(0.2, 0.2 * cpus - 0.05, {})
        after.busy_s = after.own_s + foreign
        load = machine_load.between(before, after)
        assert load is not None and load["foreign_cpu_s"] == pytest.approx(foreign, abs=1e-3)
        assert load["foreign_share"] > machine_load.DISTURBED_SHARE
        assert load["disturbed"] is disturbed
