"""The repository's archived run directories (tests/fixtures/**/*.tar.xz), unpacked for a test.

Python gained tarfile's extraction filters in 3.10.12 and 3.11.4 (PEP 706); the project
supports 3.10 on, and Debian 12's python3 is 3.11.2, where `filter=` is a TypeError. The
archives are this repository's own, so where the filter is missing they are unpacked as
they are.
"""

from __future__ import annotations

import tarfile
from pathlib import Path


def unpack(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)  # our own archive (above)
