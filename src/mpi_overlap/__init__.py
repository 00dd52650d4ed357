"""mpi-overlap: measure how much MPI communication is hidden behind computation,
and what MPI costs beyond moving bytes."""

from __future__ import annotations

import os
from importlib import metadata as _metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .data_out import RunData

try:
    __version__ = _metadata.version("mpi-overlap")
except _metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"


def load(run_dir: str | os.PathLike[str]) -> RunData:
    """A run directory as pandas DataFrames (data_out.RunData: meta, result, analysis,
    frames); see mpi_overlap.data_out. Imported here, not at the top, to keep pandas off
    the CLI's start-up."""
    from .data_out import load_run_data

    return load_run_data(run_dir)
