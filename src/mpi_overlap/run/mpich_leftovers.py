"""What an MPICH job that does not reach MPI_Finalize (MPI_Abort, a signal, a rank's early
exit) leaves on the machine, removed once nothing needs it (docs/profiler.md, "Exit
status").

Why, for each of the two kinds (MPICH 5.0.2, the wheel; measured 2026-12-02):
- Hydra's topology files. hydra_pmi_proxy writes its node's hwloc topology to
  /tmp/hydra_hwloc_xmlfile_XXXXXX (a fixed directory: it does not read TMPDIR) for its
  ranks to load in MPI_Init, and removes it when it exits normally. `mpiexec -n 2` of a
  program calling MPI_Abort left one file a run, and three `make test` runs left 73, 55 of
  them written by the emulated cluster's nodes, whose proxies Slurm ends. A file is needed
  only while its proxy runs and nothing ties a file to its proxy, so they are removed only
  while no live hydra_pmi_proxy runs on this machine (the cluster's nodes are namespaces
  of it: their proxies are in /proc too).
- Shared-memory segments. MPICH creates /dev/shm/mpich_shm_<hex>_<n> (2-3 MB) in
  MPI_Init, maps it in every rank of a node, and unlinks it in MPI_Finalize. A job that
  does not finalize leaves it in memory (/dev/shm is tmpfs): one segment a run, and a day
  of this project's tests left 121, 270 MB (Open MPI left none). A segment in use is
  mapped by its job's ranks, so one no process maps is orphaned, but for the moment
  between its creation and its first mapping: the maps are read twice, GRACE_S apart, and
  a segment mapped at either reading stays.
Only what a caller can name as its own is removed: written since its job began, or (the
topology files at `cluster down`) by the emulated cluster's nodes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from ..core.machine_load import pids, proc_stats

TMP, TOPOLOGY = Path("/tmp"), "hydra_hwloc_xmlfile_*"
SHM, SEGMENTS = Path("/dev/shm"), "mpich_shm_*"
PROXY = "hydra_pmi_proxy"  # 15 characters: /proc/PID/stat holds its name whole
_HOST = re.compile(rb'name="HostName" value="([^"]*)"')
_HEAD_BYTES = 4096  # the topology's info attributes come before its objects
# Far longer than a rank takes from creating its segment to mapping it (two system calls).
GRACE_S = 0.05


def proxies_running() -> bool:
    """Whether a live hydra_pmi_proxy runs on this machine. A zombie does not count: an
    aborted job's proxy lingers as one until init reaps it, its file already orphaned."""
    return any(name == PROXY and fields[:1] != ["Z"] for _, name, fields in proc_stats())


def host_of(path: Path) -> str | None:
    """The host name a topology file names (hwloc's HostName info), or None."""
    try:
        with open(path, "rb") as f:
            found = _HOST.search(f.read(_HEAD_BYTES))
    except OSError:
        return None
    return found.group(1).decode(errors="replace") if found else None


def mapped() -> set[str]:
    """The /dev/shm paths that some process maps now (from /proc/PID/maps)."""
    out: set[str] = set()
    for pid in pids():
        try:
            with open(f"/proc/{pid}/maps", errors="replace") as maps:
                for line in maps:
                    at = line.find(f"{SHM}/")
                    if at >= 0:
                        out.add(line[at:].rstrip("\n").removesuffix(" (deleted)"))
        except OSError:
            continue  # ended meanwhile, or not ours to read
    return out


def _written(where: Path, pattern: str, since: float | None) -> list[Path]:
    """The files of `pattern` in `where` written at or after `since` (all with None)."""
    out = []
    for path in sorted(where.glob(pattern)):
        try:
            if since is None or path.stat().st_mtime >= since:
                out.append(path)
        except OSError:
            continue  # gone meanwhile
    return out


def _remove(paths: list[Path]) -> int:
    removed = 0
    for path in paths:
        try:
            path.unlink()
            removed += 1
        except OSError:
            continue  # gone meanwhile, or not ours to remove
    return removed


def sweep_topology(*, since: float | None = None, host: Callable[[str], bool] | None = None,
                   tmp: Path = TMP, running: Callable[[], bool] = proxies_running) -> int:
    """Remove the topology files written at or after `since` (seconds since the epoch)
    and, with `host`, only those whose host name it accepts; nothing while a proxy runs.
    Returns how many were removed."""
    # Listed before the check, not after: a file listed was written by a proxy that had
    # started by then, so if none runs at the check, none of them is needed; a job
    # started after the check writes files this list does not hold.
    found = _written(tmp, TOPOLOGY, since)
    if not found or running():
        return 0
    if host is not None:
        found = [p for p in found if host(host_of(p) or "")]
    return _remove(found)


def sweep_segments(*, since: float, shm: Path = SHM, maps: Callable[[], set[str]] = mapped,
                   wait: Callable[[float], None] = time.sleep) -> int:
    """Remove the segments written at or after `since` (seconds since the epoch) that no
    process mapped at either of two readings GRACE_S apart. Returns how many."""
    found = _written(shm, SEGMENTS, since)
    if not found:
        return 0
    in_use = maps()
    wait(GRACE_S)
    in_use |= maps()
    return _remove([p for p in found if str(p) not in in_use])


def sweep(*, since: float) -> None:
    """Both kinds a job that began at `since` may have left."""
    sweep_topology(since=since)
    sweep_segments(since=since)
