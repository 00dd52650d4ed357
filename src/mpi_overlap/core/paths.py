"""Where mpi-overlap keeps its state: toolchain prefixes, the registry, native builds.

`MPI_OVERLAP_HOME` overrides the location (tests use it to stay isolated); otherwise the
user's cache directory (XDG_CACHE_HOME or ~/.cache) holds `mpi-overlap/`.
"""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    override = os.environ.get("MPI_OVERLAP_HOME")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mpi-overlap"


def repo_root() -> Path:
    """The source tree this package runs from (src layout: <root>/src/mpi_overlap/core)."""
    return Path(__file__).resolve().parents[3]


def native_source_dir() -> Path:
    """MPI_OVERLAP_NATIVE_DIR, else the sources an installed wheel carries (setup.py
    copies native/ into the package as _native), else the checkout's native/."""
    override = os.environ.get("MPI_OVERLAP_NATIVE_DIR")
    if override:
        return Path(override)
    packaged = Path(__file__).resolve().parents[1] / "_native"
    return packaged if packaged.is_dir() else repo_root() / "native"
