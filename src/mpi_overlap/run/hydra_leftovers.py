"""MPICH Hydra's topology files that a job ended by MPI_Abort or a signal leaves in /tmp.

Why: hydra_pmi_proxy writes its node's hwloc topology to /tmp/hydra_hwloc_xmlfile_XXXXXX
(a fixed directory: it does not read TMPDIR; MPICH 5.0.2, the wheel) for its ranks to
load in MPI_Init, and removes the file when it exits normally. A proxy that MPI_Abort or
a signal ends leaves it: `mpiexec -n 2` of a program calling MPI_Abort left one file a
run here, and three `make test` runs left 73 (2026-12-02), 55 of them written by the
emulated cluster's nodes, whose proxies Slurm ends. A file is needed only while its proxy
runs, and nothing ties a file to its proxy, so files are removed only while no
hydra_pmi_proxy runs on this machine (the cluster's nodes are namespaces of it: their
proxies are in /proc too), and only those a caller can name as its own: written since its
job began, or by the emulated cluster's nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..core.machine_load import proc_stats

TMP = Path("/tmp")
PATTERN = "hydra_hwloc_xmlfile_*"
PROXY = "hydra_pmi_proxy"  # 15 characters: /proc/PID/stat holds its name whole
_HOST = re.compile(rb'name="HostName" value="([^"]*)"')
_HEAD_BYTES = 4096  # the topology's info attributes come before its objects


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


def sweep(*, since: float | None = None, host: Callable[[str], bool] | None = None,
          tmp: Path = TMP, running: Callable[[], bool] = proxies_running) -> int:
    """Remove the topology files written at or after `since` (seconds since the epoch)
    and, with `host`, only those whose host name it accepts; nothing while a proxy runs.
    Returns how many were removed."""
    # Listed before the check, not after: a file listed was written by a proxy that had
    # started by then, so if none runs at the check, none of them is needed; a job
    # started after the check writes files this list does not hold.
    found = sorted(tmp.glob(PATTERN))
    if not found or running():
        return 0
    removed = 0
    for path in found:
        try:
            if since is not None and path.stat().st_mtime < since:
                continue
            if host is not None and not host(host_of(path) or ""):
                continue
            path.unlink()
            removed += 1
        except OSError:
            continue  # gone meanwhile, or not ours to remove
    return removed
