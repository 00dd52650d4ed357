"""Shared fixtures: an isolated state directory for registry tests, the optional CPU
load beside the whole session, the emulated cluster of a module's tests (and the marks
that keep its modules out of `-m "not mpi"`), SIGTERM handled as Ctrl-C so that
fixtures clean up, and the Open MPI wheel's libfabric BTL (1 s a launch to find nothing
here) left out."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import settings

# mpi_overlap.benchmarks: the tests use the package as its commands do, the benchmarks
# imported, which hands the calibration and the profile, below them, what the benchmark
# packages declare for them (benchmarks/registry.py); test_handed_in.py checks a process
# without them.
import mpi_overlap.benchmarks  # noqa: F401
from cli_helpers import run_cli
from cluster_helpers import LAYOUT, nothing_left
from loadgen import cpu_load, requested
from mpi_overlap.cluster import control

# Hypothesis's 200 ms deadline per example measures the machine, not the code: an example
# descheduled on a busy machine would fail as "DeadlineExceeded" or "Flaky".
settings.register_profile("mpi-overlap", deadline=None)
settings.load_profile("mpi-overlap")


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "state"
    monkeypatch.setenv("MPI_OVERLAP_HOME", str(home))
    return home


@pytest.fixture(scope="session", autouse=True)
def background_cpu_load() -> Iterator[list[int]]:
    """MPI_OVERLAP_TEST_LOAD=N: N CPU-bound processes beside the whole session
    (`make test-loaded`; loadgen.py)."""
    with cpu_load(requested()) as pids:
        yield pids


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """The tests' cluster for one module. One left by a killed run is reused or taken down
    by `up` itself (one line); the tests take theirs down at the end, so a developer's own
    cluster does not survive them."""
    why = control.unavailable()
    if why:
        pytest.skip(why)
    proc = run_cli("cluster", "up", *LAYOUT, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "cluster up: 2 nodes" in proc.stdout
    try:
        yield
    finally:
        done = run_cli("cluster", "down", timeout=120)
        assert done.returncode == 0, done.stderr
        assert nothing_left() == []


# The emulated cluster's fixtures: a module whose tests use one brings the cluster up (or
# takes it down) in its other tests too.
CLUSTER_FIXTURES = frozenset({"cluster", "bare_machine"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of a module that uses the emulated cluster is marked `cluster` and `mpi`:
    its jobs run across the cluster's nodes, and its other tests bring a cluster up or
    take one down (a failed `up`, `pytest` started again under TERM), so `-m "not mpi"`
    (make test-quick) leaves the whole module out, as it must on a machine where someone
    else's cluster is up."""
    modules = {item.module for item in items
               if isinstance(item, pytest.Function) and CLUSTER_FIXTURES & set(item.fixturenames)}
    for item in items:
        if isinstance(item, pytest.Function) and item.module in modules:
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.mpi)


def _interrupt_on_term(signum: int, frame: FrameType | None) -> None:
    # Once only: a second TERM must not cut the teardown that the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_sessionstart(session: pytest.Session) -> None:
    """`kill -TERM` of pytest (a CI timeout, a developer's kill) would end it without
    running a finalizer: the emulated cluster, the CPU load and MPI jobs would be left
    running. As Ctrl-C, pytest stops the test and tears down every fixture (issue 39).

    The CLI prints as wide as COLUMNS says, and the tests read what it prints at its piped
    width (200): an exported COLUMNS of the developer's terminal (80) wrapped a line that a
    test looks for. A test that wants a width sets it in the CLI's environment.

    The Open MPI wheel's 1.0 s of btl/ofi in each MPI_Init on a host without a fabric is
    left out by the toolchain's own environment (platform/toolchains.py), as users get it:
    the tests launch what users launch."""
    signal.signal(signal.SIGTERM, _interrupt_on_term)
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
