"""What the analyses of profiled benchmarks (the profiler's validation, the non-blocking
collectives) read beside their result: the run directory's rank documents, and a
document's regions by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_profiles(run_dir: Path | None) -> tuple[dict[int, dict[str, Any]], list[str]]:
    """The rank documents of a run directory (job file and per-rank files), by rank, and
    problems."""
    # here: keeps the module importable without the CLI
    from ..documents.rank_documents import read_rank_documents

    if run_dir is None:
        return {}, ["no run directory given"]
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return {}, [f"run directory {run_dir} not found"]
    found = read_rank_documents(run_dir)
    return found.docs, found.problems


def regions_by_name(doc: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """A rank document's by_region entries by region name."""
    entries = ((doc or {}).get("profile") or {}).get("by_region") or []
    return {str(e.get("region")): e for e in entries if isinstance(e, dict)}
