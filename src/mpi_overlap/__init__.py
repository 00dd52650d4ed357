"""mpi-overlap: measure how much MPI communication is hidden behind computation,
and what MPI costs beyond moving bytes."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .commands.data_out import RunData


def __getattr__(name: str) -> str:
    """`mpi_overlap.__version__`, read on first use (version.py: not at import)."""
    if name == "__version__":
        from .core.version import version

        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load(run_dir: str | os.PathLike[str]) -> RunData:
    """A run directory as pandas DataFrames (data_out.RunData: meta, result, analysis,
    frames); see mpi_overlap.commands.data_out. Imported here, not at the top, to keep pandas off
    the CLI's start-up. The benchmarks are imported first, as the CLI does: they hand the
    layers below them what those check documents and read evidence with
    (benchmarks/registry.py), and a script calls this without the CLI."""
    from . import benchmarks  # noqa: F401  (the hand-ins)
    from .commands.data_out import load_run_data

    return load_run_data(run_dir)
