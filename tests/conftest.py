"""Shared fixtures: an isolated state directory for registry tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "state"
    monkeypatch.setenv("MPI_OVERLAP_HOME", str(home))
    return home
