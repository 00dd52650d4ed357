"""A cluster left behind never blocks the next run (issue 39, item 4): `cluster up` reuses
one of the same layout that checks out and takes anything else down first, each in one
line; `kill -TERM` of pytest in the middle of the cluster tests takes their cluster down,
and the same tests then pass without a manual step.

Runs after tests/test_cluster.py (its module's cluster is down by then); needs what that
module needs, and skips with the same reason without it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import run_cli
from cluster_helpers import LAYOUT, NODES, layout_args, nothing_left
from mpi_overlap.cluster import control
from mpi_overlap.cluster.control import exec_env

HERE = Path(__file__).resolve().parent
RELINKED = layout_args("100mbit")
OTHER_LAYOUT = ("--nodes", "2", "--link", "100mbit", "--cpus-per-node", "1")


@pytest.fixture
def bare_machine() -> Iterator[None]:
    why = control.unavailable()
    if why:
        pytest.skip(why)
    assert control.down() == []
    try:
        yield
    finally:
        assert control.down() == []


def _up(*layout: str) -> list[str]:
    proc = run_cli("cluster", "up", *layout, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def _srun_works() -> None:
    proc = subprocess.run(["srun", "-N", "2", "hostname"], env=exec_env(), timeout=60,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == list(NODES)


def _wait_for(what: str, cond: object, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return
        time.sleep(0.3)
    raise AssertionError(f"{what}: not within {timeout_s:.0f} s")


def test_up_reuses_a_cluster_that_checks_out_and_replaces_one_that_does_not(
        bare_machine: None) -> None:
    first = _up(*LAYOUT)
    assert first[0].startswith("cluster up: 2 nodes"), first

    again = _up(*LAYOUT)
    assert again[0].endswith("checks out (daemons answer, nodes idle, no job left); "
                             "reusing it"), again
    _srun_works()

    # A link left shaped otherwise (by hand here; a fault killed before it undid itself
    # would do the same) is shaped as the layout says again, and the line says so.
    subprocess.run(["tc", "qdisc", "replace", "dev", "mo-v1", "root", "tbf", "rate", "200mbit",
                    "burst", "25000", "latency", "20ms", "peakrate", "202mbit", "mtu", "1600"],
                   check=True)
    reshaped = _up(*LAYOUT)
    assert reshaped[0].endswith("reusing it; the links of mo-node1 were shaped otherwise, "
                                "and are shaped to 200mbit again"), reshaped
    assert not any("peakrate" in qdisc for _n, _a, qdisc, _ok in control.status().nodes)

    # Only the rate differs: the links change, Slurm and the nodes stay.
    daemons_before = control.status().daemons
    relinked = _up(*RELINKED)
    assert relinked[0] == ("cluster up: the cluster already up here checks out; its links "
                           "changed from 200mbit to 100mbit"), relinked
    assert "links shaped to 100mbit" in relinked[1]
    assert control.status().daemons == daemons_before
    assert all("rate 100Mbit" in qdisc for _n, _a, qdisc, _ok in control.status().nodes)
    _srun_works()

    other = _up(*OTHER_LAYOUT)
    assert other[0] == ("cluster up: took down the cluster already here first (2 nodes, "
                        "links 100mbit, 2 CPU(s) per node)"), other
    assert "links shaped to 100mbit" in other[1]

    # A node whose slurmd died (a fault, or a killed run that took it with it).
    pid = control.status().daemons["slurmd-mo-node2"]
    os.kill(pid, signal.SIGKILL)
    _wait_for("slurmd gone", lambda: "slurmd-mo-node2" not in control.status().daemons)
    dead = _up(*OTHER_LAYOUT)
    assert dead[0] == ("cluster up: took down the cluster already here first "
                       "(slurmd-mo-node2 not running)"), dead
    _srun_works()

    # A rank that outlived its job on a node (Slurm no longer tracks it): not reused, and
    # nothing of it survives the new cluster.
    stray = subprocess.Popen(["nsenter", "--net=/run/netns/mo-node2", "sleep", "600"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for("the stray sleep on the node",
                  lambda: any(k.startswith("sleep") for k in control.status().daemons))
        orphaned = _up(*OTHER_LAYOUT)
        assert orphaned[0].startswith("cluster up: took down the cluster already here first "
                                      "(processes of an earlier job on its nodes: sleep-"), \
            orphaned
        assert stray.wait(timeout=30) != 0  # killed by the take-down
    finally:
        stray.kill()
        stray.wait()
    _srun_works()


def test_term_of_pytest_takes_the_cluster_down_and_the_tests_then_pass(
        bare_machine: None) -> None:
    """The acceptance of issue 39, item 4, as a test: TERM while the cluster tests run a
    profile across nodes, then the same tests again."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            str(HERE / "test_cluster.py"), "-k", "srun_reaches or exec_passes"]
    slow = [*argv[:-1], "srun_reaches or fresh_state"]
    child = subprocess.Popen(slow, cwd=HERE.parent, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        # Up, and the profile's calibration under way on the nodes (mo_pingpong).
        _wait_for("the cluster tests' cluster up and a job on its nodes",
                  lambda: any(k.startswith("mo_") for k in control.status().daemons),
                  timeout_s=240)
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate(timeout=180)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == 2, out  # pytest's "interrupted"
    assert nothing_left() == [], out
    rerun = subprocess.run(argv, cwd=HERE.parent, capture_output=True, text=True,
                           timeout=600, check=False)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "2 passed" in rerun.stdout, rerun.stdout
