"""The transfer-time table a profile run used, read again for what the run's documents do
not carry (the transfer model's parts, the points' intervals): its path and content hash
are in the analysis's method.table; a table changed since the run is not that table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the table module is heavy to import
    from ..calibration.xfer_table import XferTable


def used_table(analysis: dict[str, Any]) -> XferTable | None:
    """The table of the run, None when it cannot be read or is not the one the run used."""
    from ..calibration.xfer_table import read_table
    from ..core.errors import UserError

    info = (analysis.get("method") or {}).get("table") or {}
    if not info.get("path"):
        return None
    try:
        table = read_table(Path(info["path"]))
    except UserError:
        return None
    if info.get("hash") and info["hash"] != table.content_hash:
        return None
    return table
