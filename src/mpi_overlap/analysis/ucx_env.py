"""UCX's settings as a run recorded them (provenance.mpi_env): across nodes, over UCX,
its eager/rendezvous switch is UCX_RNDV_THRESH, not the MPI's shared-memory thresholds.
Read by the sync-overlap and stack-floor analyses."""

from __future__ import annotations

import re
from typing import Any

_UCX_SIZE = re.compile(r"^\s*([0-9]+)\s*([kmg]?)b?\s*$", re.I)


def ucx_bytes(text: str) -> int | None:
    """A UCX memory-unit value ("524288", "512k", "2M": binary multiples); None for
    "auto", "inf" or anything else."""
    m = _UCX_SIZE.match(text)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


def ucx_rndv_thresh(result: dict[str, Any]) -> int | None:
    """UCX_RNDV_THRESH in bytes when the run set it (provenance.mpi_env), else None
    (unset, or "auto": UCX chooses)."""
    env = (result.get("provenance") or {}).get("mpi_env") or {}
    thresh = env.get("UCX_RNDV_THRESH")
    return ucx_bytes(str(thresh)) if thresh is not None else None
