"""MPICH's shared-memory segments that a job ended by MPI_Abort, a signal or a rank's exit
without MPI_Finalize leaves in /dev/shm.

Why: MPICH (5.0.2, the wheel) creates /dev/shm/mpich_shm_<hex>_<n> (2-3 MB) in MPI_Init,
maps it in every rank of a node, and unlinks it in MPI_Finalize. A job that does not
finalize leaves it behind, in memory (/dev/shm is tmpfs): `mpiexec -n 2` of a program
whose rank 0 calls MPI_Abort, or exits without MPI_Finalize, left one segment a run here,
and a day of this project's tests left 121, 270 MB (2026-12-02; Open MPI left none). A
segment in use is mapped by the ranks of its job, so a segment no process maps is
orphaned, but for the moment between its creation and its first mapping: the maps are
read twice, GRACE_S apart, and a segment mapped at either reading stays. Only the
segments written since the caller's job began are removed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

SHM = Path("/dev/shm")
PATTERN = "mpich_shm_*"
# Far longer than a rank takes from creating its segment to mapping it (two system calls).
GRACE_S = 0.05
_PROC = "/proc"


def mapped() -> set[str]:
    """The /dev/shm paths that some process maps now (from /proc/PID/maps)."""
    out: set[str] = set()
    try:
        pids = [e for e in os.listdir(_PROC) if e.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open(f"{_PROC}/{pid}/maps", errors="replace") as maps:
                for line in maps:
                    at = line.find(f"{SHM}/")
                    if at >= 0:
                        out.add(line[at:].rstrip("\n").removesuffix(" (deleted)"))
        except OSError:
            continue  # ended meanwhile, or not ours to read
    return out


def sweep(*, since: float, shm: Path = SHM, maps: Callable[[], set[str]] = mapped,
          wait: Callable[[float], None] = time.sleep) -> int:
    """Remove the segments written at or after `since` (seconds since the epoch) that no
    process mapped at either of two readings GRACE_S apart. Returns how many."""
    found = []
    for path in sorted(shm.glob(PATTERN)):
        try:
            if path.stat().st_mtime >= since:
                found.append(path)
        except OSError:
            continue  # gone meanwhile
    if not found:
        return 0
    in_use = maps()
    wait(GRACE_S)
    in_use |= maps()
    removed = 0
    for path in found:
        if str(path) in in_use:
            continue
        try:
            path.unlink()
            removed += 1
        except OSError:
            continue  # gone meanwhile, or not ours to remove
    return removed
