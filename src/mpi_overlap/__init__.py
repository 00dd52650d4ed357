"""mpi-overlap: measure how much MPI communication is hidden behind computation,
and what MPI costs beyond moving bytes."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("mpi-overlap")
except _metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"
