"""Shared fixtures: an isolated state directory for registry tests, and the optional CPU
load beside the whole session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from loadgen import cpu_load, requested

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
