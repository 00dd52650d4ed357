"""The installed mpi-overlap's version, read when something prints it, not at import.

importlib.metadata costs 0.05–0.25 s to import (email, zipfile, ...): more than the rest of
`mpi-overlap --help`, and a tenth of what `profile` may add to its program (issue 38). The
version is the `Version:` line of our .dist-info/METADATA on sys.path, which is where
importlib.metadata reads it too; anything else (an egg-info, a zip) falls back to it.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

DIST = "mpi_overlap"  # the distribution's name as its .dist-info folder spells it
UNKNOWN = "0+unknown"  # running from a source tree without install


def _from_dist_info() -> str | None:
    """The version in the first mpi_overlap-*.dist-info on sys.path (importlib.metadata's
    order), or None when there is none."""
    for entry in sys.path:
        folder = Path(entry or ".")
        try:
            found = sorted(folder.glob(f"{DIST}-*.dist-info"))
        except OSError:
            continue
        for dist in found:
            try:
                lines = (dist / "METADATA").read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            for line in lines:
                if not line.strip():
                    break  # the headers end at the first empty line
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
    return None


@cache
def version() -> str:
    found = _from_dist_info()
    if found:
        return found
    from importlib import metadata

    try:
        return metadata.version("mpi-overlap")
    except metadata.PackageNotFoundError:
        return UNKNOWN
